//! Step-machine drivers: an algorithm's loop turned inside out, so that any
//! executor (in memory, a shared scan serving many jobs, out of core, MPI)
//! can run it one superstep at a time.
//!
//! A [`Driver`] owns its program and all state between supersteps. The
//! executor asks it for the next frontier ([`Driver::next_frontier`], where
//! the driver's own logic runs: level counters, bucket choice, convergence
//! tests, vertex steps), runs the edge step with the driver's program and
//! [`Driver::options`], and hands back the activated vertices
//! ([`Driver::activated`]). When `next_frontier` returns `None` the
//! executor calls [`Driver::finish`] once for the result.
//!
//! Invariants every driver keeps:
//! - Between supersteps it reads the graph only through [`Vertices::view`]
//!   and per-vertex steps ([`Vertices::process_vertices`],
//!   [`Vertices::vertex_sum`]); during a superstep only through its
//!   program's signals and slots.
//! - It may change its program's per-step fields and its options between
//!   supersteps (a multi-phase algorithm switches phase there), never
//!   during one.
//! - The result does not depend on which executor ran it beyond what the
//!   algorithm's module states (exact for integer results; within a stated
//!   bound for floating-point sums combined in another order).
use crate::error::AlgoError;
use crate::program::{Executor, StepOptions, VertexProgram, Vertices};
use crate::subset::VertexSubset;

/// An algorithm's driver loop as a step machine (see the module docs).
pub trait Driver: Send + Sync {
    /// The vertex program the edge steps run.
    type Program: VertexProgram + Send;
    /// What the algorithm returns.
    type Output: Send;

    /// The program, for the executor's kernels.
    fn program(&self) -> &Self::Program;

    /// Options of the next superstep (direction, threshold, symmetric or
    /// reverse traversal); read after [`Driver::next_frontier`].
    fn options(&self) -> StepOptions {
        StepOptions::default()
    }

    /// Whether the program reads edge weights (executors that load edges
    /// may skip the weights otherwise).
    fn reads_weights(&self) -> bool {
        false
    }

    /// Runs the driver's logic between supersteps and returns the frontier
    /// of the next one, or `None` when the algorithm has finished.
    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset>;

    /// Takes the vertices the last superstep activated.
    fn activated<V: Vertices>(&mut self, ops: &V, next: VertexSubset);

    /// The result; called once, after `next_frontier` returned `None`.
    fn finish<V: Vertices>(self, ops: &V) -> Self::Output;

    /// Bytes of per-vertex state the driver holds (for admission control).
    fn state_bytes(&self) -> u64;
}

/// Runs `driver` to completion on `exec`, one superstep at a time; stops
/// with [`AlgoError::Cancelled`] when the caller's progress observer asks.
pub fn drive<E: Executor, D: Driver>(exec: &E, mut driver: D) -> Result<D::Output, AlgoError> {
    while let Some(frontier) = driver.next_frontier(exec) {
        if crate::progress::cancel_requested() {
            return Err(AlgoError::Cancelled);
        }
        let step = exec.superstep(driver.program(), &frontier, &driver.options());
        driver.activated(exec, step.next);
    }
    Ok(driver.finish(exec))
}
