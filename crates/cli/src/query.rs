//! `plexus query GRAPH …`: point queries on the newest committed version of
//! a stored graph (`plexus_store::query`), in external ids.
//!
//! Plain output is one item per line on stdout (a summary, where there is
//! one, on stderr unless `--quiet`); `--json` prints one JSON object. The
//! hidden `bench` subcommand runs many queries on seeded random vertices in
//! one process and prints their latency percentiles (bench/queries.sh).
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use plexus_graph::{ExternalId, VertexId};
use plexus_store::query::{self, Direction, QueryScratch};
use plexus_store::{Access, LiveGraph, Snapshot};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use crate::graph_cmds::Ctx;

#[derive(Args, Debug)]
pub struct QueryArgs {
    /// Name of the stored graph.
    pub graph: String,
    /// Print one JSON object instead of one item per line.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub what: QueryCommand,
}

#[derive(Subcommand, Debug)]
pub enum QueryCommand {
    /// The out-neighbours of a vertex (--in: in-neighbours), one external id a line.
    Neighbors {
        /// The vertex (external id).
        #[arg(allow_hyphen_values = true)]
        vertex: String,
        /// In-neighbours instead of out-neighbours.
        #[arg(long = "in")]
        incoming: bool,
        /// Print each neighbour's edge weight after it (weighted graphs).
        #[arg(long)]
        weights: bool,
    },
    /// The out-degree of a vertex (--in: in-degree); copies of an edge count each.
    Degree {
        /// The vertex (external id).
        #[arg(allow_hyphen_values = true)]
        vertex: String,
        /// In-degree instead of out-degree.
        #[arg(long = "in")]
        incoming: bool,
    },
    /// Whether the edge U -> V exists (prints true or false).
    HasEdge {
        /// Source vertex (external id).
        #[arg(allow_hyphen_values = true)]
        u: String,
        /// Target vertex (external id).
        #[arg(allow_hyphen_values = true)]
        v: String,
    },
    /// The vertices within K hops along out-edges ("ID HOPS" a line, by hop then id).
    Khop {
        /// The vertex (external id).
        #[arg(allow_hyphen_values = true)]
        vertex: String,
        /// Hops (K).
        #[arg(long)]
        hops: u32,
        /// Print only how many there are.
        #[arg(long)]
        count: bool,
    },
    /// A shortest path from U to V (fewest edges; least weight on weighted graphs), one vertex a line.
    Path {
        /// Source vertex (external id).
        #[arg(allow_hyphen_values = true)]
        u: String,
        /// Target vertex (external id).
        #[arg(allow_hyphen_values = true)]
        v: String,
    },
    /// Latency of many queries on seeded random vertices (for bench/queries.sh).
    #[command(hide = true)]
    Bench(BenchArgs),
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Which query: neighbors (with external ids out), khop2 and khop3 (counts), path.
    #[arg(long)]
    pub kind: BenchKind,
    /// Queries to run (with --vertices: the first N of the file).
    #[arg(long, default_value_t = 10_000)]
    pub queries: usize,
    /// Seed of the random vertices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Read the queries' vertices from FILE (one external id a line; "U V" for path) instead.
    #[arg(long)]
    pub vertices: Option<PathBuf>,
    /// Write the sampled vertices to FILE (the format --vertices reads).
    #[arg(long)]
    pub save_vertices: Option<PathBuf>,
    /// Write each query's answer size to FILE, one a line (neighbours, k-hop count, path
    /// hops or -1), to compare with another system's.
    #[arg(long)]
    pub results: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchKind {
    Neighbors,
    Khop2,
    Khop3,
    Path,
}

/// An external id as JSON: a number for integer ids, else a string.
fn json_id(x: &ExternalId) -> Value {
    match x {
        ExternalId::Int(i) => json!(i),
        ExternalId::Str(s) => json!(s),
    }
}

fn dir_of(incoming: bool) -> (Direction, &'static str) {
    if incoming {
        (Direction::In, "in")
    } else {
        (Direction::Out, "out")
    }
}

pub fn query(ctx: &Ctx, a: QueryArgs) -> anyhow::Result<()> {
    let (live, _) = LiveGraph::open(&ctx.data, &a.graph, Access::Read)
        .with_context(|| format!("cannot open graph '{}'", a.graph))?;
    let s = live.snapshot();
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    let json = a.json;
    match a.what {
        QueryCommand::Neighbors {
            vertex,
            incoming,
            weights,
        } => neighbors(&s, &mut out, json, &vertex, incoming, weights)?,
        QueryCommand::Degree { vertex, incoming } => {
            let v = s.resolve(&vertex)?;
            let (dir, name) = dir_of(incoming);
            let d = query::degree(&s, v, dir)?;
            if json {
                let o = json!({"vertex": json_id(&s.external(v)), "direction": name,
                    "degree": d, "version": s.version()});
                writeln!(out, "{o}")?;
            } else {
                writeln!(out, "{d}")?;
            }
        }
        QueryCommand::HasEdge { u, v } => {
            let (x, y) = (s.resolve(&u)?, s.resolve(&v)?);
            let e = query::has_edge(&s, x, y)?;
            if json {
                let o = json!({"u": json_id(&s.external(x)), "v": json_id(&s.external(y)),
                    "exists": e, "version": s.version()});
                writeln!(out, "{o}")?;
            } else {
                writeln!(out, "{e}")?;
            }
        }
        QueryCommand::Khop {
            vertex,
            hops,
            count,
        } => khop(&s, &mut out, json, &vertex, hops, count)?,
        QueryCommand::Path { u, v } => path(&s, &mut out, json, ctx.quiet, &u, &v)?,
        QueryCommand::Bench(b) => bench(&s, &mut out, json, &b)?,
    }
    out.flush()?;
    Ok(())
}

fn neighbors(
    s: &Snapshot,
    out: &mut impl Write,
    json: bool,
    vertex: &str,
    incoming: bool,
    weights: bool,
) -> anyhow::Result<()> {
    let v = s.resolve(vertex)?;
    let (dir, name) = dir_of(incoming);
    if weights && !s.is_weighted() {
        bail!("graph has no edge weights (--weights needs a weighted graph)");
    }
    let nb = query::neighbors(s, v, dir)?;
    // By external id (then weight), whatever the internal order.
    let mut rows: Vec<(ExternalId, f64)> = nb
        .ids
        .iter()
        .enumerate()
        .map(|(i, &y)| (s.external(y), nb.weights.map_or(1.0, |w| w[i])))
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    if json {
        let mut o = json!({"vertex": json_id(&s.external(v)), "direction": name,
            "version": s.version(),
            "neighbors": rows.iter().map(|r| json_id(&r.0)).collect::<Vec<_>>()});
        if weights {
            o["weights"] = json!(rows.iter().map(|r| r.1).collect::<Vec<_>>());
        }
        writeln!(out, "{o}")?;
        return Ok(());
    }
    for (x, w) in rows {
        if weights {
            writeln!(out, "{x}\t{w}")?;
        } else {
            writeln!(out, "{x}")?;
        }
    }
    Ok(())
}

fn khop(
    s: &Snapshot,
    out: &mut impl Write,
    json: bool,
    vertex: &str,
    hops: u32,
    count: bool,
) -> anyhow::Result<()> {
    let v = s.resolve(vertex)?;
    let head = json!({"vertex": json_id(&s.external(v)), "hops": hops, "version": s.version()});
    if count {
        let c = query::khop_count(s, v, hops)?;
        if json {
            let mut o = head;
            o["count"] = json!(c);
            writeln!(out, "{o}")?;
        } else {
            writeln!(out, "{c}")?;
        }
        return Ok(());
    }
    let mut rows: Vec<(u32, ExternalId)> = query::khop(s, v, hops)?
        .into_iter()
        .map(|(y, h)| (h, s.external(y)))
        .collect();
    rows.sort_unstable();
    if json {
        let mut o = head;
        o["count"] = json!(rows.len());
        o["vertices"] = rows
            .iter()
            .map(|(h, x)| json!({"id": json_id(x), "hops": h}))
            .collect();
        writeln!(out, "{o}")?;
        return Ok(());
    }
    for (h, x) in rows {
        writeln!(out, "{x}\t{h}")?;
    }
    Ok(())
}

fn path(
    s: &Snapshot,
    out: &mut impl Write,
    json: bool,
    quiet: bool,
    u: &str,
    v: &str,
) -> anyhow::Result<()> {
    let (x, y) = (s.resolve(u)?, s.resolve(v)?);
    let p = query::path(s, x, y)?;
    let (ux, vx) = (s.external(x), s.external(y));
    if json {
        let o = match &p {
            Some(p) => json!({"from": json_id(&ux), "to": json_id(&vx), "version": s.version(),
                "path": p.vertices.iter().map(|&z| json_id(&s.external(z))).collect::<Vec<_>>(),
                "hops": p.hops, "length": p.length}),
            None => json!({"from": json_id(&ux), "to": json_id(&vx), "version": s.version(),
                "path": null, "hops": null, "length": null}),
        };
        writeln!(out, "{o}")?;
        return Ok(());
    }
    let Some(p) = p else {
        if !quiet {
            eprintln!("no path from {ux} to {vx}");
        }
        return Ok(());
    };
    for &z in &p.vertices {
        writeln!(out, "{}", s.external(z))?;
    }
    if !quiet {
        match p.length {
            Some(l) => eprintln!("{} hops, length {l}", p.hops),
            None => eprintln!("{} hops", p.hops),
        }
    }
    Ok(())
}

/// One query's vertices, resolved.
type Job = (VertexId, VertexId);

/// `count` random alive vertices with out-degree > 0 (pairs for path).
fn sample(s: &Snapshot, kind: BenchKind, count: usize, seed: u64) -> anyhow::Result<Vec<Job>> {
    let bound = s.id_bound();
    if bound == 0 || s.num_arcs() == 0 {
        bail!("the graph has no edges to query");
    }
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut pick = || loop {
        let v = rng.gen_range(0..bound) as VertexId;
        if s.is_alive(v) && !s.out(v).0.is_empty() {
            return v;
        }
    };
    Ok((0..count)
        .map(|_| {
            let u = pick();
            (u, if kind == BenchKind::Path { pick() } else { u })
        })
        .collect())
}

fn read_jobs(s: &Snapshot, kind: BenchKind, file: &PathBuf) -> anyhow::Result<Vec<Job>> {
    let text = std::fs::read_to_string(file).with_context(|| file.display().to_string())?;
    let mut jobs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", file.display(), i + 1);
        let mut f = line.split_whitespace();
        let Some(u) = f.next() else { continue };
        let u = s.resolve(u).with_context(at)?;
        let v = match (kind, f.next()) {
            (BenchKind::Path, Some(v)) => s.resolve(v).with_context(at)?,
            (BenchKind::Path, None) => bail!("{}: a path query needs two vertices", at()),
            _ => u,
        };
        jobs.push((u, v));
    }
    Ok(jobs)
}

/// Runs one query of `kind`, returning its answer's size (-1: no path).
fn run_one(
    s: &Snapshot,
    kind: BenchKind,
    (u, v): Job,
    sc: &mut QueryScratch,
) -> anyhow::Result<i64> {
    Ok(match kind {
        BenchKind::Neighbors => {
            let nb = query::neighbors(s, u, Direction::Out)?;
            let ext: Vec<ExternalId> = nb.ids.iter().map(|&y| s.external(y)).collect();
            ext.len() as i64
        }
        BenchKind::Khop2 => query::khop_count_with(s, u, 2, sc)? as i64,
        BenchKind::Khop3 => query::khop_count_with(s, u, 3, sc)? as i64,
        BenchKind::Path => match query::path_with(s, u, v, sc)? {
            Some(p) => {
                let ext: Vec<ExternalId> = p.vertices.iter().map(|&y| s.external(y)).collect();
                ext.len() as i64 - 1
            }
            None => -1,
        },
    })
}

fn bench(s: &Snapshot, out: &mut impl Write, json: bool, b: &BenchArgs) -> anyhow::Result<()> {
    let jobs = match &b.vertices {
        Some(f) => {
            let mut jobs = read_jobs(s, b.kind, f)?;
            jobs.truncate(b.queries);
            jobs
        }
        None => sample(s, b.kind, b.queries, b.seed)?,
    };
    if let Some(f) = &b.save_vertices {
        let mut w =
            BufWriter::new(std::fs::File::create(f).with_context(|| f.display().to_string())?);
        for &(u, v) in &jobs {
            match b.kind {
                BenchKind::Path => writeln!(w, "{} {}", s.external(u), s.external(v))?,
                _ => writeln!(w, "{}", s.external(u))?,
            }
        }
        w.flush()?;
    }
    let mut sc = QueryScratch::dense();
    let mut lat = Vec::with_capacity(jobs.len());
    let mut sizes = Vec::with_capacity(jobs.len());
    let t0 = Instant::now();
    for &job in &jobs {
        let t = Instant::now();
        let n = run_one(s, b.kind, job, &mut sc)?;
        lat.push(t.elapsed().as_secs_f64() * 1e6);
        sizes.push(n);
    }
    let total = t0.elapsed().as_secs_f64();
    if let Some(f) = &b.results {
        let text: String = sizes.iter().map(|n| format!("{n}\n")).collect();
        std::fs::write(f, text).with_context(|| f.display().to_string())?;
    }
    let (p50, p99, mean) = percentiles(&mut lat);
    let kind = format!("{:?}", b.kind).to_lowercase();
    if json {
        let o = json!({"kind": kind, "queries": jobs.len(), "p50_us": p50, "p99_us": p99,
            "mean_us": mean, "seconds": total, "answers": sizes.iter().sum::<i64>(),
            "version": s.version()});
        writeln!(out, "{o}")?;
    } else {
        writeln!(
            out,
            "{kind}: {} queries, p50 {p50:.1} us, p99 {p99:.1} us, mean {mean:.1} us",
            jobs.len()
        )?;
    }
    Ok(())
}

/// p50, p99 (nearest rank) and mean of `xs` (sorted in place).
fn percentiles(xs: &mut [f64]) -> (f64, f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    xs.sort_by(f64::total_cmp);
    let rank = |q: f64| xs[((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1];
    (
        rank(0.5),
        rank(0.99),
        xs.iter().sum::<f64>() / xs.len() as f64,
    )
}
