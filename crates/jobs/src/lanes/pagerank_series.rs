//! PageRank jobs that differ only in damping and stopping rule, served by
//! one damping-free power series: one gather per in-edge for all of them,
//! however many they are.
//!
//! **Why it holds.** With a uniform teleport `e = 1/|V|` and dangling mass
//! handed to `e`, an iteration is `x' = (1 − d)·e + d·M x`, where
//! `M x = P x + e·Σ_{dangling} x` is linear and keeps the sum. From the
//! engine's start `x_0 = e`, by induction
//!
//! ```text
//! x_t = (1 − d)·Σ_{k<t} d^k y_k + d^t y_t,    y_k = M^k e,
//! x_{t+1} − x_t = d^{t+1}·(y_{t+1} − y_t)
//! ```
//!
//! (the power series of PageRank in its damping factor: Boldi, Santini and
//! Vigna, "PageRank as a function of the damping factor", WWW 2005). So
//! one sequence `y_k` (the iteration with damping 1) serves every damping
//! `d`: each job keeps only its accumulator `S = (1 − d)·Σ_{k<t} d^k y_k`
//! (8 bytes per vertex, updated by a streaming pass), its L1 change is
//! `d^{t+1}·Σ|y_{t+1} − y_t|` from the one sum the sequence computes, and
//! its ranks are `S + d^t y_t` when it stops. A pass costs about one
//! single PageRank iteration plus that stream, whatever the number of jobs,
//! where [`super::pagerank::PageRankLanes`] gather a row of one
//! contribution per job for each edge.
//!
//! **What it serves.** Jobs with the uniform teleport (no
//! personalisation), Jacobi iteration, and no elimination of isolated
//! vertices (`pagerank::Isolated::of` is `None`: a fixed iteration count,
//! or a graph where it does not apply), of one [`pagerank::Precision`]
//! (contributions of `y` are stored in f32 for `Single`, as the engine
//! stores them). Other PageRank jobs run in lanes.
//!
//! **Results** equal the engine's in exact arithmetic; in floating point
//! they differ by rounding (the sums are taken in a different order):
//! L1 distance about 1e-15 in double, about the engine's own f32 error
//! (≤ 1e-6) in single. Iteration counts and `converged` are the engine's
//! unless a change lands within rounding of `|V|·tolerance`.
//!
//! **Joining.** Every job must start with the sequence at `y_0`, so jobs
//! join only before the first pass; PageRank jobs that arrive later start
//! a series of their own (the manager's admission).
use std::sync::Arc;

use plexus_engine::algo::pagerank;
use plexus_engine::program::{deterministic_sum, AtomicF64};
use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use super::pagerank::{Elem, PREFETCH_AHEAD, SUM_BLOCK};
use crate::job::JobShared;
use crate::output::{JobOutput, Values};
use crate::scan::{ChunkPlan, Plan, ScanChunk, ScanTask};
use crate::spec::Resolved;

/// Whether a PageRank job of `cfg` on `g` can be served by a damping
/// series (see the module docs).
pub(crate) fn fits(g: &Graph, cfg: &pagerank::Config) -> bool {
    cfg.personalization.is_none()
        && cfg.method == pagerank::Method::Jacobi
        && pagerank::Isolated::of(g, cfg).is_none()
}

/// One job of the series.
struct Member {
    job: Arc<JobShared>,
    cfg: pagerank::Config,
    /// `S = (1 − d)·Σ_{k<t} d^k y_k`, one entry per vertex (empty until
    /// the first pass).
    acc: Vec<f64>,
    /// Whether the last iteration's change was below `|V|·tolerance`.
    converged: bool,
}

impl Member {
    fn limit(&self) -> usize {
        self.cfg.iterations.unwrap_or(self.cfg.max_iterations)
    }
    /// Whether the job stops after `steps` iterations.
    fn finished(&self, steps: usize) -> bool {
        steps >= self.limit() || (self.converged && self.cfg.iterations.is_none())
    }
}

/// The stored contributions `y(u)/outdeg(u)` of the sequence.
enum Contribs {
    Double(Vec<f64>),
    Single(Vec<f32>),
}

/// PageRank jobs of any dampings computed from one power series.
pub struct PageRankSeries {
    n: usize,
    single: bool,
    members: Vec<Member>,
    /// Iterations done: the sequence holds `y_steps`.
    steps: usize,
    /// Whether the first pass has been planned (no job joins after it).
    started: bool,
    /// `y_t`, the current term of the sequence.
    basis: Vec<f64>,
    /// `y_{t+1}`, written by the pull.
    next: Vec<AtomicF64>,
    contrib: Contribs,
    /// `Σ y_t` over dangling vertices.
    dangling: f64,
}

impl PageRankSeries {
    /// An empty series on a graph of `n` vertices for jobs of `precision`.
    pub fn new(n: usize, precision: pagerank::Precision) -> Self {
        let single = precision == pagerank::Precision::Single;
        PageRankSeries {
            n,
            single,
            members: Vec::new(),
            steps: 0,
            started: false,
            basis: Vec::new(),
            next: Vec::new(),
            contrib: if single {
                Contribs::Single(Vec::new())
            } else {
                Contribs::Double(Vec::new())
            },
            dangling: 0.0,
        }
    }

    /// Bytes of the sequence's own arrays (shared by the members).
    fn shared_bytes(&self) -> u64 {
        (if self.single { 20 } else { 24 }) * self.n as u64
    }

    /// Each member's share: its accumulator and a part of the sequence.
    fn member_bytes(&self, members: usize) -> u64 {
        8 * self.n as u64 + self.shared_bytes() / members.max(1) as u64
    }

    /// Sets up `y_0 = 1/|V|`, its contributions and dangling mass, and
    /// the members' accumulators.
    fn start(&mut self, g: &Graph) {
        let n = self.n;
        let y0 = 1.0 / n as f64;
        self.basis = vec![y0; n];
        self.next = plexus_engine::hugepages::from_fn(n, |_| AtomicF64::new(0.0));
        let contrib = |u: usize| {
            let deg = g.out_degree(u as VertexId);
            if deg == 0 {
                0.0
            } else {
                y0 / deg as f64
            }
        };
        // Read in random order: huge pages spare a page walk per miss.
        self.contrib = if self.single {
            Contribs::Single(plexus_engine::hugepages::from_fn(n, |u| contrib(u) as f32))
        } else {
            Contribs::Double(plexus_engine::hugepages::from_fn(n, contrib))
        };
        self.dangling = deterministic_sum(n, |u| if g.out_degree(u) == 0 { y0 } else { 0.0 });
        for m in &mut self.members {
            m.acc = vec![0.0; n];
        }
        self.started = true;
    }

    /// Ends the members that were cancelled or passed their deadline, and
    /// delivers those that finished.
    fn settle(&mut self) {
        self.members.retain(|m| match m.job.stop_reason() {
            Some(e) => {
                m.job.finish(Err(e));
                false
            }
            None => true,
        });
        let (steps, n) = (self.steps, self.n);
        let (done, running): (Vec<Member>, Vec<Member>) = std::mem::take(&mut self.members)
            .into_iter()
            .partition(|m| n == 0 || m.finished(steps));
        self.members = running;
        for m in done {
            let d = m.cfg.damping;
            let values = if self.n == 0 {
                // The engine's answer on an empty graph.
                Values::PageRank {
                    rank: Vec::new(),
                    iterations: 0,
                    converged: true,
                }
            } else {
                // x_t = S + d^t y_t, in place of the accumulator.
                let tail = d.powi(steps as i32);
                let mut rank = m.acc;
                rank.par_iter_mut()
                    .zip(&self.basis)
                    .for_each(|(x, &y)| *x += tail * y);
                Values::PageRank {
                    rank,
                    iterations: steps,
                    converged: m.converged,
                }
            };
            m.job.finish(Ok(JobOutput {
                snapshot: Arc::clone(&m.job.snapshot),
                values,
            }));
        }
    }

    /// The dense step over `chunk`: `y_{t+1}(v) = Σ_{u→v} y_t(u)/outdeg(u)
    /// + Σ_{dangling} y_t / |V|` (damping 1), in-edges in CSC order.
    fn pull<T: Elem>(&self, g: &Graph, contrib: &[T], chunk: &ScanChunk) {
        let inc = g.inc();
        let offs = inc.offsets();
        let (s, e) = (chunk.start as usize, chunk.end as usize);
        let first = offs[s] as usize;
        let sources = &inc.neighbor_array()[first..offs[e] as usize];
        let teleport = self.dangling / self.n as f64;
        let mut i = 0;
        for v in s..e {
            let stop = offs[v + 1] as usize - first;
            let mut sum = 0.0f64;
            while i < stop {
                if let Some(&w) = sources.get(i + PREFETCH_AHEAD) {
                    plexus_engine::prefetch::prefetch(contrib, w as usize);
                }
                sum += contrib[sources[i] as usize].get();
                i += 1;
            }
            self.next[v].store(sum + teleport);
        }
    }

    /// The end of a pass with contributions of `T`: each member's
    /// accumulator takes `(1 − d)·d^t·y_t`, then `y_{t+1}` replaces `y_t`
    /// with its contributions, dangling mass and change, in one pass over
    /// fixed blocks (sums in block order: independent of the threads).
    fn advance<T: Elem>(
        g: &Graph,
        members: &mut [Member],
        coef: &[f64],
        basis: &mut [f64],
        next: &[AtomicF64],
        contrib: &mut [T],
    ) -> (f64, f64) {
        let n = basis.len();
        let mut parts: Vec<Vec<&mut [f64]>> = (0..n.div_ceil(SUM_BLOCK))
            .map(|_| Vec::with_capacity(members.len()))
            .collect();
        for m in members.iter_mut() {
            for (b, part) in m.acc.chunks_mut(SUM_BLOCK).enumerate() {
                parts[b].push(part);
            }
        }
        let per_block: Vec<(f64, f64)> = basis
            .par_chunks_mut(SUM_BLOCK)
            .zip(contrib.par_chunks_mut(SUM_BLOCK))
            .zip(parts.into_par_iter())
            .enumerate()
            .map(|(b, ((ys, cs), accs))| {
                for (acc, &c) in accs.into_iter().zip(coef) {
                    for (a, &y) in acc.iter_mut().zip(ys.iter()) {
                        *a += c * y;
                    }
                }
                let first = b * SUM_BLOCK;
                let (mut delta, mut dangling) = (0.0f64, 0.0f64);
                for (j, (y, c)) in ys.iter_mut().zip(cs.iter_mut()).enumerate() {
                    let v = first + j;
                    let new = next[v].load();
                    delta += (new - *y).abs();
                    *y = new;
                    let deg = g.out_degree(v as VertexId);
                    if deg == 0 {
                        dangling += new;
                        *c = T::put(0.0);
                    } else {
                        *c = T::put(new / deg as f64);
                    }
                }
                (delta, dangling)
            })
            .collect();
        (
            per_block.iter().map(|b| b.0).sum(),
            per_block.iter().map(|b| b.1).sum(),
        )
    }
}

impl ScanTask for PageRankSeries {
    fn plan(&mut self, g: &Graph) -> Plan {
        if !self.started && self.n > 0 {
            self.start(g);
        }
        self.started = true;
        self.settle();
        if self.members.is_empty() {
            self.basis = Vec::new();
            self.next = Vec::new();
            self.contrib = Contribs::Double(Vec::new());
            return Plan::Done;
        }
        let share = self.member_bytes(self.members.len());
        for m in &self.members {
            m.job.set_state_bytes(share);
            m.job.mark_running();
            m.job.record_step(self.n as u64, g.num_arcs());
        }
        Plan::Chunks(ChunkPlan::dense(false))
    }

    fn run_chunk(
        &self,
        g: &Graph,
        chunk: &ScanChunk,
        _active: &[VertexId],
        _out: &mut Vec<VertexId>,
    ) {
        for m in &self.members {
            m.job.maybe_fault();
        }
        match &self.contrib {
            Contribs::Double(c) => self.pull(g, c, chunk),
            Contribs::Single(c) => self.pull(g, c, chunk),
        }
    }

    fn end_step(&mut self, g: &Graph, _activated: Vec<VertexId>) {
        let t = self.steps as i32;
        let coef: Vec<f64> = self
            .members
            .iter()
            .map(|m| (1.0 - m.cfg.damping) * m.cfg.damping.powi(t))
            .collect();
        let (delta, dangling) = match &mut self.contrib {
            Contribs::Double(c) => {
                Self::advance(g, &mut self.members, &coef, &mut self.basis, &self.next, c)
            }
            Contribs::Single(c) => {
                Self::advance(g, &mut self.members, &coef, &mut self.basis, &self.next, c)
            }
        };
        self.dangling = dangling;
        self.steps += 1;
        let bound = self.n as f64;
        for m in &mut self.members {
            // x_{t+1} − x_t = d^{t+1}·(y_{t+1} − y_t).
            let change = m.cfg.damping.powi(self.steps as i32) * delta;
            m.converged = change < bound * m.cfg.tolerance;
        }
    }

    fn cancelled(&self) -> bool {
        self.members.iter().all(|m| m.job.cancel_requested())
    }

    fn jobs(&self) -> Vec<Arc<JobShared>> {
        self.members.iter().map(|m| Arc::clone(&m.job)).collect()
    }

    fn state_bytes(&self) -> u64 {
        if self.members.is_empty() {
            0
        } else {
            self.shared_bytes() + 8 * self.n as u64 * self.members.len() as u64
        }
    }

    fn gathered_bytes(&self) -> u64 {
        // The pull reads the contributions of `y` by source id.
        (if self.single { 4 } else { 8 }) * self.n as u64
    }

    fn join(&mut self, g: &Graph, job: &Arc<JobShared>) -> bool {
        let Some(Resolved::PageRank(cfg)) = &job.resolved else {
            return false;
        };
        if self.started
            || (cfg.precision == pagerank::Precision::Single) != self.single
            || !fits(g, cfg)
        {
            return false;
        }
        self.members.push(Member {
            job: Arc::clone(job),
            cfg: cfg.clone(),
            acc: Vec::new(),
            converged: false,
        });
        let share = self.member_bytes(self.members.len());
        for m in &self.members {
            m.job.set_state_bytes(share);
        }
        true
    }

    fn pagerank_series(&self) -> Option<bool> {
        Some(self.started)
    }
}
