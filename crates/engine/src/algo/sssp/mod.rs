//! Single-source shortest paths on non-negative edge weights.
//!
//! **Returns** [`Output`]: `dist[v]` is the length of a shortest path
//! `source ⇝ v` along out-edges (`f64::INFINITY` when unreachable),
//! `parent[v]` an in-neighbour `u` whose edge completes such a path exactly
//! (`dist[u] + w(u, v) == dist[v]` in `f64`): the smallest such id with
//! `dist[u] < dist[v]`, or, when zero-weight ties leave some vertex without
//! one, the smallest id among those with the fewest hops from the source
//! over such tight edges, so parents always form a tree (the source is its
//! own parent; `u32::MAX` when unreachable), and `iterations` the number of
//! relaxation supersteps. Distances are the minimum over paths of the path
//! length summed left to right in `f64`, so they equal Dijkstra's exactly;
//! parents are a deterministic function of the distances.
//!
//! **Method.** Delta-stepping (Meyer & Sanders, "Δ-stepping: a
//! parallelizable shortest path algorithm", J. Algorithms 2003), bucketed as
//! in GAPBS `sssp.cc` (Beamer et al., 2015): vertices wait in buckets of
//! width `Δ` by tentative distance; the lowest non-empty bucket is relaxed
//! as one frontier, again and again until it stays empty, then the next.
//! Each relaxation round is a superstep of a [`VertexProgram`] (message: a
//! tentative distance; `over_edge` adds the weight; slots take the minimum),
//! pushed or pulled by Ligra's rule. `Δ` defaults to `4 · w̄ / d̄` (mean
//! edge weight over mean out-degree, [`Config::delta`]).
//!
//! **Input.** A weighted graph (integer weights are integral `f64`s) with
//! no negative or NaN weight; `+∞` weights behave as absent edges. Zero
//! weights, self-loops and duplicate edges are fine.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::driver::{drive, Driver};
use crate::edge_map::{edge_map, EdgeFunctor, EdgeMapOptions};
use crate::error::{AlgoError, VerifyError};
use crate::program::{
    AtomicF64, Executor, GraphView, InEdges, StepOptions, VertexProgram, Vertices,
};
use crate::subset::VertexSubset;

mod config;
mod parents;
mod program;
mod reference;
mod rounds;
mod state;
mod team;

use self::parents::*;
use self::rounds::*;
use self::state::*;
use self::team::*;

pub use self::config::{
    default_delta, prepare, Config, Output, DEFAULT_SOURCE, NO_PARENT, VERIFY_EPSILON,
};
pub use self::program::{bucket, distances_on, run_on, Paths, Program, SsspDriver};
pub use self::reference::{check_on, reference, verify};

/// Runs delta-stepping in parallel on the current rayon pool: distances and
/// parents ([`distances`] then [`parents_of`]).
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let d = distances(g, cfg)?;
    let parent = parents(g, cfg.source, &d.dist);
    Ok(Output {
        dist: d.dist,
        parent,
        iterations: d.iterations,
    })
}

/// Shortest-path distances alone (what GAPBS's `sssp` computes).
#[derive(Clone, Debug, PartialEq)]
pub struct Distances {
    /// Shortest-path distance; `f64::INFINITY` when unreachable.
    pub dist: Vec<f64>,
    /// Relaxation supersteps run.
    pub iterations: usize,
}

/// Delta-stepping distances, without parents.
pub fn distances(g: &Graph, cfg: &Config) -> Result<Distances, AlgoError> {
    let delta = prepare(g, cfg)?;
    let narrow = if try_u16(g) {
        kernel::<u16>(g, cfg.source, delta)?
    } else {
        None
    };
    let wide = || match fits_u32(g) {
        true => kernel::<u32>(g, cfg.source, delta),
        false => kernel::<f64>(g, cfg.source, delta),
    };
    let (dist, iterations) = match narrow {
        Some(r) => r,
        // u32 and f64 never overflow (fits_u32; f64 sums saturate to +∞).
        None => wide()?.ok_or_else(|| {
            AlgoError::InvalidParameter("sssp: a distance overflowed its word".into())
        })?,
    };
    Ok(Distances { dist, iterations })
}

/// Delta-stepping in word `W`: by a team when none is running, else by
/// rounds of the pool; `None` when a sum overflowed a narrow word.
fn kernel<W: Word>(
    g: &Graph,
    source: VertexId,
    delta: f64,
) -> Result<Option<(Vec<f64>, usize)>, AlgoError> {
    match crate::team::exclusive() {
        Some(_team) => delta_stepping_team::<W>(g, source, delta),
        None => delta_stepping_in_memory::<W>(g, source, delta),
    }
}

/// The parents that go with `dist` (see the module docs): one pass over the
/// in-edges, so callers that only need distances can skip it.
pub fn parents_of(g: &Graph, cfg: &Config, dist: &[f64]) -> Vec<u32> {
    parents(g, cfg.source, dist)
}

#[cfg(test)]
mod tests;
