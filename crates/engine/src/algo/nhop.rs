//! N-hop neighbourhood: the vertices within `hops` hops of a source along
//! out-edges.
//!
//! **Returns** [`Output`]: `depth[v]` is the hop distance from the source
//! when it is at most `hops`, else `u32::MAX` (farther or unreachable);
//! `reached` is the number of vertices with a depth (the source included).
//!
//! **Method.** The BFS vertex program ([`crate::algo::bfs::Program`]) run
//! for at most `hops` supersteps, so only the first `hops` levels are ever
//! expanded (push/pull by Ligra's rule, as BFS).
//!
//! **Input.** Any graph; weights are ignored. `hops = 0` reaches only the
//! source.
use plexus_graph::{Graph, VertexId};

use crate::algo::bfs;
use crate::driver::{drive, Driver};
use crate::error::{AlgoError, VerifyError};
use crate::program::{Executor, GraphView, InMemory, StepOptions, Vertices};
use crate::subset::VertexSubset;

/// Sentinel for "farther than `hops` or unreachable".
pub const UNREACHED: u32 = u32::MAX;
/// Default source vertex (internal id).
pub const DEFAULT_SOURCE: VertexId = 0;
/// Default number of hops.
pub const DEFAULT_HOPS: u32 = 2;

/// N-hop parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Source vertex (internal id). Default [`DEFAULT_SOURCE`].
    pub source: VertexId,
    /// Largest hop count included. Default [`DEFAULT_HOPS`].
    pub hops: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            source: DEFAULT_SOURCE,
            hops: DEFAULT_HOPS,
        }
    }
}

/// N-hop result, indexed by internal id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Hop distance when `≤ hops`, else [`UNREACHED`].
    pub depth: Vec<u32>,
    /// Number of vertices within `hops` hops (the source included).
    pub reached: u64,
}

fn check(g: &dyn GraphView, cfg: &Config) -> Result<(), AlgoError> {
    if (cfg.source as usize) < g.num_vertices() {
        Ok(())
    } else {
        Err(AlgoError::NoSuchVertex(u64::from(cfg.source)))
    }
}

fn output(depth: Vec<u32>) -> Output {
    let reached = depth.iter().filter(|&&d| d != UNREACHED).count() as u64;
    Output { depth, reached }
}

/// Runs the bounded BFS in parallel on the current rayon pool (the
/// in-memory executor running [`NhopDriver`]).
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    run_on(&InMemory::new(g), cfg)
}

/// N-hop on any executor through [`NhopDriver`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, NhopDriver::new(exec.view(), cfg)?)
}

/// The BFS driver stopped after `hops` levels.
#[derive(Debug)]
pub struct NhopDriver(bfs::BfsDriver);

impl NhopDriver {
    /// N-hop from `cfg.source` over a graph seen through `view`.
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        check(view, cfg)?;
        let bfs_cfg = bfs::Config {
            source: cfg.source,
            ..bfs::Config::default()
        };
        let hops = cfg.hops.min(u32::MAX - 1);
        Ok(NhopDriver(bfs::BfsDriver::new(view, &bfs_cfg)?.up_to(hops)))
    }
}

impl Driver for NhopDriver {
    type Program = bfs::Program;
    type Output = Output;

    fn program(&self) -> &bfs::Program {
        self.0.program()
    }
    fn options(&self) -> StepOptions {
        self.0.options()
    }
    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        self.0.next_frontier(ops)
    }
    fn activated<V: Vertices>(&mut self, ops: &V, next: VertexSubset) {
        self.0.activated(ops, next)
    }
    fn finish<V: Vertices>(self, ops: &V) -> Output {
        output(self.0.finish(ops).depth)
    }
    fn state_bytes(&self) -> u64 {
        self.0.state_bytes()
    }
}

/// Plain sequential BFS with a queue, not expanding vertices at depth `hops`.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    check(g, cfg)?;
    let mut depth = vec![UNREACHED; g.num_vertices()];
    depth[cfg.source as usize] = 0;
    let mut queue = std::collections::VecDeque::from([cfg.source]);
    while let Some(u) = queue.pop_front() {
        let d = depth[u as usize];
        if d >= cfg.hops {
            continue;
        }
        for &v in g.out_neighbors(u) {
            if depth[v as usize] == UNREACHED {
                depth[v as usize] = d + 1;
                queue.push_back(v);
            }
        }
    }
    Ok(output(depth))
}

/// Checks the BFS properties restricted to `hops` levels: the source has
/// depth 0; every reached vertex other than the source has an in-neighbour
/// one level up; every edge from a vertex at depth `d < hops` reaches a
/// vertex at depth `≤ d + 1`; no depth exceeds `hops`; `reached` counts
/// the vertices with a depth.
pub fn verify(g: &Graph, cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    bfs::verify_levels(g, cfg.source, cfg.hops.min(u32::MAX - 1), &out.depth, None)?;
    let count = out.depth.iter().filter(|&&d| d != UNREACHED).count() as u64;
    if count != out.reached {
        return Err(VerifyError::new(format!(
            "reached is {} but {count} vertices have a depth",
            out.reached
        )));
    }
    Ok(())
}

/// The conformance check of [`NhopDriver`] on `exec` (see
/// [`crate::conformance`]): its depths equal [`reference`]'s and it passes
/// [`verify`], for a source and hop count chosen by `seed`.
pub fn check_on<E: crate::program::Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    let n = g.num_vertices().max(1) as u64;
    let cfg = Config {
        source: (seed % n) as VertexId,
        hops: (seed >> 8) as u32 % 4,
    };
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let want = reference(g, &cfg).map_err(|e| e.to_string())?;
    crate::conformance::same("depth", &got, &want)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::testgraphs::{graphs, THREADS};
    use crate::with_threads;
    use plexus_graph::BuildOptions;
    use proptest::prelude::*;

    fn path(n: u32) -> Graph {
        let e: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
        Graph::from_edges(n as usize, &e, &BuildOptions::directed()).unwrap()
    }

    #[test]
    fn a_path_is_cut_after_the_given_number_of_hops() {
        let g = path(6);
        let c = Config { source: 1, hops: 2 };
        let out = run(&g, &c).unwrap();
        assert_eq!(out.depth, vec![UNREACHED, 0, 1, 2, UNREACHED, UNREACHED]);
        assert_eq!(out.reached, 3);
        verify(&g, &c, &out).unwrap();
        let zero = Config { source: 1, hops: 0 };
        assert_eq!(run(&g, &zero).unwrap().reached, 1);
        let far = Config {
            source: 0,
            hops: u32::MAX,
        };
        assert_eq!(run(&g, &far).unwrap().reached, 6);
    }

    #[test]
    fn verifier_rejects_corrupted_outputs() {
        let g = path(5);
        let c = Config { source: 0, hops: 2 };
        let good = run(&g, &c).unwrap();
        let mut bad = good.clone();
        bad.depth[3] = 3;
        bad.reached += 1;
        assert!(verify(&g, &c, &bad).unwrap_err().0.contains("vertex 3"));
        let mut bad = good.clone();
        bad.depth[2] = UNREACHED;
        bad.reached -= 1;
        assert!(verify(&g, &c, &bad).unwrap_err().0.contains("1 -> 2"));
        let mut bad = good;
        bad.reached = 9;
        assert!(verify(&g, &c, &bad).is_err());
        assert_eq!(
            run(&g, &Config { source: 5, hops: 1 }),
            Err(AlgoError::NoSuchVertex(5))
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn run_matches_reference_and_passes_verify(spec in graphs(), s in 0usize..1000, hops in 0u32..5) {
            let g = spec.build();
            let c = Config { source: (s % g.num_vertices()) as VertexId, hops };
            let want = reference(&g, &c).unwrap();
            verify(&g, &c, &want).unwrap();
            for t in THREADS {
                let got = with_threads(t, || run(&g, &c)).unwrap().unwrap();
                prop_assert_eq!(&got, &want);
                if let Err(e) = verify(&g, &c, &got) {
                    return Err(TestCaseError::fail(e.to_string()));
                }
            }
        }
    }
}
