//! SSSP as vertex programs (`Program` for the distances, `Paths` for the
//! parents) and their step machine (`SsspDriver`), which any executor runs.
use super::*;

/// The relaxation program: tentative distances, lowered by minimum.
#[derive(Debug)]
pub struct Program {
    dist: Vec<AtomicF64>,
}

impl Program {
    /// All distances infinite but the source's, 0.
    pub fn new(n: usize, source: VertexId) -> Self {
        // Read in the random order of neighbour lists: on huge pages.
        let dist: Vec<AtomicF64> = crate::hugepages::from_fn(n, |_| AtomicF64::new(f64::INFINITY));
        if let Some(d) = dist.get(source as usize) {
            d.store(0.0);
        }
        Program { dist }
    }

    /// The current tentative distance of `v`.
    pub fn dist(&self, v: VertexId) -> f64 {
        self.dist[v as usize].load()
    }
}

impl VertexProgram for Program {
    /// A tentative distance.
    type Msg = f64;

    fn combine(&self, a: f64, b: f64) -> f64 {
        a.min(b)
    }

    fn sparse_signal(&self, src: VertexId) -> Option<f64> {
        Some(self.dist[src as usize].load())
    }

    fn over_edge(&self, d: f64, w: f64) -> f64 {
        d + w
    }

    fn sparse_slot(&self, dst: VertexId, d: f64) -> bool {
        // May return true several times per superstep; the driver deduplicates.
        self.dist[dst as usize].fetch_min_nonnegative(d)
    }

    fn dense_signal(&self, _v: VertexId, edges: InEdges<'_>) -> Option<f64> {
        edges
            .active()
            .map(|(u, w)| self.dist[u as usize].load() + w)
            .min_by(f64::total_cmp)
    }

    fn dense_slot(&self, v: VertexId, d: f64) -> bool {
        self.dist[v as usize].fetch_min_nonnegative(d)
    }
}

/// The bucket of distance `d` for width `delta` (monotone in `d`,
/// saturating at `u64::MAX - 1`: the kernels use `u64::MAX` for "no
/// bucket", and a far bucket must never look like it).
#[inline]
pub fn bucket(d: f64, delta: f64) -> u64 {
    ((d / delta) as u64).min(u64::MAX - 1)
}

/// Delta-stepping distances on any executor ([`SsspDriver`] without its
/// parent phases' output).
pub fn distances_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Distances, AlgoError> {
    let out = run_on(exec, cfg)?;
    Ok(Distances {
        dist: out.dist,
        iterations: out.iterations,
    })
}

/// SSSP on any executor through [`SsspDriver`]: the same distances and
/// parents as [`run`], bit for bit.
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, SsspDriver::new(exec.view(), cfg)?)
}

/// The phases of [`SsspDriver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Delta-stepping relaxations.
    Relax,
    /// Each reached vertex takes its smallest in-neighbour over a tight
    /// edge that strictly lowers the distance.
    Parents,
    /// BFS over tight edges (only when some reached vertex found no parent).
    TightHops,
    /// Each reached vertex takes its smallest tight in-neighbour one hop up.
    TightParents,
}

/// Sentinel hop count of [`Paths`]: not reached over tight edges.
pub(super) const NO_HOP: u32 = u32::MAX;

/// The program of [`SsspDriver`]: delta-stepping relaxations
/// ([`Program`]), then the parent phases of [`parents`] as supersteps.
/// Messages are `f64`: distances while relaxing and in the tight BFS,
/// vertex ids (exact in `f64`) while choosing parents; every phase
/// combines by minimum.
#[derive(Debug)]
pub struct Paths {
    relax: Program,
    parent: Vec<AtomicU32>,
    hop: Vec<AtomicU32>,
    source: VertexId,
    phase: Phase,
    level: u32,
}

impl Paths {
    fn dist(&self, v: VertexId) -> f64 {
        self.relax.dist(v)
    }
}

impl VertexProgram for Paths {
    type Msg = f64;

    fn combine(&self, a: f64, b: f64) -> f64 {
        a.min(b)
    }

    fn cond(&self, v: VertexId) -> bool {
        match self.phase {
            Phase::Relax => true,
            Phase::Parents => v != self.source && self.dist(v) < f64::INFINITY,
            Phase::TightHops => self.hop[v as usize].load(Ordering::Relaxed) == NO_HOP,
            Phase::TightParents => {
                v != self.source && self.hop[v as usize].load(Ordering::Relaxed) != NO_HOP
            }
        }
    }

    fn sparse_signal(&self, src: VertexId) -> Option<f64> {
        match self.phase {
            Phase::Relax => self.relax.sparse_signal(src),
            Phase::TightHops => Some(self.dist(src)),
            // Dense-only phases (the driver forces pull).
            Phase::Parents | Phase::TightParents => None,
        }
    }

    fn over_edge(&self, m: f64, w: f64) -> f64 {
        m + w
    }

    fn sparse_slot(&self, dst: VertexId, m: f64) -> bool {
        match self.phase {
            Phase::Relax => self.relax.sparse_slot(dst, m),
            Phase::TightHops => self.claim_hop(dst, m),
            Phase::Parents | Phase::TightParents => false,
        }
    }

    fn dense_signal(&self, v: VertexId, edges: InEdges<'_>) -> Option<f64> {
        match self.phase {
            Phase::Relax => self.relax.dense_signal(v, edges),
            Phase::TightHops => edges
                .active()
                .map(|(u, w)| self.dist(u) + w)
                .min_by(f64::total_cmp),
            Phase::Parents => {
                let d = self.dist(v);
                edges
                    .iter()
                    .find(|&(u, w)| self.dist(u) < d && self.dist(u) + w == d)
                    .map(|(u, _)| f64::from(u))
            }
            Phase::TightParents => {
                let (d, h) = (self.dist(v), self.hop[v as usize].load(Ordering::Relaxed));
                edges
                    .iter()
                    .find(|&(u, w)| {
                        self.hop[u as usize].load(Ordering::Relaxed).wrapping_add(1) == h
                            && self.dist(u) + w == d
                    })
                    .map(|(u, _)| f64::from(u))
            }
        }
    }

    fn dense_slot(&self, v: VertexId, m: f64) -> bool {
        match self.phase {
            Phase::Relax => self.relax.dense_slot(v, m),
            Phase::TightHops => self.claim_hop(v, m),
            Phase::Parents | Phase::TightParents => {
                self.parent[v as usize].store(m as u32, Ordering::Relaxed);
                false
            }
        }
    }
}

impl Paths {
    /// Tight BFS: `v` joins the current hop level when an offer over a
    /// tight edge arrives (offers are never below `dist[v]`, so the
    /// minimum of several is tight when one of them is). An unreachable
    /// `v` is never claimed, even over a `+∞` arc (`d + ∞ == ∞`).
    fn claim_hop(&self, v: VertexId, offer: f64) -> bool {
        offer < f64::INFINITY
            && offer == self.dist(v)
            && self.hop[v as usize]
                .compare_exchange(NO_HOP, self.level, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// SSSP as a step machine that any executor runs: delta-stepping (the
/// lowest non-empty bucket of width `Δ` is one frontier, relaxed until it
/// stays empty), then the parents of [`run`] chosen by pull steps (and,
/// across zero-weight ties, a BFS over tight edges), so distances and
/// parents equal [`run`]'s exactly.
#[derive(Debug)]
pub struct SsspDriver {
    p: Paths,
    delta: f64,
    buckets: BTreeMap<u64, Vec<VertexId>>,
    iterations: usize,
    frontier: Option<VertexSubset>,
}

impl SsspDriver {
    /// SSSP from `cfg.source` over a graph seen through `view` (checks the
    /// source, the weights and `Δ` by [`prepare`]).
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        let delta = prepare(view, cfg)?;
        let n = view.num_vertices();
        let parent: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(NO_PARENT)).collect();
        parent[cfg.source as usize].store(cfg.source, Ordering::Relaxed);
        let mut buckets = BTreeMap::new();
        buckets.insert(0, vec![cfg.source]);
        Ok(SsspDriver {
            p: Paths {
                relax: Program::new(n, cfg.source),
                parent,
                hop: (0..n).map(|_| AtomicU32::new(NO_HOP)).collect(),
                source: cfg.source,
                phase: Phase::Relax,
                level: 0,
            },
            delta,
            buckets,
            iterations: 0,
            frontier: None,
        })
    }

    /// The driver after its relaxations, holding the distances `dist`
    /// (`f64::INFINITY` when unreachable) of `iterations` relaxation
    /// supersteps: what is left to run are the parent phases, which choose
    /// the parents [`run`] chooses for those distances. For executors that
    /// compute the distances by a fast path of their own (the distributed
    /// executor's); `dist` must be the shortest-path distances from
    /// `cfg.source` (checked by the tests of such paths, not here).
    /// `Err` as [`SsspDriver::new`], or when `dist` is not one distance per
    /// vertex with the source's 0.
    pub fn from_distances(
        view: &dyn GraphView,
        cfg: &Config,
        dist: Vec<f64>,
        iterations: usize,
    ) -> Result<Self, AlgoError> {
        let mut d = SsspDriver::new(view, cfg)?;
        if dist.len() != view.num_vertices() || dist[cfg.source as usize] != 0.0 {
            return Err(AlgoError::InvalidParameter(
                "sssp: distances of another graph or source".into(),
            ));
        }
        d.p.relax.dist = dist.into_iter().map(AtomicF64::new).collect();
        d.buckets.clear();
        d.iterations = iterations;
        Ok(d)
    }

    /// The next bucket's live members, or `None` when every bucket is empty.
    fn next_bucket<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let n = self.p.parent.len();
        while let Some((k, ids)) = self.buckets.pop_first() {
            let (p, delta) = (&self.p.relax, self.delta);
            let frontier = VertexSubset::from_ids(n, ids);
            let frontier = ops.process_vertices(&frontier, |v| bucket(p.dist(v), delta) == k);
            if !frontier.is_empty() {
                self.iterations += 1;
                return Some(frontier);
            }
        }
        None
    }
}

impl Driver for SsspDriver {
    type Program = Paths;
    type Output = Output;

    fn program(&self) -> &Paths {
        &self.p
    }

    fn options(&self) -> StepOptions {
        match self.p.phase {
            Phase::Parents | Phase::TightParents => StepOptions {
                direction: crate::edge_map::Direction::Pull,
                ..StepOptions::default()
            },
            Phase::Relax | Phase::TightHops => StepOptions::default(),
        }
    }

    fn reads_weights(&self) -> bool {
        true
    }

    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        let n = self.p.parent.len();
        match self.p.phase {
            Phase::Relax => {
                if let Some(f) = self.next_bucket(ops) {
                    return Some(f);
                }
                self.p.phase = Phase::Parents;
                Some(VertexSubset::all(n))
            }
            Phase::Parents => {
                let p = &self.p;
                let orphans = ops.vertex_sum(|v| {
                    let lost =
                        p.cond(v) && p.parent[v as usize].load(Ordering::Relaxed) == NO_PARENT;
                    f64::from(u8::from(lost))
                });
                if orphans == 0.0 {
                    return None;
                }
                self.p.phase = Phase::TightHops;
                self.p.hop[self.p.source as usize].store(0, Ordering::Relaxed);
                self.p.level = 1;
                Some(VertexSubset::from_vertex(n, self.p.source))
            }
            Phase::TightHops => match self.frontier.take() {
                Some(f) if !f.is_empty() => {
                    self.p.level += 1;
                    Some(f)
                }
                _ => {
                    self.p.phase = Phase::TightParents;
                    Some(VertexSubset::all(n))
                }
            },
            Phase::TightParents => None,
        }
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, next: VertexSubset) {
        match self.p.phase {
            Phase::Relax => {
                let (p, delta) = (&self.p.relax, self.delta);
                for v in next.iter() {
                    self.buckets
                        .entry(bucket(p.dist(v), delta))
                        .or_default()
                        .push(v);
                }
            }
            Phase::TightHops => self.frontier = Some(next),
            Phase::Parents | Phase::TightParents => {}
        }
    }

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        let Paths { relax, parent, .. } = self.p;
        Output {
            dist: relax
                .dist
                .into_par_iter()
                .map(AtomicF64::into_inner)
                .collect(),
            parent: parent.into_iter().map(AtomicU32::into_inner).collect(),
            iterations: self.iterations,
        }
    }

    fn state_bytes(&self) -> u64 {
        let queued: usize = self.buckets.values().map(Vec::len).sum();
        16 * self.p.parent.len() as u64 + 4 * queued as u64
    }
}
