//! Bounded-memory builds: a graph's store written without holding its
//! edges in memory, so that a graph larger than RAM can be imported.
//!
//! The steps of [`crate::build`], on disk: edges are read in blocks and
//! spooled to a scratch file with their external ids (a bitmap records the
//! ids seen) → the natural ranks and, when the order asks, the degrees and
//! the degree order ([`crate::order`], the same decision as the in-memory
//! build) → arcs renamed and cut into sorted runs → a k-way merge applying
//! the duplicate policy, which streams the out-lists into `graph.plx` and
//! feeds runs of the in-arcs → a second merge streams the CSC → ids,
//! permutation, chunk table and tiles (built block by block from the
//! stored CSC) → the header last, then fsync. The file is byte for byte
//! the one [`crate::store::write_graph_file`] writes for the same input.
//!
//! Memory: the budget covers O(n) per-vertex arrays ([`PER_VERTEX_BYTES`]
//! a vertex, more for directed graphs), a table of 4 bytes per possible
//! id (`0..=max id`), a fixed allowance ([`FIXED_BYTES`]) and the run
//! buffer, which takes the rest. Scratch files and the output are written
//! with the page cache dropped behind them. Supported: edge lists with
//! integer ids in `0..2^32 - 1` (other formats and ids are refused with a
//! message) and the generators; orders none, degree and auto (RCM needs
//! the graph in memory and is refused).
mod csv;
mod disk;
mod entry;
mod runs;
mod write;

use std::path::{Path, PathBuf};

use disk::{ScratchReader, ScratchWriter};
use runs::{put_arc, take_arc, Arc, MergePlan, Runs};

use crate::builder::{BuildOptions, LoopPolicy};
use crate::graph::VertexOrder;
use crate::order::{degree_order, worth_degree_order, OrderChoice, NEAR_IDS};
use crate::types::{VertexId, Weight, MAX_VERTICES};
use crate::{GraphError, Result};

pub use disk::{interrupt, interrupt_on_signals};
pub use entry::{generate_to_file, import_to_file, save_bounded};
pub use write::Built;

/// Bytes a bounded build sets aside besides its arrays and run buffer:
/// parse blocks in flight, read and write buffers, the program itself.
pub const FIXED_BYTES: u64 = 64 << 20;
/// Smallest run buffer a budget must leave.
pub const MIN_RUN_BYTES: u64 = 16 << 20;
/// Per-vertex bytes of an undirected build (offsets, permutation and its
/// inverse, degrees while the order is chosen, ids); a directed one adds
/// [`PER_VERTEX_DIRECTED_BYTES`] for the in-offsets.
pub const PER_VERTEX_BYTES: u64 = 32;
/// Extra per-vertex bytes of a directed build.
pub const PER_VERTEX_DIRECTED_BYTES: u64 = 8;

/// The smallest budget for any build: [`FIXED_BYTES`] + [`MIN_RUN_BYTES`].
pub const MIN_BUDGET: u64 = FIXED_BYTES + MIN_RUN_BYTES;

/// The smallest budget that fits `n` vertices, an id table of
/// `table_ids` entries (0 when ids need none) and a directed or undirected
/// build, in bytes.
pub fn min_budget(n: u64, table_ids: u64, directed: bool) -> u64 {
    let per = PER_VERTEX_BYTES
        + if directed {
            PER_VERTEX_DIRECTED_BYTES
        } else {
            0
        };
    MIN_BUDGET + per * (n + 1) + 4 * table_ids + table_ids / 8
}

/// `bytes` as MiB, rounded up, for messages.
fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(1 << 20))
}

/// Refuses what a bounded build cannot do, before any work: a budget
/// under [`MIN_BUDGET`] and the RCM order.
pub fn check_options(budget: u64, order: OrderChoice) -> Result<()> {
    if budget < MIN_BUDGET {
        return Err(GraphError::InvalidArgument(format!(
            "a memory budget of {} is too small: a bounded build needs at least {} (more for large graphs)",
            mib(budget),
            mib(MIN_BUDGET)
        )));
    }
    if order == OrderChoice::Exactly(VertexOrder::Rcm) {
        return Err(GraphError::InvalidArgument(
            "--order rcm needs the graph in memory; under --memory use auto, none or degree".into(),
        ));
    }
    Ok(())
}

/// Test knobs: run length and merge fan-in forced small, to exercise many
/// runs and merge passes on small graphs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tuning {
    pub run_arcs: Option<usize>,
    pub fan_in: Option<usize>,
}

/// Edges as read, in external ids, spooled to a scratch file; a bitmap
/// records which ids occur.
pub(crate) struct Spool {
    w: ScratchWriter,
    weighted: bool,
    seen: Vec<u64>,
    max: Option<u32>,
    edges: u64,
}

/// Largest external id a bounded build takes (`u32::MAX` marks an absent id).
const MAX_EXTERNAL: i64 = u32::MAX as i64 - 1;

/// Refuses an external id a bounded build cannot name.
fn check_external(x: i64, input: &Path) -> Result<()> {
    if (0..=MAX_EXTERNAL).contains(&x) {
        Ok(())
    } else {
        Err(GraphError::bad_input(
            input,
            format!("vertex id {x}: --memory takes integer ids from 0 to {MAX_EXTERNAL}; import without --memory"),
        ))
    }
}

impl Spool {
    pub(crate) fn new(scratch: &Path, weighted: bool) -> Result<Self> {
        Ok(Spool {
            w: ScratchWriter::create(scratch.join(".scratch-edges"), 1 << 20)?,
            weighted,
            seen: Vec::new(),
            max: None,
            edges: 0,
        })
    }

    fn mark(&mut self, x: u32) {
        let word = (x >> 6) as usize;
        if word >= self.seen.len() {
            self.seen.resize((word + 1).next_power_of_two(), 0);
        }
        self.seen[word] |= 1 << (x & 63);
        self.max = Some(self.max.map_or(x, |m| m.max(x)));
    }

    /// Marks ids `lo..=hi` as vertices (declared ones, isolated or not).
    pub(crate) fn mark_range(&mut self, lo: u32, hi: u32) {
        for x in lo..=hi {
            self.mark(x);
        }
    }

    /// Whether `x` was marked (an endpoint or a listed vertex).
    pub(crate) fn has(&self, x: i64) -> bool {
        (0..=MAX_EXTERNAL).contains(&x)
            && self
                .seen
                .get((x >> 6) as usize)
                .is_some_and(|w| w >> (x & 63) & 1 == 1)
    }

    /// Marks `x` as a vertex; false if it was marked already.
    pub(crate) fn mark_new(&mut self, x: i64, input: &Path) -> Result<bool> {
        let before = self.has(x);
        self.mark_id(x, input)?;
        Ok(!before)
    }

    /// Marks `x` as a vertex (a node table's id); `input` names the file in
    /// the error for an id outside `0..=2^32 - 2`.
    pub(crate) fn mark_id(&mut self, x: i64, input: &Path) -> Result<()> {
        check_external(x, input)?;
        self.mark(x as u32);
        Ok(())
    }

    /// Adds edge `a → b` of weight `w` (0 unweighted); `input` names the
    /// file in the error for an id outside `0..=2^32 - 2`.
    pub(crate) fn push(&mut self, a: i64, b: i64, w: Weight, input: &Path) -> Result<()> {
        check_external(a, input)?;
        check_external(b, input)?;
        let (a, b) = (a as u32, b as u32);
        self.mark(a);
        self.mark(b);
        self.edges += 1;
        put_arc(&mut self.w, &Arc { u: a, v: b, w }, self.weighted)
    }

    /// Edges added so far.
    pub(crate) fn edges(&self) -> u64 {
        self.edges
    }
}

/// The vertex set of a build.
pub(crate) enum Vertices {
    /// `0..n`, external id = internal id (generators).
    Identity(usize),
    /// The ids the spool saw, ranked in ascending order.
    Seen,
    /// String ids: the spool holds each name's first-seen number.
    Named(Names),
}

/// Vertex names (string ids), held in memory: the spooled edges carry
/// each name's first-seen number, and the names rank in byte order.
pub(crate) struct Names {
    /// The natural rank of each first-seen number.
    pub rank_of_first: Vec<VertexId>,
    /// Byte offsets of the names in rank order (`n + 1` entries).
    pub offsets: Vec<u64>,
    /// The names' bytes, concatenated in rank order.
    pub bytes: Vec<u8>,
}

impl Names {
    /// The names of `first_seen` (indexed by first-seen number), ranked.
    pub(crate) fn rank(first_seen: Vec<Box<str>>) -> Names {
        let mut order: Vec<VertexId> = (0..first_seen.len() as VertexId).collect();
        order.sort_unstable_by(|&a, &b| first_seen[a as usize].cmp(&first_seen[b as usize]));
        let mut rank_of_first = vec![0; first_seen.len()];
        let mut offsets = Vec::with_capacity(first_seen.len() + 1);
        let total: usize = first_seen.iter().map(|s| s.len()).sum();
        let mut bytes = Vec::with_capacity(total);
        offsets.push(0);
        for (r, &f) in order.iter().enumerate() {
            rank_of_first[f as usize] = r as VertexId;
            bytes.extend_from_slice(first_seen[f as usize].as_bytes());
            offsets.push(bytes.len() as u64);
        }
        Names {
            rank_of_first,
            offsets,
            bytes,
        }
    }

    /// Bytes these names hold.
    pub(crate) fn size_bytes(&self) -> u64 {
        (4 * self.rank_of_first.len() + 8 * self.offsets.len() + self.bytes.len()) as u64
    }
}

/// How the build's vertices are named: `n`, and, when the external ids are
/// not `0..n`, the ascending list of the ids seen as a bitmap.
pub(crate) struct Naming {
    pub n: usize,
    /// Bitmap of the ids seen (`None`: ids are `0..n`).
    pub seen: Option<Vec<u64>>,
    /// Entries of the external-to-rank table (0 without one).
    pub table_ids: u64,
    /// String ids (their names in rank order), if the ids are strings.
    pub names: Option<Names>,
}

impl Naming {
    fn of(spool_seen: Vec<u64>, max: Option<u32>, vertices: Vertices) -> Result<Naming> {
        match vertices {
            Vertices::Identity(n) => Ok(Naming {
                n,
                seen: None,
                table_ids: 0,
                names: None,
            }),
            Vertices::Named(names) => Ok(Naming {
                n: names.rank_of_first.len(),
                seen: None,
                table_ids: 0,
                names: Some(names),
            }),
            Vertices::Seen => {
                let n: u64 = spool_seen.iter().map(|w| u64::from(w.count_ones())).sum();
                if n >= MAX_VERTICES {
                    return Err(GraphError::TooManyVertices {
                        count: n,
                        limit: MAX_VERTICES - 1,
                    });
                }
                let ids = max.map_or(0, |m| u64::from(m) + 1);
                let dense = n == ids;
                Ok(Naming {
                    n: n as usize,
                    seen: (!dense).then_some(spool_seen),
                    table_ids: if dense { 0 } else { ids },
                    names: None,
                })
            }
        }
    }

    /// The table from external id to natural rank (`u32::MAX` for ids not
    /// seen); `None` when ids are their ranks.
    fn rank_table(&self) -> Option<Vec<VertexId>> {
        if let Some(names) = &self.names {
            return Some(names.rank_of_first.clone());
        }
        let seen = self.seen.as_ref()?;
        let mut table = vec![VertexId::MAX; self.table_ids as usize];
        let mut r = 0;
        for (x, t) in table.iter_mut().enumerate() {
            if seen[x >> 6] >> (x & 63) & 1 == 1 {
                *t = r;
                r += 1;
            }
        }
        Some(table)
    }

    /// The external id of each natural rank.
    pub(crate) fn ext_of_rank(&self) -> Vec<u32> {
        match &self.seen {
            None => (0..self.n as u32).collect(),
            Some(seen) => {
                let mut ext = Vec::with_capacity(self.n);
                for (w, &bits) in seen.iter().enumerate() {
                    let mut b = bits;
                    while b != 0 {
                        ext.push((w as u32) << 6 | b.trailing_zeros());
                        b &= b - 1;
                    }
                }
                ext
            }
        }
    }
}

/// Everything a bounded build needs to know.
pub(crate) struct Plan<'a> {
    pub opts: &'a BuildOptions,
    pub weighted: bool,
    /// Bytes, everything resident included.
    pub budget: u64,
    /// Where scratch files go (a directory removed by the caller).
    pub scratch: PathBuf,
    pub tuning: Tuning,
}

/// The permutation a build applies: `(old_of_new, new_of_old)`.
type Perm = (Vec<VertexId>, Vec<VertexId>);

/// Builds the store file `out` from the spooled edges.
pub(crate) fn build_file(
    spool: Spool,
    vertices: Vertices,
    plan: &Plan,
    out: &Path,
) -> Result<Built> {
    check_options(plan.budget, plan.opts.order)?;
    let Spool {
        w,
        seen,
        max,
        edges,
        ..
    } = spool;
    let (spool_path, _) = w.finish()?;
    let naming = Naming::of(seen, max, vertices)?;
    // String ids: the names, and the table from first-seen number to rank.
    let names_bytes = naming
        .names
        .as_ref()
        .map_or(0, |x| x.size_bytes() + 4 * x.rank_of_first.len() as u64);
    let need = min_budget(naming.n as u64, naming.table_ids, plan.opts.directed) + names_bytes;
    if plan.budget < need {
        let _ = std::fs::remove_file(&spool_path);
        return Err(GraphError::InvalidArgument(format!(
            "a memory budget of {} is too small for this graph ({} vertices{}): it needs at least {}",
            mib(plan.budget),
            naming.n,
            if naming.table_ids > 0 {
                format!(", ids up to {}", naming.table_ids - 1)
            } else if names_bytes > 0 {
                format!(", names taking {}", mib(names_bytes))
            } else {
                String::new()
            },
            mib(need)
        )));
    }
    let run_bytes = plan.budget - need + MIN_RUN_BYTES;
    let t = std::time::Instant::now();
    let rank = naming.rank_table();
    let perm = choose_order(&spool_path, rank.as_deref(), &naming, edges, plan)?;
    let t = crate::trace::phase("order", t);
    // The table from external id to final id.
    let map: Option<Vec<VertexId>> = match (rank, &perm) {
        (Some(mut r), Some((_, new_of_old))) => {
            for x in r.iter_mut().filter(|x| **x != VertexId::MAX) {
                *x = new_of_old[*x as usize];
            }
            Some(r)
        }
        (Some(r), None) => Some(r),
        (None, Some((_, new_of_old))) => Some(new_of_old.clone()),
        (None, None) => None,
    };
    let cap = plan.tuning.run_arcs.unwrap_or((run_bytes / 16) as usize);
    let runs = make_runs(spool_path, map.as_deref(), plan, cap)?;
    drop(map);
    crate::trace::phase("runs", t);
    write::write_store(runs, &naming, perm, plan, run_bytes, out)
}

/// The degree order when the build's order asks for it and (for auto) the
/// graph gains from it, from one pass over the spool: degrees counted as
/// the in-memory build counts them (arcs after the self-loop policy,
/// duplicates counted, in + out for directed graphs) and, for auto, the
/// near share sampled from the same edges.
fn choose_order(
    spool: &Path,
    rank: Option<&[VertexId]>,
    naming: &Naming,
    edges: u64,
    plan: &Plan,
) -> Result<Option<Perm>> {
    let opts = plan.opts;
    let n = naming.n;
    let by_degree = match opts.order {
        OrderChoice::Auto | OrderChoice::Exactly(VertexOrder::Degree) => n > 0,
        OrderChoice::Exactly(_) => false,
    };
    if !by_degree {
        return Ok(None);
    }
    let auto = opts.order == OrderChoice::Auto;
    let drop_loops = opts.self_loops == LoopPolicy::Drop;
    let mut deg = vec![0u64; n];
    let step = (edges / 65_536).max(1);
    let (mut near, mut sampled) = (0u64, 0u64);
    let mut r = ScratchReader::open_kept(spool.to_path_buf(), 1 << 20)?;
    let mut i = 0u64;
    while let Some(a) = take_arc(&mut r, plan.weighted)? {
        let (s, d) = match rank {
            Some(t) => (t[a.u as usize], t[a.v as usize]),
            None => (a.u, a.v),
        };
        if auto && i.is_multiple_of(step) && s != d {
            near += u64::from(s.abs_diff(d) <= NEAR_IDS);
            sampled += 1;
        }
        i += 1;
        if drop_loops && s == d {
            continue;
        }
        deg[s as usize] += 1;
        if opts.directed || s != d {
            deg[d as usize] += 1;
        }
    }
    let share = if sampled == 0 {
        1.0
    } else {
        near as f64 / sampled as f64
    };
    if auto && !worth_degree_order(&deg, share) {
        return Ok(None);
    }
    let old_of_new = degree_order(&deg);
    drop(deg);
    let mut new_of_old = vec![0 as VertexId; n];
    for (new, &old) in old_of_new.iter().enumerate() {
        new_of_old[old as usize] = new as VertexId;
    }
    Ok(Some((old_of_new, new_of_old)))
}

/// The arcs of the spooled edges in final ids, cut into sorted runs of at
/// most `cap` arcs (the spool is removed once read).
fn make_runs(spool: PathBuf, map: Option<&[VertexId]>, plan: &Plan, cap: usize) -> Result<Runs> {
    let drop_loops = plan.opts.self_loops == LoopPolicy::Drop;
    let symmetric = !plan.opts.directed;
    let mut runs = Runs::new(plan.scratch.clone(), "out", plan.weighted, cap);
    let mut r = ScratchReader::open(spool, 1 << 20)?;
    while let Some(a) = take_arc(&mut r, plan.weighted)? {
        let (u, v) = match map {
            Some(t) => (t[a.u as usize], t[a.v as usize]),
            None => (a.u, a.v),
        };
        if drop_loops && u == v {
            continue;
        }
        runs.push(Arc { u, v, w: a.w })?;
        if symmetric && u != v {
            runs.push(Arc { u: v, v: u, w: a.w })?;
        }
    }
    Ok(runs)
}

/// The merge plan for `runs` runs within `run_bytes`: a quarter of the
/// buffer for read buffers (at least 64 KiB each), the rest left to the
/// runs the merge feeds.
fn merge_plan(run_bytes: u64, runs: usize, tuning: Tuning) -> MergePlan {
    let reads = (run_bytes / 4).max(1 << 16);
    let read_buf = (reads / runs.max(1) as u64).clamp(1 << 16, 8 << 20) as usize;
    let fan_in = tuning
        .fan_in
        .unwrap_or(((reads / read_buf as u64) as usize).max(2));
    MergePlan { fan_in, read_buf }
}

/// Scratch directory naming for the callers: `dir/.scratch-*` files.
pub(crate) fn remove_scratch(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(".scratch") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

#[cfg(test)]
mod tests;
