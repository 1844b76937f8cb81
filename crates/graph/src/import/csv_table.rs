//! CSV edge tables with a header row: chosen source, destination and
//! optional weight columns (by header name or 0-based index), integer or
//! string ids, and an optional node table that adds vertices.
use std::collections::HashMap;
use std::path::Path;

use super::text::{open_stream, parse_weight};
use super::{map_ids, EdgeBlock, IdType, ImportOptions, Progress, VertexSet};
use crate::builder::EdgeBuffer;
use crate::ids::IdMap;
use crate::{build, Graph, GraphError, Result};

fn reader(path: &Path, delimiter: u8) -> Result<csv::Reader<Box<dyn std::io::Read + Send>>> {
    Ok(csv::ReaderBuilder::new()
        .delimiter(if delimiter == 0 { b',' } else { delimiter })
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(open_stream(path)?))
}

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

/// Imports a CSV edge table.
pub fn import(path: &Path, opts: &ImportOptions, progress: &dyn Progress) -> Result<Graph> {
    let c = &opts.csv;
    progress.begin("reading", None);
    let mut rdr = reader(path, c.delimiter)?;
    let headers = rdr.headers().map_err(|e| csv_err(path, e))?.clone();
    if headers.is_empty() {
        return Err(GraphError::bad_input(
            path,
            "empty file: expected a header row",
        ));
    }
    let si = column(path, &headers, c.src_col.as_deref(), 0, "source")?;
    let di = column(path, &headers, c.dst_col.as_deref(), 1, "destination")?;
    let wi = match &c.weight_col {
        Some(w) => Some(column(path, &headers, Some(w), 0, "weight")?),
        None => None,
    };
    let weighted = wi.is_some();
    let mut block = EdgeBlock::new(weighted);
    let mut names: HashMap<String, u32> = HashMap::new();
    let mut str_edges: Vec<(u32, u32)> = Vec::new();
    let intern = |s: &str, names: &mut HashMap<String, u32>| -> u32 {
        let k = names.len() as u32;
        *names.entry(s.to_string()).or_insert(k)
    };
    let mut rec = csv::StringRecord::new();
    let mut count = 0u64;
    loop {
        match rdr.read_record(&mut rec) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(csv_err(path, e)),
        }
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        let field = |i: usize, what: &str| -> Result<&str> {
            rec.get(i).filter(|s| !s.is_empty()).ok_or_else(|| {
                GraphError::parse(path, line, format!("missing {what} in column {i}"))
            })
        };
        let (s, d) = (field(si, "source")?, field(di, "destination")?);
        if let Some(wi) = wi {
            let w = parse_weight(field(wi, "weight")?.as_bytes())
                .map_err(|m| GraphError::parse(path, line, m))?;
            if let Some(v) = block.weights.as_mut() {
                v.push(w);
            }
        }
        match c.ids {
            IdType::Int => {
                let p = |t: &str| {
                    t.parse::<i64>().map_err(|_| {
                        GraphError::parse(path, line, format!("expected an integer vertex id, found '{t}' (use --ids string for string ids)"))
                    })
                };
                let (a, b) = (p(s)?, p(d)?);
                block.ids.push(a);
                block.ids.push(b);
            }
            IdType::Str => {
                let a = intern(s, &mut names);
                let b = intern(d, &mut names);
                str_edges.push((a, b));
            }
        }
        count += 1;
        if count.is_multiple_of(1 << 20) {
            progress.advance(0, 1 << 20);
        }
    }
    // Node table.
    let mut node_ints = Vec::new();
    if let Some(np) = &c.nodes {
        let mut nr = reader(np, c.delimiter)?;
        let nh = nr.headers().map_err(|e| csv_err(np, e))?.clone();
        let ni = column(np, &nh, c.node_col.as_deref(), 0, "node id")?;
        for r in nr.records() {
            let r = r.map_err(|e| csv_err(np, e))?;
            let line = r.position().map(|p| p.line()).unwrap_or(0);
            let id = r.get(ni).filter(|s| !s.is_empty()).ok_or_else(|| {
                GraphError::parse(np, line, format!("missing node id in column {ni}"))
            })?;
            match c.ids {
                IdType::Int => node_ints.push(id.parse::<i64>().map_err(|_| {
                    GraphError::parse(
                        np,
                        line,
                        format!("expected an integer vertex id, found '{id}'"),
                    )
                })?),
                IdType::Str => {
                    intern(id, &mut names);
                }
            }
        }
    }
    if count == 0 && node_ints.is_empty() && names.is_empty() {
        return Err(GraphError::bad_input(path, "contains no edges"));
    }
    let bo = opts.build_options(opts.directed.unwrap_or(true));
    match c.ids {
        IdType::Int => {
            let (buf, ids) = map_ids(vec![block], VertexSet::Plus(node_ints), path)?;
            let n = ids.len();
            build(n, buf, ids, &bo)
        }
        IdType::Str => {
            // Natural order: ascending string.
            let mut by_name: Vec<(String, u32)> = names.into_iter().collect();
            by_name.sort_unstable();
            let mut rank = vec![0u32; by_name.len()];
            for (r, (_, first_seen)) in by_name.iter().enumerate() {
                rank[*first_seen as usize] = r as u32;
            }
            let buf = EdgeBuffer {
                src: str_edges.iter().map(|e| rank[e.0 as usize]).collect(),
                dst: str_edges.iter().map(|e| rank[e.1 as usize]).collect(),
                weights: block.weights,
            };
            let names: Vec<String> = by_name.into_iter().map(|(s, _)| s).collect();
            let n = names.len();
            build(n, buf, IdMap::from_strings(&names), &bo)
        }
    }
}
