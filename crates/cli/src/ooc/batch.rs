//! `plexus batch JOBS.toml --executor ooc --memory SIZE [--io active|full]`:
//! the file's jobs as engine drivers stepped together by
//! `plexus_ooc::OocExecutor::run_shared`, one walk per superstep over the
//! lists they need (each page read once for every job that needs it), the
//! budget split across them (`plexus_ooc::plan::plan_shared`). A job with
//! `at` joins at the first round after its time (the batch's clock starts
//! per graph). Jobs on several graphs run as one shared batch per graph, one
//! graph after another.
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context};
use plexus_engine::algo::{bfs, cdlp, pagerank, sssp, wcc};
use plexus_engine::program::GraphView;
use plexus_graph::{IdMap, VertexId};
use plexus_jobs::Algorithm;
use plexus_ooc::shared::{SharedJob, SharedReport};
use plexus_ooc::{IoMode, OocExecutor, OocOptions, StoredGraph};
use serde_json::{json, Value};

use crate::batch::{BatchArgs, Planned};
use crate::graph_cmds::Ctx;

/// A finished job: its summary (external ids) and per-vertex values.
pub(crate) struct Finished {
    summary: Value,
    values: Values,
}

/// Per-vertex values of a finished job (internal ids).
enum Values {
    Bfs {
        depth: Vec<u32>,
        parent: Vec<u32>,
    },
    Sssp {
        dist: Vec<f64>,
        parent: Vec<u32>,
    },
    Rank(Vec<f64>),
    Component(Vec<u32>),
    /// CDLP labels: natural ids.
    Label(Vec<u32>),
}

/// Refuses the options of the in-memory batch that have no meaning here.
fn check_flags(a: &BatchArgs, planned: &[Planned], path: &str) -> anyhow::Result<u64> {
    let in_memory_only = [
        ("--scheduler", a.scheduler.is_some()),
        ("--explain", a.explain),
        ("--no-profile", a.no_profile),
        ("--machine", a.machine.is_some()),
        ("--llc", a.llc.is_some()),
        ("--memory-limit", a.memory_limit.is_some()),
        ("--no-fuse", a.no_fuse),
        ("--fuse-sssp", a.fuse_sssp),
        ("--sssp-in-scan", a.sssp_in_scan),
        ("--pagerank-lanes", a.pagerank_lanes),
    ];
    if let Some((flag, _)) = in_memory_only.iter().find(|f| f.1) {
        bail!("{flag} applies to --executor memory only (--executor ooc takes --memory and --io)");
    }
    let Some(memory) = a.ooc.memory else {
        bail!("--executor ooc needs --memory SIZE (for example --memory 256M)");
    };
    for p in planned {
        if p.spec.deadline.is_some() {
            bail!(
                "{path}: job '{}': --executor ooc runs every job to its end: it takes no \
                 'deadline_seconds'",
                p.spec.name
            );
        }
        if let Algorithm::PageRank { precision, .. } = &p.spec.algorithm {
            if *precision != pagerank::Precision::Double {
                bail!(
                    "{path}: job '{}': --executor ooc runs PageRank's driver (Jacobi in double \
                     precision); it takes no 'precision'",
                    p.spec.name
                );
            }
        }
    }
    Ok(memory)
}

/// Runs the batch (see the module docs).
pub fn batch(ctx: &Ctx, a: &BatchArgs, path: &str, planned: Vec<Planned>) -> anyhow::Result<()> {
    let memory = check_flags(a, &planned, path)?;
    if let Some(dir) = &a.out_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let io = match a.ooc.io.as_deref() {
        Some("full") => IoMode::Full,
        _ => IoMode::Active,
    };
    let mut graphs: Vec<&str> = Vec::new();
    for p in &planned {
        if !graphs.contains(&p.graph.as_str()) {
            graphs.push(&p.graph);
        }
    }
    let start = Instant::now();
    let mut jobs_json: Vec<Value> = vec![Value::Null; planned.len()];
    let mut shared_json = Vec::new();
    let names: Vec<&str> = planned.iter().map(|p| p.spec.name.as_str()).collect();
    for graph in graphs {
        let idx: Vec<usize> = (0..planned.len())
            .filter(|&i| planned[i].graph == graph)
            .collect();
        let t = Instant::now();
        let GraphRun {
            results,
            ids,
            report,
        } = run_graph(ctx, graph, &planned, &idx, memory, io, path)?;
        let seconds = t.elapsed().as_secs_f64();
        for ((&i, fin), r) in idx.iter().zip(results).zip(&report.jobs) {
            let mut j = json!({
                "name": planned[i].spec.name,
                "algorithm": planned[i].spec.algorithm.name(),
                "graph": graph,
                "submitted_at_seconds": planned[i].at,
                "state": "done",
                "supersteps": r.supersteps,
                "latency_seconds": r.seconds,
                "summary": fin.summary,
                "ooc": r,
            });
            if let Some(dir) = &a.out_dir {
                let file = crate::out::job_file(dir, names.iter().copied(), i);
                write_csv(&file, &fin.values, &ids)?;
                j["output"] = json!(file.display().to_string());
            }
            jobs_json[i] = j;
        }
        shared_json.push(json!({
            "graph": graph,
            "seconds": seconds,
            "io": io,
            "memory": memory,
            "bytes_read": report.bytes_read,
            "pages_read": report.pages_read,
            "reads": report.reads,
            "io_seconds": report.io_seconds,
            "rounds": report.rounds.len(),
            "per_round": report.rounds,
        }));
    }
    let wall = start.elapsed().as_secs_f64();
    let n = planned.len();
    let report = json!({
        "executor": "ooc",
        "jobs": jobs_json,
        "jobs_done": n,
        "jobs_failed": 0,
        "wall_seconds": wall,
        "throughput_jobs_per_hour": if wall > 0.0 { n as f64 * 3600.0 / wall } else { 0.0 },
        "peak_rss_bytes": super::peak_rss_bytes(),
        "shared": shared_json,
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report);
    }
    Ok(())
}

/// A shared batch's results on one graph, with the graph's ids (for the
/// output files) and what it read.
struct GraphRun {
    results: Vec<Finished>,
    ids: Ids,
    report: SharedReport,
}

/// The shared batch of the jobs `idx` on `graph`.
fn run_graph(
    ctx: &Ctx,
    graph: &str,
    planned: &[Planned],
    idx: &[usize],
    memory: u64,
    io: IoMode,
    path: &str,
) -> anyhow::Result<GraphRun> {
    let file = super::graph_file(ctx, graph)?;
    let head = plexus_graph::store::read_header(&file)?;
    let n = head.num_vertices;
    let states: Vec<u64> = idx
        .iter()
        .map(|&i| n * plexus_ooc::state_bytes_per_vertex(planned[i].spec.algorithm.name()))
        .collect();
    let opts = OocOptions {
        memory,
        io,
        ..Default::default()
    };
    let exec = OocExecutor::open_shared(&file, &opts, &states)
        .with_context(|| format!("{path}: {} jobs on '{graph}' out of core", idx.len()))?;
    let g = exec.graph();
    if g.num_vertices() == 0 {
        bail!("{path}: graph '{graph}' has no vertices");
    }
    let ids = Ids::new(g)?;
    if idx
        .iter()
        .any(|&i| matches!(planned[i].spec.algorithm, Algorithm::Sssp { .. }))
    {
        g.prepare_weight_stats()?;
    }
    let mut jobs = Vec::with_capacity(idx.len());
    for &i in idx {
        let p = &planned[i];
        let job = make_job(&exec, &ids, p)
            .with_context(|| format!("{path}: job '{}' on '{graph}'", p.spec.name))?;
        jobs.push(job.joining_at(p.at));
    }
    let (results, report) =
        crate::run::with_progress("batch", ctx.quiet, || exec.run_shared(jobs))?;
    if let Some(e) = exec.take_fault() {
        return Err(e).context(format!("{path}: batch on '{graph}' out of core"));
    }
    Ok(GraphRun {
        results,
        ids,
        report,
    })
}

/// The graph's external ids and natural order, for summaries and files.
pub(crate) struct Ids {
    map: IdMap,
    /// Internal id of each natural id (CDLP labels are natural ids).
    of_natural: Vec<VertexId>,
}

impl Ids {
    fn new(g: &StoredGraph) -> anyhow::Result<Self> {
        let n = g.num_vertices();
        let mut of_natural = vec![0; n];
        for v in 0..n as VertexId {
            of_natural[g.natural_id(v) as usize] = v;
        }
        Ok(Ids {
            map: g.ids()?,
            of_natural,
        })
    }

    fn lookup(&self, what: &str, s: &str) -> anyhow::Result<VertexId> {
        self.map
            .lookup_str(s)
            .with_context(|| format!("unknown {what} vertex '{s}'"))
    }

    fn json(&self, v: VertexId) -> Value {
        match self.map.external(v) {
            plexus_graph::ExternalId::Int(x) => json!(x),
            plexus_graph::ExternalId::Str(s) => json!(s),
        }
    }
}

/// The driver of job `p` on `exec`, as a job of the shared batch.
fn make_job<'a>(
    exec: &OocExecutor,
    ids: &'a Ids,
    p: &Planned,
) -> anyhow::Result<SharedJob<'a, Finished>> {
    let view: &dyn GraphView = exec.graph();
    let name = p.spec.name.as_str();
    Ok(match &p.spec.algorithm {
        Algorithm::Bfs { source } => {
            let cfg = bfs::Config {
                source: ids.lookup("source", source)?,
                ..Default::default()
            };
            SharedJob::new(exec, name, bfs::BfsDriver::new(view, &cfg)?, |o| {
                let reached = o.depth.iter().filter(|&&d| d != u32::MAX);
                Finished {
                    summary: json!({
                        "reached": reached.clone().count(),
                        "max_depth": reached.max(),
                        "iterations": o.iterations,
                    }),
                    values: Values::Bfs {
                        depth: o.depth,
                        parent: o.parent,
                    },
                }
            })?
        }
        Algorithm::Sssp { source, delta } => {
            let cfg = sssp::Config {
                source: ids.lookup("source", source)?,
                delta: *delta,
            };
            SharedJob::new(exec, name, sssp::SsspDriver::new(view, &cfg)?, |o| {
                let fin = o.dist.iter().copied().filter(|d| d.is_finite());
                Finished {
                    summary: json!({
                        "reached": fin.clone().count(),
                        "max_distance": fin.fold(0.0f64, f64::max),
                        "iterations": o.iterations,
                    }),
                    values: Values::Sssp {
                        dist: o.dist,
                        parent: o.parent,
                    },
                }
            })?
        }
        Algorithm::PageRank { .. } => {
            let cfg = pagerank_config(ids, p, view.num_vertices())?;
            SharedJob::new(
                exec,
                name,
                pagerank::PageRankDriver::new(view, &cfg)?,
                |o| {
                    let rank = o.rank;
                    let mut order: Vec<usize> = (0..rank.len()).collect();
                    let by = |a: &usize, b: &usize| rank[*b].total_cmp(&rank[*a]).then(a.cmp(b));
                    if order.len() > 3 {
                        order.select_nth_unstable_by(3, by);
                        order.truncate(3);
                    }
                    order.sort_by(by);
                    let top: Vec<Value> = order
                        .iter()
                        .map(|&v| json!({"id": ids.json(v as u32), "rank": rank[v]}))
                        .collect();
                    Finished {
                        summary: json!({
                            "iterations": o.iterations,
                            "converged": o.converged,
                            "top": top,
                        }),
                        values: Values::Rank(rank),
                    }
                },
            )?
        }
        Algorithm::Wcc => {
            let d = wcc::WccDriver::new(view, &wcc::Config::default())?;
            SharedJob::new(exec, name, d, |o| {
                let mut sizes = vec![0u32; o.component.len()];
                for &c in &o.component {
                    if let Some(s) = sizes.get_mut(c as usize) {
                        *s += 1;
                    }
                }
                Finished {
                    summary: json!({
                        "components": o.count,
                        "largest": sizes.iter().max().copied().unwrap_or(0),
                    }),
                    values: Values::Component(o.component),
                }
            })?
        }
        Algorithm::Cdlp { iterations } => {
            let cfg = cdlp::Config {
                iterations: *iterations,
            };
            SharedJob::new(exec, name, cdlp::CdlpDriver::new(view, &cfg)?, |o| {
                let mut labels = o.label.clone();
                labels.sort_unstable();
                labels.dedup();
                Finished {
                    summary: json!({"communities": labels.len(), "iterations": o.iterations}),
                    values: Values::Label(o.label),
                }
            })?
        }
    })
}

/// PageRank's configuration of job `p`: the driver's Jacobi iteration in
/// double precision with the job's damping, stopping rule and
/// personalisation (a ppr job's default tolerance from the graph's size,
/// as `plexus run ppr`).
fn pagerank_config(ids: &Ids, p: &Planned, n: usize) -> anyhow::Result<pagerank::Config> {
    let Algorithm::PageRank {
        damping,
        iterations,
        tolerance,
        max_iterations,
        personalization,
        ..
    } = &p.spec.algorithm
    else {
        bail!("not a PageRank job");
    };
    if !(0.0..1.0).contains(damping) {
        bail!("damping must be in [0, 1), got {damping}");
    }
    if !(*tolerance >= 0.0 && tolerance.is_finite()) {
        bail!("tolerance must be a finite number >= 0, got {tolerance}");
    }
    let personalization = match personalization {
        None => None,
        Some(list) => Some(
            list.iter()
                .map(|s| ids.lookup("personalization", s))
                .collect::<anyhow::Result<Vec<_>>>()?,
        ),
    };
    Ok(pagerank::Config {
        damping: *damping,
        iterations: *iterations,
        tolerance: if p.ppr_default_tolerance {
            pagerank::personalized_default_tolerance(n)
        } else {
            *tolerance
        },
        max_iterations: *max_iterations,
        personalization,
        method: pagerank::Method::Jacobi,
        precision: pagerank::Precision::Double,
    })
}

/// Writes a job's values as CSV with external ids (the columns of the
/// in-memory batch's files), through a temporary file renamed on success.
fn write_csv(path: &Path, values: &Values, ids: &Ids) -> anyhow::Result<()> {
    use std::io::Write;
    let n = ids.of_natural.len() as VertexId;
    let m = &ids.map;
    let opt = |w: &mut dyn Write, v: u32| -> std::io::Result<()> {
        if v == u32::MAX {
            Ok(())
        } else {
            m.write_external(v, w)
        }
    };
    plexus_graph::export::write_atomically(path, |w| {
        match values {
            Values::Bfs { depth, parent } => {
                writeln!(w, "id,depth,parent")?;
                for v in 0..n {
                    m.write_external(v, w)?;
                    match depth[v as usize] {
                        u32::MAX => writeln!(w, ",,")?,
                        d => {
                            write!(w, ",{d},")?;
                            opt(w, parent[v as usize])?;
                            writeln!(w)?;
                        }
                    }
                }
            }
            Values::Sssp { dist, parent } => {
                writeln!(w, "id,distance,parent")?;
                for v in 0..n {
                    m.write_external(v, w)?;
                    write!(w, ",{},", dist[v as usize])?;
                    opt(w, parent[v as usize])?;
                    writeln!(w)?;
                }
            }
            Values::Rank(rank) => {
                writeln!(w, "id,rank")?;
                for v in 0..n {
                    m.write_external(v, w)?;
                    writeln!(w, ",{:e}", rank[v as usize])?;
                }
            }
            Values::Component(c) => {
                writeln!(w, "id,component")?;
                for v in 0..n {
                    m.write_external(v, w)?;
                    write!(w, ",")?;
                    m.write_external(c[v as usize], w)?;
                    writeln!(w)?;
                }
            }
            Values::Label(l) => {
                writeln!(w, "id,label")?;
                for v in 0..n {
                    m.write_external(v, w)?;
                    write!(w, ",")?;
                    m.write_external(ids.of_natural[l[v as usize] as usize], w)?;
                    writeln!(w)?;
                }
            }
        }
        Ok(())
    })
    .with_context(|| format!("cannot write {}", path.display()))
}

/// The human-readable report: one line per job, then the shared I/O.
fn print_text(r: &Value) {
    use crate::fmt::secs;
    if let Some(jobs) = r["jobs"].as_array() {
        for j in jobs {
            println!(
                "{:<16} {:<8} {:>4} supersteps  {}  {}",
                j["name"].as_str().unwrap_or(""),
                j["algorithm"].as_str().unwrap_or(""),
                j["supersteps"],
                secs(j["latency_seconds"].as_f64().unwrap_or(0.0)),
                crate::run::summarize(&j["summary"]),
            );
        }
    }
    if let Some(shared) = r["shared"].as_array() {
        for s in shared {
            println!(
                "'{}' out of core, shared: read {} in {} pages ({} preads, {} of I/O), {} rounds, {}",
                s["graph"].as_str().unwrap_or(""),
                plexus_ooc::human_bytes(s["bytes_read"].as_u64().unwrap_or(0)),
                crate::fmt::thousands(s["pages_read"].as_u64().unwrap_or(0)),
                crate::fmt::thousands(s["reads"].as_u64().unwrap_or(0)),
                secs(s["io_seconds"].as_f64().unwrap_or(0.0)),
                s["rounds"],
                secs(s["seconds"].as_f64().unwrap_or(0.0)),
            );
        }
    }
    println!(
        "{} jobs in {} ({:.0} jobs/hour), peak resident {}",
        r["jobs_done"],
        secs(r["wall_seconds"].as_f64().unwrap_or(0.0)),
        r["throughput_jobs_per_hour"].as_f64().unwrap_or(0.0),
        r["peak_rss_bytes"]
            .as_u64()
            .map_or_else(|| "unknown".into(), plexus_ooc::human_bytes),
    );
}
