//! Importers: edge lists (SNAP/KONECT/GAPBS `.el`/`.wel`, optionally `.gz`
//! or `.zst`), Matrix Market coordinate files, CSV edge tables (with an
//! optional node table) and the LDBC Graphalytics EVLP pair. All of them map
//! external ids to dense internal ids in ascending external-id order (the
//! "natural order") and hand an [`EdgeBuffer`] to [`crate::build`].
pub mod arrays;
pub mod csv_table;
pub mod edgelist;
pub mod graphalytics;
pub mod mtx;
pub mod text;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::builder::{BuildOptions, DuplicatePolicy, EdgeBuffer, LoopPolicy};
use crate::graph::Graph;
use crate::ids::IdMap;
use crate::order::OrderChoice;
use crate::types::{VertexId, Weight, MAX_VERTICES};
use crate::{GraphError, Result};

/// Reports import progress; the CLI draws a progress bar with it.
pub trait Progress: Sync {
    /// A new phase starts; `total_bytes` if the input size is known.
    fn begin(&self, phase: &str, total_bytes: Option<u64>);
    /// `bytes` more input read, `edges` more edges parsed.
    fn advance(&self, bytes: u64, edges: u64);
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;
impl Progress for NoProgress {
    fn begin(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64, _: u64) {}
}

/// Input formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Whitespace-separated `src dst [weight]` lines.
    EdgeList,
    /// Matrix Market coordinate.
    MatrixMarket,
    /// CSV edge table with a header.
    Csv,
    /// LDBC Graphalytics `.v` + `.e` (or `.properties`).
    Graphalytics,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "edgelist" | "el" | "wel" | "snap" | "konect" => Ok(Format::EdgeList),
            "mtx" | "matrix-market" => Ok(Format::MatrixMarket),
            "csv" => Ok(Format::Csv),
            "graphalytics" | "evlp" => Ok(Format::Graphalytics),
            _ => Err(format!(
                "unknown format '{s}' (expected edgelist, mtx, csv or graphalytics)"
            )),
        }
    }
}

/// Detects the format from the file name (`None`: the name does not say).
pub fn format_of_name(path: &Path) -> Option<Format> {
    let name = text::base_name(path);
    if name.ends_with(".mtx") || name.ends_with(".mm") {
        Some(Format::MatrixMarket)
    } else if name.ends_with(".csv") {
        Some(Format::Csv)
    } else if name.ends_with(".properties") || name.ends_with(".e") {
        Some(Format::Graphalytics)
    } else if [".el", ".wel", ".txt", ".tsv", ".edges"]
        .iter()
        .any(|s| name.ends_with(s))
    {
        Some(Format::EdgeList)
    } else {
        None
    }
}

/// Detects the format from the file name, else an edge list.
pub fn detect_format(path: &Path) -> Format {
    format_of_name(path).unwrap_or(Format::EdgeList)
}

/// The format of the first bytes of a stream whose name does not tell:
/// Matrix Market by its banner, else an edge list.
pub(crate) fn format_of_content(head: &[u8]) -> Format {
    const BANNER: &[u8] = b"%%matrixmarket";
    if head.len() >= BANNER.len() && head[..BANNER.len()].eq_ignore_ascii_case(BANNER) {
        Format::MatrixMarket
    } else {
        Format::EdgeList
    }
}

/// Kind of vertex ids in a CSV table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IdType {
    /// Integers while every id is one, else strings.
    #[default]
    Auto,
    /// Signed 64-bit integers.
    Int,
    /// Arbitrary strings.
    Str,
}

/// CSV-specific options.
#[derive(Clone, Debug, Default)]
pub struct CsvOptions {
    /// Source column: a header name or a 0-based index (default: column 0).
    pub src_col: Option<String>,
    /// Destination column (default: column 1).
    pub dst_col: Option<String>,
    /// Weight column, if any (implies a weighted graph).
    pub weight_col: Option<String>,
    /// Optional node table adding vertices (isolated ones included).
    pub nodes: Option<PathBuf>,
    /// Id column of the node table (default: column 0).
    pub node_col: Option<String>,
    /// Field delimiter (0: the default `,`).
    pub delimiter: u8,
    /// Integer or string ids, or detected.
    pub ids: IdType,
    /// The first row is data, not a header (without it, a first row whose
    /// id fields are integers is data too).
    pub no_header: bool,
}

impl CsvOptions {
    /// The CSV options that differ from the defaults, by option name.
    fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut add = |set: bool, name| {
            if set {
                v.push(name)
            }
        };
        add(self.src_col.is_some(), "--src-col");
        add(self.dst_col.is_some(), "--dst-col");
        add(self.weight_col.is_some(), "--weight-col");
        add(self.nodes.is_some(), "--nodes");
        add(self.node_col.is_some(), "--node-col");
        add(self.delimiter != 0, "--delimiter");
        add(self.ids != IdType::Auto, "--ids");
        add(self.no_header, "--no-header");
        v
    }
}

/// How to import a file.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Format; detected from the name when `None`.
    pub format: Option<Format>,
    /// `Some(false)` stores both directions (`--undirected`); `None` takes
    /// the format's own statement (Matrix Market `symmetric`, Graphalytics
    /// properties) or directed.
    pub directed: Option<bool>,
    /// Read a weight column (edge lists: third column; `.wel` implies it).
    pub weighted: bool,
    /// Self-loop policy.
    pub self_loops: LoopPolicy,
    /// Duplicate-edge policy.
    pub duplicates: DuplicatePolicy,
    /// Vertex order.
    pub order: OrderChoice,
    /// CSV options.
    pub csv: CsvOptions,
}

impl ImportOptions {
    pub(crate) fn build_options(&self, directed: bool) -> BuildOptions {
        BuildOptions {
            directed,
            self_loops: self.self_loops,
            duplicates: self.duplicates,
            order: self.order,
        }
    }
}

/// Imports `path` (`-`: standard input; FIFOs and pipes too, read once)
/// into an in-memory [`Graph`]. The format is `opts.format`, else the
/// name's, else the content's ([`format_of_content`]); options of another
/// format are an error.
pub fn import_file(path: &Path, opts: &ImportOptions, progress: &dyn Progress) -> Result<Graph> {
    let named = opts.format.or_else(|| format_of_name(path));
    if named == Some(Format::Graphalytics) {
        check_applicable(Format::Graphalytics, opts, path)?;
        if text::is_stdin(path) {
            return Err(GraphError::bad_input(
                path,
                "Graphalytics input is a .v and an .e file, not standard input",
            ));
        }
        return graphalytics::import(path, opts, progress).map(|(g, _)| g);
    }
    let mut input = text::open_input(path)?;
    let format = match named {
        Some(f) => f,
        None => {
            let compression = input.compression;
            format_of_content(
                input
                    .peek()
                    .map_err(|e| text::stream_error(path, compression, e))?,
            )
        }
    };
    check_applicable(format, opts, path)?;
    match format {
        Format::EdgeList => edgelist::import(input, path, opts, progress),
        Format::MatrixMarket => mtx::import(input, path, opts, progress),
        Format::Csv => csv_table::import(input, path, opts, progress),
        Format::Graphalytics => graphalytics::import(path, opts, progress).map(|(g, _)| g),
    }
}

/// Options that the format does not read are an error naming them.
pub(crate) fn check_applicable(format: Format, opts: &ImportOptions, path: &Path) -> Result<()> {
    let name = match format {
        Format::Csv => return Ok(()),
        Format::EdgeList => "an edge list",
        Format::MatrixMarket => "a Matrix Market file",
        Format::Graphalytics => "Graphalytics input",
    };
    let given = opts.csv.given();
    if !given.is_empty() {
        return Err(GraphError::InvalidArgument(format!(
            "{} {} only for CSV input; {} is {name} (--format csv reads it as CSV)",
            given.join(", "),
            if given.len() == 1 { "applies" } else { "apply" },
            path.display()
        )));
    }
    Ok(())
}

/// Endpoint ids of one parsed block, `src, dst` interleaved: `u32` while
/// every id fits (the common case, half the memory), else `i64`.
pub(crate) enum BlockIds {
    Small(Vec<u32>),
    Wide(Vec<i64>),
}

impl EdgeBlock {
    /// The block's endpoint ids, `src, dst` interleaved.
    pub(crate) fn ids_iter(&self) -> Box<dyn Iterator<Item = i64> + '_> {
        match &self.ids {
            BlockIds::Small(v) => Box::new(v.iter().map(|&x| i64::from(x))),
            BlockIds::Wide(v) => Box::new(v.iter().copied()),
        }
    }
}

impl BlockIds {
    fn len(&self) -> usize {
        match self {
            BlockIds::Small(v) => v.len(),
            BlockIds::Wide(v) => v.len(),
        }
    }
    pub(crate) fn push(&mut self, x: i64) {
        match self {
            BlockIds::Small(v) => {
                if (0..u32::MAX as i64).contains(&x) {
                    v.push(x as u32);
                } else {
                    let mut w: Vec<i64> = v.iter().map(|&a| a as i64).collect();
                    w.push(x);
                    *self = BlockIds::Wide(w);
                }
            }
            BlockIds::Wide(v) => v.push(x),
        }
    }
}

/// The parsed edges of one block.
pub(crate) struct EdgeBlock {
    pub ids: BlockIds,
    pub weights: Option<Vec<Weight>>,
}

impl EdgeBlock {
    pub(crate) fn new(weighted: bool) -> Self {
        EdgeBlock {
            ids: BlockIds::Small(Vec::new()),
            weights: weighted.then(Vec::new),
        }
    }
    pub(crate) fn edges(&self) -> usize {
        self.ids.len() / 2
    }
}

/// The vertex set besides the edge endpoints.
pub(crate) enum VertexSet {
    /// Exactly the endpoints.
    Endpoints,
    /// The endpoints plus these ids.
    Plus(Vec<i64>),
    /// Exactly these ids; an endpoint outside them is an error (`file` named).
    Exactly(Vec<i64>, PathBuf),
}

fn too_many(count: u64) -> GraphError {
    GraphError::TooManyVertices {
        count,
        limit: MAX_VERTICES - 1,
    }
}

/// Maps the blocks' external ids to internal ids in natural order and
/// concatenates them into one [`EdgeBuffer`], freeing blocks as it goes.
pub(crate) fn map_ids(
    blocks: Vec<EdgeBlock>,
    set: VertexSet,
    path: &Path,
) -> Result<(EdgeBuffer, IdMap)> {
    let weighted = blocks.first().is_some_and(|b| b.weights.is_some());
    let total: usize = blocks.iter().map(|b| b.edges()).sum();
    let t = std::time::Instant::now();
    let extra: &[i64] = match &set {
        VertexSet::Endpoints => &[],
        VertexSet::Plus(v) | VertexSet::Exactly(v, _) => v,
    };
    let all_small = blocks.iter().all(|b| matches!(b.ids, BlockIds::Small(_)))
        && extra.iter().all(|&x| (0..u32::MAX as i64).contains(&x));
    let max_small: u64 = if all_small {
        let m1 = blocks
            .par_iter()
            .map(|b| match &b.ids {
                BlockIds::Small(v) => v.iter().copied().max().unwrap_or(0) as u64,
                BlockIds::Wide(_) => 0,
            })
            .max()
            .unwrap_or(0);
        m1.max(extra.iter().copied().max().unwrap_or(0) as u64)
    } else {
        0
    };
    let dense_ok = all_small
        && (max_small + 1) <= ((1u64 << 26).max(4 * total as u64 + 4 * extra.len() as u64));

    // A lookup from external to internal id.
    enum Lookup {
        Dense(Vec<u32>),
        /// Binary search in `ext`, which is sorted and distinct.
        Sorted,
    }
    let (ext, lookup): (Vec<i64>, Lookup) = if dense_ok {
        let size = max_small as usize + 1;
        let present: Vec<std::sync::atomic::AtomicBool> = (0..size)
            .map(|_| std::sync::atomic::AtomicBool::new(false))
            .collect();
        let mark = |x: u32| present[x as usize].store(true, std::sync::atomic::Ordering::Relaxed);
        match &set {
            VertexSet::Exactly(..) => extra.iter().for_each(|&x| mark(x as u32)),
            _ => {
                extra.iter().for_each(|&x| mark(x as u32));
                blocks.par_iter().for_each(|b| {
                    if let BlockIds::Small(v) = &b.ids {
                        v.iter().for_each(|&x| mark(x));
                    }
                });
            }
        }
        let mut rank = vec![ABSENT; size];
        let mut ext = Vec::new();
        for (x, p) in present.iter().enumerate() {
            if p.load(std::sync::atomic::Ordering::Relaxed) {
                rank[x] = ext.len() as u32;
                ext.push(x as i64);
            }
        }
        (ext, Lookup::Dense(rank))
    } else {
        let mut ids: Vec<i64> = extra.to_vec();
        if !matches!(set, VertexSet::Exactly(..)) {
            for b in &blocks {
                match &b.ids {
                    BlockIds::Small(v) => ids.extend(v.iter().map(|&x| x as i64)),
                    BlockIds::Wide(v) => ids.extend_from_slice(v),
                }
            }
        }
        ids.par_sort_unstable();
        ids.dedup();
        (ids, Lookup::Sorted)
    };
    if ext.len() as u64 >= MAX_VERTICES {
        return Err(too_many(ext.len() as u64));
    }
    let t = crate::trace::phase("the vertex set", t);
    let find = |x: i64| -> u32 {
        match &lookup {
            Lookup::Dense(r) => {
                if x >= 0 && (x as usize) < r.len() {
                    r[x as usize]
                } else {
                    ABSENT
                }
            }
            Lookup::Sorted => ext.binary_search(&x).map_or(ABSENT, |i| i as u32),
        }
    };
    // Blocks are mapped in parallel, each into its own slices of the
    // arrays (zeroed by the allocator, so first touches happen in the
    // workers); a block's ids are freed when it is done.
    let mut src: Vec<VertexId> = vec![0; total];
    let mut dst: Vec<VertexId> = vec![0; total];
    let mut weights: Option<Vec<Weight>> = weighted.then(|| vec![0.0; total]);
    let lens: Vec<usize> = blocks.iter().map(|b| b.edges()).collect();
    let s_parts = split_lengths(&mut src, &lens);
    let d_parts = split_lengths(&mut dst, &lens);
    let w_parts: Vec<Option<&mut [Weight]>> = match weights.as_mut() {
        Some(w) => split_lengths(w, &lens).into_iter().map(Some).collect(),
        None => lens.iter().map(|_| None).collect(),
    };
    // The first id (in file order) that is not in the vertex set, if any.
    let missing: Vec<Option<i64>> = blocks
        .into_par_iter()
        .zip(s_parts)
        .zip(d_parts)
        .zip(w_parts)
        .with_max_len(1)
        .map(|(((b, s), d), w)| {
            if let (Some(w), Some(bw)) = (w, b.weights.as_ref()) {
                w.copy_from_slice(bw);
            }
            match &b.ids {
                BlockIds::Small(v) => map_pairs(v, s, d, |x| x as i64, &find),
                BlockIds::Wide(v) => map_pairs(v, s, d, |x| x, &find),
            }
        })
        .collect();
    crate::trace::phase("endpoints to vertices", t);
    if let Some(x) = missing.into_iter().flatten().next() {
        let file = match &set {
            VertexSet::Exactly(_, f) => f.display().to_string(),
            _ => "the vertex set".into(),
        };
        return Err(GraphError::bad_input(
            path,
            format!("vertex {x} appears in an edge but is not listed in {file}"),
        ));
    }
    let ids = if !ext.is_empty() && ext.iter().enumerate().all(|(i, &x)| x == i as i64) {
        IdMap::Identity { n: ext.len() }
    } else {
        IdMap::from_ints(ext)
    };
    Ok((EdgeBuffer { src, dst, weights }, ids))
}

/// `data` cut into consecutive slices of the given lengths (which sum to at
/// most its length).
fn split_lengths<'a, T>(mut data: &'a mut [T], lens: &[usize]) -> Vec<&'a mut [T]> {
    let mut parts = Vec::with_capacity(lens.len());
    for &len in lens {
        let (head, tail) = std::mem::take(&mut data).split_at_mut(len);
        parts.push(head);
        data = tail;
    }
    parts
}

/// The internal id `find` gives an external id outside the vertex set.
const ABSENT: u32 = u32::MAX;

/// Maps a block's endpoint pairs `ids[2i], ids[2i + 1]` through `find`
/// into `src[i]`, `dst[i]`; returns the first external id that `find`
/// does not know ([`ABSENT`]), if any.
fn map_pairs<T: Copy>(
    ids: &[T],
    src: &mut [VertexId],
    dst: &mut [VertexId],
    to_i64: impl Fn(T) -> i64,
    find: &impl Fn(i64) -> u32,
) -> Option<i64> {
    let mut missing = None;
    for ((pair, s), d) in ids.chunks_exact(2).zip(src.iter_mut()).zip(dst.iter_mut()) {
        let (a, b) = (to_i64(pair[0]), to_i64(pair[1]));
        *s = find(a);
        *d = find(b);
        if missing.is_none() && (*s == ABSENT || *d == ABSENT) {
            missing = Some(if *s == ABSENT { a } else { b });
        }
    }
    missing
}
