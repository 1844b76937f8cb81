//! Shared passes: many jobs' drivers over one stored graph, every
//! superstep one walk over the lists all of them need (GraphM's regularised
//! order, Zhao et al., SC'19, §3, out of core as PartitionedVC's hosts).
//!
//! Every job is an engine [`Driver`], stepped in lockstep: a round asks
//! each live job for its next frontier (its vertex steps run in memory over
//! its own state), decides its mode by the same rule as the solo executor,
//! then groups the jobs by the lists they walk (out-, in- or both, with or
//! without weights). Each group's walk visits the union of its jobs'
//! vertices in ascending order (interval by interval), so a page that
//! several jobs need is read once for all of them; every batch is handed to
//! each job's visitor, which skips the vertices that are not its own. Each
//! job keeps its state, frontier and message logs (a log directory of its
//! own); the read buffer is one for all ([`crate::plan::plan_shared`]
//! splits the budget). A job that finishes leaves the next round; the
//! others go on. A job may join later ([`SharedJob::joining_at`]): at the
//! first round that begins after its time, with the others mid-way.
//!
//! A job computes exactly what it computes alone: the same visitors
//! ([`crate::step`]) over the same lists, the same mode decisions, the same
//! interval plan (the read buffer and intervals come from the shared plan,
//! so only the cut of lists longer than the buffer into pieces can differ
//! from a solo run with another budget: dense signals over pieces are
//! combined in order, law 4, equal up to floating-point rounding).
//!
//! An I/O error fails the whole batch (the jobs share the disk and the
//! walk); a bad job is refused before the batch starts, when its driver is
//! made.
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

use plexus_engine::driver::Driver;
use plexus_engine::edge_map::Mode;
use plexus_engine::program::{GraphView, Traversal, VertexProgram};
use plexus_engine::subset::VertexSubset;
use plexus_graph::VertexId;
use rayon::prelude::*;
use serde::Serialize;

use crate::error::Result;
use crate::exec::{frontier_bits, IoMode, OocExecutor};
use crate::file::Side;
use crate::logs::{LogCounters, LogDir};
use crate::reader::Item;
use crate::step::{DenseVisit, SparseVisit};

/// What one job did in a shared batch.
#[derive(Clone, Debug, Default, Serialize)]
pub struct JobReport {
    /// The job's name.
    pub name: String,
    /// Supersteps it ran.
    pub supersteps: u64,
    /// Of those, sparse (push) ones.
    pub sparse_steps: u64,
    /// Sum over its supersteps of the active vertices.
    pub active: u64,
    /// Its log bytes written.
    pub log_bytes_written: u64,
    /// Its log bytes read back.
    pub log_bytes_read: u64,
    /// Its messages merged before reaching a slot.
    pub messages_combined: u64,
    /// Seconds from the batch's start to its first round.
    pub joined_seconds: f64,
    /// Seconds from the batch's start to its result.
    pub seconds: f64,
}

/// One round of a shared batch: every live job's superstep.
#[derive(Clone, Debug, Serialize)]
pub struct RoundStats {
    /// Jobs that ran a superstep in this round.
    pub jobs: u64,
    /// Walks (groups of jobs walking the same lists).
    pub walks: u64,
    /// Adjacency pages read.
    pub pages: u64,
    /// Adjacency bytes read.
    pub bytes: u64,
    /// Seconds the round took (vertex steps included).
    pub seconds: f64,
}

/// What a shared batch read and did.
#[derive(Clone, Debug, Serialize)]
pub struct SharedReport {
    /// Rounds (one superstep of every live job each).
    pub rounds: Vec<RoundStats>,
    /// Adjacency bytes read for all jobs (whole pages).
    pub bytes_read: u64,
    /// Adjacency pages read.
    pub pages_read: u64,
    /// `pread` calls for adjacency.
    pub reads: u64,
    /// Seconds in adjacency reads.
    pub io_seconds: f64,
    /// Per job, in the order given.
    pub jobs: Vec<JobReport>,
}

/// One job of a shared batch: an engine driver and what to make of its
/// output (`R`, the caller's result type).
pub struct SharedJob<'a, R> {
    inner: Box<dyn Stepper<R> + 'a>,
    /// Seconds after the batch's start before which the job does not join.
    at: f64,
}

impl<'a, R: 'a> SharedJob<'a, R> {
    /// A job named `name` running `driver` on `exec`, whose output `done`
    /// turns into the caller's result. Makes the job's log directory.
    pub fn new<D, F>(exec: &OocExecutor, name: &str, driver: D, done: F) -> Result<Self>
    where
        D: Driver + 'a,
        F: FnOnce(D::Output) -> R + Send + 'a,
    {
        let dir = LogDir::create(exec.log_dir())?;
        let weights = driver.reads_weights() && exec.graph().meta().weighted;
        Ok(SharedJob {
            inner: Box::new(DriverJob {
                driver,
                done,
                dir,
                counters: LogCounters::default(),
                weights,
                frontier: None,
                mode: Mode::Sparse,
                t: Traversal::default(),
                report: JobReport {
                    name: name.to_string(),
                    ..Default::default()
                },
            }),
            at: 0.0,
        })
    }

    /// The job joins the batch at the first round that begins `seconds`
    /// or more after the batch's start (GraphM's joins at superstep
    /// boundaries); by default it starts with the first round.
    pub fn joining_at(mut self, seconds: f64) -> Self {
        self.at = seconds.max(0.0);
        self
    }
}

/// The lists a superstep walks: the sides (by identity) and the weights.
type Key = (Vec<usize>, bool);

/// A job as the shared loop steps it (type-erased driver).
trait Stepper<R>: Send {
    /// Runs the driver's logic and takes the next frontier; false when the
    /// job has finished.
    fn begin(&mut self, exec: &OocExecutor) -> bool;
    /// Vertices in the frontier of the superstep begun.
    fn active(&self) -> u64;
    /// The lists this superstep walks.
    fn sides<'e>(&self, exec: &'e OocExecutor) -> (Vec<&'e Side>, bool);
    /// Adds the vertices whose lists this superstep needs to `words`.
    fn select(&self, words: &mut [u64]);
    /// The superstep's visitor.
    fn visitor<'s>(&'s self, exec: &'s OocExecutor) -> Box<dyn Visitor + 's>;
    /// Hands the activated vertices to the driver.
    fn end(&mut self, exec: &OocExecutor, next: VertexSubset);
    /// The report so far.
    fn report(&self) -> JobReport;
    /// The result.
    fn finish(self: Box<Self>, exec: &OocExecutor) -> R;
}

/// A superstep's visitor, type-erased.
trait Visitor: Send {
    fn visit(&mut self, items: &[Item<'_>]);
    fn finish(self: Box<Self>) -> Result<VertexSubset>;
}

impl<P: VertexProgram> Visitor for SparseVisit<'_, P> {
    fn visit(&mut self, items: &[Item<'_>]) {
        SparseVisit::visit(self, items);
    }
    fn finish(self: Box<Self>) -> Result<VertexSubset> {
        SparseVisit::finish(*self)
    }
}

impl<P: VertexProgram> Visitor for DenseVisit<'_, P> {
    fn visit(&mut self, items: &[Item<'_>]) {
        DenseVisit::visit(self, items);
    }
    fn finish(self: Box<Self>) -> Result<VertexSubset> {
        Ok(DenseVisit::finish(*self))
    }
}

struct DriverJob<D: Driver, F> {
    driver: D,
    done: F,
    dir: LogDir,
    counters: LogCounters,
    weights: bool,
    frontier: Option<VertexSubset>,
    mode: Mode,
    t: Traversal,
    report: JobReport,
}

impl<D, F, R> Stepper<R> for DriverJob<D, F>
where
    D: Driver,
    F: FnOnce(D::Output) -> R + Send,
{
    fn begin(&mut self, exec: &OocExecutor) -> bool {
        let Some(frontier) = self.driver.next_frontier(exec) else {
            return false;
        };
        let opts = self.driver.options();
        self.t = Traversal::new(exec.graph().is_directed(), &opts);
        self.mode = exec
            .choose(
                self.driver.program(),
                &frontier,
                &opts,
                self.t,
                self.weights,
            )
            .0;
        self.report.supersteps += 1;
        self.report.sparse_steps += u64::from(self.mode == Mode::Sparse);
        self.report.active += frontier.len() as u64;
        self.frontier = Some(frontier);
        true
    }

    fn active(&self) -> u64 {
        self.frontier.as_ref().map_or(0, |f| f.len() as u64)
    }

    fn sides<'e>(&self, exec: &'e OocExecutor) -> (Vec<&'e Side>, bool) {
        (exec.sides(self.mode, self.t), self.weights)
    }

    fn select(&self, words: &mut [u64]) {
        let Some(frontier) = &self.frontier else {
            return;
        };
        match self.mode {
            Mode::Sparse => {
                for v in frontier.iter() {
                    words[v as usize / 64] |= 1 << (v % 64);
                }
            }
            Mode::Dense => {
                let p = self.driver.program();
                let n = frontier.num_vertices();
                words.par_iter_mut().enumerate().for_each(|(w, word)| {
                    let lo = w * 64;
                    for v in lo..(lo + 64).min(n) {
                        if p.cond(v as VertexId) {
                            *word |= 1 << (v - lo);
                        }
                    }
                });
            }
        }
    }

    fn visitor<'s>(&'s self, exec: &'s OocExecutor) -> Box<dyn Visitor + 's> {
        let p = self.driver.program();
        let frontier = self.frontier.as_ref();
        let n = exec.graph().num_vertices();
        match self.mode {
            Mode::Sparse => {
                let only = frontier.map(|f| f.to_dense().as_bitmap().unwrap_or(&[]).to_vec());
                Box::new(SparseVisit::new(
                    p,
                    exec.plan(),
                    &self.dir,
                    &self.counters,
                    only,
                ))
            }
            Mode::Dense => Box::new(DenseVisit::new(p, n, frontier.and_then(frontier_bits))),
        }
    }

    fn end(&mut self, exec: &OocExecutor, next: VertexSubset) {
        self.frontier = None;
        self.driver.activated(exec, next);
    }

    fn report(&self) -> JobReport {
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        JobReport {
            log_bytes_written: get(&self.counters.written),
            log_bytes_read: get(&self.counters.read),
            messages_combined: get(&self.counters.combined),
            ..self.report.clone()
        }
    }

    fn finish(self: Box<Self>, exec: &OocExecutor) -> R {
        let me = *self;
        (me.done)(me.driver.finish(exec))
    }
}

/// The set bits of `words`, ascending, as vertex ids.
pub(crate) fn set_bits(words: Vec<u64>) -> impl Iterator<Item = VertexId> + Send {
    words.into_iter().enumerate().flat_map(|(w, mut word)| {
        std::iter::from_fn(move || {
            if word == 0 {
                return None;
            }
            let b = word.trailing_zeros();
            word &= word - 1;
            Some((w as u32) * 64 + b)
        })
    })
}

impl OocExecutor {
    /// Runs `jobs` to completion through shared passes (see the module
    /// docs) and returns their results in the order given, with what the
    /// batch read. Open the executor with [`OocExecutor::open_shared`] so
    /// that the plan counts every job's state and logs.
    pub fn run_shared<R>(&self, jobs: Vec<SharedJob<'_, R>>) -> Result<(Vec<R>, SharedReport)> {
        let started = Instant::now();
        let at: Vec<f64> = jobs.iter().map(|j| j.at).collect();
        let mut joined = vec![false; at.len()];
        let mut live: Vec<Option<Box<dyn Stepper<R> + '_>>> =
            jobs.into_iter().map(|j| Some(j.inner)).collect();
        let mut results: Vec<Option<R>> = live.iter().map(|_| None).collect();
        let mut reports: Vec<JobReport> = live.iter().map(|_| JobReport::default()).collect();
        let mut rounds = Vec::new();
        loop {
            let before = self.io_counters();
            let t0 = Instant::now();
            // Each live job's vertex steps and next frontier.
            let mut stepping = Vec::new();
            let now = started.elapsed().as_secs_f64();
            for (i, slot) in live.iter_mut().enumerate() {
                let Some(job) = slot.as_mut() else { continue };
                if !joined[i] && at[i] > now {
                    continue;
                }
                if !joined[i] {
                    joined[i] = true;
                    reports[i].joined_seconds = now;
                }
                if job.begin(self) {
                    stepping.push(i);
                    continue;
                }
                reports[i] = JobReport {
                    joined_seconds: reports[i].joined_seconds,
                    seconds: started.elapsed().as_secs_f64(),
                    ..job.report()
                };
                if let Some(job) = slot.take() {
                    results[i] = Some(job.finish(self));
                }
            }
            if stepping.is_empty() {
                // Nothing runs: wait for the next job to join, or end.
                let next = (0..at.len())
                    .filter(|&i| live[i].is_some() && !joined[i])
                    .map(|i| at[i])
                    .reduce(f64::min);
                match next {
                    Some(t) => {
                        let wait = t - started.elapsed().as_secs_f64();
                        std::thread::sleep(std::time::Duration::from_secs_f64(wait.max(0.0)));
                        continue;
                    }
                    None => break,
                }
            }
            // The progress display shows rounds and the jobs' active
            // vertices together.
            let active = stepping
                .iter()
                .filter_map(|&i| live[i].as_ref())
                .map(|j| j.active())
                .sum();
            plexus_engine::progress::superstep(active);
            let walks = self.shared_step(&mut live, &stepping)?;
            let after = self.io_counters();
            rounds.push(RoundStats {
                jobs: stepping.len() as u64,
                walks,
                pages: after[0] - before[0],
                bytes: after[1] - before[1],
                seconds: t0.elapsed().as_secs_f64(),
            });
        }
        let io = self.io_counters();
        let results = results.into_iter().flatten().collect();
        Ok((
            results,
            SharedReport {
                rounds,
                bytes_read: io[1],
                pages_read: io[0],
                reads: io[3],
                io_seconds: io[2] as f64 * 1e-9,
                jobs: reports,
            },
        ))
    }

    /// One superstep of the jobs `stepping` (indices into `live`): a walk
    /// per group of jobs that walk the same lists, each batch handed to
    /// every job of the group. Returns the number of walks.
    fn shared_step<R>(
        &self,
        live: &mut [Option<Box<dyn Stepper<R> + '_>>],
        stepping: &[usize],
    ) -> Result<u64> {
        let n = self.graph().num_vertices();
        let jobs: Vec<&dyn Stepper<R>> = stepping
            .iter()
            .filter_map(|&i| live[i].as_deref())
            .collect();
        let mut groups: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
        for (j, job) in jobs.iter().enumerate() {
            let (sides, w) = job.sides(self);
            let ids = sides.iter().map(|s| *s as *const Side as usize).collect();
            groups.entry((ids, w)).or_default().push(j);
        }
        let mut visitors: Vec<Box<dyn Visitor + '_>> =
            jobs.iter().map(|job| job.visitor(self)).collect();
        for members in groups.values() {
            let (sides, weights) = jobs[members[0]].sides(self);
            let walk = self.walk_with(sides, weights);
            let mut visit = |items: &[Item<'_>]| {
                for &j in members {
                    visitors[j].visit(items);
                }
            };
            match self.io_mode() {
                IoMode::Full => walk.run(0..n as VertexId, &mut visit)?,
                IoMode::Active => {
                    let mut words = vec![0u64; n.div_ceil(64)];
                    for &j in members {
                        jobs[j].select(&mut words);
                    }
                    walk.run(set_bits(words), &mut visit)?;
                }
            }
        }
        let ids = visitors
            .into_iter()
            .map(|v| v.finish())
            .collect::<Result<Vec<_>>>()?;
        for (&i, next) in stepping.iter().zip(ids) {
            if let Some(job) = live[i].as_mut() {
                job.end(self, next);
            }
        }
        Ok(groups.len() as u64)
    }
}
