//! CDLP (Graphalytics label propagation) in the shared scan. The jobs of a
//! group differ at most in their iteration counts; synchronous CDLP's
//! labels after `t` iterations do not depend on how many follow, so the
//! group runs up to the largest count and hands each job the labels when
//! its count is reached. Each superstep is one dense pass: every vertex
//! takes the most frequent label among its neighbours' (out- and
//! in-neighbours counted separately on directed graphs), ties by the
//! smallest, exactly as `algo::cdlp::run`, so labels are bit-identical.
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use plexus_engine::algo::cdlp;
use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::job::JobShared;
use crate::output::{JobOutput, Values};
use crate::scan::{ChunkPlan, Plan, ScanChunk, ScanTask};
use crate::spec::Resolved;

/// CDLP jobs sharing one label propagation.
pub struct CdlpGroup {
    jobs: Vec<(Arc<JobShared>, usize)>,
    label: Vec<u32>,
    next: Vec<AtomicU32>,
    done: usize,
    /// `changed[u]`: whether u's label changed in the last superstep.
    changed: Vec<u8>,
    /// Scratch for counting labels, lent to each worker for a chunk (the
    /// engine's, so the labels are the engine's bit for bit).
    tallies: cdlp::Tallies,
    /// Whether this superstep skips vertices none of whose neighbours'
    /// labels changed (they keep theirs, exactly as the engine's
    /// `algo::cdlp` skips them): once fewer than half the labels changed.
    check: bool,
    /// No label changed in the last superstep: a fixed point, so every
    /// job's labels are the current ones whatever its count (as the
    /// engine's `algo::cdlp` stops there too).
    fixed: bool,
}

impl CdlpGroup {
    /// An empty group on `g`: labels start as natural ids.
    pub fn new(g: &Graph) -> Self {
        let n = g.num_vertices();
        CdlpGroup {
            jobs: Vec::new(),
            label: plexus_engine::hugepages::from_fn(n, |v| g.natural_id(v as VertexId)),
            next: Vec::new(),
            done: 0,
            changed: Vec::new(),
            tallies: cdlp::Tallies::new(n),
            check: false,
            fixed: false,
        }
    }
}

impl ScanTask for CdlpGroup {
    fn plan(&mut self, g: &Graph) -> Plan {
        let done = self.done;
        let fixed = self.fixed;
        let label = &self.label;
        self.jobs.retain(|(j, target)| {
            if let Some(e) = j.stop_reason() {
                j.finish(Err(e));
                return false;
            }
            if *target == done || fixed {
                j.finish(Ok(JobOutput {
                    snapshot: Arc::clone(&j.snapshot),
                    values: Values::Cdlp {
                        label: label.clone(),
                        iterations: *target,
                    },
                }));
                return false;
            }
            true
        });
        if self.jobs.is_empty() {
            return Plan::Done;
        }
        let n = g.num_vertices();
        if self.next.len() != n {
            self.next = plexus_engine::hugepages::from_fn(n, |_| AtomicU32::new(0));
        }
        for (j, _) in &self.jobs {
            j.mark_running();
            j.record_step(n as u64, g.num_arcs());
        }
        Plan::Chunks(ChunkPlan::dense(g.is_directed()))
    }

    fn run_chunk(&self, g: &Graph, chunk: &ScanChunk, _a: &[VertexId], _out: &mut Vec<VertexId>) {
        for (j, _) in &self.jobs {
            j.maybe_fault();
        }
        self.tallies.lend(|tally| {
            for v in chunk.vertices() {
                let own = self.label[v as usize];
                if self.check && cdlp::settled(g, v, &self.changed) {
                    self.next[v as usize].store(own, Ordering::Relaxed);
                    continue;
                }
                let l = tally.next_label(g, v, &self.label);
                self.next[v as usize].store(l, Ordering::Relaxed);
            }
        });
    }

    fn end_step(&mut self, _g: &Graph, _activated: Vec<VertexId>) {
        let next = &self.next;
        let n = self.label.len();
        if self.changed.len() != n {
            self.changed = plexus_engine::hugepages::filled(n, 0u8);
        }
        let moved: usize = self
            .label
            .par_chunks_mut(4096)
            .zip(self.changed.par_chunks_mut(4096))
            .enumerate()
            .map(|(c, (labels, flags))| {
                let mut moved = 0;
                for (i, (l, f)) in labels.iter_mut().zip(flags).enumerate() {
                    let new = next[c * 4096 + i].load(Ordering::Relaxed);
                    *f = u8::from(new != *l);
                    moved += usize::from(new != *l);
                    *l = new;
                }
                moved
            })
            .sum();
        self.check = cdlp::skips_settled(moved, n);
        self.fixed = moved == 0;
        self.done += 1;
    }

    fn cancelled(&self) -> bool {
        self.jobs.iter().all(|(j, _)| j.cancel_requested())
    }

    fn jobs(&self) -> Vec<Arc<JobShared>> {
        self.jobs.iter().map(|(j, _)| Arc::clone(j)).collect()
    }

    fn state_bytes(&self) -> u64 {
        9 * self.label.len() as u64 + self.tallies.bytes() as u64
    }

    fn gathered_bytes(&self) -> u64 {
        // Neighbours' labels, and their changed flags when skipping.
        let n = self.label.len() as u64;
        if self.check {
            5 * n
        } else {
            4 * n
        }
    }

    fn join(&mut self, _g: &Graph, job: &Arc<JobShared>) -> bool {
        let Some(Resolved::Cdlp { iterations }) = job.resolved else {
            return false;
        };
        if self.done > 0 {
            return false;
        }
        job.set_state_bytes(self.state_bytes() / (self.jobs.len() as u64 + 1));
        self.jobs.push((Arc::clone(job), iterations));
        true
    }
}
