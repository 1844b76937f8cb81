//! Writing a graph back to text: edge lists (`src dst [weight]`), the
//! Graphalytics pair (`.v` + `.e` + `.properties`, which keeps isolated
//! vertices) and CSV. Always in external ids; an undirected graph writes each
//! edge once (from the endpoint with the smaller internal id). Output goes to
//! a temporary file that is renamed into place, so a failure leaves nothing.
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::graph::Graph;
use crate::{GraphError, Result};

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// `src dst [weight]` lines.
    EdgeList,
    /// `src,dst[,weight]` with a header.
    Csv,
    /// `.v` + `.e` + `.properties`.
    Graphalytics,
}

impl std::str::FromStr for ExportFormat {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "edgelist" | "el" | "wel" => Ok(ExportFormat::EdgeList),
            "csv" => Ok(ExportFormat::Csv),
            "graphalytics" | "evlp" => Ok(ExportFormat::Graphalytics),
            _ => Err(format!(
                "unknown export format '{s}' (expected edgelist, csv or graphalytics)"
            )),
        }
    }
}

/// Writes to `path` through a temporary file renamed on success.
pub fn write_atomically(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let res = (|| {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        f(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(GraphError::io(path, e));
    }
    Ok(())
}

/// Writes external id `v`, quoted as CSV requires when `csv` is set and the
/// id holds a separator, a quote or a line break.
fn write_id(g: &Graph, v: u32, w: &mut dyn Write, csv: bool) -> std::io::Result<()> {
    if csv && g.ids().kind() == crate::IdKind::Str {
        let s = g.ids().external_string(v);
        if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
            return write!(w, "\"{}\"", s.replace('"', "\"\""));
        }
    }
    g.ids().write_external(v, w)
}

fn write_edges(g: &Graph, w: &mut dyn Write, sep: &[u8]) -> std::io::Result<()> {
    let csv = sep == b",";
    for u in 0..g.num_vertices() as u32 {
        let ws = g.out_weights(u);
        for (i, &v) in g.out_neighbors(u).iter().enumerate() {
            if !g.is_directed() && v < u {
                continue;
            }
            write_id(g, u, w, csv)?;
            w.write_all(sep)?;
            write_id(g, v, w, csv)?;
            if let Some(ws) = ws {
                w.write_all(sep)?;
                write!(w, "{}", ws[i])?;
            }
            w.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Exports `g` to `path`; returns the files written.
pub fn export(g: &Graph, path: &Path, format: ExportFormat) -> Result<Vec<PathBuf>> {
    match format {
        ExportFormat::EdgeList => {
            write_atomically(path, |w| write_edges(g, w, b" "))?;
            Ok(vec![path.to_path_buf()])
        }
        ExportFormat::Csv => {
            write_atomically(path, |w| {
                w.write_all(if g.is_weighted() {
                    b"src,dst,weight\n"
                } else {
                    b"src,dst\n"
                })?;
                write_edges(g, w, b",")
            })?;
            Ok(vec![path.to_path_buf()])
        }
        ExportFormat::Graphalytics => {
            if g.ids().kind() == crate::IdKind::Str {
                return Err(GraphError::InvalidArgument(
                    "the Graphalytics format needs integer vertex ids; this graph has string ids (use --format csv)".into(),
                ));
            }
            let s = path.to_string_lossy();
            let stem = s
                .strip_suffix(".e")
                .or_else(|| s.strip_suffix(".properties"))
                .unwrap_or(&s)
                .to_string();
            let (vp, ep, pp) = (
                PathBuf::from(format!("{stem}.v")),
                PathBuf::from(format!("{stem}.e")),
                PathBuf::from(format!("{stem}.properties")),
            );
            let name = Path::new(&stem)
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            write_atomically(&vp, |w| {
                let mut order: Vec<u32> = (0..g.num_vertices() as u32).collect();
                order.sort_by_key(|&v| g.ids().external(v));
                for v in order {
                    g.ids().write_external(v, w)?;
                    w.write_all(b"\n")?;
                }
                Ok(())
            })?;
            write_atomically(&ep, |w| write_edges(g, w, b" "))?;
            write_atomically(&pp, |w| {
                let vf = vp
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default();
                let ef = ep
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default();
                writeln!(w, "graph.{name}.vertex-file = {vf}")?;
                writeln!(w, "graph.{name}.edge-file = {ef}")?;
                writeln!(w, "graph.{name}.meta.vertices = {}", g.num_vertices())?;
                writeln!(w, "graph.{name}.meta.edges = {}", g.num_edges())?;
                writeln!(w, "graph.{name}.directed = {}", g.is_directed())?;
                if g.is_weighted() {
                    writeln!(w, "graph.{name}.edge-properties.names = weight")?;
                    writeln!(w, "graph.{name}.edge-properties.types = real")?;
                }
                Ok(())
            })?;
            Ok(vec![vp, ep, pp])
        }
    }
}
