//! Drivers that run the engine's own vertex programs (unchanged) in the
//! shared scan, one job per task: BFS (`algo::bfs::Program`) and SSSP
//! (`algo::sssp::Program` with the engine's delta-stepping buckets). Each
//! replays the engine driver's loop step for step, so a job's result is the
//! engine's: BFS depths and SSSP distances and parents bit-identical.
use std::collections::BTreeMap;

use plexus_engine::algo::{bfs, sssp};
use plexus_engine::program::VertexProgram;
use plexus_engine::subset::VertexSubset;
use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::output::Values;
use crate::scan::Driver;

/// BFS as in `algo::bfs::run`: one level per superstep until the frontier is empty.
pub struct BfsDriver {
    p: bfs::Program,
    frontier: Option<VertexSubset>,
    level: u32,
    n: usize,
}

impl BfsDriver {
    /// BFS from `source` on a graph of `n` vertices.
    pub fn new(n: usize, source: VertexId) -> Self {
        BfsDriver {
            p: bfs::Program::new(n, source),
            frontier: Some(VertexSubset::from_vertex(n, source)),
            level: 0,
            n,
        }
    }
}

impl Driver for BfsDriver {
    type P = bfs::Program;

    fn program(&self) -> &bfs::Program {
        &self.p
    }

    fn next_frontier(&mut self, _g: &Graph) -> Option<VertexSubset> {
        let f = self.frontier.take()?;
        if f.is_empty() {
            return None;
        }
        self.level += 1;
        self.p.set_level(self.level);
        Some(f)
    }

    fn activated(&mut self, _g: &Graph, next: VertexSubset) {
        self.frontier = Some(next);
    }

    fn output(&mut self, _g: &Graph) -> Values {
        let p = std::mem::replace(&mut self.p, bfs::Program::new(0, 0));
        let (depth, parent) = p.into_parts();
        Values::Bfs {
            depth,
            parent,
            iterations: self.level as usize,
        }
    }

    fn state_bytes(&self) -> u64 {
        let n = self.n as u64;
        8 * n + self.frontier.as_ref().map_or(0, |f| 4 * f.len() as u64)
    }
}

/// The bucket of distance `d` for width `delta` (the engine's rule).
#[inline]
fn bucket(d: f64, delta: f64) -> u64 {
    (d / delta) as u64
}

/// Delta-stepping as in `algo::sssp::run`: the lowest non-empty bucket is
/// one frontier, relaxed again and again until it stays empty; parents from
/// the distances by the engine's `sssp::parents_of`.
pub struct SsspDriver {
    p: sssp::Program,
    source: VertexId,
    delta: f64,
    buckets: BTreeMap<u64, Vec<VertexId>>,
    iterations: usize,
    n: usize,
}

impl SsspDriver {
    /// SSSP from `source` with bucket width `delta` (> 0).
    pub fn new(n: usize, source: VertexId, delta: f64) -> Self {
        let mut buckets = BTreeMap::new();
        buckets.insert(0, vec![source]);
        SsspDriver {
            p: sssp::Program::new(n, source),
            source,
            delta,
            buckets,
            iterations: 0,
            n,
        }
    }
}

impl Driver for SsspDriver {
    type P = sssp::Program;

    fn program(&self) -> &sssp::Program {
        &self.p
    }

    fn weights(&self) -> bool {
        true
    }

    fn next_frontier(&mut self, _g: &Graph) -> Option<VertexSubset> {
        let n = self.n;
        while let Some((k, ids)) = self.buckets.pop_first() {
            let (p, delta) = (&self.p, self.delta);
            let mut kept: Vec<VertexId> = VertexSubset::from_ids(n, ids).to_sorted_vec();
            kept.retain(|&v| bucket(p.dist(v), delta) == k);
            if kept.is_empty() {
                continue;
            }
            self.iterations += 1;
            return Some(VertexSubset::from_distinct_ids(n, kept));
        }
        None
    }

    fn activated(&mut self, _g: &Graph, next: VertexSubset) {
        let (p, delta) = (&self.p, self.delta);
        let moved: Vec<(u64, VertexId)> = match next.as_sparse() {
            Some(ids) => ids
                .par_iter()
                .map(|&v| (bucket(p.dist(v), delta), v))
                .collect(),
            None => next.iter().map(|v| (bucket(p.dist(v), delta), v)).collect(),
        };
        for (b, v) in moved {
            self.buckets.entry(b).or_default().push(v);
        }
    }

    fn output(&mut self, _g: &Graph) -> Values {
        let dist: Vec<f64> = (0..self.n as VertexId)
            .into_par_iter()
            .map(|v| self.p.dist(v))
            .collect();
        self.p = sssp::Program::new(0, 0);
        Values::Sssp {
            dist,
            source: self.source,
            iterations: self.iterations,
        }
    }

    fn state_bytes(&self) -> u64 {
        let queued: usize = self.buckets.values().map(Vec::len).sum();
        8 * self.n as u64 + 4 * queued as u64
    }
}

// The programs are the engine's, unchanged: this only states it.
const _: fn() = || {
    fn is_program<P: VertexProgram>() {}
    is_program::<bfs::Program>();
    is_program::<sssp::Program>();
};
