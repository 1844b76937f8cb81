//! The on-disk store: one directory per graph under a data directory, the
//! topology in one page-aligned file (`graph.plx`) that is memory-mapped on
//! open, plus `meta.json` (human-readable provenance). The byte layout is
//! documented in FORMAT.md at the repository root.
//!
//! Crash safety: a graph is written into `.tmp-NAME-PID` inside the data
//! directory, synced, then renamed to `NAME`; a crash leaves at most a
//! `.tmp-*` directory, which [`DataDir::list`] ignores and the next write of
//! the same name removes.
use std::fs::{self, File};
use std::io::{BufWriter, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::adjacency::Adjacency;
use crate::chunks::Chunk;
use crate::graph::{DegreeSummary, Graph, GraphMeta, VertexOrder};
use crate::ids::IdMap;
use crate::section::Section;
use crate::tiles::{Tile, TileBlock, Tiles};
use crate::{GraphError, Result};

/// File magic: the first 8 bytes of `graph.plx`.
pub const MAGIC: &[u8; 8] = b"PLEXUSG\0";
/// The format version this build writes: 2 added the tile sections, 3
/// allows tile blocks of up to 2^16 targets (FORMAT.md, "Version
/// history").
pub const FORMAT_VERSION: u32 = 3;
/// The oldest format version this build reads (every version up to
/// [`FORMAT_VERSION`] is read; version 1 has no tiles).
pub const OLDEST_READ_VERSION: u32 = 1;
/// Name of the topology file inside a graph directory.
pub const GRAPH_FILE: &str = "graph.plx";
/// Name of the provenance file inside a graph directory.
pub const META_FILE: &str = "meta.json";
/// File name of the out-degree summary beside the topology, so that `info`
/// reads it instead of scanning the offsets.
pub const DEGREES_FILE: &str = "degrees.json";
/// Sections start at multiples of this many bytes.
pub const SECTION_ALIGN: u64 = 4096;
pub(crate) const FIXED_HEADER: usize = 64;
pub(crate) const ENTRY_SIZE: usize = 32;

const FLAG_DIRECTED: u32 = 1;
const FLAG_WEIGHTED: u32 = 2;
const FLAG_INTEGRAL: u32 = 4;

/// Kinds of sections in `graph.plx`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum SectionKind {
    OutOffsets = 1,
    OutTargets = 2,
    OutWeights = 3,
    InOffsets = 4,
    InSources = 5,
    InWeights = 6,
    IdInts = 7,
    IdStrOffsets = 8,
    IdStrBytes = 9,
    IdSorted = 10,
    OldOfNew = 11,
    NewOfOld = 12,
    Chunks = 13,
    TileShift = 14,
    TileBlocks = 15,
    TileTable = 16,
    TileTargets = 17,
    TileSources = 18,
    TileLongLengths = 19,
}

/// Sections a graph's tiles take ([`tile_sections`]).
pub(crate) const TILE_SECTIONS: usize = 6;

impl SectionKind {
    fn from_u32(x: u32) -> Option<Self> {
        use SectionKind::*;
        Some(match x {
            1 => OutOffsets,
            2 => OutTargets,
            3 => OutWeights,
            4 => InOffsets,
            5 => InSources,
            6 => InWeights,
            7 => IdInts,
            8 => IdStrOffsets,
            9 => IdStrBytes,
            10 => IdSorted,
            11 => OldOfNew,
            12 => NewOfOld,
            13 => Chunks,
            14 => TileShift,
            15 => TileBlocks,
            16 => TileTable,
            17 => TileTargets,
            18 => TileSources,
            19 => TileLongLengths,
            _ => return None,
        })
    }
    /// Human-readable name (used in messages).
    pub fn name(self) -> &'static str {
        use SectionKind::*;
        match self {
            OutOffsets => "out-offsets",
            OutTargets => "out-targets",
            OutWeights => "out-weights",
            InOffsets => "in-offsets",
            InSources => "in-sources",
            InWeights => "in-weights",
            IdInts => "id-ints",
            IdStrOffsets => "id-str-offsets",
            IdStrBytes => "id-str-bytes",
            IdSorted => "id-sorted",
            OldOfNew => "old-of-new",
            NewOfOld => "new-of-old",
            Chunks => "chunks",
            TileShift => "tile-shift",
            TileBlocks => "tile-blocks",
            TileTable => "tile-table",
            TileTargets => "tile-targets",
            TileSources => "tile-sources",
            TileLongLengths => "tile-long-lengths",
        }
    }
    pub(crate) fn elem_size(self) -> usize {
        use SectionKind::*;
        match self {
            OutOffsets | InOffsets | OutWeights | InWeights | IdInts | IdStrOffsets => 8,
            OutTargets | InSources | IdSorted | OldOfNew | NewOfOld => 4,
            TileShift | TileLongLengths => 4,
            TileTargets | TileSources => 2,
            IdStrBytes => 1,
            Chunks => std::mem::size_of::<Chunk>(),
            TileBlocks => std::mem::size_of::<TileBlock>(),
            TileTable => std::mem::size_of::<Tile>(),
        }
    }
}

/// One entry of the section table.
#[derive(Clone, Copy, Debug)]
pub struct SectionEntry {
    pub kind: SectionKind,
    pub offset: u64,
    pub len_bytes: u64,
    pub checksum: u64,
}

/// Provenance written beside the topology (`meta.json`); informational.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// Where the graph came from (input path or generator description).
    pub source: String,
    /// Options used at import, as text.
    pub options: String,
    /// Seconds spent building.
    pub build_seconds: f64,
    /// Unix time of creation.
    pub created_unix: u64,
}

/// A data directory holding named graphs.
#[derive(Clone, Debug)]
pub struct DataDir {
    root: PathBuf,
}

/// A summary row of [`DataDir::list`].
#[derive(Clone, Debug, Serialize)]
pub struct GraphEntry {
    pub name: String,
    pub vertices: u64,
    pub edges: u64,
    pub directed: bool,
    pub weighted: bool,
    pub bytes_on_disk: u64,
    /// A directory without its `graph.plx` ([`DataDir::is_incomplete`]).
    pub incomplete: bool,
}

/// Checks that `name` can name a graph: letters, digits, `-`, `_` and `.`,
/// not starting with `.` (so never `..` or a path), at most 128 bytes.
pub fn check_name(name: &str) -> Result<()> {
    valid_name(name)
}

fn valid_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(())
    } else {
        Err(GraphError::InvalidArgument(format!(
            "invalid graph name '{name}': use letters, digits, '-', '_' and '.', not starting with '.'"
        )))
    }
}

impl DataDir {
    /// A data directory at `root` (created on first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DataDir { root: root.into() }
    }
    /// The root path.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The directory of graph `name`.
    pub fn graph_dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
    /// Whether graph `name` exists (an invalid name never does).
    pub fn exists(&self, name: &str) -> bool {
        valid_name(name).is_ok() && self.graph_dir(name).join(GRAPH_FILE).is_file()
    }

    /// Whether `name` is a directory of the data directory without its
    /// `graph.plx`: a graph whose write did not finish, or damaged.
    pub fn is_incomplete(&self, name: &str) -> bool {
        let dir = self.graph_dir(name);
        valid_name(name).is_ok() && dir.is_dir() && !dir.join(GRAPH_FILE).exists()
    }

    fn incomplete(&self, name: &str) -> GraphError {
        GraphError::corrupt(
            self.graph_dir(name),
            format!(
                "the graph directory has no {GRAPH_FILE} (an unfinished or damaged graph): `plexus remove {name}` deletes it, importing with --force replaces it"
            ),
        )
    }

    /// Writes `g` as graph `name`. Fails if it exists unless `replace`, or
    /// while another process writes the same name. A write that fails
    /// leaves nothing; stale temporary files of dead processes are removed
    /// first. The file is verified ([`check_graph_file`]) once written.
    pub fn save(&self, name: &str, g: &Graph, prov: &Provenance, replace: bool) -> Result<PathBuf> {
        self.save_with(name, replace, |tmp| {
            self.write_into(tmp, g, prov)?;
            Ok(())
        })
    }

    /// [`DataDir::save`] for a writer of its own: `write(tmp)` fills the
    /// temporary directory `tmp` (inside the data directory, removed when
    /// the write fails and, if the process dies, by the next write of any
    /// graph) with `graph.plx`, `meta.json` and `degrees.json`, and may
    /// keep scratch files in it under names starting with `.scratch`, which
    /// must be gone when it returns. Then the directory is published and
    /// the file verified as by `save`.
    pub fn save_with(
        &self,
        name: &str,
        replace: bool,
        write: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<PathBuf> {
        valid_name(name)?;
        fs::create_dir_all(&self.root).map_err(|e| GraphError::io(&self.root, e))?;
        crate::export::remove_stale(&self.root, ".tmp-");
        crate::export::remove_stale(&self.root, ".trash-");
        let _lock = crate::export::Lock::acquire(
            &self.root.join(format!(".lock-{name}")),
            &format!("graph '{name}'"),
        )?;
        let final_dir = self.graph_dir(name);
        if !replace {
            if self.is_incomplete(name) {
                return Err(self.incomplete(name));
            }
            if final_dir.exists() {
                return Err(GraphError::GraphExists {
                    name: name.into(),
                    dir: self.root.clone(),
                });
            }
        }
        let tmp = self
            .root
            .join(format!(".tmp-{name}-{}", std::process::id()));
        if tmp.exists() {
            fs::remove_dir_all(&tmp).map_err(|e| GraphError::io(&tmp, e))?;
        }
        fs::create_dir(&tmp).map_err(|e| GraphError::io(&tmp, e))?;
        let result = write(&tmp)
            .map_err(|e| rename_error_path(e, &tmp, &final_dir))
            .and_then(|()| self.publish(name, &tmp, &final_dir));
        if result.is_err() {
            let _ = fs::remove_dir_all(&tmp);
        }
        result?;
        let t = std::time::Instant::now();
        let graph_file = final_dir.join(GRAPH_FILE);
        check_graph_file(&graph_file)?;
        record_verified(&graph_file);
        crate::trace::phase("verify", t);
        Ok(final_dir)
    }

    /// Writes the graph's files into the directory `tmp`.
    fn write_into(&self, tmp: &Path, g: &Graph, prov: &Provenance) -> Result<()> {
        write_graph_file(&tmp.join(GRAPH_FILE), g)?;
        write_side_files(tmp, prov, &g.degree_summary())
    }

    /// Renames the written directory `tmp` to `final_dir`, replacing what
    /// is there.
    fn publish(&self, name: &str, tmp: &Path, final_dir: &Path) -> Result<PathBuf> {
        if final_dir.exists() {
            let trash = self
                .root
                .join(format!(".trash-{name}-{}", std::process::id()));
            fs::rename(final_dir, &trash).map_err(|e| GraphError::io(final_dir, e))?;
            fs::rename(tmp, final_dir).map_err(|e| GraphError::io(final_dir, e))?;
            fs::remove_dir_all(&trash).map_err(|e| GraphError::io(&trash, e))?;
        } else {
            fs::rename(tmp, final_dir).map_err(|e| GraphError::io(final_dir, e))?;
        }
        if let Ok(d) = File::open(&self.root) {
            let _ = d.sync_all();
        }
        Ok(final_dir.to_path_buf())
    }

    /// Replaces graph `name`'s `graph.plx` by `g` in place of the old one,
    /// keeping the directory and its other files (a live graph's log):
    /// written to `.graph.plx.tmp-PID` beside it, synced, verified, then
    /// renamed over `graph.plx` and the directory synced. Readers that
    /// mapped the old file keep reading it until they drop it; a crash
    /// leaves either file whole. The caller holds the graph's writer lock.
    pub fn replace_graph_file(&self, name: &str, g: &Graph) -> Result<()> {
        valid_name(name)?;
        let dir = self.graph_dir(name);
        if !dir.join(GRAPH_FILE).exists() {
            return Err(GraphError::UnknownGraph {
                name: name.into(),
                dir: self.root.clone(),
            });
        }
        let tmp = dir.join(format!(".{GRAPH_FILE}.tmp-{}", std::process::id()));
        let result = write_graph_file(&tmp, g).and_then(|()| check_graph_file(&tmp));
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        let graph_file = dir.join(GRAPH_FILE);
        fs::rename(&tmp, &graph_file).map_err(|e| GraphError::io(&graph_file, e))?;
        if let Ok(d) = File::open(&dir) {
            d.sync_all().map_err(|e| GraphError::io(&dir, e))?;
        }
        record_verified(&graph_file);
        self.save_degree_summary(name, &g.degree_summary())
    }

    /// Opens graph `name` read-only (memory-mapped). Checks, linear in the
    /// vertices only, that its offsets are non-decreasing and its id maps
    /// hold ids below n ([`check_offsets`]); verifies every checksum
    /// ([`check_graph_file`], linear in the file) when the file is not the
    /// one last verified (its size, times or header changed), and records
    /// the verification beside it.
    pub fn open(&self, name: &str) -> Result<Graph> {
        valid_name(name)?;
        let dir = self.graph_dir(name);
        let path = dir.join(GRAPH_FILE);
        if !path.is_file() {
            if self.is_incomplete(name) {
                return Err(self.incomplete(name));
            }
            return Err(GraphError::UnknownGraph {
                name: name.into(),
                dir: self.root.clone(),
            });
        }
        let t = std::time::Instant::now();
        let g = open_graph_file(&path)?;
        if !is_verified(&path) {
            check_graph_file(&path)?;
            record_verified(&path);
            crate::trace::phase("open: full verification", t);
        }
        let t = std::time::Instant::now();
        check_offsets(&g, &path)?;
        crate::trace::phase("open: structural checks", t);
        Ok(g)
    }

    /// Opens graph `name`; the same as [`DataDir::open`], which checks.
    pub fn open_checked(&self, name: &str) -> Result<Graph> {
        self.open(name)
    }

    /// Verifies every checksum and invariant of graph `name` now
    /// ([`check_graph_file`]) and records the verification.
    pub fn check(&self, name: &str) -> Result<()> {
        valid_name(name)?;
        let path = self.graph_dir(name).join(GRAPH_FILE);
        if !path.is_file() {
            if self.is_incomplete(name) {
                return Err(self.incomplete(name));
            }
            return Err(GraphError::UnknownGraph {
                name: name.into(),
                dir: self.root.clone(),
            });
        }
        check_graph_file(&path)?;
        record_verified(&path);
        Ok(())
    }

    /// Reads the provenance of graph `name`.
    pub fn provenance(&self, name: &str) -> Option<Provenance> {
        let text = fs::read_to_string(self.graph_dir(name).join(META_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Reads the out-degree summary written with graph `name` (`None` when
    /// absent or unreadable, e.g. a store written before it existed: then
    /// compute [`Graph::degree_summary`]).
    pub fn degree_summary(&self, name: &str) -> Option<DegreeSummary> {
        let text = fs::read_to_string(self.graph_dir(name).join(DEGREES_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes the out-degree summary of graph `name` (temporary file, then
    /// rename), for stores written before `degrees.json` existed.
    pub fn save_degree_summary(&self, name: &str, d: &DegreeSummary) -> Result<()> {
        let dir = self.graph_dir(name);
        let path = dir.join(DEGREES_FILE);
        let tmp = dir.join(format!(".{DEGREES_FILE}.{}", std::process::id()));
        let text = serde_json::to_string_pretty(d)
            .map_err(|e| GraphError::io(&path, std::io::Error::other(e)))?;
        fs::write(&tmp, text).map_err(|e| GraphError::io(&tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            GraphError::io(&path, e)
        })
    }

    /// Removes graph `name`, or an incomplete graph directory of that name
    /// when it holds only the files a graph has (nothing else is deleted);
    /// refused while another process writes it.
    pub fn remove(&self, name: &str) -> Result<()> {
        valid_name(name)?;
        let dir = self.graph_dir(name);
        let _lock = if dir.exists() {
            Some(crate::export::Lock::acquire(
                &self.root.join(format!(".lock-{name}")),
                &format!("graph '{name}'"),
            )?)
        } else {
            None
        };
        if !dir.join(GRAPH_FILE).is_file() {
            if !self.is_incomplete(name) {
                return Err(GraphError::UnknownGraph {
                    name: name.into(),
                    dir: self.root.clone(),
                });
            }
            let known = [GRAPH_FILE, META_FILE, DEGREES_FILE, VERIFIED_FILE];
            let foreign = fs::read_dir(&dir)
                .map_err(|e| GraphError::io(&dir, e))?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .find(|n| !known.contains(&n.as_str()) && !n.starts_with('.'));
            if let Some(f) = foreign {
                return Err(GraphError::InvalidArgument(format!(
                    "{} is not a graph directory (it holds '{f}'); remove it by hand",
                    dir.display()
                )));
            }
        }
        fs::remove_dir_all(&dir).map_err(|e| GraphError::io(&dir, e))
    }

    /// Lists the stored graphs, sorted by name. Unreadable entries are listed
    /// with zero counts rather than failing the whole listing.
    pub fn list(&self) -> Result<Vec<GraphEntry>> {
        let mut out = Vec::new();
        let rd = match fs::read_dir(&self.root) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(GraphError::io(&self.root, e)),
        };
        for entry in rd.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || !entry.path().is_dir() {
                continue;
            }
            let bytes_on_disk = dir_size(&entry.path());
            if !entry.path().join(GRAPH_FILE).is_file() {
                // A graph directory without its file (an unfinished write
                // or damage); listed so that it can be seen and removed.
                if self.is_incomplete(&name) {
                    out.push(GraphEntry {
                        name,
                        vertices: 0,
                        edges: 0,
                        directed: false,
                        weighted: false,
                        bytes_on_disk,
                        incomplete: true,
                    });
                }
                continue;
            }
            let row = match read_header(&entry.path().join(GRAPH_FILE)) {
                Ok(h) => GraphEntry {
                    name,
                    vertices: h.num_vertices,
                    edges: h.num_edges(),
                    directed: h.meta.directed,
                    weighted: h.meta.weighted,
                    bytes_on_disk,
                    incomplete: false,
                },
                Err(_) => GraphEntry {
                    name,
                    vertices: 0,
                    edges: 0,
                    directed: false,
                    weighted: false,
                    bytes_on_disk,
                    incomplete: false,
                },
            };
            out.push(row);
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

/// The error `e` of a write into `tmp`, naming `dest` instead (the user
/// knows the graph, not the temporary directory).
/// Writes `meta.json` and `degrees.json` into the directory `dir`.
pub fn write_side_files(dir: &Path, prov: &Provenance, degrees: &DegreeSummary) -> Result<()> {
    let meta_path = dir.join(META_FILE);
    let text = serde_json::to_string_pretty(prov)
        .map_err(|e| GraphError::io(&meta_path, std::io::Error::other(e)))?;
    fs::write(&meta_path, text).map_err(|e| GraphError::io(&meta_path, e))?;
    let degrees_path = dir.join(DEGREES_FILE);
    let text = serde_json::to_string_pretty(degrees)
        .map_err(|e| GraphError::io(&degrees_path, std::io::Error::other(e)))?;
    fs::write(&degrees_path, text).map_err(|e| GraphError::io(&degrees_path, e))
}

fn rename_error_path(e: GraphError, tmp: &Path, dest: &Path) -> GraphError {
    match e {
        GraphError::Io { path, source } => GraphError::Io {
            path: path
                .strip_prefix(tmp)
                .map(|rest| dest.join(rest))
                .unwrap_or(path),
            source,
        },
        e => e,
    }
}

/// File beside `graph.plx` recording its last full verification.
pub const VERIFIED_FILE: &str = "verified.json";

/// What identifies one version of a graph file: its size, modification and
/// change times (nanoseconds) and header checksum. The change time cannot
/// be set back by a user, so a file changed in place never matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct FileKey {
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    header_checksum: u64,
}

fn file_key(path: &Path) -> Option<FileKey> {
    let meta = fs::metadata(path).ok()?;
    let ns = |t: std::io::Result<std::time::SystemTime>| -> i128 {
        t.ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(-1, |d| d.as_nanos() as i128)
    };
    #[cfg(unix)]
    let ctime_ns = {
        use std::os::unix::fs::MetadataExt;
        meta.ctime() as i128 * 1_000_000_000 + meta.ctime_nsec() as i128
    };
    #[cfg(not(unix))]
    let ctime_ns = ns(meta.created());
    Some(FileKey {
        len: meta.len(),
        mtime_ns: ns(meta.modified()),
        ctime_ns,
        header_checksum: read_header(path).ok()?.header_checksum,
    })
}

/// Whether `path` is the file version last verified (its key is recorded
/// in [`VERIFIED_FILE`] beside it).
fn is_verified(path: &Path) -> bool {
    let Some(dir) = path.parent() else {
        return false;
    };
    let Ok(text) = fs::read_to_string(dir.join(VERIFIED_FILE)) else {
        return false;
    };
    match (serde_json::from_str::<FileKey>(&text), file_key(path)) {
        (Ok(recorded), Some(now)) => recorded == now,
        _ => false,
    }
}

/// Records that `path` was verified just now (best effort: a read-only
/// store is verified on every open instead).
fn record_verified(path: &Path) {
    let (Some(dir), Some(key)) = (path.parent(), file_key(path)) else {
        return;
    };
    let Ok(text) = serde_json::to_string(&key) else {
        return;
    };
    let tmp = dir.join(format!(".{VERIFIED_FILE}.tmp-{}", std::process::id()));
    if fs::write(&tmp, text).is_err() || fs::rename(&tmp, dir.join(VERIFIED_FILE)).is_err() {
        let _ = fs::remove_file(&tmp);
    }
}

/// Total size of the files in a directory (non-recursive is enough here).
pub fn dir_size(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// The decoded header of a `graph.plx`.
#[derive(Clone, Debug)]
pub struct Header {
    pub version: u32,
    pub num_vertices: u64,
    pub num_arcs: u64,
    pub meta: GraphMeta,
    pub id_kind: u32,
    pub sections: Vec<SectionEntry>,
    /// The header's own checksum (stored after the section table).
    pub header_checksum: u64,
    /// The live-graph version the file holds (0 unless written by a
    /// compaction; files before it hold zeros there).
    pub base_version: u64,
}

impl Header {
    /// Edges as a user counts them (see [`Graph::num_edges`]).
    pub fn num_edges(&self) -> u64 {
        if self.meta.directed {
            self.num_arcs
        } else {
            (self.num_arcs + self.meta.self_loops) / 2
        }
    }
}

pub(crate) fn order_code(o: VertexOrder) -> u32 {
    match o {
        VertexOrder::None => 0,
        VertexOrder::Degree => 1,
        VertexOrder::Rcm => 2,
    }
}

fn sections_of(g: &Graph) -> Vec<(SectionKind, &[u8])> {
    use SectionKind::*;
    let mut v: Vec<(SectionKind, &[u8])> = vec![
        (OutOffsets, bytemuck::cast_slice(g.out.offsets())),
        (OutTargets, bytemuck::cast_slice(g.out.neighbor_array())),
    ];
    if let Some(w) = g.out.weight_array() {
        v.push((OutWeights, bytemuck::cast_slice(w)));
    }
    if let Some(inc) = &g.inc {
        v.push((InOffsets, bytemuck::cast_slice(inc.offsets())));
        v.push((InSources, bytemuck::cast_slice(inc.neighbor_array())));
        if let Some(w) = inc.weight_array() {
            v.push((InWeights, bytemuck::cast_slice(w)));
        }
    }
    match &g.ids {
        IdMap::Identity { .. } => {}
        IdMap::Int { ext, sorted } => {
            v.push((IdInts, bytemuck::cast_slice(ext)));
            v.push((IdSorted, bytemuck::cast_slice(sorted)));
        }
        IdMap::Str {
            offsets,
            bytes,
            sorted,
        } => {
            v.push((IdStrOffsets, bytemuck::cast_slice(offsets)));
            v.push((IdStrBytes, bytes.as_slice()));
            v.push((IdSorted, bytemuck::cast_slice(sorted)));
        }
    }
    if let (Some(o), Some(n)) = (&g.old_of_new, &g.new_of_old) {
        v.push((OldOfNew, bytemuck::cast_slice(o)));
        v.push((NewOfOld, bytemuck::cast_slice(n)));
    }
    v.push((Chunks, bytemuck::cast_slice(g.chunks())));
    v
}

/// The sections of a graph's tiles, in the order they are written.
fn tile_sections(t: &Tiles) -> Vec<(SectionKind, &[u8])> {
    use SectionKind::*;
    vec![
        (
            TileShift,
            bytemuck::cast_slice(std::slice::from_ref(&t.shift)),
        ),
        (TileBlocks, bytemuck::cast_slice(t.blocks())),
        (TileTable, bytemuck::cast_slice(t.tiles())),
        (TileTargets, bytemuck::cast_slice(t.targets())),
        (TileSources, bytemuck::cast_slice(t.sources())),
        (TileLongLengths, bytemuck::cast_slice(t.long_lengths())),
    ]
}

/// Section entries for `secs` laid out from byte `pos` on, with their
/// checksums (computed in parallel: the only pass over the data besides
/// the write); returns them and the aligned end.
fn lay_out(secs: &[(SectionKind, &[u8])], mut pos: u64) -> (Vec<SectionEntry>, u64) {
    let sums: Vec<u64> = secs.par_iter().map(|(_, b)| xxh3_64(b)).collect();
    let mut entries = Vec::with_capacity(secs.len());
    for ((kind, bytes), sum) in secs.iter().zip(sums) {
        entries.push(SectionEntry {
            kind: *kind,
            offset: pos,
            len_bytes: bytes.len() as u64,
            checksum: sum,
        });
        pos = align_up(pos + bytes.len() as u64);
    }
    (entries, pos)
}

/// Writes each section at its entry's offset, zero-filling the gaps, and
/// pads the file to `end`.
fn write_sections(
    w: &mut BufWriter<File>,
    entries: &[SectionEntry],
    secs: &[(SectionKind, &[u8])],
    end: u64,
) -> std::io::Result<()> {
    for (e, (_, bytes)) in entries.iter().zip(secs) {
        let here = w.stream_position()?;
        w.write_all(&vec![0u8; (e.offset - here) as usize])?;
        w.write_all(bytes)?;
    }
    let here = w.stream_position()?;
    w.write_all(&vec![0u8; (end - here) as usize])
}

pub(crate) fn align_up(x: u64) -> u64 {
    x.div_ceil(SECTION_ALIGN) * SECTION_ALIGN
}

/// Writes `g` to `path` in format version [`FORMAT_VERSION`] and syncs it,
/// with its tiles: the ones it has, or, when [`Tiles::worthwhile`], ones
/// built on another thread while this one writes the other sections (the
/// write is one core's copy into the page cache, so a second core is free
/// for the tiles).
/// The header, which lists every section, is written last.
pub fn write_graph_file(path: &Path, g: &Graph) -> Result<()> {
    let io = |e| GraphError::io(path, e);
    let build = g.tiles().is_none() && Tiles::worthwhile(g.num_vertices(), g.num_arcs());
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| -> Result<_> {
            let t = std::time::Instant::now();
            let mut secs = sections_of(g);
            if let Some(tiles) = g.tiles() {
                secs.extend(tile_sections(tiles));
            }
            let count = secs.len() + if build { TILE_SECTIONS } else { 0 };
            let table_end = (FIXED_HEADER + ENTRY_SIZE * count + 8) as u64;
            let (entries, end) = lay_out(&secs, align_up(table_end));
            let t = crate::trace::phase("checksums", t);
            let file = File::create(path).map_err(io)?;
            let mut w = BufWriter::with_capacity(1 << 20, file);
            write_sections(&mut w, &entries, &secs, end).map_err(io)?;
            crate::trace::phase("write", t);
            Ok((w, entries, end, count))
        });
        // On this thread (and its rayon pool) while the other writes.
        let t = std::time::Instant::now();
        let built = build.then(|| Tiles::build(g.inc()));
        if build {
            crate::trace::phase("tiles", t);
        }
        let (mut w, mut entries, end, count) = writer
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        if let Some(tiles) = &built {
            let t = std::time::Instant::now();
            let more = tile_sections(tiles);
            let (more_entries, end) = lay_out(&more, end);
            write_sections(&mut w, &more_entries, &more, end).map_err(io)?;
            entries.extend(more_entries);
            crate::trace::phase("write tiles", t);
        }
        debug_assert_eq!(entries.len(), count);
        w.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
        w.write_all(&encode_header(g, &entries)).map_err(io)?;
        let file = w.into_inner().map_err(|e| io(e.into_error()))?;
        let t = std::time::Instant::now();
        file.sync_all().map_err(io)?;
        crate::trace::phase("sync", t);
        Ok(())
    })
}

fn encode_header(g: &Graph, entries: &[SectionEntry]) -> Vec<u8> {
    let id_kind = match g.ids {
        IdMap::Identity { .. } => 0u32,
        IdMap::Int { .. } => 1,
        IdMap::Str { .. } => 2,
    };
    let fields = HeaderFields {
        meta: g.meta.clone(),
        n: g.num_vertices() as u64,
        m: g.num_arcs(),
        id_kind,
        base_version: g.base_version,
    };
    encode_header_fields(&fields, entries)
}

/// The header's fields besides the section table, for a writer that has
/// no [`Graph`] in memory (the bounded builder).
pub(crate) struct HeaderFields {
    pub meta: GraphMeta,
    /// Vertices.
    pub n: u64,
    /// Stored arcs (the CSR's length).
    pub m: u64,
    /// 0 identity, 1 integers, 2 strings.
    pub id_kind: u32,
    pub base_version: u64,
}

/// The header (fixed part, section table, header checksum) of a file with
/// these fields and sections.
pub(crate) fn encode_header_fields(f: &HeaderFields, entries: &[SectionEntry]) -> Vec<u8> {
    let m = &f.meta;
    let mut flags = 0;
    if m.directed {
        flags |= FLAG_DIRECTED;
    }
    if m.weighted {
        flags |= FLAG_WEIGHTED;
    }
    if m.integral_weights {
        flags |= FLAG_INTEGRAL;
    }
    let id_kind = f.id_kind;
    let mut h = Vec::with_capacity(FIXED_HEADER + ENTRY_SIZE * entries.len() + 8);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    h.extend_from_slice(&flags.to_le_bytes());
    h.extend_from_slice(&f.n.to_le_bytes());
    h.extend_from_slice(&f.m.to_le_bytes());
    h.extend_from_slice(&m.self_loops.to_le_bytes());
    h.extend_from_slice(&order_code(m.order).to_le_bytes());
    h.extend_from_slice(&id_kind.to_le_bytes());
    h.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    h.extend_from_slice(&f.base_version.to_le_bytes());
    h.extend_from_slice(&[0u8; 4]);
    debug_assert_eq!(h.len(), FIXED_HEADER);
    for e in entries {
        h.extend_from_slice(&(e.kind as u32).to_le_bytes());
        h.extend_from_slice(&(e.kind.elem_size() as u32).to_le_bytes());
        h.extend_from_slice(&e.offset.to_le_bytes());
        h.extend_from_slice(&e.len_bytes.to_le_bytes());
        h.extend_from_slice(&e.checksum.to_le_bytes());
    }
    let sum = xxh3_64(&h);
    h.extend_from_slice(&sum.to_le_bytes());
    h
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}
fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn decode_header(path: &Path, b: &[u8]) -> Result<Header> {
    let bad = |msg: String| GraphError::corrupt(path, msg);
    if b.len() < FIXED_HEADER + 8 {
        return Err(bad(format!(
            "file is {} bytes, too short for a header",
            b.len()
        )));
    }
    if &b[0..8] != MAGIC {
        return Err(bad("bad magic: not a Plexus graph file".into()));
    }
    let version = le_u32(b, 8);
    if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(bad(format!(
            "format version {version} is not supported by this build (reads versions {OLDEST_READ_VERSION} to {FORMAT_VERSION})"
        )));
    }
    let flags = le_u32(b, 12);
    let num_vertices = le_u64(b, 16);
    let num_arcs = le_u64(b, 24);
    let self_loops = le_u64(b, 32);
    let order = match le_u32(b, 40) {
        0 => VertexOrder::None,
        1 => VertexOrder::Degree,
        2 => VertexOrder::Rcm,
        x => return Err(bad(format!("unknown vertex order code {x}"))),
    };
    let id_kind = le_u32(b, 44);
    let count = le_u32(b, 48) as usize;
    if count > 64 {
        return Err(bad(format!("section count {count} is implausible")));
    }
    let table_end = FIXED_HEADER + ENTRY_SIZE * count;
    if b.len() < table_end + 8 {
        return Err(bad("file ends inside the section table".into()));
    }
    let header_checksum = le_u64(b, table_end);
    if xxh3_64(&b[..table_end]) != header_checksum {
        return Err(bad("header checksum mismatch".into()));
    }
    let mut sections = Vec::with_capacity(count);
    for i in 0..count {
        let at = FIXED_HEADER + ENTRY_SIZE * i;
        let code = le_u32(b, at);
        let kind = SectionKind::from_u32(code)
            .ok_or_else(|| bad(format!("unknown section kind {code}")))?;
        if le_u32(b, at + 4) as usize != kind.elem_size() {
            return Err(bad(format!(
                "section {} has a wrong element size",
                kind.name()
            )));
        }
        sections.push(SectionEntry {
            kind,
            offset: le_u64(b, at + 8),
            len_bytes: le_u64(b, at + 16),
            checksum: le_u64(b, at + 24),
        });
    }
    Ok(Header {
        version,
        num_vertices,
        num_arcs,
        meta: GraphMeta {
            directed: flags & FLAG_DIRECTED != 0,
            weighted: flags & FLAG_WEIGHTED != 0,
            integral_weights: flags & FLAG_INTEGRAL != 0,
            order,
            self_loops,
        },
        id_kind,
        sections,
        header_checksum,
        base_version: le_u64(b, 52),
    })
}

/// Reads and checks just the header of a graph file: its first bytes
/// (the fixed header, at most 64 section entries and the checksum), read,
/// not mapped, so that the out-of-core executor never maps the file.
pub fn read_header(path: &Path) -> Result<Header> {
    use std::io::Read;
    let file = File::open(path).map_err(|e| GraphError::io(path, e))?;
    let mut b = Vec::with_capacity(FIXED_HEADER + ENTRY_SIZE * 64 + 8);
    file.take((FIXED_HEADER + ENTRY_SIZE * 64 + 8) as u64)
        .read_to_end(&mut b)
        .map_err(|e| GraphError::io(path, e))?;
    decode_header(path, &b)
}

#[allow(unsafe_code)]
fn map_file(path: &Path) -> Result<Mmap> {
    let file = File::open(path).map_err(|e| GraphError::io(path, e))?;
    // SAFETY: the store's files are written once (to a temporary directory,
    // then renamed) and never modified in place; Plexus maps them read-only.
    // A file truncated by another process would fault on access, which the
    // store's contract (no writers to a published graph) rules out.
    unsafe { Mmap::map(&file) }.map_err(|e| GraphError::io(path, e))
}

/// Opens a graph file: checks magic, version, header checksum and that every
/// section lies inside the file with the expected length; O(1) in graph size.
pub fn open_graph_file(path: &Path) -> Result<Graph> {
    let map = Arc::new(map_file(path)?);
    let h = decode_header(path, &map)?;
    let bad = |msg: String| GraphError::corrupt(path, msg);
    let n = h.num_vertices as usize;
    let m = h.num_arcs as usize;
    let find = |k: SectionKind| h.sections.iter().find(|e| e.kind == k);
    fn get<T: bytemuck::Pod>(
        map: &Arc<Mmap>,
        e: Option<&SectionEntry>,
        kind: SectionKind,
        len: Option<usize>,
        path: &Path,
    ) -> Result<Section<T>> {
        let e =
            e.ok_or_else(|| GraphError::corrupt(path, format!("missing section {}", kind.name())))?;
        let size = std::mem::size_of::<T>();
        if e.len_bytes % size as u64 != 0 || len.is_some_and(|l| (l * size) as u64 != e.len_bytes) {
            return Err(GraphError::corrupt(
                path,
                format!(
                    "section {} has length {} bytes, expected {}",
                    kind.name(),
                    e.len_bytes,
                    len.unwrap_or(0) * size
                ),
            ));
        }
        Section::mapped(
            map.clone(),
            e.offset as usize,
            (e.len_bytes / size as u64) as usize,
        )
        .ok_or_else(|| {
            GraphError::corrupt(
                path,
                format!(
                    "section {} ({} bytes at offset {}) lies outside the {}-byte file (truncated?)",
                    kind.name(),
                    e.len_bytes,
                    e.offset,
                    map.len()
                ),
            )
        })
    }
    use SectionKind::*;
    let adjacency = |o: SectionKind, t: SectionKind, w: SectionKind| -> Result<Adjacency> {
        let offsets: Section<u64> = get(&map, find(o), o, Some(n + 1), path)?;
        let targets: Section<u32> = get(&map, find(t), t, Some(m), path)?;
        let weights = if h.meta.weighted {
            Some(get::<f64>(&map, find(w), w, Some(m), path)?)
        } else {
            None
        };
        if offsets.first() != Some(&0) || offsets.last() != Some(&(m as u64)) {
            return Err(bad(format!(
                "section {} does not span the {} arcs",
                o.name(),
                m
            )));
        }
        Adjacency::new(offsets, targets, weights).map_err(bad)
    };
    let out = adjacency(OutOffsets, OutTargets, OutWeights)?;
    let inc = if h.meta.directed {
        Some(adjacency(InOffsets, InSources, InWeights)?)
    } else {
        None
    };
    let ids = match h.id_kind {
        0 => IdMap::Identity { n },
        1 => IdMap::Int {
            ext: get(&map, find(IdInts), IdInts, Some(n), path)?,
            sorted: get(&map, find(IdSorted), IdSorted, Some(n), path)?,
        },
        2 => IdMap::Str {
            offsets: get(&map, find(IdStrOffsets), IdStrOffsets, Some(n + 1), path)?,
            bytes: get(&map, find(IdStrBytes), IdStrBytes, None, path)?,
            sorted: get(&map, find(IdSorted), IdSorted, Some(n), path)?,
        },
        k => return Err(bad(format!("unknown id kind {k}"))),
    };
    let (old_of_new, new_of_old) = if h.meta.order != VertexOrder::None {
        (
            Some(get(&map, find(OldOfNew), OldOfNew, Some(n), path)?),
            Some(get(&map, find(NewOfOld), NewOfOld, Some(n), path)?),
        )
    } else {
        (None, None)
    };
    let chunks: Section<Chunk> = get(&map, find(Chunks), Chunks, None, path)?;
    if n > 0
        && (chunks.is_empty() || chunks[0].start != 0 || chunks[chunks.len() - 1].end != n as u64)
    {
        return Err(bad("chunk table does not cover the vertices".into()));
    }
    // Tiles are optional (stores of small graphs, or written before them),
    // but all or none; their tables are checked by `check_offsets`.
    let tile_kinds = [
        TileShift,
        TileBlocks,
        TileTable,
        TileTargets,
        TileSources,
        TileLongLengths,
    ];
    let tiles = match tile_kinds.iter().filter(|&&k| find(k).is_some()).count() {
        0 => None,
        6 => {
            let shift: Section<u32> = get(&map, find(TileShift), TileShift, Some(1), path)?;
            Some(Tiles {
                shift: shift[0],
                blocks: get(&map, find(TileBlocks), TileBlocks, None, path)?,
                tiles: get(&map, find(TileTable), TileTable, None, path)?,
                targets: get(&map, find(TileTargets), TileTargets, None, path)?,
                sources: get(&map, find(TileSources), TileSources, None, path)?,
                long_lengths: get(&map, find(TileLongLengths), TileLongLengths, None, path)?,
            })
        }
        _ => return Err(bad("some tile sections are missing".into())),
    };
    Ok(Graph {
        meta: h.meta.clone(),
        out,
        inc,
        ids,
        old_of_new,
        new_of_old,
        chunks,
        weight_stats: Default::default(),
        strictly_increasing: Default::default(),
        tiles,
        base_version: h.base_version,
    })
}

/// Checks in O(n) (n the vertices; the arcs are not read) the invariants
/// whose violation would make lookups go out of bounds or answers wrong:
/// every offset array is non-decreasing, the chunk table is contiguous,
/// the vertex permutations and sorted-id tables hold ids below n (and the
/// permutations are inverse), string-id offsets are non-decreasing within
/// their bytes, and the tile tables are consistent. Errors name the section.
/// [`DataDir::open`] runs it on every open.
pub fn check_offsets(g: &Graph, path: &Path) -> Result<()> {
    let bad = |msg: String| GraphError::corrupt(path, msg);
    for (name, adj) in [("out", Some(g.out())), ("in", g.inc.as_ref())] {
        let Some(adj) = adj else { continue };
        if let Some(v) = first_decrease(adj.offsets()) {
            return Err(bad(format!(
                "section {name}-offsets decreases at vertex {v}"
            )));
        }
    }
    let n = g.num_vertices();
    let below_n = |kind: SectionKind, xs: &[u32]| -> Result<()> {
        match xs.par_iter().position_any(|&x| x as usize >= n) {
            Some(i) => Err(bad(format!(
                "section {} holds {} at {i}, not a vertex id below {n}",
                kind.name(),
                xs[i]
            ))),
            None => Ok(()),
        }
    };
    match &g.ids {
        IdMap::Identity { .. } => {}
        IdMap::Int { sorted, .. } => below_n(SectionKind::IdSorted, sorted)?,
        IdMap::Str {
            offsets,
            bytes,
            sorted,
        } => {
            below_n(SectionKind::IdSorted, sorted)?;
            if first_decrease(offsets).is_some()
                || offsets.first().is_some_and(|&o| o != 0)
                || offsets.last().is_some_and(|&o| o > bytes.len() as u64)
            {
                return Err(bad(format!(
                    "section {} is not a non-decreasing list of offsets into the {} id bytes",
                    SectionKind::IdStrOffsets.name(),
                    bytes.len()
                )));
            }
        }
    }
    if let (Some(o), Some(w)) = (&g.old_of_new, &g.new_of_old) {
        below_n(SectionKind::OldOfNew, o)?;
        below_n(SectionKind::NewOfOld, w)?;
        if (0..n)
            .into_par_iter()
            .any(|v| o[w[v] as usize] as usize != v)
        {
            return Err(bad(format!(
                "sections {} and {} are not inverse permutations",
                SectionKind::OldOfNew.name(),
                SectionKind::NewOfOld.name()
            )));
        }
    }
    let chunks = g.chunks();
    if chunks.iter().any(|c| c.start > c.end || c.end > n as u64)
        || chunks.windows(2).any(|w| w[0].end != w[1].start)
    {
        return Err(bad(format!(
            "section {} is not a contiguous cover of the vertices",
            SectionKind::Chunks.name()
        )));
    }
    if let Some(t) = g.tiles() {
        t.check(g.num_vertices(), g.inc().num_edges(), false)
            .map_err(|e| GraphError::corrupt(path, e))?;
    }
    Ok(())
}

/// The first index `v` with `o[v] > o[v + 1]`, if any.
fn first_decrease(o: &[u64]) -> Option<usize> {
    (0..o.len().saturating_sub(1))
        .into_par_iter()
        .find_first(|&v| o[v] > o[v + 1])
}

/// Verifies every section checksum and the structural invariants (offsets
/// non-decreasing, neighbours `< n`, permutations valid). Linear in the graph.
pub fn check_graph_file(path: &Path) -> Result<()> {
    let map = map_file(path)?;
    let h = decode_header(path, &map)?;
    for e in &h.sections {
        let end = e
            .offset
            .checked_add(e.len_bytes)
            .filter(|&end| end <= map.len() as u64)
            .ok_or_else(|| {
                GraphError::corrupt(
                    path,
                    format!(
                        "section {} lies outside the file (truncated?)",
                        e.kind.name()
                    ),
                )
            })?;
        let mut hasher = Xxh3::new();
        hasher.update(&map[e.offset as usize..end as usize]);
        if hasher.digest() != e.checksum {
            return Err(GraphError::corrupt(
                path,
                format!(
                    "checksum mismatch in section {} (bytes {}..{})",
                    e.kind.name(),
                    e.offset,
                    end
                ),
            ));
        }
    }
    let g = open_graph_file(path)?;
    check_offsets(&g, path)?;
    let n = g.num_vertices() as u64;
    for (kind, adj) in [
        (SectionKind::OutTargets, Some(g.out())),
        (SectionKind::InSources, g.inc.as_ref()),
    ] {
        let Some(adj) = adj else { continue };
        let ids = adj.neighbor_array();
        if let Some(i) = ids.par_iter().position_any(|&t| t as u64 >= n) {
            return Err(GraphError::corrupt(
                path,
                format!(
                    "section {} holds {} at arc {i}, not a vertex id below {n}",
                    kind.name(),
                    ids[i]
                ),
            ));
        }
    }
    if let Some(t) = g.tiles() {
        t.check(g.num_vertices(), g.inc().num_edges(), true)
            .map_err(|e| GraphError::corrupt(path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BuildOptions;

    fn sample() -> Graph {
        let t = [(0, 1, 1.5), (1, 2, 2.0), (2, 0, 3.0), (2, 2, 1.0)];
        let mut o = BuildOptions::directed();
        o.order = VertexOrder::Degree.into();
        crate::build(
            4,
            crate::EdgeBuffer::from_triples(&t),
            IdMap::from_ints(vec![10, 20, 30, 40]),
            &o,
        )
        .unwrap()
    }

    /// `sample()` saved as "g" in a fresh data directory, and its graph file.
    fn saved_sample() -> (tempfile::TempDir, DataDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let dd = DataDir::new(dir.path());
        dd.save("g", &sample(), &Provenance::default(), false)
            .unwrap();
        let f = dd.graph_dir("g").join(GRAPH_FILE);
        (dir, dd, f)
    }

    #[test]
    fn the_degree_summary_is_stored_and_equals_a_plain_scan() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::new(dir.path());
        let edges: Vec<(u32, u32)> = (0..300u32)
            .flat_map(|v| (0..v % 7).map(move |k| (v, (v * 13 + k * 7) % 300)))
            .collect();
        let g = Graph::from_edges(300, &edges, &BuildOptions::directed()).unwrap();
        data.save("g", &g, &Provenance::default(), false).unwrap();
        let stored = data.degree_summary("g").unwrap();
        assert_eq!(stored, g.degree_summary());
        let degs: Vec<u64> = (0..300).map(|v| g.out_degree(v) as u64).collect();
        assert_eq!(stored.min, *degs.iter().min().unwrap());
        assert_eq!(stored.max, *degs.iter().max().unwrap());
        let mut want: Vec<(u32, u64)> = (0..300u32).map(|v| (v, degs[v as usize])).collect();
        want.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        want.truncate(5);
        assert_eq!(stored.top, want);
        std::fs::write(data.graph_dir("g").join(DEGREES_FILE), "{ not json").unwrap();
        assert!(data.degree_summary("g").is_none());
        data.save_degree_summary("g", &g.degree_summary()).unwrap();
        assert_eq!(data.degree_summary("g").unwrap(), stored);
    }

    #[test]
    fn save_then_open_gives_the_same_graph() {
        let dir = tempfile::tempdir().unwrap();
        let dd = DataDir::new(dir.path());
        let g = sample();
        dd.save("g", &g, &Provenance::default(), false).unwrap();
        let h = dd.open("g").unwrap();
        assert_eq!(h.meta(), g.meta());
        let a: Vec<_> = g.arcs().collect();
        let b: Vec<_> = h.arcs().collect();
        assert_eq!(a, b);
        assert_eq!(h.ids().lookup_int(30), g.ids().lookup_int(30));
        assert_eq!(h.chunks(), g.chunks());
        assert!(h.out().neighbor_array().is_empty() || h.out().offsets.is_mapped());
        check_graph_file(&dd.graph_dir("g").join(GRAPH_FILE)).unwrap();
        assert_eq!(dd.list().unwrap().len(), 1);
        assert!(matches!(
            dd.save("g", &g, &Provenance::default(), false),
            Err(GraphError::GraphExists { .. })
        ));
    }

    #[test]
    fn tiles_are_stored_and_opened_as_built() {
        let dir = tempfile::tempdir().unwrap();
        let dd = DataDir::new(dir.path());
        let edges: Vec<(u32, u32)> = (0..200u32)
            .flat_map(|v| (0..v % 9).map(move |k| ((v * 31 + k * 17) % 200, v)))
            .collect();
        let g = Graph::from_edges(200, &edges, &BuildOptions::directed()).unwrap();
        // Small graphs get no tiles of their own...
        assert!(!Tiles::worthwhile(200, g.num_arcs()));
        dd.save("plain", &g, &Provenance::default(), false).unwrap();
        assert!(dd.open("plain").unwrap().tiles().is_none());
        // ...but keep the ones they have.
        let g = g.with_tiles(3, 16);
        dd.save("g", &g, &Provenance::default(), false).unwrap();
        let h = dd.open_checked("g").unwrap();
        let (a, b) = (g.tiles().unwrap(), h.tiles().unwrap());
        assert_eq!(a.shift(), b.shift());
        assert_eq!(a.blocks(), b.blocks());
        assert_eq!(a.tiles(), b.tiles());
        assert_eq!(a.targets(), b.targets());
        assert_eq!(a.sources(), b.sources());
        assert_eq!(a.long_lengths(), b.long_lengths());
        assert!(b.sources().is_empty() || b.sources.is_mapped());
        check_graph_file(&dd.graph_dir("g").join(GRAPH_FILE)).unwrap();
    }

    #[test]
    fn a_graph_worth_tiles_gets_them_at_save() {
        let n = 1u32 << 18;
        // Eight in-arcs per vertex, from sources spread over the ids.
        let edges: Vec<(u32, u32)> = (0..n)
            .flat_map(|v| {
                (1..=8u32).map(move |k| {
                    (
                        v.wrapping_mul(2_654_435_761).wrapping_add(k * 40_503) % n,
                        v,
                    )
                })
            })
            .collect();
        let g = Graph::from_edges(n as usize, &edges, &BuildOptions::directed()).unwrap();
        assert!(g.tiles().is_none() && Tiles::worthwhile(n as usize, g.num_arcs()));
        let dir = tempfile::tempdir().unwrap();
        let dd = DataDir::new(dir.path());
        dd.save("g", &g, &Provenance::default(), false).unwrap();
        let h = dd.open_checked("g").unwrap();
        let want = Tiles::build(g.inc());
        let got = h.tiles().expect("stored tiles");
        assert_eq!(
            (got.shift(), got.blocks(), got.tiles()),
            (want.shift(), want.blocks(), want.tiles())
        );
        assert_eq!(
            (got.targets(), got.sources(), got.long_lengths()),
            (want.targets(), want.sources(), want.long_lengths())
        );
        check_graph_file(&dd.graph_dir("g").join(GRAPH_FILE)).unwrap();
        let a: Vec<_> = g.arcs().collect();
        assert_eq!(a, h.arcs().collect::<Vec<_>>());
    }

    #[test]
    fn a_version_1_file_still_opens() {
        let (_dir, dd, f) = saved_sample();
        let mut b = fs::read(&f).unwrap();
        assert_eq!(le_u32(&b, 8), FORMAT_VERSION);
        // Version 1 and the header checksum recomputed (no tile sections).
        b[8..12].copy_from_slice(&1u32.to_le_bytes());
        let table_end = FIXED_HEADER + ENTRY_SIZE * le_u32(&b, 48) as usize;
        let sum = xxh3_64(&b[..table_end]);
        b[table_end..table_end + 8].copy_from_slice(&sum.to_le_bytes());
        fs::write(&f, &b).unwrap();
        assert_eq!(read_header(&f).unwrap().version, 1);
        let g = dd.open_checked("g").unwrap();
        assert!(g.tiles().is_none());
        assert_eq!(
            g.arcs().collect::<Vec<_>>(),
            sample().arcs().collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_corrupt_tile_table_is_reported_by_open_and_check() {
        let dir = tempfile::tempdir().unwrap();
        let dd = DataDir::new(dir.path());
        let edges: Vec<(u32, u32)> = (0..100u32)
            .flat_map(|v| [(v, (v + 1) % 100), ((v * 7) % 100, v)])
            .collect();
        let g = Graph::from_edges(100, &edges, &BuildOptions::directed())
            .unwrap()
            .with_tiles(2, 8);
        dd.save("g", &g, &Provenance::default(), false).unwrap();
        let f = dd.graph_dir("g").join(GRAPH_FILE);
        let table = read_header(&f)
            .unwrap()
            .sections
            .into_iter()
            .find(|e| e.kind == SectionKind::TileTable)
            .unwrap();
        let mut b = fs::read(&f).unwrap();
        // The second tile's `first_run` (bytes 40..48 of its 64).
        b[table.offset as usize + 64 + 40] ^= 0x10;
        fs::write(&f, &b).unwrap();
        // The file changed since its verification: open verifies it again.
        for e in [
            dd.open("g").unwrap_err(),
            dd.open_checked("g").unwrap_err(),
            check_graph_file(&f).unwrap_err(),
        ] {
            assert!(matches!(e, GraphError::Corrupt { .. }), "{e}");
        }
        assert!(dd
            .open_checked("g")
            .unwrap_err()
            .to_string()
            .contains("tile-table"));
        // The structural check alone names the tile.
        let g = open_graph_file(&f).unwrap();
        assert!(check_offsets(&g, &f)
            .unwrap_err()
            .to_string()
            .contains("tile 1"));
    }

    #[test]
    fn a_failed_write_names_the_graph_not_its_temporary_directory() {
        let full = std::io::Error::from_raw_os_error(28);
        let e = GraphError::io(Path::new("/d/.tmp-g-7/graph.plx"), full);
        let e = rename_error_path(e, Path::new("/d/.tmp-g-7"), Path::new("/d/g"));
        let text = e.to_string();
        assert!(text.starts_with("/d/g/graph.plx: "), "{text}");
        assert!(!text.contains(".tmp-"), "{text}");
    }

    #[test]
    fn a_changed_file_recorded_as_verified_still_fails_the_structural_checks() {
        let (_dir, dd, f) = saved_sample();
        let h = read_header(&f).unwrap();
        let off = h
            .sections
            .iter()
            .find(|e| e.kind == SectionKind::OutOffsets)
            .unwrap()
            .offset as usize;
        let mut b = fs::read(&f).unwrap();
        // offsets[1] far beyond offsets[2]: decreasing.
        b[off + 8 + 6] = 0x7f;
        fs::write(&f, &b).unwrap();
        // As if the disk had changed under an unchanged record.
        record_verified(&f);
        let e = dd.open("g").unwrap_err().to_string();
        assert!(e.contains("section out-offsets decreases"), "{e}");
    }

    #[test]
    fn corruption_is_reported_not_panicked() {
        let (_dir, dd, f) = saved_sample();
        let orig = fs::read(&f).unwrap();
        // A flipped byte inside a section: open succeeds, check fails.
        let mut b = orig.clone();
        b[SECTION_ALIGN as usize] ^= 0xff;
        fs::write(&f, &b).unwrap();
        assert!(matches!(
            check_graph_file(&f),
            Err(GraphError::Corrupt { .. })
        ));
        // Bad magic, wrong version, truncated.
        for at in [0usize, 8, 20] {
            let mut b = orig.clone();
            b[at] ^= 0x55;
            fs::write(&f, &b).unwrap();
            assert!(matches!(dd.open("g"), Err(GraphError::Corrupt { .. })));
        }
        fs::write(&f, &orig[..orig.len() / 2]).unwrap();
        assert!(matches!(dd.open("g"), Err(GraphError::Corrupt { .. })));
        fs::write(&f, &orig[..10]).unwrap();
        assert!(matches!(dd.open("g"), Err(GraphError::Corrupt { .. })));
        assert!(matches!(
            dd.open("nope"),
            Err(GraphError::UnknownGraph { .. })
        ));
    }
}
