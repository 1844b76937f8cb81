//! The LDBC Graphalytics EVLP pair: a vertex file (`.v`, one id per line)
//! and an edge file (`.e`, `src dst [weight]`), given as the `.e` file (the
//! `.v` beside it is found by name) or as the `.properties` file, which also
//! states directedness, the weight property and the algorithms' parameters.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::edgelist::parse_block;
use super::text::{open_input, parse_blocks, parse_i64, show, BlockError, Parsed};
use super::{map_ids, ImportOptions, Progress, VertexSet};
use crate::{build, Graph, GraphError, Result};

/// A Graphalytics `.properties` file: `key = value` pairs, keys with the
/// `graph.<name>.` prefix removed.
#[derive(Clone, Debug, Default)]
pub struct Properties {
    /// Dataset name (the `<name>` of `graph.<name>.…`).
    pub name: String,
    /// Keys without the `graph.<name>.` prefix.
    pub values: BTreeMap<String, String>,
    /// Directory of the properties file (paths in it are relative to it).
    pub dir: PathBuf,
    /// The properties file itself.
    pub path: PathBuf,
}

impl Properties {
    /// A value by key (without prefix), e.g. `"bfs.source-vertex"`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(|s| s.as_str())
    }
    /// Whether the graph is directed (`directed` key: `true` or `false`,
    /// any case; default true); another value is an error naming the file.
    pub fn directed(&self) -> Result<bool> {
        match self.get("directed").map(|v| v.trim().to_ascii_lowercase()) {
            None => Ok(true),
            Some(v) if v == "true" => Ok(true),
            Some(v) if v == "false" => Ok(false),
            Some(v) => Err(GraphError::bad_input(
                &self.path,
                format!(
                    "graph.{}.directed = '{}': expected true or false",
                    self.name,
                    super::text::show(v.as_bytes())
                ),
            )),
        }
    }
    /// Whether edges carry a weight property.
    pub fn weighted(&self) -> bool {
        self.get("edge-properties.names")
            .is_some_and(|v| !v.trim().is_empty())
    }
}

/// Reads a `.properties` file.
pub fn read_properties(path: &Path) -> Result<Properties> {
    let text = std::fs::read_to_string(path).map_err(|e| GraphError::io(path, e))?;
    let mut name = String::new();
    let mut values = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(GraphError::parse(
                path,
                i as u64 + 1,
                "expected 'key = value'",
            ));
        };
        let k = k.trim();
        let Some(rest) = k.strip_prefix("graph.") else {
            continue;
        };
        let (graph, key) = match rest
            .find(".vertex-file")
            .or_else(|| rest.find(".edge-file"))
            .or_else(|| rest.find(".directed"))
        {
            Some(pos) => (&rest[..pos], &rest[pos + 1..]),
            None => {
                if name.is_empty() {
                    continue;
                }
                match rest.strip_prefix(&format!("{name}.")) {
                    Some(key) => (name.as_str(), key),
                    None => continue,
                }
            }
        };
        if name.is_empty() {
            name = graph.to_string();
        }
        values.insert(key.to_string(), v.trim().to_string());
    }
    if name.is_empty() {
        return Err(GraphError::bad_input(
            path,
            "no 'graph.<name>.vertex-file' or 'edge-file' key: not a Graphalytics properties file",
        ));
    }
    Ok(Properties {
        name,
        values,
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        path: path.to_path_buf(),
    })
}

/// The two files of a Graphalytics graph and what its properties say.
pub(crate) struct Files {
    /// The vertex file (`.v`).
    pub v: PathBuf,
    /// The edge file (`.e`).
    pub e: PathBuf,
    pub props: Option<Properties>,
    pub directed: bool,
    pub weighted: bool,
}

/// Finds the files of the graph `path` names (its `.properties` or `.e`
/// file) and reads its properties.
pub(crate) fn files(path: &Path, opts: &ImportOptions) -> Result<Files> {
    let (v_path, e_path, props) = if path.to_string_lossy().ends_with(".properties") {
        let p = read_properties(path)?;
        let vf = p
            .get("vertex-file")
            .ok_or_else(|| GraphError::bad_input(path, "missing vertex-file key"))?;
        let ef = p
            .get("edge-file")
            .ok_or_else(|| GraphError::bad_input(path, "missing edge-file key"))?;
        (p.dir.join(vf), p.dir.join(ef), Some(p))
    } else {
        let s = path.to_string_lossy();
        let stem = s.strip_suffix(".e").unwrap_or(&s);
        let props = PathBuf::from(format!("{stem}.properties"));
        let props = if props.is_file() {
            Some(read_properties(&props)?)
        } else {
            None
        };
        (
            PathBuf::from(format!("{stem}.v")),
            path.to_path_buf(),
            props,
        )
    };
    if !v_path.is_file() {
        return Err(GraphError::bad_input(
            &e_path,
            format!(
                "vertex file {} not found beside the edge file",
                v_path.display()
            ),
        ));
    }
    if !e_path.is_file() {
        return Err(GraphError::bad_input(&e_path, "no such file"));
    }
    // Read before the files, so that a bad value fails early.
    let directed = match (opts.directed, props.as_ref()) {
        (Some(d), _) => d,
        (None, Some(p)) => p.directed()?,
        (None, None) => true,
    };
    let weighted = opts.weighted || props.as_ref().is_some_and(|p| p.weighted());
    Ok(Files {
        v: v_path,
        e: e_path,
        props,
        directed,
        weighted,
    })
}

/// One block of a vertex file: its ids (one a line, `#` comments).
pub(crate) fn vertex_block(data: &[u8]) -> std::result::Result<Parsed<Vec<i64>>, BlockError> {
    let mut ids = Vec::new();
    let mut line_no = 0u64;
    for raw in data.split(|&c| c == b'\n') {
        line_no += 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let mut toks = super::text::tokens(line);
        let Some(t) = toks.next() else { continue };
        if t[0] == b'#' {
            continue;
        }
        if let Some(extra) = toks.next() {
            return Err((
                line_no,
                format!(
                    "expected one vertex id per line, found also '{}'",
                    show(extra)
                ),
            ));
        }
        ids.push(parse_i64(t).ok_or_else(|| {
            (
                line_no,
                format!("expected an integer vertex id, found '{}'", show(t)),
            )
        })?);
    }
    if data.last() == Some(&b'\n') {
        line_no -= 1;
    }
    Ok(Parsed {
        value: ids,
        lines: line_no,
    })
}

/// Imports the pair; returns the properties when a `.properties` file was given.
pub fn import(
    path: &Path,
    opts: &ImportOptions,
    progress: &dyn Progress,
) -> Result<(Graph, Option<Properties>)> {
    let Files {
        v: v_path,
        e: e_path,
        props,
        directed,
        weighted,
    } = files(path, opts)?;
    let vertex_blocks = parse_blocks(open_input(&v_path)?, &v_path, 0, progress, vertex_block)?;
    let mut vertices: Vec<i64> = vertex_blocks.into_iter().flatten().collect();
    if vertices.is_empty() {
        return Err(GraphError::bad_input(&v_path, "contains no vertices"));
    }
    let declared = vertices.len();
    vertices.sort_unstable();
    vertices.dedup();
    if vertices.len() != declared {
        return Err(GraphError::bad_input(
            &v_path,
            "lists a vertex id more than once",
        ));
    }
    let blocks = parse_blocks(open_input(&e_path)?, &e_path, 0, progress, |data| {
        parse_block(data, weighted, None)
    })?;
    let (buf, ids) = map_ids(
        blocks,
        VertexSet::Exactly(vertices, v_path.clone()),
        &e_path,
    )?;
    let n = ids.len();
    Ok((build(n, buf, ids, &opts.build_options(directed))?, props))
}
