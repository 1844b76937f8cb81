//! Writing a graph back to text: edge lists (`src dst [weight]`), the
//! Graphalytics pair (`.v` + `.e` + `.properties`, which keeps isolated
//! vertices) and CSV. Always in external ids; an undirected graph writes each
//! edge once (from the endpoint with the smaller internal id). Output goes to
//! a temporary file that is renamed into place, so a failure leaves nothing;
//! `-` is standard output.
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

/// Whether `path` names standard output (`-`).
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The file a write to `path` replaces, checked before any work: an
/// existing symlink is followed (its target is written, the link stays);
/// the target must be a regular file that is not read-only, or not exist
/// in a directory that exists, is writable and is not a stored graph's. Standard output (`-`) is
/// returned as it is.
pub fn check_target(path: &Path) -> Result<PathBuf> {
    if is_stdout(path) {
        return Ok(path.to_path_buf());
    }
    let target = follow_links(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(GraphError::bad_input(
                path,
                "is a directory; --out names a file",
            ))
        }
        Ok(m) if !m.is_file() => {
            return Err(GraphError::bad_input(
                path,
                "is not a regular file (a FIFO, socket or device); --out writes regular files, or - for standard output",
            ))
        }
        Ok(m) if m.permissions().readonly() => {
            return Err(GraphError::bad_input(
                path,
                "is read-only; it is not replaced",
            ))
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(GraphError::io(path, e)),
    }
    let dir = parent_dir(&target);
    if dir.join(crate::store::GRAPH_FILE).is_file() {
        return Err(GraphError::bad_input(
            path,
            "is inside the directory of a stored graph; write it elsewhere",
        ));
    }
    if !dir.is_dir() {
        return Err(GraphError::bad_input(
            path,
            format!("directory {} does not exist", dir.display()),
        ));
    }
    // Writable: the temporary file the write will use can be created.
    let tmp = temp_path(&target);
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&tmp);
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(GraphError::bad_input(
                path,
                format!("cannot write in {}: {}", dir.display(), io_text(&e)),
            ))
        }
    }
    Ok(target)
}

/// `path` with its symlinks followed (a dangling link: the file it names).
fn follow_links(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p).map_err(|e| GraphError::io(&p, e))?;
                p = parent_dir(&p).join(to);
            }
            _ => return Ok(p),
        }
    }
    Err(GraphError::bad_input(
        path,
        "too many levels of symbolic links",
    ))
}

/// The directory holding `path` (`.` for a bare name).
fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The temporary file beside `path` that a write goes through:
/// `.NAME.tmp-PID`.
fn temp_path(path: &Path) -> PathBuf {
    parent_dir(path).join(format!(".{}.tmp-{}", file_name(path), std::process::id()))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// An I/O error's text without the `(os error N)` suffix.
fn io_text(e: &std::io::Error) -> String {
    let t = e.to_string();
    match t.find(" (os error") {
        Some(i) => t[..i].to_string(),
        None => t,
    }
}

/// Writes to `path` through a temporary file renamed on success (`-`:
/// straight to standard output). The target is checked first
/// ([`check_target`]): a symlink's target is written, anything but a
/// writable regular file is refused. Temporary files of this name left
/// by dead processes are removed.
pub fn write_atomically(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    if is_stdout(path) {
        let stdout = std::io::stdout();
        let mut w = BufWriter::with_capacity(1 << 20, stdout.lock());
        return f(&mut w)
            .and_then(|()| w.flush())
            .map_err(|e| GraphError::io("standard output", e));
    }
    let target = check_target(path)?;
    remove_stale(
        parent_dir(&target),
        &format!(".{}.tmp-", file_name(&target)),
    );
    let tmp = temp_path(&target);
    let res = (|| {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        f(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(GraphError::io(path, e));
    }
    Ok(())
}

/// Whether process `pid` runs (on Linux, from `/proc`; elsewhere every
/// process is taken to run, so nothing is removed as stale).
pub fn process_alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists()
}

/// Removes the entries of `dir` named `PREFIX…-PID` (temporary files and
/// directories) whose process `PID` no longer runs: what a killed write
/// left. Best effort; errors are ignored.
pub fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(prefix) else {
            continue;
        };
        let pid = rest.rsplit('-').next().and_then(|p| p.parse::<u32>().ok());
        let Some(pid) = pid else { continue };
        if process_alive(pid) {
            continue;
        }
        let p = e.path();
        let _ = match e.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(&p),
            _ => std::fs::remove_file(&p),
        };
    }
}

/// An exclusive lock on a name, held by one process: a file holding the
/// owner's PID, created atomically (written beside it, then hard-linked
/// into place) and removed on drop. A lock whose owner no longer runs is
/// taken over.
pub struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Takes the lock file `path` for `what` (named in the error when
    /// another running process holds it).
    pub fn acquire(path: &Path, what: &str) -> Result<Lock> {
        let dir = parent_dir(path);
        let me = std::process::id();
        let mine = dir.join(format!(".tmp-lock.{}-{me}", file_name(path)));
        std::fs::write(&mine, me.to_string()).map_err(|e| GraphError::io(&mine, e))?;
        let result = (|| {
            for _ in 0..3 {
                match std::fs::hard_link(&mine, path) {
                    Ok(()) => {
                        return Ok(Lock {
                            path: path.to_path_buf(),
                        })
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(GraphError::io(path, e)),
                }
                let owner = std::fs::read_to_string(path)
                    .ok()
                    .and_then(|s| s.trim().parse::<u32>().ok());
                match owner {
                    Some(pid) if process_alive(pid) => {
                        return Err(GraphError::InvalidArgument(format!(
                            "{what} is being written by another process (pid {pid}); try again when it has finished"
                        )))
                    }
                    // The owner died: take the lock over.
                    _ => {
                        let _ = std::fs::remove_file(path);
                    }
                }
            }
            Err(GraphError::InvalidArgument(format!(
                "{what} is being written by another process; try again when it has finished"
            )))
        })();
        let _ = std::fs::remove_file(&mine);
        result
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
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

/// Exports `g` to `path` (`-`: standard output, not for Graphalytics);
/// returns the files written.
pub fn export(g: &Graph, path: &Path, format: ExportFormat) -> Result<Vec<PathBuf>> {
    if is_stdout(path) && format == ExportFormat::Graphalytics {
        return Err(GraphError::InvalidArgument(
            "the Graphalytics format is three files (.v, .e, .properties) and cannot go to standard output; use --format edgelist or csv".into(),
        ));
    }
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
