//! The graph-management commands: import, generate, info, export, list, remove.
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use plexus_graph::export::ExportFormat;
use plexus_graph::generate::{GenOptions, Generator};
use plexus_graph::import::{CsvOptions, IdType};
use plexus_graph::store::{dir_size, read_header, GRAPH_FILE};
use plexus_graph::{
    DataDir, DegreeSummary, DuplicatePolicy, Format, Graph, ImportOptions, LoopPolicy, OrderChoice,
    Provenance,
};
use serde_json::json;

use crate::fmt::{bytes, secs, thousands};
use crate::progress::Bar;

/// What every command needs.
pub struct Ctx {
    pub data: DataDir,
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Input file: edge list (.el/.wel/.txt), Matrix Market (.mtx), CSV (.csv) or Graphalytics
    /// (.e with .v beside it, or .properties); gzip or zstd compressed or not (told by the
    /// content). `-` reads standard input; FIFOs and process substitutions work too.
    pub input: PathBuf,
    /// Name of the stored graph.
    #[arg(long)]
    pub name: String,
    /// Input format (default: from the file name, else from the content): edgelist, mtx, csv,
    /// graphalytics.
    #[arg(long)]
    pub format: Option<Format>,
    /// Store both directions of every edge (an undirected graph).
    #[arg(long, conflicts_with = "directed")]
    pub undirected: bool,
    /// Force a directed graph (overrides Matrix Market `symmetric` or Graphalytics properties).
    #[arg(long)]
    pub directed: bool,
    /// Read edge weights: the third column of an edge list or CSV (implied by .wel, mtx
    /// integer/real, --weight-col).
    #[arg(long)]
    pub weighted: bool,
    /// Self-loops: keep or drop.
    #[arg(long, default_value = "keep")]
    pub self_loops: LoopPolicy,
    /// Duplicate edges: keep, drop, min (keep the smallest weight) or sum (add weights).
    #[arg(long, default_value = "keep")]
    pub duplicates: DuplicatePolicy,
    /// Vertex order: auto (degree order for large graphs with skewed degrees whose ids carry no locality of their own, else none), none (your ids' order), degree (descending) or rcm (reverse Cuthill–McKee). Results stay in your ids.
    #[arg(long, default_value = "auto")]
    pub order: OrderChoice,
    /// CSV: source column (header name or 0-based index; default 0).
    #[arg(long)]
    pub src_col: Option<String>,
    /// CSV: destination column (default 1).
    #[arg(long)]
    pub dst_col: Option<String>,
    /// CSV: weight column (makes the graph weighted).
    #[arg(long)]
    pub weight_col: Option<String>,
    /// CSV: a node table whose ids are added as vertices (isolated ones included).
    #[arg(long)]
    pub nodes: Option<PathBuf>,
    /// CSV: id column of the node table (default 0).
    #[arg(long)]
    pub node_col: Option<String>,
    /// CSV: field delimiter (one ASCII character; default `,`).
    #[arg(long)]
    pub delimiter: Option<char>,
    /// CSV: vertex ids are `int` (64-bit integers), `string`, or `auto` (integers unless one
    /// id is not).
    #[arg(long, default_value = "auto", value_parser = ["auto", "int", "string"])]
    pub ids: String,
    /// CSV: the first row is an edge, not a header (a first row of integer ids is taken as
    /// an edge without it).
    #[arg(long)]
    pub no_header: bool,
    /// Build within this much memory (bytes, or with a K, M, G or T suffix), page cache
    /// included: sorted runs on disk, merged into the store (edge lists, CSV and Matrix Market; same file as
    /// without it). A budget too small is refused, naming the least that fits.
    #[arg(long, value_parser = crate::ooc::parse_memory)]
    pub memory: Option<u64>,
    /// Replace an existing graph of the same name.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Generator: kron (undirected Graph500/GAP Kronecker), rmat (directed), uniform, grid2d.
    #[arg(value_parser = ["kron", "rmat", "uniform", "grid2d"])]
    pub kind: String,
    /// log2 of the number of vertices (kron, rmat, uniform); grid2d uses 2^(scale/2) per side unless --width/--height.
    #[arg(long, default_value_t = 16)]
    pub scale: u32,
    /// Edges generated per vertex.
    #[arg(long, default_value_t = 16)]
    pub edge_factor: u64,
    /// Seed of the random choices (same seed, same graph, any thread count).
    #[arg(long, default_value_t = 27491095)]
    pub seed: u64,
    /// R-MAT probability A.
    #[arg(long, default_value_t = 0.57)]
    pub a: f64,
    /// R-MAT probability B.
    #[arg(long, default_value_t = 0.19)]
    pub b: f64,
    /// R-MAT probability C.
    #[arg(long, default_value_t = 0.19)]
    pub c: f64,
    /// grid2d width.
    #[arg(long)]
    pub width: Option<u64>,
    /// grid2d height.
    #[arg(long)]
    pub height: Option<u64>,
    /// Add uniform integer weights 1..=255 (the GAP benchmark's SSSP weights).
    #[arg(long)]
    pub weighted: bool,
    /// Keep the ids as generated (no random permutation).
    #[arg(long)]
    pub no_permute: bool,
    /// Keep self-loops and duplicate edges (dropped by default, as GAPBS does).
    #[arg(long)]
    pub keep_multi: bool,
    /// Vertex order: auto, none, degree or rcm (as for import).
    #[arg(long, default_value = "auto")]
    pub order: OrderChoice,
    /// Store under this name (default: e.g. kron18).
    #[arg(long, conflicts_with = "out")]
    pub name: Option<String>,
    /// Write an edge list file instead of storing (`.wel` content if weighted; `-` for
    /// standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Build (or, with --out, write) within this much memory, as `import --memory`.
    #[arg(long, value_parser = crate::ooc::parse_memory)]
    pub memory: Option<u64>,
    /// Replace an existing graph of the same name.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Name of the stored graph.
    pub name: String,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Verify every checksum and the structural invariants.
    #[arg(long)]
    pub check: bool,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Name of the stored graph.
    pub name: String,
    /// Output file (for graphalytics: the .e file; .v and .properties are written beside it);
    /// `-` writes an edge list or CSV to standard output.
    #[arg(long)]
    pub out: PathBuf,
    /// Format: edgelist (default), csv or graphalytics (keeps isolated vertices).
    #[arg(long, default_value = "edgelist")]
    pub format: ExportFormat,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RemoveArgs {
    /// Name of the stored graph.
    pub name: String,
}

/// Fails early, before any work, when `name` cannot be written: invalid,
/// taken (unless `force`), or an incomplete graph directory.
pub(crate) fn check_name_free(ctx: &Ctx, name: &str, force: bool) -> anyhow::Result<()> {
    plexus_graph::store::check_name(name)?;
    if force {
        return Ok(());
    }
    if ctx.data.exists(name) {
        bail!(
            "a graph named '{name}' already exists in {} (use --force to replace it)",
            ctx.data.root().display()
        );
    }
    if ctx.data.is_incomplete(name) {
        // The store's own message says how to remove or replace it.
        return Err(ctx.data.open(name).err().map_or_else(
            || anyhow::anyhow!("'{name}' is an incomplete graph directory"),
            Into::into,
        ));
    }
    Ok(())
}

pub fn import(ctx: &Ctx, a: ImportArgs) -> anyhow::Result<()> {
    check_name_free(ctx, &a.name, a.force)?;
    let delimiter = match a.delimiter {
        Some(c) if !c.is_ascii() || c == '\n' || c == '"' => {
            bail!("--delimiter must be one ASCII character other than a newline or a quote")
        }
        Some(c) => c as u8,
        None => 0,
    };
    let opts = ImportOptions {
        format: a.format,
        directed: if a.undirected {
            Some(false)
        } else if a.directed {
            Some(true)
        } else {
            None
        },
        weighted: a.weighted,
        self_loops: a.self_loops,
        duplicates: a.duplicates,
        order: a.order,
        csv: CsvOptions {
            src_col: a.src_col.clone(),
            dst_col: a.dst_col.clone(),
            weight_col: a.weight_col.clone(),
            nodes: a.nodes.clone(),
            node_col: a.node_col.clone(),
            delimiter,
            ids: match a.ids.as_str() {
                "string" => IdType::Str,
                "int" => IdType::Int,
                _ => IdType::Auto,
            },
            no_header: a.no_header,
        },
    };
    if let Some(budget) = a.memory {
        return crate::bounded::import(ctx, &a, &opts, budget);
    }
    let t = Instant::now();
    let bar = Bar::new(ctx.quiet);
    let g = plexus_graph::import_file(&a.input, &opts, &bar);
    bar.finish();
    let g = g?;
    let build = t.elapsed().as_secs_f64();
    let prov = Provenance {
        source: a.input.display().to_string(),
        options: format!("{opts:?}"),
        build_seconds: build,
        created_unix: now(),
    };
    let t2 = Instant::now();
    ctx.data.save(&a.name, &g, &prov, a.force)?;
    println!(
        "imported {} as '{}': {} vertices, {} edges ({}, {}) in {} + {} write",
        a.input.display(),
        a.name,
        thousands(g.num_vertices() as u64),
        thousands(g.num_edges()),
        if g.is_directed() {
            "directed"
        } else {
            "undirected"
        },
        if g.is_weighted() {
            "weighted"
        } else {
            "unweighted"
        },
        secs(build),
        secs(t2.elapsed().as_secs_f64()),
    );
    Ok(())
}

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Generator options from the command line.
pub fn gen_options(a: &GenerateArgs) -> (Generator, GenOptions) {
    let kind = match a.kind.as_str() {
        "rmat" => Generator::Rmat,
        "uniform" => Generator::Uniform,
        "grid2d" => {
            let side = 1u64 << (a.scale / 2);
            Generator::Grid2d {
                width: a.width.unwrap_or(side),
                height: a.height.unwrap_or(side),
            }
        }
        _ => Generator::Kron,
    };
    let o = GenOptions {
        scale: a.scale,
        edge_factor: a.edge_factor,
        seed: a.seed,
        a: a.a,
        b: a.b,
        c: a.c,
        max_weight: a.weighted.then_some(255),
        permute: !a.no_permute,
        keep_multi: a.keep_multi,
        order: a.order,
    };
    (kind, o)
}

pub fn generate(ctx: &Ctx, a: GenerateArgs) -> anyhow::Result<()> {
    let (kind, o) = gen_options(&a);
    if let Some(budget) = a.memory {
        return crate::bounded::generate(ctx, &a, kind, &o, budget);
    }
    let t = Instant::now();
    if let Some(out) = &a.out {
        crate::out::check(out, &[])?;
        let (n, buf, _) = plexus_graph::generate::generate_edges(kind, &o)?;
        plexus_graph::export::write_atomically(out, |w| {
            for i in 0..buf.len() {
                match &buf.weights {
                    Some(ws) => writeln!(w, "{} {} {}", buf.src[i], buf.dst[i], ws[i])?,
                    None => writeln!(w, "{} {}", buf.src[i], buf.dst[i])?,
                }
            }
            Ok(())
        })?;
        let msg = format!(
            "wrote {} edges on {} vertex ids to {} in {}",
            thousands(buf.len() as u64),
            thousands(n as u64),
            out.display(),
            secs(t.elapsed().as_secs_f64())
        );
        // The edges went to standard output: the summary goes beside them.
        if crate::out::is_stdout(out) {
            eprintln!("{msg}");
        } else {
            println!("{msg}");
        }
        return Ok(());
    }
    let name = a.name.clone().unwrap_or_else(|| match kind {
        Generator::Grid2d { width, height } => format!("grid{width}x{height}"),
        _ => format!("{}{}", a.kind, a.scale),
    });
    check_name_free(ctx, &name, a.force)?;
    let g = plexus_graph::generate::generate(kind, &o)?;
    let build = t.elapsed().as_secs_f64();
    let prov = Provenance {
        source: format!("generate {} {:?}", a.kind, o),
        options: String::new(),
        build_seconds: build,
        created_unix: now(),
    };
    ctx.data.save(&name, &g, &prov, a.force)?;
    println!(
        "generated '{name}': {} vertices, {} edges ({}) in {}",
        thousands(g.num_vertices() as u64),
        thousands(g.num_edges()),
        if g.is_directed() {
            "directed"
        } else {
            "undirected"
        },
        secs(build)
    );
    Ok(())
}

/// Degree statistics of a graph's out-degrees.
pub struct DegreeStats {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub top: Vec<(String, u64)>,
}

pub fn degree_stats(g: &Graph) -> DegreeStats {
    stats_of(g, g.degree_summary())
}

/// External-id form of a stored or computed [`DegreeSummary`].
fn stats_of(g: &Graph, d: DegreeSummary) -> DegreeStats {
    DegreeStats {
        min: d.min,
        max: d.max,
        mean: d.mean,
        top: d
            .top
            .into_iter()
            .map(|(v, deg)| (g.ids().external_string(v), deg))
            .collect(),
    }
}

pub fn info(ctx: &Ctx, a: InfoArgs) -> anyhow::Result<()> {
    if a.check {
        ctx.data.check(&a.name)?;
    }
    // The header, maps and the checks of every open (so a corrupt store
    // is reported here, not later); the degree statistics come from the
    // summary stored at save (computed once for older stores).
    let (g, live) = crate::live::open_latest_with_facts(&ctx.data, &a.name)?;
    let changed = live.as_ref().is_some_and(|f| f.ops_since_base > 0);
    let m = g.meta();
    let st = match ctx.data.degree_summary(&a.name) {
        _ if changed => stats_of(&g, g.degree_summary()),
        Some(d) if d.top.iter().all(|&(v, _)| (v as usize) < g.num_vertices()) => stats_of(&g, d),
        _ => {
            // Computed once, then kept (best effort: a read-only store
            // just computes it each time).
            let d = g.degree_summary();
            let _ = ctx.data.save_degree_summary(&a.name, &d);
            stats_of(&g, d)
        }
    };
    let on_disk = dir_size(&ctx.data.graph_dir(&a.name));
    let version = read_header(&ctx.data.graph_dir(&a.name).join(GRAPH_FILE))?.version;
    let weights = if !m.weighted {
        "none"
    } else if m.integral_weights {
        "integer"
    } else {
        "float"
    };
    let ids = format!("{:?}", g.ids().kind()).to_lowercase();
    let tiles = g.tiles().map(|t| {
        json!({"segment_sources": 1u64 << t.shift(), "blocks": t.blocks().len(), "tiles": t.tiles().len(),
               "runs": t.targets().len(), "bytes": t.size_bytes()})
    });
    if a.json {
        let top: Vec<_> = st
            .top
            .iter()
            .map(|(id, d)| json!({"id": id, "degree": d}))
            .collect();
        let v = json!({
            "name": a.name, "vertices": g.num_vertices(), "edges": g.num_edges(), "arcs": g.num_arcs(),
            "directed": m.directed, "weights": weights, "self_loops": m.self_loops, "order": m.order,
            "ids": ids, "format_version": version, "bytes_on_disk": on_disk, "chunks": g.chunks().len(),
            "out_degree": {"min": st.min, "max": st.max, "mean": st.mean, "top": top},
            "tiles": tiles,
            "checked": a.check,
            "version": live.as_ref().map_or(g.base_version(), |f| f.version),
            "base_version": live.as_ref().map_or(g.base_version(), |f| f.base_version),
            "changes_since_base": live.as_ref().map_or(0, |f| f.ops_since_base),
            "log_bytes": live.as_ref().map_or(0, |f| f.log_bytes),
            "log_records": live.as_ref().map_or(0, |f| f.log_records),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let top: Vec<String> = st.top.iter().map(|(id, d)| format!("{id} ({d})")).collect();
    println!("graph        {}", a.name);
    match &live {
        Some(f) => {
            println!(
                "version      {} (base {}, {} changes since; log {} records, {})",
                f.version,
                f.base_version,
                thousands(f.ops_since_base),
                thousands(f.log_records),
                crate::fmt::bytes(f.log_bytes)
            );
        }
        None => println!("version      {} (no changes logged)", g.base_version()),
    }
    println!("vertices     {}", thousands(g.num_vertices() as u64));
    println!(
        "edges        {} ({} stored arcs)",
        thousands(g.num_edges()),
        thousands(g.num_arcs())
    );
    println!("directed     {}", if m.directed { "yes" } else { "no" });
    println!("weights      {weights}");
    println!("self-loops   {}", thousands(m.self_loops));
    println!(
        "out-degree   min {}, max {}, mean {:.2}",
        st.min, st.max, st.mean
    );
    println!("top degrees  {}", top.join(", "));
    println!("ids          {ids}");
    println!("order        {}", m.order);
    println!("chunks       {}", thousands(g.chunks().len() as u64));
    match g.tiles() {
        Some(t) => println!(
            "tiles        {} in {} blocks, {}-source segments, {} runs, {}",
            thousands(t.tiles().len() as u64),
            thousands(t.blocks().len() as u64),
            thousands(1u64 << t.shift()),
            thousands(t.targets().len() as u64),
            bytes(t.size_bytes())
        ),
        None => println!("tiles        none"),
    }
    println!("format       version {version}");
    println!("on disk      {}", bytes(on_disk));
    if a.check {
        println!("check        ok (all section checksums and invariants verified)");
    }
    Ok(())
}

pub fn export(ctx: &Ctx, a: ExportArgs) -> anyhow::Result<()> {
    let to_stdout = crate::out::is_stdout(&a.out);
    if to_stdout && a.format == ExportFormat::Graphalytics {
        bail!("--format graphalytics writes three files (.v, .e, .properties), not standard output; use --format edgelist or csv");
    }
    crate::out::check(&a.out, &[])?;
    let g = crate::live::open_latest(&ctx.data, &a.name)?;
    let t = Instant::now();
    let files = plexus_graph::export::export(&g, &a.out, a.format)?;
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let msg = format!(
        "exported '{}' ({} edges) to {} in {}",
        a.name,
        thousands(g.num_edges()),
        names.join(", "),
        secs(t.elapsed().as_secs_f64())
    );
    if to_stdout {
        eprintln!("{msg}");
    } else {
        println!("{msg}");
    }
    if a.format == ExportFormat::EdgeList || a.format == ExportFormat::Csv {
        let isolated = (0..g.num_vertices() as u32)
            .filter(|&v| g.out_degree(v) == 0 && g.in_degree(v) == 0)
            .count();
        if isolated > 0 {
            eprintln!("note: {isolated} isolated vertices are not representable in an edge list; use --format graphalytics to keep them");
        }
    }
    Ok(())
}

pub fn list(ctx: &Ctx, a: ListArgs) -> anyhow::Result<()> {
    let rows = ctx
        .data
        .list()
        .with_context(|| format!("listing {}", ctx.data.root().display()))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if rows.is_empty() {
        println!(
            "no graphs in {} (try `plexus demo` or `plexus import`)",
            ctx.data.root().display()
        );
        return Ok(());
    }
    println!(
        "{:<24} {:>14} {:>16} {:>10} {:>9} {:>10}",
        "name", "vertices", "edges", "directed", "weighted", "size"
    );
    for r in rows {
        if r.incomplete {
            println!(
                "{:<24} incomplete: no graph.plx (`plexus remove {}` deletes it)",
                r.name, r.name
            );
            continue;
        }
        println!(
            "{:<24} {:>14} {:>16} {:>10} {:>9} {:>10}",
            r.name,
            thousands(r.vertices),
            thousands(r.edges),
            if r.directed { "yes" } else { "no" },
            if r.weighted { "yes" } else { "no" },
            bytes(r.bytes_on_disk)
        );
    }
    Ok(())
}

pub fn remove(ctx: &Ctx, a: RemoveArgs) -> anyhow::Result<()> {
    ctx.data.remove(&a.name)?;
    println!("removed '{}'", a.name);
    Ok(())
}
