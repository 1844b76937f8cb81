//! CSV edge tables: chosen source, destination and optional weight columns
//! (by header name or 0-based index; with `--weighted` alone the weight is
//! the third column), integer or string ids (detected: strings as soon as
//! one id is not an integer), and an optional node table that adds
//! vertices. The first row is a header unless `--no-header` is given or its
//! id fields are integers.
use std::collections::HashMap;
use std::path::Path;

use super::text::{parse_weight, Input};
use super::{map_ids, BlockIds, EdgeBlock, IdType, ImportOptions, Progress, VertexSet};
use crate::builder::EdgeBuffer;
use crate::ids::IdMap;
use crate::types::Weight;
use crate::{build, Graph, GraphError, Result};

/// Resolves a column given by name or index against the header.
fn column(
    path: &Path,
    headers: &csv::StringRecord,
    spec: Option<&str>,
    default: usize,
    what: &str,
) -> Result<usize> {
    match spec {
        None => {
            if default < headers.len() {
                Ok(default)
            } else {
                Err(GraphError::bad_input(
                    path,
                    format!(
                        "the header has {} columns; no column {default} for the {what}",
                        headers.len()
                    ),
                ))
            }
        }
        Some(s) => {
            if let Some(i) = headers.iter().position(|h| h == s) {
                return Ok(i);
            }
            match s.parse::<usize>() {
                Ok(i) if i < headers.len() => Ok(i),
                _ => Err(GraphError::bad_input(
                    path,
                    format!(
                        "no column '{s}' for the {what} (header: {})",
                        headers.iter().collect::<Vec<_>>().join(", ")
                    ),
                )),
            }
        }
    }
}

fn csv_err(path: &Path, e: csv::Error) -> GraphError {
    let line = e.position().map(|p| p.line()).unwrap_or(0);
    GraphError::parse(path, line, format!("malformed CSV: {e}"))
}

/// Whether `first`, the first row, is a header: not with `--no-header`;
/// yes when a column is named by one of its fields; else yes unless the
/// fields at the id columns (named by index, or 0 and 1) are all integers,
/// which no header row holds.
fn first_row_is_header(
    first: &csv::StringRecord,
    specs: &[(Option<&str>, usize)],
    no_header: bool,
) -> bool {
    if no_header {
        return false;
    }
    if specs
        .iter()
        .any(|(s, _)| s.is_some_and(|s| first.iter().any(|h| h == s)))
    {
        return true;
    }
    !specs.iter().all(|&(s, default)| {
        let i = s.and_then(|s| s.parse::<usize>().ok()).unwrap_or(default);
        first.get(i).is_some_and(|f| f.parse::<i64>().is_ok())
    })
}

/// The column names a row of `width` fields has without a header: `0`, `1`, ….
fn index_header(width: usize) -> csv::StringRecord {
    (0..width).map(|i| i.to_string()).collect()
}

/// The vertex ids read so far: integers until an id is not one (with
/// [`IdType::Auto`]), then strings (the integers read before turn into
/// their decimal text).
struct Ids {
    kind: IdType,
    block: EdgeBlock,
    node_ints: Vec<i64>,
    names: HashMap<String, u32>,
    str_edges: Vec<(u32, u32)>,
}

impl Ids {
    fn intern(names: &mut HashMap<String, u32>, s: &str) -> u32 {
        let k = names.len() as u32;
        if let Some(&v) = names.get(s) {
            return v;
        }
        names.insert(s.to_string(), k);
        k
    }
    /// Switches to string ids, converting the integers read so far.
    fn switch_to_strings(&mut self) {
        let ints: Vec<i64> = match &self.block.ids {
            BlockIds::Small(v) => v.iter().map(|&x| x as i64).collect(),
            BlockIds::Wide(v) => v.clone(),
        };
        self.block.ids = BlockIds::Small(Vec::new());
        for p in ints.chunks_exact(2) {
            let a = Self::intern(&mut self.names, &p[0].to_string());
            let b = Self::intern(&mut self.names, &p[1].to_string());
            self.str_edges.push((a, b));
        }
        for x in std::mem::take(&mut self.node_ints) {
            Self::intern(&mut self.names, &x.to_string());
        }
        self.kind = IdType::Str;
    }
    /// An integer id, or `None` when `t` is none and the ids became strings.
    fn int(&mut self, t: &str, file: &Path, line: u64) -> Result<Option<i64>> {
        if self.kind == IdType::Str {
            return Ok(None);
        }
        match t.parse::<i64>() {
            Ok(x) => Ok(Some(x)),
            Err(_) if self.kind == IdType::Auto => {
                self.switch_to_strings();
                Ok(None)
            }
            Err(_) => Err(GraphError::parse(
                file,
                line,
                format!(
                    "expected an integer vertex id, found '{}' (--ids int was given)",
                    super::text::show(t.as_bytes())
                ),
            )),
        }
    }
    fn edge(&mut self, s: &str, d: &str, file: &Path, line: u64) -> Result<()> {
        if let Some(a) = self.int(s, file, line)? {
            if let Some(b) = self.int(d, file, line)? {
                self.block.ids.push(a);
                self.block.ids.push(b);
                return Ok(());
            }
            // `d` switched the ids to strings: `s` is interned below.
        }
        let a = Self::intern(&mut self.names, s);
        let b = Self::intern(&mut self.names, d);
        self.str_edges.push((a, b));
        Ok(())
    }
    fn node(&mut self, id: &str, file: &Path, line: u64) -> Result<()> {
        match self.int(id, file, line)? {
            Some(x) => self.node_ints.push(x),
            None => {
                Self::intern(&mut self.names, id);
            }
        }
        Ok(())
    }
}

/// A CSV reader of `input` and its column names: the first row when it is
/// a header ([`first_row_is_header`]), else `0`, `1`, … with the first row
/// kept as data.
fn open_table(
    input: Input,
    path: &Path,
    delimiter: u8,
    specs: &[(Option<&str>, usize)],
    no_header: bool,
) -> Result<(
    csv::Reader<Input>,
    csv::StringRecord,
    Option<csv::StringRecord>,
)> {
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(if delimiter == 0 { b',' } else { delimiter })
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(input);
    let mut first = csv::StringRecord::new();
    if !rdr.read_record(&mut first).map_err(|e| csv_err(path, e))? {
        return Err(GraphError::bad_input(
            path,
            "empty file: expected a header row or edges",
        ));
    }
    if first_row_is_header(&first, specs, no_header) {
        Ok((rdr, first, None))
    } else {
        Ok((rdr, index_header(first.len()), Some(first)))
    }
}

/// Imports a CSV edge table from `input`, opened from `path`.
pub fn import(
    input: Input,
    path: &Path,
    opts: &ImportOptions,
    progress: &dyn Progress,
) -> Result<Graph> {
    let c = &opts.csv;
    let mut ids = Ids {
        kind: c.ids,
        block: EdgeBlock::new(is_weighted(opts)),
        node_ints: Vec::new(),
        names: HashMap::new(),
        str_edges: Vec::new(),
    };
    let count = for_each_edge(input, path, opts, progress, |s, d, w, line| {
        if let (Some(w), Some(v)) = (w, ids.block.weights.as_mut()) {
            v.push(w);
        }
        ids.edge(s, d, path, line)
    })?;
    if let Some(np) = &c.nodes {
        for_each_node(np, c, |id, line| ids.node(id, np, line))?;
    }
    if count == 0 && ids.node_ints.is_empty() && ids.names.is_empty() {
        return Err(GraphError::bad_input(path, "contains no edges"));
    }
    finish(
        ids,
        path,
        &opts.build_options(opts.directed.unwrap_or(true)),
    )
}

/// Whether the table has a weight column (named, or `--weighted` alone:
/// the third column).
pub(crate) fn is_weighted(opts: &ImportOptions) -> bool {
    opts.csv.weight_col.is_some() || opts.weighted
}

/// Calls `row(source, destination, weight, line)` for each edge row of the
/// table in `input`, in file order; returns the number of rows.
pub(crate) fn for_each_edge(
    input: Input,
    path: &Path,
    opts: &ImportOptions,
    progress: &dyn Progress,
    mut row: impl FnMut(&str, &str, Option<Weight>, u64) -> Result<()>,
) -> Result<u64> {
    let c = &opts.csv;
    if super::text::is_stdin(path) && c.nodes.as_deref().is_some_and(super::text::is_stdin) {
        return Err(GraphError::InvalidArgument(
            "the edges and the node table cannot both be standard input".into(),
        ));
    }
    progress.begin("reading", None);
    let weight_spec = match (&c.weight_col, opts.weighted) {
        (Some(w), _) => Some(w.as_str()),
        // `--weighted` alone: the third column.
        (None, true) => Some("2"),
        (None, false) => None,
    };
    let specs = [(c.src_col.as_deref(), 0), (c.dst_col.as_deref(), 1)];
    let (mut rdr, headers, first) = open_table(input, path, c.delimiter, &specs, c.no_header)?;
    let si = column(path, &headers, c.src_col.as_deref(), 0, "source")?;
    let di = column(path, &headers, c.dst_col.as_deref(), 1, "destination")?;
    let wi = match weight_spec {
        Some(w) => Some(column(path, &headers, Some(w), 0, "weight")?),
        None => None,
    };
    let mut rec = first.unwrap_or_default();
    let mut have = !rec.is_empty();
    let mut count = 0u64;
    loop {
        if !have {
            match rdr.read_record(&mut rec) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => return Err(csv_err(path, e)),
            }
        }
        have = false;
        let line = rec.position().map(|p| p.line()).unwrap_or(1);
        let field = |i: usize, what: &str| -> Result<&str> {
            rec.get(i).filter(|s| !s.is_empty()).ok_or_else(|| {
                GraphError::parse(path, line, format!("missing {what} in column {i}"))
            })
        };
        let (s, d) = (field(si, "source")?, field(di, "destination")?);
        let w = match wi {
            Some(wi) => Some(
                parse_weight(field(wi, "weight")?.as_bytes())
                    .map_err(|m| GraphError::parse(path, line, m))?,
            ),
            None => None,
        };
        row(s, d, w, line)?;
        count += 1;
        if count.is_multiple_of(1 << 20) {
            progress.advance(0, 1 << 20);
        }
    }
    Ok(count)
}

/// Calls `node(id, line)` for each row of the node table `np`.
pub(crate) fn for_each_node(
    np: &Path,
    c: &super::CsvOptions,
    mut node: impl FnMut(&str, u64) -> Result<()>,
) -> Result<()> {
    let specs = [(c.node_col.as_deref(), 0)];
    let input = super::text::open_input(np)?;
    let (nr, nh, first) = open_table(input, np, c.delimiter, &specs, c.no_header)?;
    let ni = column(np, &nh, c.node_col.as_deref(), 0, "node id")?;
    for r in first.into_iter().map(Ok).chain(nr.into_records()) {
        let r = r.map_err(|e| csv_err(np, e))?;
        let line = r.position().map(|p| p.line()).unwrap_or(1);
        let id = r.get(ni).filter(|s| !s.is_empty()).ok_or_else(|| {
            GraphError::parse(np, line, format!("missing node id in column {ni}"))
        })?;
        node(id, line)?;
    }
    Ok(())
}

/// Builds the graph of the ids read, in natural order (ascending integers
/// or strings).
fn finish(ids: Ids, path: &Path, bo: &crate::BuildOptions) -> Result<Graph> {
    match ids.kind {
        IdType::Str => {
            let mut by_name: Vec<(String, u32)> = ids.names.into_iter().collect();
            by_name.sort_unstable();
            let mut rank = vec![0u32; by_name.len()];
            for (r, (_, first_seen)) in by_name.iter().enumerate() {
                rank[*first_seen as usize] = r as u32;
            }
            let buf = EdgeBuffer {
                src: ids.str_edges.iter().map(|e| rank[e.0 as usize]).collect(),
                dst: ids.str_edges.iter().map(|e| rank[e.1 as usize]).collect(),
                weights: ids.block.weights,
            };
            let names: Vec<String> = by_name.into_iter().map(|(s, _)| s).collect();
            let n = names.len();
            build(n, buf, IdMap::from_strings(&names), bo)
        }
        IdType::Int | IdType::Auto => {
            let (buf, idm) = map_ids(vec![ids.block], VertexSet::Plus(ids.node_ints), path)?;
            let n = idm.len();
            build(n, buf, idm, bo)
        }
    }
}
