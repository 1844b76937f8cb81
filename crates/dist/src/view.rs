//! [`DistView`]: the whole-graph facts a driver reads, replicated on every
//! rank (Gemini replicates degrees too), so that a rank can drop the graph
//! once its [`crate::part::Part`] is built.
//!
//! [`DistView::gather`] builds it collectively: each rank reads the degrees
//! (and natural ids) of an even share of the vertices and the weights of
//! its master range's out-lists, and the ranks all-gather the pieces, so
//! no rank reads the whole graph. [`DistView::of`] reads it all from one
//! graph (the reference, and what `plexus partition` uses).
use plexus_engine::program::{GraphView, Wire};
use plexus_graph::{Graph, VertexId, Weight, WeightStats};

use crate::comm::Comm;
use crate::error::{DistError, Result};
use crate::part::Cuts;

/// The block of out-edge weights summed as one (the graph's own rule:
/// `WeightStats` sums fixed blocks in order, so the sum does not depend
/// on who sums them).
const WEIGHT_BLOCK: usize = 1 << 14;

/// One block's weight facts: the first invalid index, the finite sum,
/// count and maximum.
type BlockStats = ((Option<u64>, f64), (u64, f64));

/// Counts, degrees and facts of a graph (see [`GraphView`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DistView {
    out_degree: Vec<u32>,
    /// `None` on undirected graphs (equal to the out-degrees).
    in_degree: Option<Vec<u32>>,
    num_arcs: u64,
    directed: bool,
    weighted: bool,
    weight_stats: Option<WeightStats>,
    first_invalid_arc: Option<(VertexId, VertexId, Weight)>,
    no_duplicate_arcs: bool,
    /// `None` when every vertex is its own natural id.
    natural: Option<Vec<VertexId>>,
}

impl DistView {
    /// The view of `g`; refuses a vertex with 2^32 arcs or more.
    pub fn of(g: &Graph) -> Result<DistView> {
        let n = g.num_vertices();
        let degrees = |f: &dyn Fn(VertexId) -> usize| -> Result<Vec<u32>> {
            (0..n as VertexId)
                .map(|v| {
                    u32::try_from(f(v)).map_err(|_| {
                        DistError::Invalid(format!("vertex {v} has 2^32 arcs or more"))
                    })
                })
                .collect()
        };
        let out_degree = degrees(&|v| g.out_degree(v))?;
        let in_degree = if g.is_directed() {
            Some(degrees(&|v| g.in_degree(v))?)
        } else {
            None
        };
        let natural: Vec<VertexId> = (0..n as VertexId).map(|v| g.natural_id(v)).collect();
        let identity = natural.iter().enumerate().all(|(i, &v)| i as VertexId == v);
        Ok(DistView {
            out_degree,
            in_degree,
            num_arcs: g.num_arcs(),
            directed: g.is_directed(),
            weighted: g.is_weighted(),
            weight_stats: g.weight_stats().cloned(),
            first_invalid_arc: GraphView::first_invalid_arc(g),
            no_duplicate_arcs: GraphView::no_duplicate_arcs(g),
            natural: (!identity).then_some(natural),
        })
    }

    /// The view of `g`, built collectively (see the module docs), and the
    /// balanced cuts of its vertices over `comm`'s ranks. Every rank of
    /// `comm` calls it with the same graph (the handshake checks).
    pub fn gather<C: Comm>(comm: &C, g: &Graph) -> Result<(DistView, Cuts)> {
        let (p, me) = (comm.size(), comm.rank());
        let n = g.num_vertices();
        let share = share(n, p, me);
        let degrees = |f: &dyn Fn(VertexId) -> usize| -> Option<Vec<u32>> {
            share.clone().map(|v| u32::try_from(f(v)).ok()).collect()
        };
        let mut mine = Vec::new();
        degrees(&|v| g.out_degree(v)).encode(&mut mine);
        g.is_directed()
            .then(|| degrees(&|v| g.in_degree(v)))
            .encode(&mut mine);
        let natural: Option<Vec<VertexId>> = g
            .old_of_new()
            .map(|_| share.clone().map(|v| g.natural_id(v)).collect());
        natural.encode(&mut mine);
        let all = comm.all_gather(&mine)?;
        let (mut out_degree, mut in_degree, mut natural) = (Vec::new(), Vec::new(), Vec::new());
        for (r, bytes) in all.iter().enumerate() {
            let bad = |what: &str| DistError::Malformed {
                rank: me,
                peer: r,
                what: format!("its share of the {what}"),
            };
            let mut s = &bytes[..];
            let big = || {
                DistError::Invalid(format!(
                    "a vertex in rank {r}'s share has 2^32 arcs or more"
                ))
            };
            let out = Option::<Vec<u32>>::decode(&mut s).ok_or_else(|| bad("out-degrees"))?;
            out_degree.extend(out.ok_or_else(big)?);
            let inn =
                Option::<Option<Vec<u32>>>::decode(&mut s).ok_or_else(|| bad("in-degrees"))?;
            if let Some(inn) = inn {
                in_degree.extend(inn.ok_or_else(big)?);
            }
            let nat = Option::<Vec<VertexId>>::decode(&mut s).ok_or_else(|| bad("natural ids"))?;
            natural.extend(nat.unwrap_or_default());
        }
        if out_degree.len() != n {
            return Err(DistError::Mismatch {
                rank: me,
                what: format!(
                    "the ranks' shares hold {} vertices, not {n}",
                    out_degree.len()
                ),
            });
        }
        let in_degree = g.is_directed().then_some(in_degree);
        let degree: Vec<u64> = match &in_degree {
            Some(inn) => out_degree
                .iter()
                .zip(inn)
                .map(|(&a, &b)| u64::from(a) + u64::from(b))
                .collect(),
            None => out_degree.iter().map(|&a| 2 * u64::from(a)).collect(),
        };
        let cuts = Cuts::balanced(&degree, p);
        let (weight_stats, no_duplicate_arcs) = gather_arc_facts(comm, g, &cuts)?;
        let first_invalid_arc = weight_stats
            .as_ref()
            .and_then(|w| w.first_invalid)
            .and_then(|i| arc_at(g, i));
        let view = DistView {
            out_degree,
            in_degree,
            num_arcs: g.num_arcs(),
            directed: g.is_directed(),
            weighted: g.is_weighted(),
            weight_stats,
            first_invalid_arc,
            no_duplicate_arcs,
            natural: g
                .old_of_new()
                .map(|_| natural)
                .filter(|nat| !nat.iter().enumerate().all(|(i, &v)| i as VertexId == v)),
        };
        Ok((view, cuts))
    }

    /// The total degree (out plus in) of every vertex: what the cuts
    /// balance.
    pub fn total_degrees(&self) -> Vec<u64> {
        (0..self.out_degree.len() as VertexId)
            .map(|v| (self.out_degree(v) + self.in_degree(v)) as u64)
            .collect()
    }

    /// Appends the view's bytes (the part file's layout, `docs/dist.md`).
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        self.out_degree.encode(out);
        self.in_degree.encode(out);
        self.num_arcs.encode(out);
        self.directed.encode(out);
        self.weighted.encode(out);
        self.weight_stats
            .as_ref()
            .map(|w| -> BlockStats {
                (
                    (w.first_invalid.map(|i| i as u64), w.finite_sum),
                    (w.finite_count, w.max_finite),
                )
            })
            .encode(out);
        self.first_invalid_arc
            .map(|(u, v, w)| ((u, v), w))
            .encode(out);
        self.no_duplicate_arcs.encode(out);
        self.natural.encode(out);
    }

    /// The inverse of [`DistView::encode`]; `Err` names the field that does
    /// not decode or is inconsistent.
    pub(crate) fn decode(s: &mut &[u8]) -> std::result::Result<DistView, String> {
        fn field<T: Wire>(s: &mut &[u8], name: &str) -> std::result::Result<T, String> {
            T::decode(s).ok_or_else(|| format!("the view's {name} do not decode"))
        }
        let out_degree: Vec<u32> = field(s, "out-degrees")?;
        let in_degree: Option<Vec<u32>> = field(s, "in-degrees")?;
        let num_arcs: u64 = field(s, "arc count")?;
        let directed: bool = field(s, "flags")?;
        let weighted: bool = field(s, "flags")?;
        let stats: Option<BlockStats> = field(s, "weight facts")?;
        let first: Option<((VertexId, VertexId), Weight)> = field(s, "weight facts")?;
        let no_duplicate_arcs: bool = field(s, "flags")?;
        let natural: Option<Vec<VertexId>> = field(s, "natural ids")?;
        let n = out_degree.len();
        let sum = |d: &[u32]| d.iter().map(|&x| u64::from(x)).sum::<u64>();
        if sum(&out_degree) != num_arcs
            || in_degree
                .as_ref()
                .is_some_and(|d| d.len() != n || sum(d) != num_arcs)
        {
            return Err(format!("the degrees do not add up to the {num_arcs} arcs"));
        }
        if in_degree.is_some() != directed {
            return Err("in-degrees given for an undirected graph, or missing".into());
        }
        if natural
            .as_ref()
            .is_some_and(|p| p.len() != n || p.iter().any(|&v| v as usize >= n))
        {
            return Err("the natural ids are not a map of the vertices".into());
        }
        Ok(DistView {
            out_degree,
            in_degree,
            num_arcs,
            directed,
            weighted,
            weight_stats: stats.map(|((bad, sum), (count, max))| WeightStats {
                first_invalid: bad.map(|i| i as usize),
                finite_sum: sum,
                finite_count: count,
                max_finite: max,
            }),
            first_invalid_arc: first.map(|((u, v), w)| (u, v, w)),
            no_duplicate_arcs,
            natural,
        })
    }

    /// The natural id of every vertex, when not the identity.
    pub fn natural_ids(&self) -> Option<&[VertexId]> {
        self.natural.as_deref()
    }

    /// A checksum of the facts every rank must agree on (counts, flags and
    /// every degree), for the start-up handshake.
    pub fn checksum(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut eat = |x: u64| {
            h ^= x;
            h = h.wrapping_mul(0x0000_0100_0000_01b3).rotate_left(17);
        };
        eat(self.out_degree.len() as u64);
        eat(self.num_arcs);
        eat(u64::from(self.directed) | u64::from(self.weighted) << 1);
        for &d in &self.out_degree {
            eat(u64::from(d));
        }
        for &d in self.in_degree.iter().flatten() {
            eat(u64::from(d));
        }
        h
    }
}

impl GraphView for DistView {
    fn num_vertices(&self) -> usize {
        self.out_degree.len()
    }
    fn num_arcs(&self) -> u64 {
        self.num_arcs
    }
    fn is_directed(&self) -> bool {
        self.directed
    }
    fn is_weighted(&self) -> bool {
        self.weighted
    }
    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        self.out_degree[v as usize] as usize
    }
    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.in_degree.as_ref().unwrap_or(&self.out_degree)[v as usize] as usize
    }
    fn weight_stats(&self) -> Option<&WeightStats> {
        self.weight_stats.as_ref()
    }
    fn first_invalid_arc(&self) -> Option<(VertexId, VertexId, Weight)> {
        self.first_invalid_arc
    }
    fn no_duplicate_arcs(&self) -> bool {
        self.no_duplicate_arcs
    }
    fn natural_id(&self, v: VertexId) -> VertexId {
        self.natural.as_ref().map_or(v, |p| p[v as usize])
    }
}

/// The even share of `0..n` that rank `r` of `p` reads: `r·n/p..(r+1)·n/p`.
fn share(n: usize, p: usize, r: usize) -> std::ops::Range<VertexId> {
    let at = |i: usize| (n as u128 * i as u128 / p as u128) as VertexId;
    at(r)..at(r + 1)
}

/// The weight facts (weighted graphs) and whether no out-list holds a
/// duplicate, gathered: each rank reads the out-lists of its masters and
/// sums the weight blocks that start among them (reading past its range
/// to finish the last one), and the ranks all-gather the blocks in order.
fn gather_arc_facts<C: Comm>(
    comm: &C,
    g: &Graph,
    cuts: &Cuts,
) -> Result<(Option<WeightStats>, bool)> {
    let mine = cuts.range(comm.rank());
    let out = g.out();
    let dup = mine
        .clone()
        .any(|v| out.neighbors(v).windows(2).any(|w| w[0] >= w[1]));
    let blocks: Vec<BlockStats> = match out.weight_array() {
        Some(ws) => {
            let offs = out.offsets();
            let (lo, hi) = (
                offs[mine.start as usize] as usize,
                offs[mine.end as usize] as usize,
            );
            (lo.div_ceil(WEIGHT_BLOCK)..hi.div_ceil(WEIGHT_BLOCK))
                .map(|b| block_stats(ws, b))
                .collect()
        }
        None => Vec::new(),
    };
    let mut msg = Vec::new();
    dup.encode(&mut msg);
    blocks.encode(&mut msg);
    let all = comm.all_gather(&msg)?;
    let mut any_dup = false;
    let mut every = Vec::new();
    for (r, bytes) in all.iter().enumerate() {
        let mut s = &bytes[..];
        let got = bool::decode(&mut s).zip(Vec::<BlockStats>::decode(&mut s));
        let (d, mut b) = got.ok_or_else(|| DistError::Malformed {
            rank: comm.rank(),
            peer: r,
            what: "its weight blocks".into(),
        })?;
        any_dup |= d;
        every.append(&mut b);
    }
    let stats = out.weight_array().map(|_| WeightStats {
        first_invalid: every.iter().find_map(|b| b.0 .0).map(|i| i as usize),
        finite_sum: every.iter().map(|b| b.0 .1).sum(),
        finite_count: every.iter().map(|b| b.1 .0).sum(),
        max_finite: every.iter().map(|b| b.1 .1).fold(0.0, f64::max),
    });
    Ok((stats, !any_dup))
}

/// Block `b`'s weight facts, as the graph's `WeightStats` computes them.
fn block_stats(ws: &[Weight], b: usize) -> BlockStats {
    let start = b * WEIGHT_BLOCK;
    let block = &ws[start..(start + WEIGHT_BLOCK).min(ws.len())];
    let bad = block
        .iter()
        .position(|w| w.is_nan() || *w < 0.0)
        .map(|i| (start + i) as u64);
    let (mut sum, mut count, mut max) = (0.0, 0u64, 0.0f64);
    for &w in block {
        if w.is_finite() {
            sum += w;
            count += 1;
            max = max.max(w);
        }
    }
    ((bad, sum), (count, max))
}

/// The arc at index `i` of the out-edge arrays: source, target, weight.
fn arc_at(g: &Graph, i: usize) -> Option<(VertexId, VertexId, Weight)> {
    let out = g.out();
    let src = out
        .offsets()
        .partition_point(|&o| o <= i as u64)
        .checked_sub(1)?;
    Some((
        src as VertexId,
        *out.neighbor_array().get(i)?,
        *out.weight_array()?.get(i)?,
    ))
}

/// A fingerprint of `g` read in O(p) time without touching most of it: the
/// counts, flags, and 65 evenly spaced entries of the out- and in-offsets.
/// Ranks compare it before gathering anything (a different graph with the
/// same counts is caught by the offsets, almost always).
pub fn fingerprint(g: &Graph) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |x: u64| {
        h ^= x;
        h = h.wrapping_mul(0x0000_0100_0000_01b3).rotate_left(17);
    };
    let n = g.num_vertices();
    eat(n as u64);
    eat(g.num_arcs());
    eat(u64::from(g.is_directed()) | u64::from(g.is_weighted()) << 1);
    for offs in [g.out().offsets(), g.inc().offsets()] {
        for i in 0..=64usize {
            eat(offs[n * i / 64]);
        }
    }
    h
}
