//! Live graphs from the command line: `plexus tx` (one transaction from a
//! file), `plexus log` (the log's state, `--check`, `--repair`),
//! `plexus compact`, and [`open_latest`], through which `run`, `batch`,
//! `info`, `export`, `mix` and `profile` read the newest committed version.
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::Args;
use plexus_graph::{DataDir, Graph};
use plexus_store::open::{Access, LOG_FILE};
use plexus_store::{wal, LiveGraph, Op, Snapshot, WriterLock};

use crate::graph_cmds::Ctx;

/// Share of the base's arcs past which `plexus tx` compacts after its commit:
/// a version keeps the base's vertex order, whose locality the changes
/// erode, and every process that opens it replays the log; compaction
/// restores both (`bench/live.sh snapshot` measures the kernels' side).
pub const DEFAULT_COMPACT_SHARE: f64 = 0.05;

/// The newest committed version of graph `name` as a graph: the stored
/// base when its log holds nothing newer, else the base with the log
/// replayed (read-only; the writer may keep committing).
pub fn open_latest(data: &DataDir, name: &str) -> anyhow::Result<Graph> {
    Ok(open_latest_with_facts(data, name)?.0)
}

/// The newest committed version's log facts, for `info`.
pub struct LiveFacts {
    pub version: u64,
    pub base_version: u64,
    pub ops_since_base: u64,
    pub log_bytes: u64,
    pub log_records: u64,
}

/// [`open_latest`] and, when the graph has a log, its [`LiveFacts`], from
/// one replay of the log.
pub fn open_latest_with_facts(
    data: &DataDir,
    name: &str,
) -> anyhow::Result<(Graph, Option<LiveFacts>)> {
    let log = data.graph_dir(name).join(LOG_FILE);
    if !log.exists() {
        return Ok((data.open(name)?, None));
    }
    let (live, open) = LiveGraph::open(data, name, Access::Read)?;
    let s = live.snapshot();
    let report = wal::inspect(&log)?;
    let facts = LiveFacts {
        version: s.version(),
        base_version: open.base_version,
        ops_since_base: s.ops_since_base(),
        log_bytes: report.bytes,
        log_records: report.records,
    };
    Ok((Arc::unwrap_or_clone(s.graph()?), Some(facts)))
}

#[derive(Args, Debug)]
pub struct TxArgs {
    /// The stored graph to change.
    pub graph: String,
    /// The transaction: one op per line (`add-edge U V [W]`, `remove-edge U V`,
    /// `add-vertex U`, `remove-vertex U`, `set-weight U V W`; `#` starts a comment);
    /// `-` reads standard input. Every line applies or none does.
    pub file: PathBuf,
    /// Compact after the commit when the changes since the base exceed this share of its
    /// arcs (0 turns it off).
    #[arg(long, default_value_t = DEFAULT_COMPACT_SHARE)]
    pub compact_share: f64,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One parsed line: its number and op.
type Line = (usize, Op);

/// Parses a transaction file; errors name the file and line.
fn parse_tx(name: &str, text: &str, s: &Snapshot) -> anyhow::Result<Vec<Line>> {
    let mut ops = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = i + 1;
        let op = parse_op(line, s).with_context(|| format!("{name}:{at}"))?;
        ops.push((at, op));
    }
    Ok(ops)
}

fn parse_op(line: &str, s: &Snapshot) -> anyhow::Result<Op> {
    Op::parse_line(line, s).map_err(anyhow::Error::msg)
}

fn read_input(file: &Path) -> anyhow::Result<(String, String)> {
    if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the transaction from standard input")?;
        return Ok(("<stdin>".into(), text));
    }
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    Ok((file.display().to_string(), text))
}

pub fn tx(ctx: &Ctx, a: TxArgs) -> anyhow::Result<()> {
    if !(0.0..=1e6).contains(&a.compact_share) {
        bail!(
            "--compact-share must be a non-negative share, got {}",
            a.compact_share
        );
    }
    let (name, text) = read_input(&a.file)?;
    let (live, _) = LiveGraph::open(&ctx.data, &a.graph, Access::Write)
        .with_context(|| format!("cannot open graph '{}' for writing", a.graph))?;
    let mut tx = live.begin();
    let lines = parse_tx(&name, &text, tx.snapshot())?;
    let count = lines.len();
    for (at, op) in lines {
        tx.apply(op).with_context(|| format!("{name}:{at}"))?;
    }
    let t = std::time::Instant::now();
    let version = live.commit(tx)?;
    let commit_ms = t.elapsed().as_secs_f64() * 1e3;
    let s = live.snapshot();
    let base_arcs = s.base().num_arcs().max(1) as f64;
    let share = s.ops_since_base() as f64 / base_arcs;
    let compacted = if a.compact_share > 0.0 && share > a.compact_share {
        Some(live.compact()?)
    } else {
        None
    };
    if a.json {
        let v = serde_json::json!({
            "graph": a.graph, "version": version, "ops": count, "commit_ms": commit_ms,
            "vertices": s.num_vertices(), "arcs": s.num_arcs(),
            "ops_since_base": s.ops_since_base(),
            "compacted": compacted.as_ref().map(|c| c.version),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "committed version {version} of '{}' ({count} ops, {commit_ms:.1} ms)",
        a.graph
    );
    if let Some(c) = compacted {
        println!(
            "compacted: version {} is the new base ({} ops merged, log {} → {} bytes, {:.2} s)",
            c.version, c.merged_ops, c.log_bytes_before, c.log_bytes_after, c.seconds
        );
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct LogArgs {
    /// The stored graph.
    pub graph: String,
    /// Read every record and report damage (exit 2 when the log is corrupt).
    #[arg(long, conflicts_with = "repair")]
    pub check: bool,
    /// Cut the log after its last good record, saying first what is lost (takes the writer lock).
    #[arg(long)]
    pub repair: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn log(ctx: &Ctx, a: LogArgs) -> anyhow::Result<()> {
    let dir = ctx.data.graph_dir(&a.graph);
    let base = ctx
        .data
        .open(&a.graph)
        .with_context(|| format!("cannot open graph '{}'", a.graph))?;
    let path = dir.join(LOG_FILE);
    if !path.exists() {
        println!(
            "'{}' has no log: version {} is its base, no changes since",
            a.graph,
            base.base_version()
        );
        return Ok(());
    }
    let r = wal::inspect(&path)?;
    if a.repair {
        let _lock = WriterLock::acquire(ctx.data.root())?;
        let Some(d) = r.corrupt.as_ref().or(r.torn.as_ref()) else {
            println!(
                "{}: whole ({} records, {} bytes); nothing to repair",
                path.display(),
                r.records,
                r.bytes
            );
            return Ok(());
        };
        eprintln!(
            "{}: cutting at byte {} ({}): {} bytes after the last good record (version {}) are lost",
            path.display(),
            d.offset,
            d.reason,
            d.bytes,
            r.last_version.map_or("none".into(), |v| v.to_string())
        );
        let rep = wal::repair(&path)?;
        println!(
            "repaired: kept {} records ({} bytes), dropped {} bytes",
            rep.kept_records, rep.kept_bytes, rep.dropped_bytes
        );
        return Ok(());
    }
    if a.json {
        let dmg = |d: &Option<wal::Damage>| {
            d.as_ref().map(
                |d| serde_json::json!({"offset": d.offset, "bytes": d.bytes, "reason": d.reason}),
            )
        };
        let v = serde_json::json!({
            "graph": a.graph, "base_version": base.base_version(), "records": r.records,
            "first_version": r.first_version, "last_version": r.last_version, "bytes": r.bytes,
            "torn": dmg(&r.torn), "corrupt": dmg(&r.corrupt),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("graph        {}", a.graph);
        println!("base version {}", base.base_version());
        println!(
            "log          {} records, versions {}, {} bytes",
            r.records,
            match (r.first_version, r.last_version) {
                (Some(a), Some(b)) => format!("{a}..={b}"),
                _ => "none".into(),
            },
            r.bytes
        );
        if let Some(d) = &r.torn {
            println!(
                "torn tail    {} bytes at offset {} ({}): dropped on the next open",
                d.bytes, d.offset, d.reason
            );
        }
    }
    if let Some(d) = &r.corrupt {
        bail!(
            "{}: corrupt at byte offset {} ({}); `plexus log {} --repair` cuts it there, losing {} bytes",
            path.display(),
            d.offset,
            d.reason,
            a.graph,
            d.bytes
        );
    }
    if a.check && r.torn.is_none() && !a.json {
        println!("check        ok: every record's checksum verified");
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct CompactArgs {
    /// The stored graph.
    pub graph: String,
}

pub fn compact(ctx: &Ctx, a: CompactArgs) -> anyhow::Result<()> {
    let (live, _) = LiveGraph::open(&ctx.data, &a.graph, Access::Write)
        .with_context(|| format!("cannot open graph '{}' for writing", a.graph))?;
    let c = live.compact()?;
    if c.merged_ops == 0 {
        println!(
            "'{}' has no changes since its base (version {})",
            a.graph, c.version
        );
    } else {
        println!(
            "compacted '{}': version {} is the new base ({} ops merged, log {} → {} bytes, {:.2} s)",
            a.graph, c.version, c.merged_ops, c.log_bytes_before, c.log_bytes_after, c.seconds
        );
    }
    Ok(())
}
