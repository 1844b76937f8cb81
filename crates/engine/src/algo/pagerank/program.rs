//! PageRank as a vertex program (`Program`) and its step machine
//! (`PageRankDriver`), which any executor runs (`run_on`).
use super::*;
use crate::vertex_array::{Backing, VertexArray};

/// The PageRank vertex program: one synchronous power iteration per superstep.
#[derive(Debug)]
pub struct Program {
    damping: f64,
    teleport: Teleport,
    /// `PR(u)` of the previous iteration (read and written in vertex order:
    /// in the executor's backing, when it has one).
    rank: VertexArray<AtomicF64>,
    /// `PR(u) / outdeg(u)`, 0 for dangling vertices (read in the random
    /// order of in-lists, so always on the heap).
    contrib: Vec<AtomicF64>,
    /// The new ranks being computed (in vertex order, as `rank`).
    next: VertexArray<AtomicF64>,
    /// The iteration's substitution ([`Step`]), set before each superstep.
    step: Step,
}

impl VertexProgram for Program {
    /// A partial sum of contributions.
    type Msg = f64;
    const MODES: Modes = Modes::DenseOnly;

    fn combine(&self, a: f64, b: f64) -> f64 {
        a + b
    }

    // PageRank is dense-only (MODES); the sparse pair is never called.
    fn sparse_signal(&self, _src: VertexId) -> Option<f64> {
        None
    }

    fn sparse_slot(&self, _dst: VertexId, _msg: f64) -> bool {
        false
    }

    fn dense_signal(&self, _v: VertexId, edges: InEdges<'_>) -> Option<f64> {
        // Every vertex is active in PageRank; sum in CSC order so the result
        // is the same on any thread.
        Some(
            edges
                .sources()
                .iter()
                .map(|&u| self.contrib[u as usize].load())
                .sum(),
        )
    }

    fn dense_slot(&self, v: VertexId, sum: f64) -> bool {
        let t = self.teleport.at(v);
        self.next[v as usize].store(self.step.update(self.damping, sum, t));
        true
    }
}

/// Runs PageRank as the vertex program on any executor through
/// [`PageRankDriver`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(
        exec,
        PageRankDriver::with_backing(exec.view(), cfg, exec.backing())?,
    )
}

/// PageRank (global or personalised) as a step machine that any executor
/// runs: Jacobi iteration in f64 (`cfg.method` and `cfg.precision` are not
/// used), one dense superstep per iteration, with the contributions, the
/// dangling mass, the isolated-vertex elimination ([`Isolated`]) and the
/// L1 change as vertex steps between supersteps: the same arithmetic as
/// [`run`]'s Jacobi kernel in double precision, so the ranks agree with it
/// up to the order of the executor's sums (within `1e-12` per rank on the
/// conformance graphs; bit for bit on the in-memory executor).
#[derive(Debug)]
pub struct PageRankDriver {
    p: Program,
    isolated: Option<Isolated>,
    tolerance: f64,
    fixed: Option<usize>,
    limit: usize,
    iterations: usize,
    converged: bool,
    change: f64,
    /// A superstep ran whose new ranks are not yet taken.
    pending: bool,
}

impl PageRankDriver {
    /// PageRank with `cfg` over a graph seen through `view`.
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        Self::with_backing(view, cfg, None)
    }

    /// PageRank with `cfg`, its rank arrays in `backing` (the executor's
    /// [`Vertices::backing`]; the heap when `None`).
    pub fn with_backing(
        view: &dyn GraphView,
        cfg: &Config,
        backing: Option<&dyn Backing>,
    ) -> Result<Self, AlgoError> {
        let teleport = prepare(view, cfg)?;
        let isolated = Isolated::with_teleport(view, cfg, &teleport);
        let n = view.num_vertices();
        let start = if n == 0 { 0.0 } else { 1.0 / n as f64 };
        Ok(PageRankDriver {
            p: Program {
                damping: cfg.damping,
                teleport,
                rank: VertexArray::from_fn(backing, "pagerank-rank", n, |_| AtomicF64::new(start))?,
                contrib: (0..n).map(|_| AtomicF64::new(0.0)).collect(),
                next: VertexArray::from_fn(backing, "pagerank-next", n, |_| AtomicF64::new(0.0))?,
                step: Step::plain(0.0),
            },
            isolated,
            tolerance: cfg.tolerance,
            fixed: cfg.iterations,
            limit: cfg.iterations.unwrap_or(cfg.max_iterations),
            iterations: 0,
            converged: n == 0,
            change: 0.0,
            pending: false,
        })
    }

    /// Takes the ranks of the superstep just run: the change, then the swap.
    fn take_step<V: Vertices>(&mut self, ops: &V) {
        let (p, g) = (&self.p, ops.view());
        self.change = ops.vertex_sum(|v| {
            let lone = Isolated::is_isolated(g, v);
            let prior = p
                .step
                .prior(lone, p.rank[v as usize].load(), p.teleport.at(v));
            (p.next[v as usize].load() - prior).abs()
        });
        std::mem::swap(&mut self.p.rank, &mut self.p.next);
        self.iterations += 1;
        self.converged = self.change < g.num_vertices() as f64 * self.tolerance;
        self.pending = false;
    }

    /// The vertex steps before an iteration: contributions and the step's
    /// substitution (dangling mass, isolated-vertex elimination).
    fn prepare_step<V: Vertices>(&mut self, ops: &V) {
        let (p, g) = (&self.p, ops.view());
        let n = g.num_vertices();
        ops.process_vertices(&VertexSubset::all(n), |u| {
            let c = contribution::<f64>(p.rank[u as usize].load(), g.out_degree(u));
            p.contrib[u as usize].store(c);
            false
        });
        let step = match self.isolated {
            None => Step::plain(ops.vertex_sum(|u| {
                if g.out_degree(u) == 0 {
                    p.rank[u as usize].load()
                } else {
                    0.0
                }
            })),
            Some(iso) => {
                let rest = |u: VertexId, dangling_only: bool| {
                    let counts =
                        !Isolated::is_isolated(g, u) && (!dangling_only || g.out_degree(u) == 0);
                    if counts {
                        p.rank[u as usize].load()
                    } else {
                        0.0
                    }
                };
                let mass = ops.vertex_sum(|u| rest(u, false));
                iso.step(p.damping, ops.vertex_sum(|u| rest(u, true)), mass)
            }
        };
        self.p.step = step;
    }
}

impl Driver for PageRankDriver {
    type Program = Program;
    type Output = Output;

    fn program(&self) -> &Program {
        &self.p
    }

    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let n = ops.view().num_vertices();
        if n == 0 {
            return None;
        }
        if self.pending {
            self.take_step(ops);
            if self.converged && self.fixed.is_none() {
                return None;
            }
        }
        if self.iterations >= self.limit {
            return None;
        }
        self.prepare_step(ops);
        self.pending = true;
        Some(VertexSubset::all(n))
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, _next: VertexSubset) {}

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        // The other arrays go first: the result is the only O(n) left.
        let Program {
            rank,
            contrib,
            next,
            ..
        } = self.p;
        drop((contrib, next));
        Output {
            rank: rank.par_iter().map(AtomicF64::load).collect(),
            iterations: self.iterations,
            converged: self.converged,
            change: self.change,
        }
    }

    fn state_bytes(&self) -> u64 {
        24 * self.p.rank.len() as u64
    }
}
