//! Community detection by label propagation, exactly as LDBC Graphalytics
//! defines CDLP (Graphalytics specification v1.0, §4.3; after Raghavan,
//! Albert & Kumara, Phys. Rev. E 76, 2007).
//!
//! **Returns** [`Output`]: `label[v]` is a *natural id* (the rank of a
//! vertex in ascending external-id order, `g.old_of_new()[v]`, or `v` when
//! the graph is not reordered), and the number of iterations run.
//!
//! **Definition.** Synchronous: `L_0(v)` = natural id of `v`; in iteration
//! `i` every vertex takes the label that occurs most often among its
//! neighbours' `L_{i-1}` labels, ties broken by the smallest label; a
//! vertex without neighbours keeps its label. Neighbours of a directed graph
//! are the in- *and* out-neighbours counted separately, so a neighbour
//! linked both ways counts twice, duplicate edges count with multiplicity
//! and a self-loop `v → v` counts `v`'s own label twice (once each way);
//! in an undirected graph every stored arc counts once, so a self-loop
//! counts once. This is what the Graphalytics reference computes on
//! graphs with such edges. The iteration count is fixed
//! ([`Config::iterations`]).
//!
//! **Method.** One parallel pass per iteration over the chunk table's
//! mini-chunks. A vertex with at most four neighbours (99.8 % of a road
//! graph's) takes the mode of four padded lanes compared all against all,
//! branch-free; any other gathers its neighbours' labels into a
//! [`Tally`]'s buffer, asking the cache for the labels of the edges just
//! ahead on graphs above 2^18 vertices (kron22 at 10 iterations 5.4–6.2 →
//! 3.9–4.0 s), then counts them in an array indexed by label
//! (graphs up to 2^20 vertices) or in an open-addressing table sized to
//! its degree (larger graphs: kron22 at 10 iterations 2.92 → 2.30 s against
//! the sort this replaced). The first iteration on a graph of simple
//! undirected lists takes the smallest neighbour label (all labels are
//! distinct then). `O(Σ d)` per iteration; deterministic. Once
//! fewer than half the labels changed in an iteration, a vertex none of
//! whose neighbours' labels changed keeps its label without a recount
//! (exact: the new label depends on the neighbours' labels alone). Kronecker
//! labels settle within four iterations: kron20 at 10 iterations 0.52–0.56
//! → 0.39–0.42 s, cnr-2000 0.11 → 0.10 s; a road graph's keep changing, so
//! it skips nothing. An iteration that changes no label is a fixed point,
//! and one that restores the labels of two iterations before starts a
//! cycle of two (common in synchronous label propagation: email-Enron
//! enters one after about 40 iterations): the run stops there and returns
//! the labels the last iteration would give.
//!
//! **Executor fit.** [`CdlpDriver`] runs CDLP on every executor: a vertex
//! program ([`Histograms`]) whose message is a label histogram (combined by
//! adding counts), one symmetric superstep per iteration, the new labels
//! and the stopping rules as vertex steps between supersteps. [`run`] is the
//! in-memory specialisation (the counting methods and skips above) and must
//! return exactly what the driver returns; the conformance harness holds
//! both to it.
//!
//! **Verification.** A CDLP result cannot be checked without the previous
//! iteration's labels, so [`verify`] recomputes: it runs the sequential
//! [`reference`] (a different method: hash counting) and compares, after
//! checking that every label is a natural id of an existing vertex.
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use plexus_graph::{Graph, VertexId};
use rayon::prelude::*;

use crate::driver::{drive, Driver};
use crate::error::{AlgoError, VerifyError};
use crate::program::{
    trace_enabled, Executor, GraphView, InEdges, StepOptions, VertexProgram, Vertices,
};
use crate::subset::VertexSubset;

/// Default number of iterations (the Graphalytics examples use 2 or 10).
pub const DEFAULT_ITERATIONS: usize = 10;

/// CDLP parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Number of synchronous iterations. Default [`DEFAULT_ITERATIONS`].
    pub iterations: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            iterations: DEFAULT_ITERATIONS,
        }
    }
}

/// CDLP result, indexed by internal id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// Community label of each vertex, a natural id.
    pub label: Vec<u32>,
    /// Iterations whose result this is (always `Config::iterations`; the
    /// passes after a fixed point or into a cycle of two are not run, their
    /// labels are known).
    pub iterations: usize,
}

/// `L_0`: the natural id of every vertex.
fn initial_labels(g: &Graph) -> Vec<u32> {
    match g.old_of_new() {
        // Read in the random order of neighbour lists: on huge pages.
        Some(p) => crate::hugepages::from_fn(p.len(), |v| p[v]),
        None => crate::hugepages::from_fn(g.num_vertices(), |v| v as u32),
    }
}

/// The neighbour lists CDLP reads for `v`: out-edges, plus in-edges when directed.
#[inline]
fn neighbour_lists(g: &Graph, v: VertexId) -> [&[VertexId]; 2] {
    if g.is_directed() {
        [g.out_neighbors(v), g.in_neighbors(v)]
    } else {
        [g.out_neighbors(v), &[]]
    }
}

/// The smallest most frequent value of a sorted slice.
fn mode_of_sorted(xs: &[u32]) -> Option<u32> {
    let mut best: Option<(usize, u32)> = None;
    let mut i = 0;
    while i < xs.len() {
        let x = xs[i];
        let mut j = i + 1;
        while j < xs.len() && xs[j] == x {
            j += 1;
        }
        // Runs come in ascending order, so `>` keeps the smallest on ties.
        let longer = match best {
            None => true,
            Some((c, _)) => j - i > c,
        };
        if longer {
            best = Some((j - i, x));
        }
        i = j;
    }
    best.map(|(_, x)| x)
}

/// Vertices with at most this many neighbours (CDLP counts, in- and out-
/// together) take [`mode_of_few`]: 99.8 % of a road graph's vertices. (A
/// second, eight-lane tier for degrees 5–8 measured no faster on
/// email-Enron, where they hold a tenth of the arcs.)
const FEW: usize = 4;

/// The padding of [`mode_of_few`]'s unused lanes: distinct values above
/// every label (labels are natural ids, below the vertex count, which
/// [`Tally`] checks is at most `u32::MAX - FEW`), so a pad equals no
/// label and no other pad, and loses every tie to a label.
const PADS: [u32; FEW] = [u32::MAX, u32::MAX - 1, u32::MAX - 2, u32::MAX - 3];

/// The smallest most frequent label of `xs`: labels in some lanes, the
/// rest as in [`PADS`]. Branch-free (a lane's count is the number of
/// lanes equal to it, compared all against all, which vectorises; then
/// the largest `(count, !label)`), so a road graph's random mix of
/// degrees 1–4 costs no mispredicted branch where a per-degree match or a
/// table lookup did: USA-road-FLA at 10 iterations 192 → 168 ms,
/// email-Enron 18.4 → 14.5 ms (medians of alternated runs).
#[inline]
fn mode_of_few(xs: &[u32; FEW]) -> u32 {
    let mut counts = [0u32; FEW];
    for &y in xs {
        for (c, &x) in counts.iter_mut().zip(xs) {
            *c += u32::from(x == y);
        }
    }
    let mut best = 0u64;
    for (&c, &x) in counts.iter().zip(xs) {
        best = best.max((u64::from(c) << 32) | u64::from(!x));
    }
    !(best as u32)
}

/// Graphs with at most this many vertices count labels in a per-thread
/// array indexed by label (8 bytes per vertex: up to 8 MiB); larger ones
/// count in a small hash table per vertex. Measured at 2 threads, 10
/// iterations: the array takes cnr-2000 (325 k vertices) from 173 to
/// 114 ms against sorting each vertex's labels, but on kron22 (2.4 M
/// vertices, 9.6 MiB per thread) it took 4.7 s against sorting's 3.2 s.
const COUNT_ARRAY_MAX_N: usize = 1 << 20;

/// How a [`Tally`] counts one vertex's gathered labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counting {
    /// In an array indexed by label ([`mode_by_counting`]).
    Array,
    /// In an open-addressing table sized to the vertex's degree
    /// ([`mode_by_hashing`]).
    Hash,
}

impl Counting {
    /// The method for a graph of `n` vertices.
    fn for_vertices(n: usize) -> Self {
        if n <= COUNT_ARRAY_MAX_N {
            Counting::Array
        } else {
            Counting::Hash
        }
    }
}

/// Per-worker scratch that computes CDLP's next label of one vertex: the
/// smallest most frequent of its neighbours' labels. Every executor of
/// CDLP (this module's [`run`], the job manager's CDLP group) uses it, so
/// they agree bit for bit. Holds 8 bytes per vertex of the graph when the
/// graph has at most 2^20 vertices (two counts per label), otherwise a table
/// of at most 16 bytes per neighbour of the largest vertex seen.
pub struct Tally {
    counting: Counting,
    /// The labels gathered for the current vertex.
    buf: Vec<u32>,
    /// `Array`: two counts per label ([`mode_by_counting`]), all zero
    /// between vertices.
    counts: Vec<u32>,
    /// `Hash`: `(label, count)` slots, all [`EMPTY`] between vertices.
    table: Vec<(u32, u32)>,
    /// Whether every label is below [`PADS`] (at most `u32::MAX - FEW`
    /// vertices), so that [`mode_of_few`] applies.
    pads_fit: bool,
    /// Whether [`Tally::next_label`] asks for labels ahead: when they
    /// outgrow the L2 cache ([`PREFETCH_ABOVE_N`]).
    prefetch: bool,
}

/// An unused slot of a [`Tally`]'s table (labels are natural ids, below
/// the number of vertices, so never `u32::MAX`).
const EMPTY: u32 = u32::MAX;

impl Tally {
    fn with(n: usize, counting: Counting) -> Self {
        Tally {
            counting,
            buf: Vec::new(),
            counts: if counting == Counting::Array {
                vec![0; 2 * n]
            } else {
                Vec::new()
            },
            table: Vec::new(),
            pads_fit: n <= u32::MAX as usize - FEW,
            prefetch: n > PREFETCH_ABOVE_N,
        }
    }

    /// Bytes this scratch holds now.
    pub fn bytes(&self) -> usize {
        4 * (self.buf.capacity() + self.counts.capacity()) + 8 * self.table.capacity()
    }

    /// The label `v` takes next: the smallest most frequent of `labels[u]`
    /// over the neighbours `u` CDLP reads (out-, then in- when directed),
    /// or its own `labels[v]` when it has none.
    #[inline]
    pub fn next_label(&mut self, g: &Graph, v: VertexId, labels: &[u32]) -> u32 {
        let [a, b] = neighbour_lists(g, v);
        let own = labels[v as usize];
        let degree = a.len() + b.len();
        if degree == 0 {
            return own;
        }
        if degree <= FEW && self.pads_fit {
            let mut xs = PADS;
            if b.is_empty() {
                // Every lane reads a list entry (the last one past the
                // list's end) and keeps its pad past the end: selects, no
                // loop whose exit a random degree mispredicts.
                let last = a.len() - 1;
                for (j, x) in xs.iter_mut().enumerate() {
                    let label = labels[a[j.min(last)] as usize];
                    *x = std::hint::select_unpredictable(j <= last, label, *x);
                }
            } else {
                for (x, &u) in xs.iter_mut().zip(a.iter().chain(b)) {
                    *x = labels[u as usize];
                }
            }
            return mode_of_few(&xs);
        }
        if self.prefetch {
            prefetch_labels_ahead(g, v, labels);
        }
        self.buf.clear();
        self.buf
            .extend(a.iter().chain(b).map(|&u| labels[u as usize]));
        let mode = match self.counting {
            Counting::Array => mode_by_counting(&self.buf, &mut self.counts),
            // Labels gathered in ascending order (the first
            // iteration's natural ids along a sorted list) need
            // no table; the check stops at the first descent.
            Counting::Hash if self.buf.is_sorted() => mode_of_sorted(&self.buf),
            Counting::Hash => mode_by_hashing(&self.buf, &mut self.table),
        };
        mode.unwrap_or(own)
    }
}

/// Graphs with more vertices than this (labels above 1 MiB) prefetch
/// labels at vertices with more than [`FEW`] neighbours. Measured at 10
/// iterations, 2 threads: kron22 5.4–6.2 → 4.3–4.8 s; on email-Enron
/// (147 KiB of labels) it cost 15.5 → 17.5 ms; at the short lists of a
/// road graph too it cost what it saved (174 against 179 ms).
const PREFETCH_ABOVE_N: usize = 1 << 18;

/// How many out-edges ahead of the current vertex's [`Tally::next_label`]
/// asks the cache for the labels it will read.
const LABELS_AHEAD: usize = 32;

/// Asks the cache for the labels of the out-edges [`LABELS_AHEAD`]
/// positions past `v`'s out-list, as many as `v` has: called for each wide
/// vertex in turn, that covers the edges after them, a few vertices early.
#[inline(always)]
fn prefetch_labels_ahead(g: &Graph, v: VertexId, labels: &[u32]) {
    let out = g.out();
    let targets = out.neighbor_array();
    for i in out.range(v) {
        if let Some(&u) = targets.get(i + LABELS_AHEAD) {
            crate::prefetch::prefetch(labels, u as usize);
        }
    }
}

/// The most a [`Tally`] holds on `g`: two counts per vertex when counting in
/// an array, otherwise a table of up to four 8-byte slots per neighbour of
/// the vertex with the most neighbours, plus that vertex's gathered labels.
pub fn tally_bytes(g: &Graph) -> u64 {
    let n = g.num_vertices();
    if Counting::for_vertices(n) == Counting::Array {
        8 * n as u64
    } else {
        let most = (0..n as VertexId)
            .map(|v| neighbour_lists(g, v).iter().map(|l| l.len()).sum::<usize>())
            .max()
            .unwrap_or(0) as u64;
        36 * most
    }
}

/// A stock of [`Tally`] scratch shared by the workers of whatever pool
/// runs a pass: a worker borrows one for a chunk of vertices and returns
/// it, so there are never more than the workers running at once, however
/// the pool is sized or resized. The lock is held only to take or return.
pub struct Tallies {
    n: usize,
    counting: Counting,
    free: std::sync::Mutex<Vec<Tally>>,
}

impl Tallies {
    /// A stock for a graph of `n` vertices (empty until first borrowed).
    pub fn new(n: usize) -> Self {
        Self::counting(n, Counting::for_vertices(n))
    }

    /// A stock whose scratch counts by `counting`.
    fn counting(n: usize, counting: Counting) -> Self {
        Tallies {
            n,
            counting,
            free: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` with a scratch no other worker holds meanwhile.
    pub fn lend<R>(&self, f: impl FnOnce(&mut Tally) -> R) -> R {
        let taken = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut tally = taken.unwrap_or_else(|| Tally::with(self.n, self.counting));
        let r = f(&mut tally);
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(tally);
        r
    }

    /// Bytes the scratch not lent out holds now.
    pub fn bytes(&self) -> usize {
        self.free
            .lock()
            .map_or(0, |f| f.iter().map(Tally::bytes).sum())
    }
}

/// The smallest most frequent label of `labels`, counted in `counts` (all
/// zero on entry and on return; two counters per label, `2l` and
/// `2l + 1`, so at least twice the largest label plus two). Two
/// branch-free passes: the first counts labels at even positions in the
/// first counter and at odd ones in the second, so that a run of equal
/// labels (common at a hub once its neighbourhood agrees) alternates
/// between two store-to-load chains instead of queueing on one; the
/// second takes the largest `(count, !label)` and clears both counters of
/// each label after reading them (a label's first occurrence sees its
/// full count, later ones see zero).
fn mode_by_counting(labels: &[u32], counts: &mut [u32]) -> Option<u32> {
    if labels.is_empty() {
        return None;
    }
    let mut pairs = labels.chunks_exact(2);
    for pair in &mut pairs {
        counts[2 * pair[0] as usize] += 1;
        counts[2 * pair[1] as usize + 1] += 1;
    }
    if let [l] = pairs.remainder() {
        counts[2 * *l as usize] += 1;
    }
    let mut best = 0u64;
    for &l in labels {
        let at = 2 * l as usize;
        let c = counts[at] + counts[at + 1];
        best = best.max((u64::from(c) << 32) | u64::from(!l));
        counts[at] = 0;
        counts[at + 1] = 0;
    }
    Some(!(best as u32))
}

/// The smallest most frequent label of `labels`, counted in an
/// open-addressing table of at least twice as many slots as labels
/// (linear probing, multiplicative hash; `table` is all [`EMPTY`] with
/// zero counts on entry and on return, and grows as needed). `O(d)` per
/// vertex in a table that stays in L1 or L2, where a sort costs
/// `O(d log d)`. The count loop's one branch (hit or empty slot) is
/// nearly always taken, since an empty slot's count is zero and both
/// cases store `(label, count + 1)`; the largest count is a running max,
/// and one sequential pass over the slots then takes the smallest label
/// with that count and clears them.
fn mode_by_hashing(labels: &[u32], table: &mut Vec<(u32, u32)>) -> Option<u32> {
    if labels.is_empty() {
        return None;
    }
    let bits = (2 * labels.len())
        .next_power_of_two()
        .max(16)
        .trailing_zeros();
    let size = 1usize << bits;
    if table.len() < size {
        table.resize(size, (EMPTY, 0));
    }
    let slots = &mut table[..size];
    let mask = size - 1;
    let mut top = 0u32;
    for &l in labels {
        let mut i = (l.wrapping_mul(0x9E37_79B9) >> (32 - bits)) as usize;
        loop {
            let (key, count) = slots[i];
            if key == l || key == EMPTY {
                slots[i] = (l, count + 1);
                top = top.max(count + 1);
                break;
            }
            i = (i + 1) & mask;
        }
    }
    // A select, not a branch: which slots hold the top count is random.
    let mut best = u32::MAX;
    for slot in slots.iter_mut() {
        let candidate = [u32::MAX, slot.0][usize::from(slot.1 == top)];
        best = best.min(candidate);
        *slot = (EMPTY, 0);
    }
    Some(best)
}

/// Vertices whose neighbours kept their labels are skipped once fewer than
/// `CHECK_BELOW_NUM / CHECK_BELOW_DEN` of all labels changed in the last
/// iteration.
const CHECK_BELOW_NUM: usize = 1;
/// See [`CHECK_BELOW_NUM`].
const CHECK_BELOW_DEN: usize = 2;

/// Whether, after an iteration in which `moved` of `n` labels changed,
/// the next one skips settled vertices ([`settled`]): once fewer than
/// half changed. Public so that other executors of CDLP (the job
/// manager's group) skip exactly when the engine does.
pub fn skips_settled(moved: usize, n: usize) -> bool {
    moved * CHECK_BELOW_DEN < n * CHECK_BELOW_NUM
}

/// Whether none of the neighbours CDLP reads for `v` (out-, and in- when
/// directed) has `changed[u] != 0`: then `v`'s next label is its current
/// one, since a vertex's new label depends on its neighbours' labels alone.
#[inline]
pub fn settled(g: &Graph, v: VertexId, changed: &[u8]) -> bool {
    !neighbour_lists(g, v)
        .iter()
        .any(|list| list.iter().any(|&u| changed[u as usize] != 0))
}
/// Which labels changed is recorded while fewer than
/// `TRACK_BELOW_NUM / TRACK_BELOW_DEN` of them changed in the last
/// iteration (and in the first).
const TRACK_BELOW_NUM: usize = 9;
/// See [`TRACK_BELOW_NUM`].
const TRACK_BELOW_DEN: usize = 10;

/// Runs CDLP in parallel on the current rayon pool.
pub fn run(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    run_with(g, cfg, None)
}

/// [`run`] with every worker counting by `counting` (tests force each
/// method on small graphs), or by the graph's size when `None`.
fn run_with(g: &Graph, cfg: &Config, counting: Option<Counting>) -> Result<Output, AlgoError> {
    let n = g.num_vertices();
    let mut label = initial_labels(g);
    let mut next = crate::hugepages::filled(n, 0u32);
    // Counting scratch, lent to the workers per mini-chunk and kept
    // across iterations.
    let tallies = Tallies::counting(n, counting.unwrap_or(Counting::for_vertices(n)));
    // `changed[u]`: whether u's label changed in the last iteration. A
    // vertex none of whose neighbours changed gets the label it got last
    // time, which is its current one, so once few labels change only the
    // others are recomputed (exact: a vertex's new label depends on its
    // neighbours' labels alone). The flags are only kept (`track`) while
    // the share that changes is below TRACK_BELOW; on a road graph nearly
    // every label changes every iteration and neither flags nor test pay.
    let mut changed = crate::hugepages::filled(n, 0u8);
    let mut changed_next = crate::hugepages::filled(n, 0u8);
    let (mut track, mut check) = (true, false);
    // In the first iteration every label is a distinct natural id, so on a
    // graph whose neighbour lists hold no vertex twice (undirected, no
    // duplicate arcs; a self-loop counts once) every label occurs once and
    // the smallest most frequent is the smallest: no counting (email-Enron,
    // 10 iterations: 13.8 → 12.8 ms).
    let first_is_min = cfg.iterations > 0 && !g.is_directed() && g.out_lists_strictly_increasing();
    for iteration in 0..cfg.iterations {
        let started = trace_enabled().then(std::time::Instant::now);
        let prev = &label;
        let was = &changed;
        // `moved`: labels that differ from the last iteration's; `back`:
        // from the labels two iterations ago, which `next` still holds
        // (from the second iteration on) until each slot is overwritten.
        let (moved, back) = next
            .par_chunks_mut(crate::edge_map::MINI_CHUNK)
            .zip(changed_next.par_chunks_mut(crate::edge_map::MINI_CHUNK))
            .enumerate()
            .with_max_len(crate::edge_map::STEAL_GRAIN / crate::edge_map::MINI_CHUNK)
            .map(|(c, (slots, flags))| {
                let lo = c * crate::edge_map::MINI_CHUNK;
                tallies.lend(|tally| {
                    let (mut moved, mut back) = (0usize, 0usize);
                    for (i, slot) in slots.iter_mut().enumerate() {
                        let v = (lo + i) as VertexId;
                        let own = prev[v as usize];
                        let two_ago = *slot;
                        if check && settled(g, v, was) {
                            *slot = own;
                            back += usize::from(own != two_ago);
                            if track {
                                flags[i] = 0;
                            }
                            continue;
                        }
                        let new = if first_is_min && iteration == 0 {
                            let labels = g.out_neighbors(v).iter().map(|&u| prev[u as usize]);
                            labels.min().unwrap_or(own)
                        } else {
                            tally.next_label(g, v, prev)
                        };
                        *slot = new;
                        moved += usize::from(new != own);
                        back += usize::from(new != two_ago);
                        if track {
                            flags[i] = u8::from(new != own);
                        }
                    }
                    (moved, back)
                })
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        std::mem::swap(&mut label, &mut next);
        std::mem::swap(&mut changed, &mut changed_next);
        // The flags just written are valid for the next iteration's test.
        check = track && skips_settled(moved, n);
        track = moved * TRACK_BELOW_DEN < n * TRACK_BELOW_NUM;
        if let Some(t) = started {
            eprintln!(
                "plexus-trace cdlp iteration {} changed {moved} {:.3} ms",
                iteration + 1,
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        if moved == 0 {
            // A fixed point: every later iteration gives these labels again.
            break;
        }
        if iteration > 0 && back == 0 {
            // The labels equal those of two iterations ago: from here they
            // alternate between `label` and `next`, so the last iteration's
            // are known (synchronous label propagation often ends in such
            // a cycle of two).
            if !(cfg.iterations - iteration - 1).is_multiple_of(2) {
                std::mem::swap(&mut label, &mut next);
            }
            break;
        }
    }
    Ok(Output {
        label,
        iterations: cfg.iterations,
    })
}

/// Plain sequential CDLP counting labels in a hash map per vertex.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    let mut label = initial_labels(g);
    let mut two_ago: Option<Vec<u32>> = None;
    for iteration in 0..cfg.iterations {
        let next = reference_step(g, &label);
        if next == label {
            // A fixed point: every later iteration gives these labels again.
            break;
        }
        if two_ago.as_ref() == Some(&next) {
            // A cycle of two: the labels alternate from here.
            if (cfg.iterations - iteration - 1).is_multiple_of(2) {
                label = next;
            }
            break;
        }
        two_ago = Some(std::mem::replace(&mut label, next));
    }
    Ok(Output {
        label,
        iterations: cfg.iterations,
    })
}

/// One synchronous iteration of [`reference`]: each vertex's smallest most
/// frequent neighbour label, its own when it has no neighbours.
fn reference_step(g: &Graph, label: &[u32]) -> Vec<u32> {
    let mut next = label.to_vec();
    for v in 0..g.num_vertices() as VertexId {
        let mut counts = std::collections::HashMap::<u32, usize>::new();
        for list in neighbour_lists(g, v) {
            for &u in list {
                *counts.entry(label[u as usize]).or_default() += 1;
            }
        }
        if let Some(top) = counts.values().max().copied() {
            next[v as usize] = counts
                .iter()
                .filter(|&(_, &c)| c == top)
                .map(|(&l, _)| l)
                .min()
                .unwrap_or(label[v as usize]);
        }
    }
    next
}

/// Checks that every label is the natural id of an existing vertex and that
/// the result equals a sequential recomputation ([`reference`]); names the
/// first vertex that differs.
pub fn verify(g: &Graph, cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    let n = g.num_vertices();
    if out.label.len() != n {
        return Err(VerifyError::new(format!(
            "{} labels for {n} vertices",
            out.label.len()
        )));
    }
    if let Some(v) = out.label.iter().position(|&l| l as usize >= n) {
        return Err(VerifyError::new(format!(
            "vertex {v} has label {}, which is not the natural id of a vertex",
            out.label[v]
        )));
    }
    if out.iterations != cfg.iterations {
        return Err(VerifyError::new(format!(
            "ran {} iterations instead of {}",
            out.iterations, cfg.iterations
        )));
    }
    let want = reference(g, cfg).map_err(|e| VerifyError::new(e.to_string()))?;
    if let Some(v) = (0..n).find(|&v| want.label[v] != out.label[v]) {
        return Err(VerifyError::new(format!(
            "vertex {v} has label {} but recomputation gives {}",
            out.label[v], want.label[v]
        )));
    }
    Ok(())
}

/// A label histogram: `(label, count)` pairs sorted by label, each label
/// once, every count at least 1. The message of [`Histograms`].
pub type Histogram = Vec<(u32, u32)>;

/// `a` and `b` merged: the counts of a label in both are added. Associative
/// and commutative (a multiset union), so messages may be combined in any
/// grouping and order.
fn merge(a: Histogram, b: Histogram) -> Histogram {
    if a.is_empty() {
        return b;
    }
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        match x.0.cmp(&y.0) {
            std::cmp::Ordering::Less => {
                out.push(x);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(y);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((x.0, x.1 + y.1));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// The smallest most frequent label of a histogram, `None` when it is empty.
fn mode_of_histogram(h: &[(u32, u32)]) -> Option<u32> {
    // Labels ascend, so a strictly larger count is needed to replace.
    h.iter()
        .fold(None, |best: Option<(u32, u32)>, &(l, c)| match best {
            Some((_, top)) if top >= c => best,
            _ => Some((l, c)),
        })
        .map(|(l, _)| l)
}

/// The vertex program of [`CdlpDriver`]: one superstep gathers, for every
/// vertex, the histogram of its neighbours' labels of the previous
/// iteration (in-edges, plus out-edges on a directed graph through a
/// symmetric step, so each stored arc counts once per direction it is
/// read in, exactly as `neighbour_lists`).
///
/// Invariants: signals read only `label` (the previous iteration's
/// labels, not written during a superstep); slots only add to their
/// vertex's `inbox`, so the order and grouping of messages changes
/// nothing (laws 3 and 4); the driver's vertex step after the superstep
/// turns each inbox into the new label in `next` and empties it. Slots
/// never activate (the driver's frontier is every vertex).
#[derive(Debug)]
pub struct Histograms {
    /// `L_{i-1}`: read by signals.
    label: Vec<AtomicU32>,
    /// `L_i`, written by the vertex step after the superstep.
    next: Vec<AtomicU32>,
    /// `L_{i-2}`, for the cycle-of-two test.
    two_ago: Vec<AtomicU32>,
    /// The histogram gathered for each vertex in the current superstep.
    inbox: Vec<Mutex<Histogram>>,
}

impl Histograms {
    #[inline]
    fn label(&self, v: VertexId) -> u32 {
        self.label[v as usize].load(Ordering::Relaxed)
    }

    /// Adds `h` to `v`'s inbox.
    fn receive(&self, v: VertexId, h: Histogram) {
        let mut inbox = self.inbox[v as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *inbox = merge(std::mem::take(&mut *inbox), h);
    }
}

impl VertexProgram for Histograms {
    /// The counts of the labels seen over some of a vertex's edges.
    type Msg = Histogram;

    fn combine(&self, a: Histogram, b: Histogram) -> Histogram {
        merge(a, b)
    }

    fn sparse_signal(&self, src: VertexId) -> Option<Histogram> {
        Some(vec![(self.label(src), 1)])
    }

    fn sparse_slot(&self, dst: VertexId, msg: Histogram) -> bool {
        self.receive(dst, msg);
        false
    }

    fn dense_signal(&self, _v: VertexId, edges: InEdges<'_>) -> Option<Histogram> {
        let mut labels: Vec<u32> = edges.active().map(|(u, _)| self.label(u)).collect();
        if labels.is_empty() {
            return None;
        }
        labels.sort_unstable();
        let mut h: Histogram = Vec::new();
        for l in labels {
            match h.last_mut() {
                Some(last) if last.0 == l => last.1 += 1,
                _ => h.push((l, 1)),
            }
        }
        Some(h)
    }

    fn dense_slot(&self, v: VertexId, msg: Histogram) -> bool {
        self.receive(v, msg);
        false
    }
}

/// CDLP as a step machine that any executor runs: one symmetric superstep
/// per iteration over every vertex ([`Histograms`]), then a vertex step
/// that takes each vertex's smallest most frequent label (its own when it
/// has no neighbours) into a separate array (synchronous), and the same
/// stopping rules as [`run`] and [`reference`]: an iteration that changes
/// no label is a fixed point; one whose labels equal those of two
/// iterations before starts a cycle of two, and the labels the last
/// iteration would give are taken by parity. The labels and iteration
/// count equal [`run`]'s exactly on every executor (integer counts). It
/// recounts every vertex each iteration: [`run`]'s skipping of settled
/// neighbourhoods, its first-iteration minimum and its counting methods are
/// in-memory speed-ups that give the same labels.
#[derive(Debug)]
pub struct CdlpDriver {
    p: Histograms,
    iterations: usize,
    /// Iterations whose labels have been taken.
    done: usize,
    /// A superstep ran whose histograms are not yet taken.
    pending: bool,
    /// A fixed point or a cycle of two was found: `label` is final.
    stopped: bool,
}

impl CdlpDriver {
    /// CDLP with `cfg` over a graph seen through `view` (whose natural
    /// ids are the initial labels and the order ties are broken in).
    pub fn new(view: &dyn GraphView, cfg: &Config) -> Result<Self, AlgoError> {
        let n = view.num_vertices();
        let initial: Vec<u32> = (0..n as VertexId).map(|v| view.natural_id(v)).collect();
        let cells = |x: u32| (0..n).map(|_| AtomicU32::new(x)).collect::<Vec<_>>();
        Ok(CdlpDriver {
            p: Histograms {
                label: initial.into_iter().map(AtomicU32::new).collect(),
                next: cells(0),
                two_ago: cells(0),
                inbox: (0..n).map(|_| Mutex::new(Vec::new())).collect(),
            },
            iterations: cfg.iterations,
            done: 0,
            pending: false,
            stopped: n == 0,
        })
    }

    /// Takes the histograms of the superstep just run: the new labels,
    /// then the stopping rules (as [`reference`]), then the rotation
    /// `two_ago ← label ← next`.
    fn take_step<V: Vertices>(&mut self, ops: &V) {
        let p = &self.p;
        let all = VertexSubset::all(p.label.len());
        let moved = ops
            .process_vertices(&all, |v| {
                let h = std::mem::take(
                    &mut *p.inbox[v as usize]
                        .lock()
                        .unwrap_or_else(|e| e.into_inner()),
                );
                let own = p.label(v);
                let new = mode_of_histogram(&h).unwrap_or(own);
                p.next[v as usize].store(new, Ordering::Relaxed);
                new != own
            })
            .len();
        let iteration = self.done;
        self.done += 1;
        self.pending = false;
        if moved == 0 {
            // A fixed point: every later iteration gives these labels again.
            self.stopped = true;
            return;
        }
        if iteration > 0 {
            let back = ops
                .process_vertices(&all, |v| {
                    p.next[v as usize].load(Ordering::Relaxed)
                        != p.two_ago[v as usize].load(Ordering::Relaxed)
                })
                .len();
            if back == 0 {
                // A cycle of two: the labels alternate from here.
                if (self.iterations - iteration - 1).is_multiple_of(2) {
                    std::mem::swap(&mut self.p.label, &mut self.p.next);
                }
                self.stopped = true;
                return;
            }
        }
        std::mem::swap(&mut self.p.two_ago, &mut self.p.label);
        std::mem::swap(&mut self.p.label, &mut self.p.next);
    }
}

impl Driver for CdlpDriver {
    type Program = Histograms;
    type Output = Output;

    fn program(&self) -> &Histograms {
        &self.p
    }

    fn options(&self) -> StepOptions {
        // In- and out-neighbours on directed graphs; undirected graphs
        // store both directions already, and the executor ignores it.
        StepOptions {
            symmetric: true,
            ..StepOptions::default()
        }
    }

    fn next_frontier<V: Vertices>(&mut self, ops: &V) -> Option<VertexSubset> {
        if self.pending {
            self.take_step(ops);
        }
        if self.stopped || self.done >= self.iterations {
            return None;
        }
        self.pending = true;
        Some(VertexSubset::all(self.p.label.len()))
    }

    fn activated<V: Vertices>(&mut self, _ops: &V, _next: VertexSubset) {}

    fn finish<V: Vertices>(self, _ops: &V) -> Output {
        Output {
            label: self
                .p
                .label
                .into_iter()
                .map(AtomicU32::into_inner)
                .collect(),
            iterations: self.iterations,
        }
    }

    fn state_bytes(&self) -> u64 {
        // Three label arrays and an (empty between supersteps) inbox each.
        let cell = 12 + std::mem::size_of::<Mutex<Histogram>>() as u64;
        cell * self.p.label.len() as u64
    }
}

/// CDLP on any executor through [`CdlpDriver`].
pub fn run_on<E: Executor>(exec: &E, cfg: &Config) -> Result<Output, AlgoError> {
    drive(exec, CdlpDriver::new(exec.view(), cfg)?)
}

/// The conformance check of [`CdlpDriver`] on `exec` (see
/// [`crate::conformance`]): an iteration count chosen by `seed` (0–12, or
/// 30–33 so that fixed points and cycles of two end runs early); the
/// labels and iteration count equal [`run`]'s exactly and pass [`verify`].
pub fn check_on<E: Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    let iterations = if seed & 0x100 == 0 {
        (seed % 13) as usize
    } else {
        30 + (seed % 4) as usize
    };
    let cfg = Config { iterations };
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    crate::conformance::same("label", &got.label, &fast.label)?;
    crate::conformance::same("iterations", &got.iterations, &fast.iterations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::testgraphs::{graphs, THREADS};
    use crate::with_threads;
    use plexus_graph::{BuildOptions, VertexOrder};
    use proptest::prelude::*;

    use crate::algo::testgraphs::GRAPHALYTICS_EXAMPLE_DIRECTED as EXAMPLE_DIRECTED;

    #[test]
    fn graphalytics_example_directed_matches_the_published_output() {
        let pairs: Vec<(u32, u32)> = EXAMPLE_DIRECTED
            .iter()
            .map(|&(u, v)| (u - 1, v - 1))
            .collect();
        let g = Graph::from_edges(10, &pairs, &BuildOptions::directed()).unwrap();
        let cfg = Config { iterations: 2 };
        let out = run(&g, &cfg).unwrap();
        // Published labels (external ids 1..=10), shifted to natural ids.
        let want: Vec<u32> = [1, 2, 3, 4, 1, 1, 2, 3, 2, 1]
            .iter()
            .map(|l| l - 1)
            .collect();
        assert_eq!(out.label, want);
        verify(&g, &cfg, &out).unwrap();
    }

    #[test]
    fn a_fixed_point_ends_the_run_with_the_labels_of_every_later_count() {
        // Two 4-cliques: after two iterations every vertex holds its
        // clique's smallest id, and nothing changes any more. A billion
        // iterations (hours if run) return at once, equal to 50.
        let pairs: Vec<(u32, u32)> = (0..8u32)
            .flat_map(|u| {
                (0..8)
                    .filter(move |&v| v != u && v / 4 == u / 4)
                    .map(move |v| (u, v))
            })
            .collect();
        let g = Graph::from_edges(8, &pairs, &BuildOptions::undirected()).unwrap();
        let fifty = run(&g, &Config { iterations: 50 }).unwrap();
        assert_eq!(fifty.label, vec![0, 0, 0, 0, 4, 4, 4, 4]);
        let cfg = Config {
            iterations: 1_000_000_000,
        };
        let out = run(&g, &cfg).unwrap();
        assert_eq!(
            (out.label.as_slice(), out.iterations),
            (&fifty.label[..], cfg.iterations)
        );
        assert_eq!(reference(&g, &cfg).unwrap(), out);
        verify(&g, &cfg, &out).unwrap();
    }

    #[test]
    fn skipping_settled_neighbourhoods_changes_no_label() {
        // Kronecker and R-MAT labels settle within a few iterations (few
        // change, so the later ones skip most vertices); a grid's keep
        // moving. Each equals the sequential reference at every count.
        for kind in [
            plexus_graph::generate::Generator::Kron,
            plexus_graph::generate::Generator::Rmat,
            plexus_graph::generate::Generator::Grid2d {
                width: 40,
                height: 30,
            },
        ] {
            let g = plexus_graph::generate::generate(
                kind,
                &plexus_graph::generate::GenOptions {
                    scale: 11,
                    edge_factor: 8,
                    seed: 7,
                    ..Default::default()
                },
            )
            .unwrap();
            for iterations in [1, 4, 12] {
                let cfg = Config { iterations };
                let want = reference(&g, &cfg).unwrap();
                for t in THREADS {
                    for counting in [None, Some(Counting::Hash)] {
                        let got = with_threads(t, || run_with(&g, &cfg, counting))
                            .unwrap()
                            .unwrap();
                        assert_eq!(
                            got, want,
                            "{kind:?}, {iterations} iterations, {t} threads, {counting:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn labels_are_natural_ids_on_a_reordered_graph() {
        let pairs: Vec<(u32, u32)> = EXAMPLE_DIRECTED
            .iter()
            .map(|&(u, v)| (u - 1, v - 1))
            .collect();
        let plain = Graph::from_edges(10, &pairs, &BuildOptions::directed()).unwrap();
        let opts = BuildOptions {
            order: VertexOrder::Degree.into(),
            ..BuildOptions::directed()
        };
        let g = Graph::from_edges(10, &pairs, &opts).unwrap();
        let perm = g.old_of_new().expect("reordered").to_vec();
        let cfg = Config { iterations: 2 };
        let a = run(&plain, &cfg).unwrap();
        let b = run(&g, &cfg).unwrap();
        for (new, &old) in perm.iter().enumerate() {
            assert_eq!(b.label[new], a.label[old as usize]);
        }
    }

    #[test]
    fn self_loops_count_twice_when_directed_and_once_when_undirected() {
        // Vertex 1 sees {0} plus itself twice (directed) or once (undirected).
        let e = [(0, 1), (1, 1)];
        let d = Graph::from_edges(2, &e, &BuildOptions::directed()).unwrap();
        let u = Graph::from_edges(2, &e, &BuildOptions::undirected()).unwrap();
        let cfg = Config { iterations: 1 };
        assert_eq!(run(&d, &cfg).unwrap().label, vec![1, 1]);
        assert_eq!(run(&u, &cfg).unwrap().label, vec![1, 0]);
    }

    #[test]
    fn verifier_rejects_corrupted_outputs() {
        let g =
            Graph::from_edges(4, &[(0, 1), (1, 2), (3, 3)], &BuildOptions::undirected()).unwrap();
        let cfg = Config::default();
        let good = run(&g, &cfg).unwrap();
        verify(&g, &cfg, &good).unwrap();
        let mut bad = good.clone();
        bad.label[2] = 3;
        assert!(verify(&g, &cfg, &bad).unwrap_err().0.contains("vertex 2"));
        let mut bad = good.clone();
        bad.label[0] = 17;
        assert!(verify(&g, &cfg, &bad).unwrap_err().0.contains("natural id"));
        let mut bad = good;
        bad.iterations = 3;
        assert!(verify(&g, &cfg, &bad).is_err());
    }

    #[test]
    fn the_few_label_mode_is_the_mode_of_the_sorted_labels() {
        // Every sequence of 1..=FEW labels over an alphabet of FEW + 1,
        // with the rest of the lanes padded.
        let alphabet = FEW as u32 + 1;
        for len in 1..=FEW {
            for code in 0..alphabet.pow(len as u32) {
                let mut xs = PADS;
                let mut c = code;
                for x in &mut xs[..len] {
                    *x = c % alphabet;
                    c /= alphabet;
                }
                let mut sorted = xs[..len].to_vec();
                sorted.sort_unstable();
                assert_eq!(Some(mode_of_few(&xs)), mode_of_sorted(&sorted), "{xs:?}");
            }
        }
        // Labels near the top of the range still beat the pads.
        let mut xs = PADS;
        xs[0] = u32::MAX - FEW as u32;
        assert_eq!(mode_of_few(&xs), u32::MAX - FEW as u32);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn every_path_of_a_tally_gives_the_reference_labels(spec in graphs(), steps in 1usize..4) {
            // Tables for every degree, and prefetch on, which small
            // graphs do not choose by themselves.
            let g = spec.build();
            let n = g.num_vertices();
            let mut labels = initial_labels(&g);
            for _ in 0..steps {
                let want = reference_step(&g, &labels);
                for counting in [Counting::Array, Counting::Hash] {
                    for (pads_fit, prefetch) in [(true, true), (false, true), (false, false)] {
                        let mut tally = Tally::with(n, counting);
                        tally.pads_fit = pads_fit;
                        tally.prefetch = prefetch;
                        let got: Vec<u32> = (0..n as VertexId)
                            .map(|v| tally.next_label(&g, v, &labels))
                            .collect();
                        prop_assert_eq!(&got, &want);
                    }
                }
                labels = want;
            }
        }
    }

    #[test]
    fn counting_and_hashing_give_the_smallest_most_frequent_label_and_clear_their_scratch() {
        let mut counts = vec![0u32; 16];
        let mut table = Vec::new();
        let many: Vec<u32> = (0..300).map(|i| (i * 7919) % 8).collect();
        for labels in [
            &[3u32, 1, 3, 1][..],
            &[5, 5, 2, 7, 2, 7, 7],
            &[4],
            &[6, 0, 6, 0, 0, 6],
            &[],
            &many,
        ] {
            let mut sorted = labels.to_vec();
            sorted.sort_unstable();
            assert_eq!(
                mode_by_counting(labels, &mut counts),
                mode_of_sorted(&sorted),
                "{labels:?}"
            );
            assert!(counts.iter().all(|&c| c == 0));
            assert_eq!(
                mode_by_hashing(labels, &mut table),
                mode_of_sorted(&sorted),
                "{labels:?}"
            );
            assert!(table.iter().all(|&slot| slot == (EMPTY, 0)));
        }
        // Labels far apart, so that slots collide and probe, and one
        // vertex with a single most frequent label among many.
        let mut wide: Vec<u32> = (0..5000u64)
            .map(|i| (i * 2_654_435_761 % 1_000_003) as u32)
            .collect();
        wide.extend([17, 17, 17]);
        let mut sorted = wide.clone();
        sorted.sort_unstable();
        assert_eq!(mode_by_hashing(&wide, &mut table), mode_of_sorted(&sorted));
        assert_eq!(mode_by_hashing(&wide, &mut table), Some(17));
        assert!(table.iter().all(|&slot| slot == (EMPTY, 0)));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn run_matches_reference_and_passes_verify(spec in graphs(), iterations in 0usize..6) {
            let g = spec.build();
            let cfg = Config { iterations };
            let want = reference(&g, &cfg).unwrap();
            for t in THREADS {
                let got = with_threads(t, || run(&g, &cfg)).unwrap().unwrap();
                prop_assert_eq!(&got, &want);
                // Both ways of counting (these graphs count in arrays).
                for counting in [Counting::Array, Counting::Hash] {
                    let got = with_threads(t, || run_with(&g, &cfg, Some(counting))).unwrap().unwrap();
                    prop_assert_eq!(&got, &want);
                }
            }
            if let Err(e) = verify(&g, &cfg, &want) {
                return Err(TestCaseError::fail(e.to_string()));
            }
        }

        #[test]
        fn stopping_at_a_fixed_point_or_a_cycle_of_two_gives_every_count_its_labels(
            spec in graphs(),
        ) {
            // Against every iteration run out, without either shortcut.
            let g = spec.build();
            let mut plain = initial_labels(&g);
            for iterations in 0..24 {
                let cfg = Config { iterations };
                let got = with_threads(2, || run(&g, &cfg)).unwrap().unwrap();
                prop_assert_eq!(&got.label, &plain, "{} iterations", iterations);
                prop_assert_eq!(&reference(&g, &cfg).unwrap().label, &plain);
                plain = reference_step(&g, &plain);
            }
        }
    }

    #[test]
    fn the_driver_gives_run_s_labels_on_a_reordered_graph_and_stops_early() {
        let pairs: Vec<(u32, u32)> = EXAMPLE_DIRECTED
            .iter()
            .map(|&(u, v)| (u - 1, v - 1))
            .collect();
        let opts = BuildOptions {
            order: VertexOrder::Degree.into(),
            ..BuildOptions::directed()
        };
        let g = Graph::from_edges(10, &pairs, &opts).unwrap();
        let edge = Graph::from_edges(2, &[(0, 1)], &BuildOptions::undirected()).unwrap();
        for (g, iterations) in [(&g, 2), (&g, 7), (&edge, 1_000_000_001)] {
            let cfg = Config { iterations };
            let want = run(g, &cfg).unwrap();
            let memory = crate::program::InMemory::new(g);
            let adversary = crate::conformance::Adversary::new(g, 5);
            assert_eq!(run_on(&memory, &cfg).unwrap(), want);
            assert_eq!(run_on(&adversary, &cfg).unwrap(), want);
        }
    }

    #[test]
    fn a_cycle_of_two_ends_the_run_with_the_labels_of_the_count_asked() {
        // One edge: the two labels swap every iteration.
        let g = Graph::from_edges(2, &[(0, 1)], &BuildOptions::undirected()).unwrap();
        for (iterations, want) in [
            (1_000_000_000, vec![0, 1]),
            (1_000_000_001, vec![1, 0]),
            (3, vec![1, 0]),
            (4, vec![0, 1]),
        ] {
            let cfg = Config { iterations };
            let out = run(&g, &cfg).unwrap();
            assert_eq!(out.label, want, "{iterations}");
            verify(&g, &cfg, &out).unwrap();
        }
    }
}
