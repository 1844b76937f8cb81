//! Shared by the live_* tests: the model (a plain adjacency-set graph in
//! external ids), base graphs, readers that turn a snapshot, a transaction
//! or a materialized graph into the model's form, random ops, and a text
//! encoding of ops for the kill test's child.
#![allow(dead_code)]
use std::collections::BTreeMap;
use std::sync::Arc;

use plexus_graph::{
    build, BuildOptions, DuplicatePolicy, EdgeBuffer, ExternalId, Graph, IdMap, OrderChoice,
    VertexId, VertexOrder,
};
use plexus_store::{Op, Snapshot, Transaction};
use rand::Rng;

/// A vertex's arcs: neighbour → weight bits (0 on unweighted graphs).
pub type Arcs = BTreeMap<i64, u64>;

/// A plain adjacency-set graph in external ids.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    pub directed: bool,
    pub weighted: bool,
    /// Every alive vertex → its out-arcs (both directions on undirected
    /// graphs; a self-loop once).
    pub out: BTreeMap<i64, Arcs>,
}

impl Model {
    pub fn new(directed: bool, weighted: bool) -> Model {
        Model {
            directed,
            weighted,
            out: BTreeMap::new(),
        }
    }

    /// Stored arcs, as the live graph counts them.
    pub fn arcs(&self) -> u64 {
        self.out.values().map(|l| l.len() as u64).sum()
    }

    pub fn has(&self, u: i64, v: i64) -> bool {
        self.out.get(&u).is_some_and(|l| l.contains_key(&v))
    }

    /// In-arcs of `x` (its out-arcs on undirected graphs).
    pub fn inc(&self, x: i64) -> Arcs {
        if !self.directed {
            return self.out.get(&x).cloned().unwrap_or_default();
        }
        self.out
            .iter()
            .filter_map(|(&u, l)| l.get(&x).map(|&w| (u, w)))
            .collect()
    }

    /// Every vertex's in-arcs (its out-arcs on undirected graphs).
    pub fn all_inc(&self) -> BTreeMap<i64, Arcs> {
        if !self.directed {
            return self.out.clone();
        }
        let mut inc: BTreeMap<i64, Arcs> = self.out.keys().map(|&x| (x, Arcs::new())).collect();
        for (&u, l) in &self.out {
            for (&v, &w) in l {
                inc.entry(v).or_default().insert(u, w);
            }
        }
        inc
    }

    /// Applies `op` as the op semantics say (`plexus_store::ops`); `false`
    /// (and no change) when the live graph must refuse it.
    pub fn apply(&mut self, op: &Op) -> bool {
        match op {
            Op::AddVertex(x) => {
                let x = int(x);
                if self.out.contains_key(&x) {
                    return false;
                }
                self.out.insert(x, Arcs::new());
            }
            Op::RemoveVertex(x) => {
                let x = int(x);
                if self.out.remove(&x).is_none() {
                    return false;
                }
                for l in self.out.values_mut() {
                    l.remove(&x);
                }
            }
            Op::AddEdge { u, v, w } => {
                let (u, v) = (int(u), int(v));
                if self.weighted != w.is_some() || w.is_some_and(|w| !w.is_finite()) {
                    return false;
                }
                if self.has(u, v) {
                    return false;
                }
                let w = w.map_or(0, f64::to_bits);
                self.out.entry(v).or_default();
                self.out.entry(u).or_default().insert(v, w);
                if !self.directed {
                    self.out.entry(v).or_default().insert(u, w);
                }
            }
            Op::RemoveEdge { u, v } => {
                let (u, v) = (int(u), int(v));
                if !self.has(u, v) {
                    return false;
                }
                self.out.entry(u).or_default().remove(&v);
                if !self.directed {
                    self.out.entry(v).or_default().remove(&u);
                }
            }
            Op::SetWeight { u, v, w } => {
                let (u, v) = (int(u), int(v));
                if !self.weighted || !w.is_finite() || !self.has(u, v) {
                    return false;
                }
                self.out.entry(u).or_default().insert(v, w.to_bits());
                if !self.directed {
                    self.out.entry(v).or_default().insert(u, w.to_bits());
                }
            }
        }
        true
    }

    /// Applies every op of a committed transaction; panics (naming `what`)
    /// on one the model refuses: a committed history must be serial.
    pub fn apply_all(&mut self, ops: &[Op], what: &str) {
        for op in ops {
            assert!(
                self.apply(op),
                "{what}: op {op:?} does not apply to the model in commit order"
            );
        }
    }
}

/// The integer of an external id (these tests use integer ids only).
pub fn int(x: &ExternalId) -> i64 {
    match x {
        ExternalId::Int(i) => *i,
        ExternalId::Str(s) => panic!("unexpected string id {s}"),
    }
}

/// The external id of base vertex `v` (internal ids are natural in the
/// bases built here).
pub fn ext(v: usize) -> i64 {
    3 * v as i64 + 1
}

pub fn id(x: i64) -> ExternalId {
    ExternalId::Int(x)
}

/// A base graph of `n` vertices (external id [`ext`]) with `edges` in
/// internal ids (weights 1 + e.2 / 2 on weighted graphs), duplicates
/// dropped, natural order; and its model.
pub fn base(
    n: usize,
    edges: &[(u32, u32, u8)],
    directed: bool,
    weighted: bool,
) -> (Arc<Graph>, Model) {
    let buf = EdgeBuffer {
        src: edges.iter().map(|e| e.0 % n as u32).collect(),
        dst: edges.iter().map(|e| e.1 % n as u32).collect(),
        weights: weighted.then(|| edges.iter().map(|e| 1.0 + e.2 as f64 / 2.0).collect()),
    };
    let ids = IdMap::from_ints((0..n).map(ext).collect());
    let opts = BuildOptions {
        directed,
        duplicates: DuplicatePolicy::Drop,
        order: OrderChoice::Exactly(VertexOrder::None),
        ..Default::default()
    };
    let g = build(n, buf, ids, &opts).expect("base graph");
    let m = read_graph(&g);
    (Arc::new(g), m)
}

fn arcs_of(nbrs: &[VertexId], ws: Option<&[f64]>, name: impl Fn(VertexId) -> i64) -> Arcs {
    let mut l = Arcs::new();
    for (i, &y) in nbrs.iter().enumerate() {
        let w = ws.map_or(0, |w| w[i].to_bits());
        assert!(
            l.insert(name(y), w).is_none(),
            "a duplicate arc to {}",
            name(y)
        );
    }
    l
}

/// The snapshot read vertex by vertex (every live id), in external ids;
/// also checks its vertex and arc counts and its in-lists.
pub fn read_snapshot(s: &Snapshot) -> Model {
    let mut m = Model::new(s.is_directed(), s.is_weighted());
    let name = |y: VertexId| int(&s.external(y));
    for v in 0..s.id_bound() as VertexId {
        if !s.is_alive(v) {
            assert!(s.out(v).0.is_empty(), "a dead vertex has arcs");
            continue;
        }
        let (nb, ws) = s.out(v);
        m.out.insert(name(v), arcs_of(nb, ws, name));
    }
    assert_eq!(s.num_vertices(), m.out.len() as u64, "vertex count");
    assert_eq!(s.num_arcs(), m.arcs(), "arc count");
    if s.is_directed() {
        let inc = m.all_inc();
        for v in 0..s.id_bound() as VertexId {
            if s.is_alive(v) {
                let (nb, ws) = s.inc(v);
                assert_eq!(
                    arcs_of(nb, ws, name),
                    inc[&name(v)],
                    "in-arcs of {}",
                    name(v)
                );
            }
        }
    }
    m
}

/// Only the vertices `xs` of a snapshot (absent ones left out): a cheap
/// partial read.
pub fn read_snapshot_at(s: &Snapshot, xs: &[i64]) -> Model {
    let mut m = Model::new(s.is_directed(), s.is_weighted());
    let name = |y: VertexId| int(&s.external(y));
    for &x in xs {
        if let Some(v) = s.lookup(&id(x)) {
            let (nb, ws) = s.out(v);
            m.out.insert(x, arcs_of(nb, ws, name));
        }
    }
    m
}

/// The vertices `xs` as transaction `tx` sees them, and their in-arcs.
pub fn read_tx_at(tx: &Transaction, xs: &[i64]) -> (Model, BTreeMap<i64, Arcs>) {
    let s = tx.snapshot();
    let mut m = Model::new(s.is_directed(), s.is_weighted());
    let mut inc = BTreeMap::new();
    let name = |y: VertexId| int(&tx.external(y));
    for &x in xs {
        if let Some(v) = tx.lookup(&id(x)) {
            assert!(tx.is_alive(v));
            let (nb, ws) = tx.out(v);
            m.out.insert(x, arcs_of(nb, ws, name));
            let (nb, ws) = tx.inc(v);
            inc.insert(x, arcs_of(nb, ws, name));
        }
    }
    (m, inc)
}

/// `m` cut down to the vertices `xs`.
pub fn restrict(m: &Model, xs: &[i64]) -> Model {
    let mut r = Model::new(m.directed, m.weighted);
    for x in xs {
        if let Some(l) = m.out.get(x) {
            r.out.insert(*x, l.clone());
        }
    }
    r
}

/// A materialized graph read back in external ids; also checks its
/// in-lists, id map and natural order.
pub fn read_graph(g: &Graph) -> Model {
    let name = |v: VertexId| int(&g.ids().external(v));
    let mut m = Model::new(g.is_directed(), g.is_weighted());
    let n = g.num_vertices();
    for v in 0..n as VertexId {
        m.out
            .insert(name(v), arcs_of(g.out_neighbors(v), g.out_weights(v), name));
        assert_eq!(
            g.ids().lookup_int(name(v)),
            Some(v),
            "id map of {}",
            name(v)
        );
    }
    assert_eq!(m.out.len(), n, "two vertices share an external id");
    assert_eq!(g.num_arcs(), m.arcs(), "arc count of the graph");
    let inc = m.all_inc();
    for v in 0..n as VertexId {
        let got = arcs_of(g.in_neighbors(v), g.in_weights(v), name);
        assert_eq!(got, inc[&name(v)], "in-arcs of {} in the graph", name(v));
    }
    let mut by_natural = vec![0; n];
    for v in 0..n as VertexId {
        by_natural[g.natural_id(v) as usize] = name(v);
    }
    assert!(by_natural.windows(2).all(|w| w[0] < w[1]), "natural order");
    m
}

/// The first few differences between two models, for failure messages.
pub fn diff(got: &Model, want: &Model) -> String {
    let mut out = Vec::new();
    let keys: std::collections::BTreeSet<i64> =
        got.out.keys().chain(want.out.keys()).copied().collect();
    for k in keys {
        let (a, b) = (got.out.get(&k), want.out.get(&k));
        if a != b {
            out.push(format!("vertex {k}: got {a:?}, want {b:?}"));
            if out.len() == 5 {
                out.push("...".into());
                break;
            }
        }
    }
    if out.is_empty() {
        "no difference".into()
    } else {
        out.join("; ")
    }
}

/// Checks a snapshot (read directly and through its materialized graph)
/// against `want`.
pub fn check_snapshot(s: &Snapshot, want: &Model, what: &str) -> Result<(), String> {
    let got = read_snapshot(s);
    if &got != want {
        return Err(format!(
            "{what}: snapshot of version {} differs from the model: {}",
            s.version(),
            diff(&got, want)
        ));
    }
    let g = s
        .graph()
        .map_err(|e| format!("{what}: materializing failed: {e}"))?;
    let got = read_graph(&g);
    if &got != want {
        return Err(format!(
            "{what}: the materialized graph of version {} differs from the model: {}",
            s.version(),
            diff(&got, want)
        ));
    }
    Ok(())
}

/// A random op on the vertices `pool` (external ids), made likely to apply
/// by reading `tx`: removals and weight changes pick existing edges.
pub fn random_op(rng: &mut impl Rng, tx: &Transaction, pool: &[i64], weighted: bool) -> Op {
    let pick = |rng: &mut dyn rand::RngCore| pool[rng.gen_range(0..pool.len())];
    let weight = |rng: &mut dyn rand::RngCore| rng.gen_range(1..=16) as f64 * 0.25;
    // An existing out-edge of a random pool vertex, when it has one.
    let existing = |rng: &mut dyn rand::RngCore| {
        let u = pick(rng);
        let a = tx.lookup(&id(u))?;
        let nb = tx.out(a).0;
        (!nb.is_empty()).then(|| (u, int(&tx.external(nb[rng.gen_range(0..nb.len())]))))
    };
    match rng.gen_range(0..20) {
        0 => Op::AddVertex(id(pick(rng))),
        1 => Op::RemoveVertex(id(pick(rng))),
        2..=10 => Op::AddEdge {
            u: id(pick(rng)),
            v: id(pick(rng)),
            w: weighted.then(|| weight(rng)),
        },
        k => {
            let (u, v) = existing(rng).unwrap_or_else(|| (pick(rng), pick(rng)));
            if k >= 17 && weighted {
                Op::SetWeight {
                    u: id(u),
                    v: id(v),
                    w: weight(rng),
                }
            } else {
                Op::RemoveEdge { u: id(u), v: id(v) }
            }
        }
    }
}

/// Ops as one line of text (integer ids; weights in Rust's exact `f64`
/// display): `ae U V [W]`, `re U V`, `av X`, `rv X`, `sw U V W`, joined by
/// `;`.
pub fn encode_ops(ops: &[Op]) -> String {
    let parts: Vec<String> = ops
        .iter()
        .map(|op| match op {
            Op::AddVertex(x) => format!("av {}", int(x)),
            Op::RemoveVertex(x) => format!("rv {}", int(x)),
            Op::AddEdge { u, v, w: None } => format!("ae {} {}", int(u), int(v)),
            Op::AddEdge { u, v, w: Some(w) } => format!("ae {} {} {w}", int(u), int(v)),
            Op::RemoveEdge { u, v } => format!("re {} {}", int(u), int(v)),
            Op::SetWeight { u, v, w } => format!("sw {} {} {w}", int(u), int(v)),
        })
        .collect();
    parts.join(";")
}

/// The inverse of [`encode_ops`].
pub fn decode_ops(text: &str) -> Vec<Op> {
    text.split(';')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let w: Vec<&str> = s.split(' ').collect();
            let i = |k: usize| id(w[k].parse().expect("an integer id"));
            let f = |k: usize| w[k].parse::<f64>().expect("a weight");
            match w[0] {
                "av" => Op::AddVertex(i(1)),
                "rv" => Op::RemoveVertex(i(1)),
                "ae" if w.len() == 3 => Op::AddEdge {
                    u: i(1),
                    v: i(2),
                    w: None,
                },
                "ae" => Op::AddEdge {
                    u: i(1),
                    v: i(2),
                    w: Some(f(3)),
                },
                "re" => Op::RemoveEdge { u: i(1), v: i(2) },
                "sw" => Op::SetWeight {
                    u: i(1),
                    v: i(2),
                    w: f(3),
                },
                other => panic!("unknown op {other:?} in {text:?}"),
            }
        })
        .collect()
}

/// The seed of a randomized test: `PLEXUS_TEST_SEED` when set (to replay a
/// failure), else `default`. Printed either way.
pub fn seed(test: &str, default: u64) -> u64 {
    let s = std::env::var("PLEXUS_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    eprintln!("{test}: seed {s} (PLEXUS_TEST_SEED={s} replays it)");
    s
}
