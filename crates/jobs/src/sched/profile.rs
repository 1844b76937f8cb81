//! Profiles: each job algorithm's time per thread count and bytes touched
//! on one stored graph, kept as `profile.json` beside the graph file.
//!
//! What is profiled (representatives): BFS and SSSP from `runs` fixed roots
//! (vertices with out-edges at evenly spaced internal ids, one root per run),
//! PageRank at damping 0.85 for [`PROFILE_PR_ITERATIONS`] iterations, WCC,
//! CDLP for [`PROFILE_CDLP_ITERATIONS`] iterations. Each runs alone through
//! the job manager (sequential mode, one pool of `t` threads) at
//! `t = 1..=max_threads`; the median of `runs` runs is kept.
//!
//! Bytes per run: where `perf_event_open` can count last-level cache misses
//! on every CPU of the process ([`super::counters`]), the misses during the
//! one-thread runs × 64 bytes; otherwise (this KVM guest has no such event)
//! the bytes the executor counts: topology bytes read plus the job's state
//! bytes ([`crate::spec`]'s estimate) × supersteps. `counter_source` says
//! which, and why the counter was not used. Measured bytes are split into
//! topology and state in the counted proportion.
//!
//! A job's cost is looked up by algorithm; PageRank with a fixed iteration
//! count and CDLP are scaled by `iterations / profiled iterations`;
//! personalised PageRank uses PageRank's profile.
//!
//! Two measurements feed the model's interference and fusion terms: every
//! profiled core runs a copy of the representative at one thread at once
//! (the co-run slowdown), and two jobs of a fusable algorithm run fused in
//! one shared scan at every profiled thread (the lane fraction).
//!
//! The file carries [`PROFILE_FORMAT_VERSION`] and the graph version (a hash
//! of the graph file's section checksums and counts); a different version
//! makes the profile stale. It is written to a temporary file and renamed.
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use plexus_graph::{Graph, VertexId};
use serde::{Deserialize, Serialize};

use super::model::{Cost, LaneCost};
use crate::error::JobError;
use crate::manager::{ExecMode, JobManager, ManagerConfig};
use crate::snapshot::Snapshot;
use crate::spec::{resolve, state_bytes, Algorithm, JobSpec};
use crate::JobState;

/// File name of a profile in the graph's store directory.
pub const PROFILE_FILE: &str = "profile.json";
/// Version of the profile format; bump on any change of meaning.
pub const PROFILE_FORMAT_VERSION: u32 = 2;
/// PageRank iterations of the profiled representative (`plexus mix`'s default).
pub const PROFILE_PR_ITERATIONS: usize = 20;
/// CDLP iterations of the profiled representative (`plexus mix`'s default).
pub const PROFILE_CDLP_ITERATIONS: usize = 10;
/// Algorithms profiled by default: every job kind
/// ([`crate::spec::job_algorithms`]).
pub fn profile_algorithms() -> Vec<&'static str> {
    crate::spec::job_algorithms()
}
/// What `counter_source` says when bytes are counted by the executor.
pub const COUNTER_SOURCE_ESTIMATE: &str = "estimate: bytes counted by the executor";
/// What `counter_source` says when bytes are hardware counts.
pub const COUNTER_SOURCE_HARDWARE: &str =
    "perf_event_open: last-level cache misses × 64 bytes on every CPU of the process";

/// One algorithm's profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlgoProfile {
    /// What ran (roots, damping, iterations).
    pub representative: String,
    /// Iterations of the representative (PageRank, CDLP), if fixed.
    pub iterations: Option<usize>,
    /// Median seconds at `i + 1` threads.
    pub seconds: Vec<f64>,
    /// Bytes of topology read per run (median run).
    pub topology_bytes: f64,
    /// Bytes of state traffic per run: state bytes × supersteps.
    pub state_bytes: f64,
    /// Supersteps per run (median).
    pub supersteps: f64,
    /// `(topology + state bytes) / seconds` at each thread count, GB/s.
    pub bandwidth_gbs: Vec<f64>,
    /// Median seconds at one thread with a copy at one thread on every
    /// other profiled core at once (`None`: one core, nothing to co-run).
    #[serde(default)]
    pub corun_seconds: Option<f64>,
    /// The median of (time together ÷ time alone just before, same CPU)
    /// − 1, at least 0: the model's co-run slowdown ([`Cost::corun_slowdown`]).
    #[serde(default)]
    pub corun_slowdown: f64,
    /// Median seconds of 2 and of 4 jobs fused into one shared scan at
    /// every profiled thread, from submission to the last end (`None`: the
    /// algorithm does not fuse). The jobs are as `plexus mix` makes them:
    /// PageRank at different dampings, BFS from different roots, WCC and
    /// CDLP alike (identical jobs share a lane).
    #[serde(default)]
    pub fused_seconds: Option<[f64; 2]>,
    /// The fused-scan cost fitted to `fused_seconds` against
    /// `seconds[last]` ([`LaneCost`]).
    #[serde(default)]
    pub lanes: Option<LaneCost>,
    /// Bytes per run from the hardware counter (LLC misses × 64 during the
    /// one-thread runs, per run), when it could be read; `topology_bytes`
    /// and `state_bytes` then sum to it.
    #[serde(default)]
    pub measured_bytes: Option<f64>,
    /// Whether the counted bytes were scaled down to `bandwidth limit ×
    /// fastest time`: the state estimate counts whole per-vertex arrays per
    /// superstep, which a BFS reaching a handful of vertices never touches,
    /// and no run can move more bytes than the bandwidth allows in its time.
    #[serde(default)]
    pub bytes_capped: bool,
}

/// The profile of one graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphProfile {
    /// [`PROFILE_FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// The graph's name in the store.
    pub graph: String,
    /// The graph version profiled ([`graph_version`]).
    pub graph_version: String,
    /// Threads profiled: `1..=max_threads`.
    pub max_threads: usize,
    /// Runs per thread count (median kept).
    pub runs: usize,
    /// Where the byte counts come from.
    pub counter_source: String,
    /// Unix seconds when written.
    pub created_unix: u64,
    /// Profiles by algorithm name.
    pub algorithms: BTreeMap<String, AlgoProfile>,
}

/// What was found on disk.
#[derive(Debug)]
pub enum ProfileStatus {
    /// A profile of this graph version.
    Fresh(GraphProfile),
    /// No profile file.
    Missing,
    /// A profile of another graph version (or format).
    Stale { found: String, expected: String },
    /// An unreadable or malformed file.
    Corrupt(String),
}

/// The version of the graph file at `graph_file`: counts and an FNV-1a hash
/// of its section checksums, so a re-imported graph with other contents
/// gets another version (and an identical one keeps its profile).
pub fn graph_version(graph_file: &Path) -> Result<String, JobError> {
    let h = plexus_graph::store::read_header(graph_file)
        .map_err(|e| JobError::InvalidJob(format!("cannot read {}: {e}", graph_file.display())))?;
    let mut x: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            x ^= u64::from(b);
            x = x.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(u64::from(h.version));
    eat(h.num_vertices);
    eat(h.num_arcs);
    for s in &h.sections {
        eat(s.len_bytes);
        eat(s.checksum);
    }
    Ok(format!("n{}-m{}-{x:016x}", h.num_vertices, h.num_arcs))
}

/// Reads `path` and compares it with `expected_version`.
pub fn load(path: &Path, expected_version: &str) -> ProfileStatus {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return ProfileStatus::Missing,
        Err(e) => return ProfileStatus::Corrupt(format!("cannot read {}: {e}", path.display())),
    };
    let p: GraphProfile = match serde_json::from_str(&text) {
        Ok(p) => p,
        Err(e) => {
            return ProfileStatus::Corrupt(format!(
                "{}:{}: {}",
                path.display(),
                e.line(),
                e.to_string().replace('\n', " ")
            ))
        }
    };
    if p.format_version != PROFILE_FORMAT_VERSION || p.graph_version != expected_version {
        return ProfileStatus::Stale {
            found: format!("format {} graph {}", p.format_version, p.graph_version),
            expected: format!("format {PROFILE_FORMAT_VERSION} graph {expected_version}"),
        };
    }
    if let Some((name, _)) = p
        .algorithms
        .iter()
        .find(|(_, a)| Cost::fit(&a.seconds, 0.0, 0.0).is_none())
    {
        return ProfileStatus::Corrupt(format!(
            "{}: algorithm '{name}' has no usable time",
            path.display()
        ));
    }
    ProfileStatus::Fresh(p)
}

/// Writes `p` to `path` through a temporary file renamed into place.
pub fn save(path: &Path, p: &GraphProfile) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(p).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Settings of the profiler.
#[derive(Clone, Debug)]
pub struct ProfileConfig {
    /// Algorithms to profile (names as in [`profile_algorithms`]); SSSP is
    /// skipped on unweighted graphs.
    pub algorithms: Vec<String>,
    /// Runs per thread count (≥ 1); BFS and SSSP use one root per run.
    pub runs: usize,
    /// Profile `1..=max_threads` threads.
    pub max_threads: usize,
    /// LLC bytes for the chunk plan (detect once outside and pass it).
    pub llc_bytes: Option<u64>,
    /// The machine's measured memory bandwidth (`plexus probe`'s triad),
    /// GB/s: a run's counted bytes are capped at what it could move in its
    /// fastest measured time ([`AlgoProfile::bytes_capped`]); `None`: no cap.
    pub bandwidth_limit_gbs: Option<f64>,
}

/// `runs` roots with out-edges at evenly spaced internal ids (external ids).
fn roots(g: &Graph, runs: usize) -> Vec<String> {
    let n = g.num_vertices();
    let mut out = Vec::new();
    for r in 0..runs.max(1) {
        let start = r * n / runs.max(1);
        let v = (start..n)
            .chain(0..start)
            .find(|&v| g.out_degree(v as VertexId) > 0)
            .unwrap_or(start.min(n.saturating_sub(1)));
        out.push(g.ids().external_string(v as VertexId));
    }
    out
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    if xs.is_empty() {
        return f64::NAN;
    }
    xs[xs.len() / 2]
}

/// Submits `alg` to `mgr` as a profiling job.
fn submit(
    mgr: &JobManager,
    snap: &Arc<Snapshot>,
    alg: &Algorithm,
) -> Result<crate::JobHandle, JobError> {
    mgr.submit(
        Arc::clone(snap),
        JobSpec::new(format!("profile-{}", alg.name()), alg.clone()),
    )
}

/// Waits for `h` and returns its status, its result dropped; an error
/// naming `what` if the job did not finish.
fn finished(h: &crate::JobHandle, what: &str) -> Result<crate::JobStatus, JobError> {
    h.wait(None);
    let st = h.status();
    if st.state != JobState::Done {
        return Err(JobError::Failed(format!(
            "profiling {what} failed: {}",
            st.error.clone().unwrap_or_default()
        )));
    }
    let _ = h.take_result();
    Ok(st)
}

/// Runs `alg` once in `mgr` and returns its status (an error if it failed).
fn run_one(
    mgr: &JobManager,
    snap: &Arc<Snapshot>,
    alg: &Algorithm,
) -> Result<crate::JobStatus, JobError> {
    finished(&submit(mgr, snap, alg)?, alg.name())
}

/// Co-run measurement: for each of `specs`, copy 0 runs alone at one
/// thread, then together with a copy at one thread on each of the other
/// `max_threads − 1` CPUs (one manager per copy, each pinned to its own
/// CPU, every run started together). Returns the median time together and
/// the median of copy 0's together ÷ alone (alone and together measured
/// back to back on the same CPU, so drift between runs cancels).
fn corun(
    snap: &Arc<Snapshot>,
    specs: &[Algorithm],
    cfg: &ProfileConfig,
) -> Result<(f64, f64), JobError> {
    let copies = cfg.max_threads.max(1);
    let start = std::sync::Barrier::new(copies);
    // Copy `i` is pinned to the `i`-th allowed CPU: spawned threads would
    // otherwise inherit the caller's affinity (one CPU inside the CLI's
    // pool) and time-share it.
    let cpus = crate::sched::numa::allowed_cpus().unwrap_or_default();
    type Times = (Vec<f64>, Vec<f64>);
    let results: Vec<Result<Times, JobError>> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..copies)
            .map(|i| {
                let cpu = (!cpus.is_empty()).then(|| vec![cpus[i % cpus.len()]]);
                let start = &start;
                sc.spawn(move || -> Result<Times, JobError> {
                    let made = JobManager::new(ManagerConfig {
                        mode: ExecMode::Sequential,
                        threads: 1,
                        llc_bytes: cfg.llc_bytes,
                        cpus: cpu,
                        ..Default::default()
                    });
                    let (mut alone, mut together) = (Vec::new(), Vec::new());
                    let mut failure = None;
                    for alg in specs {
                        // Every copy reaches every barrier, failed or not.
                        for (solo, out) in [(true, &mut alone), (false, &mut together)] {
                            start.wait();
                            if solo && i > 0 {
                                continue;
                            }
                            if let (Ok(mgr), None) = (&made, &failure) {
                                match run_one(mgr, snap, alg) {
                                    Ok(st) => out.push(st.run_seconds.unwrap_or(f64::NAN)),
                                    Err(e) => failure = Some(e),
                                }
                            }
                        }
                    }
                    made?;
                    failure.map_or(Ok((alone, together)), Err)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(JobError::Failed(
                        "a co-run profiling thread panicked".into(),
                    ))
                })
            })
            .collect()
    });
    let mut all = Vec::new();
    let mut ratios = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        let (alone, together) = r?;
        if i == 0 {
            ratios = alone.iter().zip(&together).map(|(a, t)| t / a).collect();
        }
        all.extend(together);
    }
    Ok((median(&mut all), median(&mut ratios)))
}

fn plural_copies(n: usize) -> String {
    if n == 1 {
        "1 copy".into()
    } else {
        format!("{n} copies")
    }
}

/// `k` jobs of the fusable algorithm `name` as `plexus mix` makes them:
/// PageRank at `k` dampings, BFS from `k` roots, WCC and CDLP alike.
fn fusion_specs(g: &Graph, name: &str, k: usize) -> Vec<Algorithm> {
    (0..k)
        .map(|i| match name {
            "bfs" => Algorithm::Bfs {
                source: roots(g, k)[i].clone(),
            },
            "pagerank" => Algorithm::PageRank {
                damping: 0.85 - 0.15 * i as f64,
                iterations: Some(PROFILE_PR_ITERATIONS),
                tolerance: 0.0,
                max_iterations: PROFILE_PR_ITERATIONS,
                personalization: None,
                precision: Default::default(),
            },
            "cdlp" => Algorithm::Cdlp {
                iterations: PROFILE_CDLP_ITERATIONS,
            },
            _ => Algorithm::Wcc,
        })
        .collect()
}

/// The median time (submission to the last end, over `cfg.runs` runs) of
/// `jobs` submitted together to one shared-mode manager at `max_threads`.
fn fused(snap: &Arc<Snapshot>, jobs: &[Algorithm], cfg: &ProfileConfig) -> Result<f64, JobError> {
    let mut times = Vec::new();
    for _ in 0..cfg.runs.max(1) {
        let mgr = JobManager::new(ManagerConfig {
            mode: ExecMode::Shared,
            threads: cfg.max_threads.max(1),
            llc_bytes: cfg.llc_bytes,
            ..Default::default()
        })?;
        let t0 = std::time::Instant::now();
        let hs = jobs
            .iter()
            .map(|alg| submit(&mgr, snap, alg))
            .collect::<Result<Vec<_>, _>>()?;
        for (h, alg) in hs.iter().zip(jobs) {
            finished(h, &format!("{} fused {}", jobs.len(), alg.name()))?;
        }
        times.push(t0.elapsed().as_secs_f64());
    }
    Ok(median(&mut times))
}

/// Profiles `snap`'s graph. `progress` is told each step (for displays).
pub fn profile_graph(
    snap: &Arc<Snapshot>,
    graph_version: &str,
    cfg: &ProfileConfig,
    mut progress: impl FnMut(&str),
) -> Result<GraphProfile, JobError> {
    let g = snap.graph();
    let runs = cfg.runs.max(1);
    let mut algorithms = BTreeMap::new();
    let cpus = super::numa::allowed_cpus()
        .unwrap_or_else(|| (0..super::numa::process_cpu_count()).collect());
    // Why the hardware counter was not used (the first failure), if it was not.
    let mut counter_error: Option<String> = None;
    for name in &cfg.algorithms {
        let Some((specs, representative, iterations)) = profile_specs(g, name, runs)? else {
            progress("sssp skipped: the graph is unweighted");
            continue;
        };
        let sweep = thread_sweep(
            snap,
            &specs,
            name,
            cfg,
            &cpus,
            &mut counter_error,
            &mut progress,
        )?;
        let Sweep {
            seconds,
            mut topo,
            mut state,
            mut steps,
            measured,
        } = sweep;
        let (corun_seconds, corun_slowdown) = if cfg.max_threads > 1 {
            let (together, ratio) = corun(snap, &specs, cfg)?;
            progress(&format!(
                "{name}: 1 thread beside {} at once {together:.3} s, {ratio:.3} × alone",
                plural_copies(cfg.max_threads - 1)
            ));
            (Some(together), (ratio - 1.0).max(0.0))
        } else {
            (None, 0.0)
        };
        let fused_seconds = if crate::sched::runner::fusable(&specs[0], false) {
            let two = fused(snap, &fusion_specs(g, name, 2), cfg)?;
            let four = fused(snap, &fusion_specs(g, name, 4), cfg)?;
            progress(&format!(
                "{name}: 2 fused {two:.3} s, 4 fused {four:.3} s at {} thread(s)",
                cfg.max_threads.max(1)
            ));
            Some([two, four])
        } else {
            None
        };
        let last = seconds[seconds.len() - 1];
        let lanes = fused_seconds.map(|[two, four]| {
            let per_lane = ((four - two) / 2.0 / last).max(0.0);
            LaneCost {
                base: (two / last - per_lane).max(0.0),
                per_lane,
            }
        });
        let (topology_bytes, state_bytes_run, bytes_capped) = scaled_bytes(
            name,
            median(&mut topo),
            median(&mut state),
            measured,
            &seconds,
            cfg,
            &mut progress,
        );
        let bandwidth_gbs = seconds
            .iter()
            .map(|s| (topology_bytes + state_bytes_run) / s / 1e9)
            .collect();
        algorithms.insert(
            name.clone(),
            AlgoProfile {
                representative,
                iterations,
                seconds,
                topology_bytes,
                state_bytes: state_bytes_run,
                supersteps: median(&mut steps),
                bandwidth_gbs,
                corun_seconds,
                corun_slowdown,
                fused_seconds,
                lanes,
                measured_bytes: measured,
                bytes_capped,
            },
        );
    }
    let hardware = algorithms.values().any(|a| a.measured_bytes.is_some());
    let counter_source = match (&counter_error, hardware) {
        (None, true) => COUNTER_SOURCE_HARDWARE.to_string(),
        (Some(e), true) => format!("{COUNTER_SOURCE_HARDWARE} (some runs: {e})"),
        (Some(e), false) => format!("{COUNTER_SOURCE_ESTIMATE} ({e})"),
        (None, false) => COUNTER_SOURCE_ESTIMATE.to_string(),
    };
    Ok(GraphProfile {
        format_version: PROFILE_FORMAT_VERSION,
        graph: snap.name().to_string(),
        graph_version: graph_version.to_string(),
        max_threads: cfg.max_threads.max(1),
        runs,
        counter_source,
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        algorithms,
    })
}

/// The jobs profiling `name` runs (`runs` of them), the representative's
/// description and its iteration count; `None` for SSSP on an unweighted
/// graph.
fn profile_specs(g: &Graph, name: &str, runs: usize) -> Result<Option<ProfileSpecs>, JobError> {
    Ok(Some(match name {
        "bfs" | "sssp" => {
            if name == "sssp" && !g.is_weighted() {
                return Ok(None);
            }
            let rs = roots(g, runs);
            let algs = rs
                .iter()
                .map(|r| {
                    if name == "bfs" {
                        Algorithm::Bfs { source: r.clone() }
                    } else {
                        Algorithm::Sssp {
                            source: r.clone(),
                            delta: None,
                        }
                    }
                })
                .collect();
            (algs, format!("{name} from roots {}", rs.join(", ")), None)
        }
        "pagerank" => {
            let a = Algorithm::PageRank {
                damping: 0.85,
                iterations: Some(PROFILE_PR_ITERATIONS),
                tolerance: 0.0,
                max_iterations: PROFILE_PR_ITERATIONS,
                personalization: None,
                precision: Default::default(),
            };
            (
                vec![a; runs],
                format!("pagerank damping 0.85, {PROFILE_PR_ITERATIONS} iterations"),
                Some(PROFILE_PR_ITERATIONS),
            )
        }
        "wcc" => (vec![Algorithm::Wcc; runs], "wcc".into(), None),
        "cdlp" => (
            vec![
                Algorithm::Cdlp {
                    iterations: PROFILE_CDLP_ITERATIONS
                };
                runs
            ],
            format!("cdlp {PROFILE_CDLP_ITERATIONS} iterations"),
            Some(PROFILE_CDLP_ITERATIONS),
        ),
        other => {
            return Err(JobError::InvalidJob(format!(
                "unknown algorithm '{other}' to profile (expected some of: {})",
                profile_algorithms().join(", ")
            )))
        }
    }))
}

/// What [`profile_specs`] gives: jobs, description, iterations.
type ProfileSpecs = (Vec<Algorithm>, String, Option<usize>);

/// One algorithm's runs at 1..=`max_threads` threads.
struct Sweep {
    /// Median seconds per thread count.
    seconds: Vec<f64>,
    /// Per run at one thread: topology bytes read, state bytes × supersteps, supersteps.
    topo: Vec<f64>,
    state: Vec<f64>,
    steps: Vec<f64>,
    /// Bytes per run by the cache-miss counter, when it could be read.
    measured: Option<f64>,
}

/// Runs `specs` one after another at each thread count; at one thread also
/// counts bytes (and cache misses when the counter opens; the first failure
/// is kept in `counter_error`).
fn thread_sweep(
    snap: &Arc<Snapshot>,
    specs: &[Algorithm],
    name: &str,
    cfg: &ProfileConfig,
    cpus: &[usize],
    counter_error: &mut Option<String>,
    progress: &mut impl FnMut(&str),
) -> Result<Sweep, JobError> {
    let g = snap.graph();
    let mut seconds = Vec::new();
    let mut topo = Vec::new();
    let mut state = Vec::new();
    let mut steps = Vec::new();
    let mut measured: Option<f64> = None;
    for t in 1..=cfg.max_threads.max(1) {
        let counter = if t == 1 && counter_error.is_none() {
            match super::counters::Counter::on_cpus(super::counters::Event::CacheMisses, cpus) {
                Ok(c) => Some(c),
                Err(e) => {
                    *counter_error = Some(format!("cache-miss counter unavailable: {e}"));
                    None
                }
            }
        } else {
            None
        };
        let start = counter.as_ref().map(super::counters::Counter::read);
        let mgr = JobManager::new(ManagerConfig {
            mode: ExecMode::Sequential,
            threads: t,
            llc_bytes: cfg.llc_bytes,
            ..Default::default()
        })?;
        let mut times = Vec::new();
        for alg in specs {
            let before = mgr.stats().topology_bytes_read;
            let st = run_one(&mgr, snap, alg)?;
            times.push(st.run_seconds.unwrap_or(f64::NAN));
            let read = mgr.stats().topology_bytes_read - before;
            let sb = resolve(g, alg).map(|r| state_bytes(g, &r)).unwrap_or(0);
            if t == 1 {
                topo.push(read as f64);
                state.push(sb as f64 * st.superstep as f64);
                steps.push(st.superstep as f64);
            }
        }
        if let (Some(c), Some(Ok(start))) = (&counter, start) {
            match c.read() {
                Ok(end) => {
                    measured = Some(end.saturating_sub(start) as f64 * 64.0 / specs.len() as f64)
                }
                Err(e) => *counter_error = Some(format!("cache-miss counter unreadable: {e}")),
            }
        }
        let m = median(&mut times);
        progress(&format!("{name}: {t} thread(s) {m:.3} s"));
        seconds.push(m);
    }
    Ok(Sweep {
        seconds,
        topo,
        state,
        steps,
        measured,
    })
}

/// The bytes a run moves: the counted topology and state bytes, scaled to
/// the hardware count when there is one, then capped at what the bandwidth
/// limit allows in the fastest time. Returns (topology, state, capped).
fn scaled_bytes(
    name: &str,
    topo: f64,
    state: f64,
    measured: Option<f64>,
    seconds: &[f64],
    cfg: &ProfileConfig,
    progress: &mut impl FnMut(&str),
) -> (f64, f64, bool) {
    let (mut topology_bytes, mut state_bytes_run) = (topo, state);
    if let Some(hw) = measured.filter(|b| *b > 0.0) {
        let counted = topology_bytes + state_bytes_run;
        let k = if counted > 0.0 { hw / counted } else { 0.0 };
        progress(&format!(
            "{name}: {:.1} MB per run by the cache-miss counter ({:.1} MB counted)",
            hw / 1e6,
            counted / 1e6
        ));
        if k > 0.0 {
            topology_bytes *= k;
            state_bytes_run *= k;
        } else {
            topology_bytes = hw;
        }
    }
    let fastest = seconds.iter().copied().fold(f64::INFINITY, f64::min);
    let cap = cfg
        .bandwidth_limit_gbs
        .filter(|b| *b > 0.0 && fastest.is_finite())
        .map(|b| b * 1e9 * fastest);
    let bytes_capped = match cap {
        Some(cap) if topology_bytes + state_bytes_run > cap => {
            let k = cap / (topology_bytes + state_bytes_run);
            progress(&format!(
                    "{name}: {:.1} MB counted in {fastest:.6} s is over the bandwidth limit; capped at {:.1} MB",
                    (topology_bytes + state_bytes_run) / 1e6,
                    cap / 1e6
                ));
            topology_bytes *= k;
            state_bytes_run *= k;
            true
        }
        _ => false,
    };
    (topology_bytes, state_bytes_run, bytes_capped)
}

/// Default cost model when there is no profile (`--no-profile`): a job
/// moves `passes × topology bytes` (BFS 2, SSSP 4, PageRank and CDLP one
/// pass per iteration, WCC 3) at [`DEFAULT_GBS_PER_THREAD`] GB/s on one
/// thread, [`super::model::DEFAULT_SERIAL_FRACTION`] of it serial.
pub fn default_cost(g: &Graph, alg: &Algorithm) -> Cost {
    let topo = g.topology_bytes() as f64;
    let passes = match alg {
        Algorithm::Bfs { .. } => 2.0,
        Algorithm::Sssp { .. } => 4.0,
        Algorithm::PageRank {
            iterations,
            max_iterations,
            ..
        } => iterations.unwrap_or(*max_iterations) as f64,
        Algorithm::Wcc => 3.0,
        Algorithm::Cdlp { iterations } => *iterations as f64,
    };
    let bytes = topo * passes;
    let t1 = bytes / (DEFAULT_GBS_PER_THREAD * 1e9);
    let f = super::model::DEFAULT_SERIAL_FRACTION;
    let mut c = Cost::amdahl(f * t1, (1.0 - f) * t1, bytes, 0.0);
    c.supersteps = passes;
    c
}

/// Bytes per second one thread is assumed to move without a profile, GB/s.
pub const DEFAULT_GBS_PER_THREAD: f64 = 1.0;

impl GraphProfile {
    /// The cost of a job running `alg`, from its algorithm's profile scaled
    /// by iterations; `None` when the algorithm was not profiled.
    pub fn cost_of(&self, alg: &Algorithm) -> Option<Cost> {
        let (key, scale) = match alg {
            Algorithm::Bfs { .. } => ("bfs", 1.0),
            Algorithm::Sssp { .. } => ("sssp", 1.0),
            Algorithm::PageRank { iterations, .. } => (
                "pagerank",
                iterations.map_or(1.0, |i| i as f64 / PROFILE_PR_ITERATIONS as f64),
            ),
            Algorithm::Wcc => ("wcc", 1.0),
            Algorithm::Cdlp { iterations } => {
                ("cdlp", *iterations as f64 / PROFILE_CDLP_ITERATIONS as f64)
            }
        };
        let a = self.algorithms.get(key)?;
        let base = match (key, a.iterations) {
            ("pagerank", Some(i)) | ("cdlp", Some(i)) => {
                let fixed = match key {
                    "pagerank" => PROFILE_PR_ITERATIONS,
                    _ => PROFILE_CDLP_ITERATIONS,
                };
                fixed as f64 / i.max(1) as f64
            }
            _ => 1.0,
        };
        Cost::fit(&a.seconds, a.topology_bytes, a.state_bytes).map(|mut c| {
            c.supersteps = a.supersteps;
            c.corun_slowdown = a.corun_slowdown;
            c.lanes = a.lanes;
            c.scaled(scale * base)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;
    use plexus_graph::BuildOptions;

    fn snap() -> Arc<Snapshot> {
        let edges: Vec<(u32, u32)> = (0..200u32).map(|i| (i, (i * 7 + 1) % 200)).collect();
        let g = Graph::from_edges(200, &edges, &BuildOptions::directed()).unwrap();
        Catalog::new().publish("g", g)
    }

    #[test]
    fn profiles_have_a_time_per_thread_count_and_bytes() {
        let s = snap();
        let cfg = ProfileConfig {
            algorithms: vec!["bfs".into(), "pagerank".into(), "sssp".into()],
            runs: 2,
            max_threads: 2,
            llc_bytes: Some(1 << 20),
            bandwidth_limit_gbs: None,
        };
        let p = profile_graph(&s, "v1", &cfg, |_| {}).unwrap();
        assert!(
            !p.algorithms.contains_key("sssp"),
            "unweighted: sssp skipped"
        );
        let pr = &p.algorithms["pagerank"];
        assert_eq!(pr.seconds.len(), 2);
        assert!(pr.topology_bytes > 0.0 && pr.state_bytes > 0.0);
        // Two threads: a co-run and fused 2 and 4 jobs were measured.
        assert!(pr.corun_seconds.is_some_and(|s| s > 0.0) && pr.corun_slowdown >= 0.0);
        let [two, four] = pr.fused_seconds.unwrap();
        assert!(two > 0.0 && four > 0.0);
        let l = pr.lanes.unwrap();
        assert!(l.base >= 0.0 && l.per_lane >= 0.0);
        let c = p.cost_of(&Algorithm::pagerank(0.85)).unwrap();
        assert_eq!(c.lanes, Some(l));
        assert_eq!(c.corun_slowdown, pr.corun_slowdown);
        assert!(!pr.bytes_capped);
        // A bandwidth limit the counted bytes exceed caps them at limit ×
        // fastest time.
        let capped = profile_graph(
            &s,
            "v1",
            &ProfileConfig {
                algorithms: vec!["wcc".into()],
                max_threads: 1,
                bandwidth_limit_gbs: Some(1e-6),
                ..cfg
            },
            |_| {},
        )
        .unwrap();
        let w = &capped.algorithms["wcc"];
        assert!(w.bytes_capped);
        let fastest = w.seconds.iter().copied().fold(f64::INFINITY, f64::min);
        let bytes = w.topology_bytes + w.state_bytes;
        assert!(
            (bytes - 1e3 * fastest).abs() <= 1e-9 * bytes.max(1.0),
            "{bytes}"
        );
        let c = p.cost_of(&Algorithm::PageRank {
            damping: 0.5,
            iterations: Some(40),
            tolerance: 0.0,
            max_iterations: 40,
            personalization: None,
            precision: Default::default(),
        });
        let base = p.cost_of(&Algorithm::pagerank(0.85)).unwrap();
        assert!((c.unwrap().bytes() - 2.0 * base.bytes()).abs() < 1e-6 * base.bytes());
        assert!(p.cost_of(&Algorithm::Wcc).is_none());
    }

    #[test]
    fn load_tells_missing_stale_corrupt_and_fresh_apart() {
        let dir = std::env::temp_dir().join(format!("plexus-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(PROFILE_FILE);
        let _ = std::fs::remove_file(&path);
        assert!(matches!(load(&path, "v1"), ProfileStatus::Missing));
        let mut p = GraphProfile {
            format_version: PROFILE_FORMAT_VERSION,
            graph: "g".into(),
            graph_version: "v1".into(),
            max_threads: 1,
            runs: 1,
            counter_source: COUNTER_SOURCE_ESTIMATE.into(),
            created_unix: 0,
            algorithms: BTreeMap::new(),
        };
        p.algorithms.insert(
            "wcc".into(),
            AlgoProfile {
                representative: "wcc".into(),
                iterations: None,
                seconds: vec![1.0],
                topology_bytes: 1.0,
                state_bytes: 1.0,
                supersteps: 1.0,
                bandwidth_gbs: vec![0.0],
                corun_seconds: None,
                corun_slowdown: 0.0,
                fused_seconds: None,
                lanes: None,
                measured_bytes: None,
                bytes_capped: false,
            },
        );
        save(&path, &p).unwrap();
        assert!(matches!(load(&path, "v1"), ProfileStatus::Fresh(q) if q == p));
        assert!(matches!(load(&path, "v2"), ProfileStatus::Stale { .. }));
        std::fs::write(&path, "{ not json").unwrap();
        match load(&path, "v1") {
            ProfileStatus::Corrupt(m) => assert!(m.contains("profile.json:1"), "{m}"),
            other => panic!("{other:?}"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
