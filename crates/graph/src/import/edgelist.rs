//! Whitespace-separated edge lists: `src dst [weight]` per line, `#` and `%`
//! comment lines, blank lines ignored. A line has at most four columns
//! (KONECT's `src dst weight timestamp`; columns past the ones read are
//! ignored); more, or a carriage return inside a line (CR-only line ends),
//! is an error. `.wel` files are weighted; `.gz`/`.zst` are decompressed on
//! the fly. Ids are signed 64-bit integers.
use std::path::Path;

use super::text::{self, parse_blocks, parse_i64, parse_weight, show, BlockError, Input, Parsed};
use super::{map_ids, EdgeBlock, ImportOptions, Progress, VertexSet};
use crate::{build, Graph, GraphError, Result};

/// Parses one block of edge-list lines. `bounds`, if given, is the inclusive
/// range ids must lie in (Matrix Market's declared size).
pub(crate) fn parse_block(
    data: &[u8],
    weighted: bool,
    bounds: Option<(i64, i64)>,
) -> std::result::Result<Parsed<EdgeBlock>, BlockError> {
    let mut b = EdgeBlock::new(weighted);
    let mut line_no = 0u64;
    for raw in data.split(|&c| c == b'\n') {
        line_no += 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let mut toks = text::tokens(line);
        let Some(first) = toks.next() else { continue };
        if first[0] == b'#' || first[0] == b'%' {
            continue;
        }
        let second = toks.next().ok_or_else(|| {
            (
                line_no,
                format!(
                    "expected 'src dst{}', found only '{}'",
                    if weighted { " weight" } else { "" },
                    show(first)
                ),
            )
        })?;
        let id = |t: &[u8]| -> std::result::Result<i64, BlockError> {
            let x = parse_i64(t).ok_or_else(|| {
                (
                    line_no,
                    format!("expected an integer vertex id, found '{}'", show(t)),
                )
            })?;
            if let Some((lo, hi)) = bounds {
                if x < lo || x > hi {
                    return Err((
                        line_no,
                        format!("vertex id {x} is outside the declared range {lo}..={hi}"),
                    ));
                }
            }
            Ok(x)
        };
        let (s, d) = (id(first)?, id(second)?);
        if let Some(w) = b.weights.as_mut() {
            let t = toks.next().ok_or_else(|| {
                (
                    line_no,
                    "missing weight: expected 'src dst weight' (the graph is imported as weighted)"
                        .to_string(),
                )
            })?;
            w.push(parse_weight(t).map_err(|m| (line_no, m))?);
        }
        if let Some(extra) = toks.next() {
            let columns = if b.weights.is_some() { 4 } else { 3 } + toks.count();
            check_extra_columns(line, extra, columns).map_err(|m| (line_no, m))?;
        }
        b.ids.push(s);
        b.ids.push(d);
    }
    // Give back growth slack: all blocks stay alive until ids are mapped.
    match &mut b.ids {
        super::BlockIds::Small(v) => v.shrink_to_fit(),
        super::BlockIds::Wide(v) => v.shrink_to_fit(),
    }
    if let Some(w) = b.weights.as_mut() {
        w.shrink_to_fit();
    }
    // `split` yields one piece after a final newline; do not count it as a line.
    if data.last() == Some(&b'\n') {
        line_no -= 1;
    }
    Ok(Parsed {
        value: b,
        lines: line_no,
    })
}

/// Most columns an edge-list line may have: `src dst weight timestamp`.
const MAX_COLUMNS: usize = 4;

/// Checks a line of `columns` columns, more than the ones read (`extra`
/// the first of the others).
fn check_extra_columns(
    line: &[u8],
    extra: &[u8],
    columns: usize,
) -> std::result::Result<(), String> {
    if line.contains(&b'\r') {
        return Err(
            "a carriage return inside the line: the file has CR-only (old Mac) line ends; convert them with `tr '\\r' '\\n'`"
                .into(),
        );
    }
    if columns > MAX_COLUMNS {
        return Err(format!(
            "{columns} columns (from '{}' on); an edge list has 'src dst [weight [timestamp]]'",
            show(extra)
        ));
    }
    Ok(())
}

/// Imports an edge list from `input`, opened from `path`.
pub fn import(
    input: Input,
    path: &Path,
    opts: &ImportOptions,
    progress: &dyn Progress,
) -> Result<Graph> {
    let weighted = opts.weighted || text::base_name(path).ends_with(".wel");
    let t = std::time::Instant::now();
    let blocks = parse_blocks(input, path, 0, progress, |data| {
        parse_block(data, weighted, None)
    })?;
    crate::trace::phase("parse", t);
    let edges: usize = blocks.iter().map(|b| b.edges()).sum();
    if edges == 0 {
        return Err(GraphError::bad_input(
            path,
            "contains no edges (empty file or only comments)",
        ));
    }
    progress.begin("mapping ids", None);
    let (buf, ids) = map_ids(blocks, VertexSet::Endpoints, path)?;
    progress.begin("building", None);
    let n = ids.len();
    build(
        n,
        buf,
        ids,
        &opts.build_options(opts.directed.unwrap_or(true)),
    )
}
