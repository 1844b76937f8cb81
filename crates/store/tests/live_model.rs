//! Live graphs against a model (a plain adjacency map in external ids):
//! random op streams in random transactions, every snapshot and its
//! materialized graph compared with the model at that version, old
//! snapshots unchanged by later commits, conflicts exactly where two
//! transactions touched one partition.
use std::collections::BTreeMap;
use std::sync::Arc;

use plexus_graph::{
    build, BuildOptions, DuplicatePolicy, EdgeBuffer, ExternalId, Graph, IdMap, OrderChoice,
    VertexId, VertexOrder,
};
use plexus_store::version::PART_SIZE;
use plexus_store::{LiveGraph, Op, Snapshot, StoreError};
use proptest::prelude::*;

/// Adjacency in external ids: vertex → sorted (neighbour, weight) arcs.
#[derive(Clone, Debug, Default, PartialEq)]
struct Model {
    directed: bool,
    weighted: bool,
    out: BTreeMap<i64, Vec<(i64, u64)>>,
}

impl Model {
    fn arcs(&self) -> u64 {
        self.out.values().map(|l| l.len() as u64).sum()
    }
    fn has(&self, u: i64, v: i64) -> bool {
        self.out.get(&u).is_some_and(|l| l.iter().any(|a| a.0 == v))
    }
    /// Applies `op`; `false` when the live graph must refuse it.
    fn apply(&mut self, op: &Op) -> bool {
        let int = |x: &ExternalId| match x {
            ExternalId::Int(i) => *i,
            ExternalId::Str(_) => unreachable!(),
        };
        match op {
            Op::AddVertex(x) => {
                let x = int(x);
                if self.out.contains_key(&x) {
                    return false;
                }
                self.out.insert(x, Vec::new());
            }
            Op::RemoveVertex(x) => {
                let x = int(x);
                if self.out.remove(&x).is_none() {
                    return false;
                }
                for l in self.out.values_mut() {
                    l.retain(|a| a.0 != x);
                }
            }
            Op::AddEdge { u, v, w } => {
                let (u, v) = (int(u), int(v));
                if self.weighted != w.is_some() || self.has(u, v) {
                    return false;
                }
                let w = w.map_or(0, f64::to_bits);
                self.out.entry(u).or_default().push((v, w));
                self.out.entry(v).or_default();
                if !self.directed && u != v {
                    self.out.entry(v).or_default().push((u, w));
                }
            }
            Op::RemoveEdge { u, v } => {
                let (u, v) = (int(u), int(v));
                if !self.has(u, v) {
                    return false;
                }
                self.out.entry(u).or_default().retain(|a| a.0 != v);
                if !self.directed {
                    self.out.entry(v).or_default().retain(|a| a.0 != u);
                }
            }
            Op::SetWeight { u, v, w } => {
                let (u, v) = (int(u), int(v));
                if !self.weighted || !self.has(u, v) {
                    return false;
                }
                for (a, b) in [(u, v), (v, u)] {
                    if self.directed && a == v && a != u {
                        continue;
                    }
                    for arc in self.out.entry(a).or_default().iter_mut() {
                        if arc.0 == b {
                            arc.1 = w.to_bits();
                        }
                    }
                }
            }
        }
        for l in self.out.values_mut() {
            l.sort_unstable();
        }
        true
    }
}

fn int_of(x: ExternalId) -> i64 {
    match x {
        ExternalId::Int(i) => i,
        ExternalId::Str(_) => unreachable!(),
    }
}

/// The snapshot read vertex by vertex, in external ids.
fn read_snapshot(s: &Snapshot, m: &Model) -> Model {
    let mut out = BTreeMap::new();
    for v in 0..s.id_bound() as VertexId {
        if !s.is_alive(v) {
            continue;
        }
        let (nb, ws) = s.out(v);
        let mut l: Vec<(i64, u64)> = nb
            .iter()
            .enumerate()
            .map(|(i, &y)| (int_of(s.external(y)), ws.map_or(0, |w| w[i].to_bits())))
            .collect();
        l.sort_unstable();
        out.insert(int_of(s.external(v)), l);
    }
    Model {
        directed: m.directed,
        weighted: m.weighted,
        out,
    }
}

/// The materialized graph read back, in external ids; also checks its
/// in-edges and natural order.
fn read_graph(g: &Graph, m: &Model) -> Model {
    let ext = |v: VertexId| int_of(g.ids().external(v));
    let mut out = BTreeMap::new();
    let mut inc: BTreeMap<i64, Vec<(i64, u64)>> = BTreeMap::new();
    for v in 0..g.num_vertices() as VertexId {
        let ws = g.out_weights(v);
        let mut l: Vec<(i64, u64)> = g
            .out_neighbors(v)
            .iter()
            .enumerate()
            .map(|(i, &y)| (ext(y), ws.map_or(0, |w| w[i].to_bits())))
            .collect();
        l.sort_unstable();
        for &(y, w) in &l {
            inc.entry(y).or_default().push((ext(v), w));
        }
        out.insert(ext(v), l);
        let mut i: Vec<(i64, u64)> = g
            .in_neighbors(v)
            .iter()
            .enumerate()
            .map(|(k, &y)| (ext(y), g.in_weights(v).map_or(0, |w| w[k].to_bits())))
            .collect();
        i.sort_unstable();
        inc.entry(ext(v)).or_default();
        assert_eq!(g.ids().lookup_int(ext(v)), Some(v), "id map of {}", ext(v));
        assert!(g.natural_id(v) < g.num_vertices() as VertexId);
        let _ = i;
    }
    // Natural ids follow the external ids.
    let mut by_natural: Vec<i64> = vec![0; g.num_vertices()];
    for v in 0..g.num_vertices() as VertexId {
        by_natural[g.natural_id(v) as usize] = ext(v);
    }
    assert!(by_natural.windows(2).all(|w| w[0] < w[1]), "natural order");
    for v in 0..g.num_vertices() as VertexId {
        let mut i: Vec<(i64, u64)> = g
            .in_neighbors(v)
            .iter()
            .enumerate()
            .map(|(k, &y)| (ext(y), g.in_weights(v).map_or(0, |w| w[k].to_bits())))
            .collect();
        i.sort_unstable();
        let mut want = inc.get(&ext(v)).cloned().unwrap_or_default();
        want.sort_unstable();
        assert_eq!(i, want, "in-edges of {}", ext(v));
    }
    Model {
        directed: m.directed,
        weighted: m.weighted,
        out,
    }
}

/// A base graph of `n` vertices with external ids `3 v + 1` from `edges`,
/// and its model.
fn base(
    n: usize,
    edges: &[(u32, u32, u8)],
    directed: bool,
    weighted: bool,
    degree: bool,
) -> (Arc<Graph>, Model) {
    let buf = EdgeBuffer {
        src: edges.iter().map(|e| e.0 % n as u32).collect(),
        dst: edges.iter().map(|e| e.1 % n as u32).collect(),
        weights: weighted.then(|| edges.iter().map(|e| e.2 as f64).collect()),
    };
    let ids = IdMap::from_ints((0..n as i64).map(|v| 3 * v + 1).collect());
    let opts = BuildOptions {
        directed,
        duplicates: DuplicatePolicy::Drop,
        order: if degree {
            OrderChoice::Exactly(VertexOrder::Degree)
        } else {
            OrderChoice::Exactly(VertexOrder::None)
        },
        ..Default::default()
    };
    let g = build(n, buf, ids, &opts).expect("base graph");
    let m = read_graph(
        &g,
        &Model {
            directed,
            weighted,
            out: BTreeMap::new(),
        },
    );
    (Arc::new(g), m)
}

fn op_strategy(ids: i64, weighted: bool) -> impl Strategy<Value = Op> {
    let id = move || (0..ids).prop_map(|i| ExternalId::Int(3 * i + 1));
    let w = move || (1u8..9).prop_map(move |w| if weighted { Some(w as f64) } else { None });
    prop_oneof![
        1 => id().prop_map(Op::AddVertex),
        1 => id().prop_map(Op::RemoveVertex),
        6 => (id(), id(), w()).prop_map(|(u, v, w)| Op::AddEdge { u, v, w }),
        3 => (id(), id()).prop_map(|(u, v)| Op::RemoveEdge { u, v }),
        1 => (id(), id(), 1u8..9).prop_map(|(u, v, w)| Op::SetWeight { u, v, w: w as f64 }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Transactions of random ops (failing ops rolled back by aborting the
    /// transaction): every published snapshot equals the model, its
    /// materialized graph too, and snapshots taken earlier stay equal to
    /// the model of their version.
    #[test]
    fn versions_match_the_model(
        n in 1usize..40,
        edges in prop::collection::vec((0u32..40, 0u32..40, 1u8..9), 0..120),
        directed in any::<bool>(),
        weighted in any::<bool>(),
        degree in any::<bool>(),
        txs in prop::collection::vec(prop::collection::vec(op_strategy(48, true), 1..8), 1..12),
    ) {
        let (g, mut model) = base(n, &edges, directed, weighted, degree);
        let live = LiveGraph::in_memory(g);
        let mut history: Vec<(Snapshot, Model)> = vec![(live.snapshot(), model.clone())];
        for ops in txs {
            let mut tx = live.begin();
            let mut m = model.clone();
            let mut ok = true;
            for op in ops {
                let op = match (op, weighted) {
                    (Op::AddEdge { u, v, .. }, false) => Op::AddEdge { u, v, w: None },
                    (op, _) => op,
                };
                let want = m.apply(&op);
                let got = tx.apply(op.clone());
                prop_assert_eq!(got.is_ok(), want, "{:?}: {:?}", op, got.err());
                if !want {
                    ok = false;
                    break;
                }
            }
            if !ok {
                live.abort(tx);
                continue;
            }
            live.commit(tx).expect("no concurrent writer");
            model = m;
            let s = live.snapshot();
            prop_assert_eq!(s.num_vertices(), model.out.len() as u64);
            prop_assert_eq!(s.num_arcs(), model.arcs());
            prop_assert_eq!(&read_snapshot(&s, &model), &model);
            let g = s.graph().expect("materialize");
            prop_assert_eq!(g.num_arcs(), model.arcs());
            prop_assert_eq!(&read_graph(&g, &model), &model);
            history.push((s, model.clone()));
        }
        for (s, m) in &history {
            prop_assert_eq!(&read_snapshot(s, m), m, "version {}", s.version());
        }
    }
}

/// Two transactions from one snapshot: the second commit conflicts exactly
/// when both wrote one partition, and the error names it.
#[test]
fn first_committer_wins_per_partition() {
    let n = 3 * PART_SIZE;
    let (g, _) = base(n, &[(0, 1, 1)], false, false, false);
    let live = LiveGraph::in_memory(g);
    let id = |v: usize| ExternalId::Int(3 * v as i64 + 1);
    let edge = |a: usize, b: usize| Op::AddEdge {
        u: id(a),
        v: id(b),
        w: None,
    };
    // Disjoint partitions: both commit.
    let mut t1 = live.begin();
    let mut t2 = live.begin();
    t1.apply(edge(5, 6)).unwrap();
    t2.apply(edge(PART_SIZE + 5, PART_SIZE + 6)).unwrap();
    assert_eq!(live.commit(t1).unwrap(), 1);
    assert_eq!(live.commit(t2).unwrap(), 2);
    // One shared partition (the undirected edge writes both endpoints').
    let mut t3 = live.begin();
    let mut t4 = live.begin();
    t3.apply(edge(7, 2 * PART_SIZE + 1)).unwrap();
    t4.apply(edge(2 * PART_SIZE + 9, PART_SIZE + 9)).unwrap();
    assert_eq!(live.commit(t3).unwrap(), 3);
    match live.commit(t4) {
        Err(StoreError::Conflict {
            partition,
            by,
            snapshot,
            ..
        }) => {
            assert_eq!((partition, by, snapshot), (2, 3, 2));
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    let s = live.snapshot();
    assert_eq!(s.version(), 3);
    assert!(!s.has_edge(
        s.lookup(&id(2 * PART_SIZE + 9)).unwrap(),
        s.lookup(&id(PART_SIZE + 9)).unwrap()
    ));
    // A transaction reads its own writes, others do not.
    let mut t5 = live.begin();
    t5.apply(Op::AddVertex(ExternalId::Int(-5))).unwrap();
    assert!(t5.lookup(&ExternalId::Int(-5)).is_some());
    assert!(live.snapshot().lookup(&ExternalId::Int(-5)).is_none());
    live.commit(t5).unwrap();
    assert!(live.snapshot().lookup(&ExternalId::Int(-5)).is_some());
}
