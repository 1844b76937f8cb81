//! Bounded imports of CSV edge tables (and their node tables). Integer ids
//! are spooled as an edge list's are. String ids are numbered as first seen
//! and spooled as those numbers, while the names themselves stay in memory
//! (counted against the budget) to be ranked in byte order at the end, as
//! the in-memory import ranks them.
use std::collections::HashMap;
use std::path::Path;

use super::entry::Job;
use super::{Built, Names, Vertices};
use crate::import::text::{self, Input};
use crate::import::{csv_table, IdType, Progress};
use crate::{GraphError, Result};

/// Bytes a name costs in memory besides its text (the map entry, the box
/// and the first-seen list).
const NAME_OVERHEAD: u64 = 64;

/// Where `--ids auto` met its first id that is not an integer: in edge row
/// `edges` (0-based) or, all edges being integers, in node row `nodes`.
#[derive(Clone, Copy, Debug)]
struct Switch {
    edges: u64,
    nodes: u64,
}

/// Imports the CSV table `path` within `job`'s budget.
pub(super) fn import(path: &Path, job: &Job, progress: &dyn Progress) -> Result<Built> {
    if job.opts.csv.ids == IdType::Str {
        return strings(path, job, progress, None);
    }
    let mut switch = None;
    match integers(path, job, progress, &mut switch) {
        Err(e) if switch.is_some() && job.opts.csv.ids == IdType::Auto => {
            let plain = !text::is_stdin(path) && std::fs::metadata(path).is_ok_and(|m| m.is_file());
            if !plain {
                return Err(e);
            }
            // Read again with string ids, the integers before the first
            // string written as the in-memory import writes them.
            strings(path, job, progress, switch)
        }
        r => r,
    }
}

/// Integer ids; on the first id that is not one, records where in
/// `switch` and fails.
fn integers(
    path: &Path,
    job: &Job,
    progress: &dyn Progress,
    switch: &mut Option<Switch>,
) -> Result<Built> {
    let opts = job.opts;
    let c = &opts.csv;
    let mut seen = Switch { edges: 0, nodes: 0 };
    let mut int = |t: &str, file: &Path, line: u64, at: Switch| -> Result<i64> {
        t.parse::<i64>().map_err(|_| {
            *switch = Some(at);
            GraphError::parse(
                file,
                line,
                format!(
                    "vertex id '{}' is not an integer: string ids under --memory need a file that can be read twice, or --ids string",
                    text::show(t.as_bytes())
                ),
            )
        })
    };
    let input = text::open_input(path)?;
    let weighted = csv_table::is_weighted(opts);
    job.spool_and_build(weighted, opts.directed.unwrap_or(true), progress, |spool| {
        let rows = csv_table::for_each_edge(input, path, opts, progress, |s, d, w, line| {
            let (a, b) = (int(s, path, line, seen)?, int(d, path, line, seen)?);
            seen.edges += 1;
            spool.push(a, b, w.unwrap_or(0.0), path)
        })?;
        if let Some(np) = &c.nodes {
            csv_table::for_each_node(np, c, |id, line| {
                let x = int(id, np, line, seen)?;
                seen.nodes += 1;
                spool.mark_id(x, np)
            })?;
        }
        if rows == 0 && seen.nodes == 0 {
            return Err(GraphError::bad_input(path, "contains no edges"));
        }
        Ok(Vertices::Seen)
    })
}

/// Names numbered as first seen, held within the budget.
struct Interner {
    number: HashMap<Box<str>, u32>,
    first_seen: Vec<Box<str>>,
    held: u64,
    limit: u64,
}

impl Interner {
    fn id(&mut self, name: &str, file: &Path, line: u64) -> Result<i64> {
        if let Some(&k) = self.number.get(name) {
            return Ok(i64::from(k));
        }
        self.held += name.len() as u64 + NAME_OVERHEAD;
        if self.held > self.limit {
            return Err(GraphError::parse(
                file,
                line,
                format!(
                    "the vertex names read so far take {} MiB, more than the memory budget allows ({} MiB): string ids under --memory are held in memory; raise --memory",
                    self.held >> 20,
                    self.limit >> 20
                ),
            ));
        }
        let k = self.first_seen.len() as u32;
        let b: Box<str> = name.into();
        self.first_seen.push(b.clone());
        self.number.insert(b, k);
        Ok(i64::from(k))
    }
}

/// A name as the in-memory import names it: ids it read as integers before
/// it switched to strings (`normalize`) become their decimal text.
fn name_of(t: &str, normalize: bool) -> std::borrow::Cow<'_, str> {
    match (normalize, t.parse::<i64>()) {
        (true, Ok(x)) => x.to_string().into(),
        _ => t.into(),
    }
}

/// String ids; `switch` says where `--ids auto` switched (ids before it
/// are normalized integers).
fn strings(
    path: &Path,
    job: &Job,
    progress: &dyn Progress,
    switch: Option<Switch>,
) -> Result<Built> {
    let opts = job.opts;
    let c = &opts.csv;
    let mut names = Interner {
        number: HashMap::new(),
        first_seen: Vec::new(),
        held: 0,
        limit: job.budget.saturating_sub(super::MIN_BUDGET),
    };
    let input: Input = text::open_input(path)?;
    let weighted = csv_table::is_weighted(opts);
    // Edge rows before the switch were all integers; node rows too when
    // the switch came in the node table (else `nodes` is 0).
    let sw = switch.unwrap_or(Switch { edges: 0, nodes: 0 });
    job.spool_and_build(weighted, opts.directed.unwrap_or(true), progress, |spool| {
        let mut row = 0u64;
        let rows = csv_table::for_each_edge(input, path, opts, progress, |s, d, w, line| {
            let norm = row < sw.edges;
            row += 1;
            let a = names.id(&name_of(s, norm), path, line)?;
            let b = names.id(&name_of(d, norm), path, line)?;
            spool.push(a, b, w.unwrap_or(0.0), path)
        })?;
        let mut node_row = 0u64;
        if let Some(np) = &c.nodes {
            csv_table::for_each_node(np, c, |id, line| {
                let norm = node_row < sw.nodes;
                node_row += 1;
                let x = names.id(&name_of(id, norm), np, line)?;
                spool.mark_id(x, np)
            })?;
        }
        if rows == 0 && node_row == 0 {
            return Err(GraphError::bad_input(path, "contains no edges"));
        }
        let first_seen = std::mem::take(&mut names.first_seen);
        drop(std::mem::take(&mut names.number));
        Ok(Vertices::Named(Names::rank(first_seen)))
    })
}
