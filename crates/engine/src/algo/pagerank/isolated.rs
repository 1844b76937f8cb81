//! The isolated-vertex elimination: isolated vertices solved exactly
//! between Jacobi iterations ([`Isolated`], [`Step`]).
use super::*;

/// Isolated vertices (no in-edge, no out-edge, not even a self-loop),
/// solved exactly between Jacobi iterations.
///
/// An isolated vertex `v` receives nothing along edges, so at the fixed
/// point `PR(v) = c·t(v)` with `c = (1 - d) + d·D`, `D` being the dangling
/// mass, to which `v` itself belongs. Plain Jacobi reaches that through the
/// loop `D → c → D`, which shrinks an error only by `d·T_I` per iteration
/// (`T_I = Σ_{v isolated} t(v)`): on a Kronecker graph, where 43 % of the
/// vertices are isolated, that loop and not the graph sets the iteration
/// count (11 iterations instead of 8 on scale 22 at an L1 change of 1e-4).
/// So when [`Isolated::of`] applies (every dangling vertex is isolated, as
/// in any undirected graph), each iteration first replaces the
/// iterate `x` by `x̃` ([`Step`]): the isolated vertices get the `c` that is
/// consistent with the dangling mass of the others and with `Σ x̃ = 1`, and
/// the other vertices are rescaled by `scale` to keep that sum. The
/// iteration is then `x' = F(x̃)`, so its L1 change `Σ |F(x̃) - x̃|` is the
/// residual of `x̃`, the stopping rule means what it means for NetworkX,
/// `Σ |F(x') - x'| ≤ d · change` still holds, the ranks still sum to 1,
/// and the fixed point is the same; only the path to it differs. Without
/// other dangling vertices `c = (1 - d)/(1 - d·T_I)` is exact from the
/// first iteration, the other vertices' total is exact from the second,
/// and what remains is plain Jacobi among them.
///
/// Public so that other executors of PageRank (the job manager's lanes)
/// follow the engine operation for operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Isolated {
    /// `T_I`, in `(0, 1)`.
    teleport: f64,
}

/// The substitution `x → x̃` of one iteration: `x̃(v) = scale·x(v)` for a
/// vertex with edges, `iso·t(v)` for an isolated one; `dangling = Σ x̃`
/// over dangling vertices (isolated ones included). [`Step::plain`] is
/// plain Jacobi: `x̃ = x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    scale: f64,
    iso: f64,
    dangling: f64,
    eliminated: bool,
}

impl Step {
    /// Plain Jacobi (`x̃ = x`), `dangling` being `Σ x` over dangling vertices.
    pub fn plain(dangling: f64) -> Step {
        Step {
            scale: 1.0,
            iso: 0.0,
            dangling,
            eliminated: false,
        }
    }

    /// `F(x̃)(v) = d·(scale·sum + dangling·t(v)) + (1 - d)·t(v)`, `sum`
    /// being `Σ_{u→v} x(u)/outdeg(u)` of the unsubstituted `x`. With
    /// [`Step::plain`] exactly `F(x)(v)` (`1.0·sum` is `sum`).
    #[inline]
    pub fn update(&self, d: f64, sum: f64, t: f64) -> f64 {
        d * (self.scale * sum + self.dangling * t) + (1.0 - d) * t
    }

    /// `x̃(v)` for a vertex with rank `x` and teleport `t`, `lone` telling
    /// whether it is isolated (`t` is only read when it is). With
    /// [`Step::plain`] exactly `x`.
    #[inline]
    pub fn prior(&self, lone: bool, x: f64, t: f64) -> f64 {
        if self.eliminated && lone {
            self.iso * t
        } else {
            self.scale * x
        }
    }
}

impl Isolated {
    /// The elimination for a PageRank run with `cfg` on `g`, or `None` for
    /// plain iteration: it applies to Jacobi stopping by tolerance (a fixed
    /// iteration count keeps NetworkX's and Graphalytics's exact iterates)
    /// when every dangling vertex is isolated and some teleport mass lies
    /// on isolated vertices and some on the others. `None` also for a
    /// configuration [`run`] would refuse.
    pub fn of<G: GraphView + ?Sized>(g: &G, cfg: &Config) -> Option<Isolated> {
        let teleport = prepare(g, cfg).ok()?;
        Isolated::with_teleport(g, cfg, &teleport)
    }

    pub(super) fn with_teleport<G: GraphView + ?Sized>(
        g: &G,
        cfg: &Config,
        teleport: &Teleport,
    ) -> Option<Isolated> {
        if cfg.iterations.is_some() || cfg.method != Method::Jacobi {
            return None;
        }
        let n = g.num_vertices();
        // A dangling vertex with in-edges couples the isolated vertices'
        // rank to the rest's distribution (through `D`), and the
        // substitution can then slow the iteration down (measured on small
        // digraphs); without one, `D` is exact after the first iteration.
        let sink = (0..n as VertexId)
            .into_par_iter()
            .any(|v| g.out_degree(v) == 0 && g.in_degree(v) != 0);
        if sink {
            return None;
        }
        let lone = |v: VertexId| Isolated::is_isolated(g, v);
        let on_isolated = deterministic_sum(n, |v| if lone(v) { teleport.at(v) } else { 0.0 });
        let on_others = deterministic_sum(n, |v| if lone(v) { 0.0 } else { teleport.at(v) });
        (on_isolated > 0.0 && on_others > 0.0).then_some(Isolated {
            teleport: on_isolated,
        })
    }

    /// Whether `v` has neither in- nor out-edges.
    #[inline]
    pub fn is_isolated<G: GraphView + ?Sized>(g: &G, v: VertexId) -> bool {
        g.out_degree(v) == 0 && g.in_degree(v) == 0
    }

    /// The substitution for an iterate whose vertices with edges hold
    /// `mass` in total, `dangling` of it on dangling vertices. Solves
    /// `c = (1 - d) + d·(scale·dangling + c·T_I)` and
    /// `scale·mass + c·T_I = 1` for `c` (`iso`) and `scale`.
    pub fn step(self, d: f64, dangling: f64, mass: f64) -> Step {
        if mass.is_nan() || mass <= 0.0 {
            // Not reached (a vertex with edges and teleport mass keeps at
            // least (1 - d)·t); plain Jacobi would still be right.
            return Step::plain(dangling);
        }
        let t = self.teleport;
        let ratio = dangling / mass;
        let iso = ((1.0 - d) + d * ratio) / ((1.0 - d * t) + d * ratio * t);
        let scale = (1.0 - iso * t) / mass;
        Step {
            scale,
            iso,
            dangling: scale * dangling + iso * t,
            eliminated: true,
        }
    }
}
