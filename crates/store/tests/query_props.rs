//! Point queries against plain reference implementations over an
//! adjacency map in external ids: random small graphs (directed or not,
//! weighted or not, with duplicate arcs and self-loops, in natural or
//! degree order), before and after random transactions, through fresh and
//! reused (sparse and dense) scratches.
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use plexus_graph::{
    build, BuildOptions, DuplicatePolicy, EdgeBuffer, ExternalId, Graph, IdMap, OrderChoice,
    VertexId, VertexOrder,
};
use plexus_store::query::{self, Direction, QueryError, QueryScratch};
use plexus_store::{LiveGraph, Op, Snapshot};
use proptest::prelude::*;

/// Out-arcs in external ids: vertex → sorted (neighbour, weight) arcs,
/// copies included (weight 1 on unweighted graphs).
type Adj = BTreeMap<i64, Vec<(i64, f64)>>;

fn int_of(x: ExternalId) -> i64 {
    match x {
        ExternalId::Int(i) => i,
        ExternalId::Str(_) => unreachable!("integer ids only"),
    }
}

/// The snapshot's out-lists, in external ids.
fn model(s: &Snapshot) -> Adj {
    let mut adj = Adj::new();
    for v in 0..s.id_bound() as VertexId {
        if !s.is_alive(v) {
            continue;
        }
        let (nb, ws) = s.out(v);
        let mut l: Vec<(i64, f64)> = nb
            .iter()
            .enumerate()
            .map(|(i, &y)| (int_of(s.external(y)), ws.map_or(1.0, |w| w[i])))
            .collect();
        l.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        adj.insert(int_of(s.external(v)), l);
    }
    adj
}

fn reverse(adj: &Adj) -> Adj {
    let mut r: Adj = adj.keys().map(|&v| (v, Vec::new())).collect();
    for (&u, l) in adj {
        for &(v, w) in l {
            r.entry(v).or_default().push((u, w));
        }
    }
    for l in r.values_mut() {
        l.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    }
    r
}

/// Reference BFS: hop counts of every vertex reachable from `src`.
fn bfs(adj: &Adj, src: i64) -> BTreeMap<i64, u32> {
    let mut d = BTreeMap::from([(src, 0u32)]);
    let mut q = VecDeque::from([src]);
    while let Some(x) = q.pop_front() {
        for &(y, _) in &adj[&x] {
            if !d.contains_key(&y) {
                d.insert(y, d[&x] + 1);
                q.push_back(y);
            }
        }
    }
    d
}

/// Reference Dijkstra (quadratic): least weights from `src`.
fn dijkstra(adj: &Adj, src: i64) -> BTreeMap<i64, f64> {
    let mut dist = BTreeMap::from([(src, 0.0f64)]);
    let mut done = BTreeSet::new();
    loop {
        let next = dist
            .iter()
            .filter(|(v, _)| !done.contains(*v))
            .min_by(|a, b| a.1.total_cmp(b.1))
            .map(|(&v, &d)| (v, d));
        let Some((x, dx)) = next else { break };
        done.insert(x);
        for &(y, w) in &adj[&x] {
            if dist.get(&y).is_none_or(|&dy| dx + w < dy) {
                dist.insert(y, dx + w);
            }
        }
    }
    dist
}

/// The least weight of an arc `u → v` in the model.
fn arc_weight(adj: &Adj, u: i64, v: i64) -> Option<f64> {
    adj[&u]
        .iter()
        .filter(|a| a.0 == v)
        .map(|a| a.1)
        .min_by(f64::total_cmp)
}

/// Checks every query on every alive vertex (and every pair for paths and
/// edges) of `s` against the reference, through `sc`.
fn check_all(s: &Snapshot, sc: &mut QueryScratch) -> Result<(), TestCaseError> {
    let adj = model(s);
    let radj = reverse(&adj);
    let id = |x: i64| s.lookup(&ExternalId::Int(x)).expect("alive vertex");
    let ext = |v: VertexId| int_of(s.external(v));
    for (&x, l) in &adj {
        let v = id(x);
        for (dir, want) in [(Direction::Out, l), (Direction::In, &radj[&x])] {
            let nb = query::neighbors(s, v, dir).expect("neighbors");
            let mut got: Vec<(i64, f64)> = nb
                .ids
                .iter()
                .enumerate()
                .map(|(i, &y)| (ext(y), nb.weights.map_or(1.0, |w| w[i])))
                .collect();
            prop_assert!(nb.ids.windows(2).all(|w| w[0] <= w[1]), "sorted by live id");
            prop_assert_eq!(nb.weights.is_some(), s.is_weighted());
            got.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            prop_assert_eq!(&got, want, "neighbors {:?} of {}", dir, x);
            prop_assert_eq!(query::degree(s, v, dir).expect("degree"), want.len());
        }
        let dist = bfs(&adj, x);
        for k in 0..4u32 {
            let got = query::khop_with(s, v, k, sc).expect("khop");
            let mut want: Vec<(i64, u32)> = dist
                .iter()
                .filter(|&(&y, &d)| y != x && d <= k)
                .map(|(&y, &d)| (y, d))
                .collect();
            want.sort_by_key(|&(y, d)| (d, y));
            let mut ext_got: Vec<(i64, u32)> = got.iter().map(|&(y, d)| (ext(y), d)).collect();
            prop_assert!(
                got.windows(2).all(|w| (w[0].1, w[0].0) < (w[1].1, w[1].0)),
                "order"
            );
            ext_got.sort_by_key(|&(y, d)| (d, y));
            prop_assert_eq!(&ext_got, &want, "khop {} of {}", k, x);
            let count = query::khop_count_with(s, v, k, sc).expect("count");
            prop_assert_eq!(count, want.len() as u64, "khop_count {} of {}", k, x);
        }
        let wdist = s.is_weighted().then(|| dijkstra(&adj, x));
        for &y in adj.keys() {
            let u2 = id(y);
            prop_assert_eq!(
                query::has_edge(s, v, u2).expect("has_edge"),
                arc_weight(&adj, x, y).is_some()
            );
            let got = query::path_with(s, v, u2, sc).expect("path");
            check_path(&adj, x, y, got.as_ref(), &dist, wdist.as_ref(), ext)?;
        }
    }
    Ok(())
}

fn check_path(
    adj: &Adj,
    x: i64,
    y: i64,
    got: Option<&query::Path>,
    dist: &BTreeMap<i64, u32>,
    wdist: Option<&BTreeMap<i64, f64>>,
    ext: impl Fn(VertexId) -> i64,
) -> Result<(), TestCaseError> {
    let Some(p) = got else {
        prop_assert!(!dist.contains_key(&y), "path {} -> {} exists", x, y);
        return Ok(());
    };
    let vs: Vec<i64> = p.vertices.iter().map(|&v| ext(v)).collect();
    prop_assert_eq!(vs.first(), Some(&x));
    prop_assert_eq!(vs.last(), Some(&y));
    prop_assert_eq!(p.hops as usize, vs.len() - 1);
    let mut sum = 0.0;
    for w in vs.windows(2) {
        let a = arc_weight(adj, w[0], w[1]);
        prop_assert!(
            a.is_some(),
            "step {} -> {} of path {:?} is no edge",
            w[0],
            w[1],
            vs
        );
        sum += a.unwrap_or(0.0);
    }
    match wdist {
        None => {
            prop_assert_eq!(Some(&p.hops), dist.get(&y), "hops {} -> {}", x, y);
            prop_assert_eq!(p.length, None);
        }
        Some(wd) => {
            let want = wd[&y];
            prop_assert_eq!(p.length, Some(want), "length {} -> {}", x, y);
            prop_assert!(
                (sum - want).abs() < 1e-9,
                "steps sum to {} not {}",
                sum,
                want
            );
        }
    }
    Ok(())
}

/// A base graph of `n` vertices with external ids `3 v + 1`.
fn base(
    n: usize,
    edges: &[(u32, u32, u8)],
    directed: bool,
    weighted: bool,
    degree: bool,
    dups: bool,
) -> Arc<Graph> {
    let buf = EdgeBuffer {
        src: edges.iter().map(|e| e.0 % n as u32).collect(),
        dst: edges.iter().map(|e| e.1 % n as u32).collect(),
        weights: weighted.then(|| edges.iter().map(|e| e.2 as f64).collect()),
    };
    let ids = IdMap::from_ints((0..n as i64).map(|v| 3 * v + 1).collect());
    let opts = BuildOptions {
        directed,
        duplicates: if dups {
            DuplicatePolicy::Keep
        } else {
            DuplicatePolicy::Drop
        },
        order: OrderChoice::Exactly(if degree {
            VertexOrder::Degree
        } else {
            VertexOrder::None
        }),
        ..Default::default()
    };
    Arc::new(build(n, buf, ids, &opts).expect("base graph"))
}

fn op_strategy(ids: i64) -> impl Strategy<Value = Op> {
    let id = move || (0..ids).prop_map(|i| ExternalId::Int(3 * i + 1));
    prop_oneof![
        1 => id().prop_map(Op::AddVertex),
        1 => id().prop_map(Op::RemoveVertex),
        6 => (id(), id(), 1u8..9).prop_map(|(u, v, w)| Op::AddEdge { u, v, w: Some(w as f64) }),
        3 => (id(), id()).prop_map(|(u, v)| Op::RemoveEdge { u, v }),
        1 => (id(), id(), 1u8..9).prop_map(|(u, v, w)| Op::SetWeight { u, v, w: w as f64 }),
    ]
}

/// Applies each transaction (one failing op aborts it), returning the
/// snapshot of every version.
fn commit_all(live: &LiveGraph, txs: Vec<Vec<Op>>, weighted: bool) -> Vec<Snapshot> {
    let mut snaps = vec![live.snapshot()];
    for ops in txs {
        let mut tx = live.begin();
        let mut ok = true;
        for op in ops {
            let op = match op {
                Op::AddEdge { u, v, w } if !weighted => Op::AddEdge {
                    u,
                    v,
                    w: w.and(None),
                },
                op => op,
            };
            if tx.apply(op).is_err() {
                ok = false;
                break;
            }
        }
        if ok {
            live.commit(tx).expect("commit");
            snaps.push(live.snapshot());
        } else {
            live.abort(tx);
        }
    }
    snaps
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Every query on every vertex (and pair) of a random graph equals the
    /// reference, through a fresh, a reused sparse and a dense scratch.
    #[test]
    fn queries_match_the_reference_on_random_graphs(
        n in 1usize..30,
        edges in prop::collection::vec((0u32..30, 0u32..30, 1u8..9), 0..90),
        directed in any::<bool>(),
        weighted in any::<bool>(),
        degree in any::<bool>(),
        dups in any::<bool>(),
    ) {
        let live = LiveGraph::in_memory(base(n, &edges, directed, weighted, degree, dups));
        let s = live.snapshot();
        check_all(&s, &mut QueryScratch::new())?;
        let mut dense = QueryScratch::dense();
        check_all(&s, &mut dense)?;
        check_all(&s, &mut dense)?;
    }

    /// After random transactions (vertices added and removed, edges added,
    /// removed and reweighted), every version's snapshot answers as the
    /// reference over that version, old snapshots included, through one
    /// scratch shared by all versions.
    #[test]
    fn queries_match_the_reference_after_transactions(
        n in 1usize..24,
        edges in prop::collection::vec((0u32..24, 0u32..24, 1u8..9), 0..60),
        directed in any::<bool>(),
        weighted in any::<bool>(),
        dups in any::<bool>(),
        txs in prop::collection::vec(prop::collection::vec(op_strategy(32), 1..6), 1..10),
        dense in any::<bool>(),
    ) {
        let live = LiveGraph::in_memory(base(n, &edges, directed, weighted, false, dups));
        let snaps = commit_all(&live, txs, weighted);
        let mut sc = if dense { QueryScratch::dense() } else { QueryScratch::new() };
        for s in snaps.iter().rev() {
            check_all(s, &mut sc)?;
        }
    }
}

fn small(directed: bool, weighted: bool) -> LiveGraph {
    let edges = [(0, 1, 2), (1, 2, 3), (2, 3, 4)];
    LiveGraph::in_memory(base(5, &edges, directed, weighted, false, false))
}

#[test]
fn every_query_refuses_a_vertex_that_is_not_alive() {
    let live = small(true, false);
    let mut tx = live.begin();
    tx.apply(Op::RemoveVertex(ExternalId::Int(13)))
        .expect("remove");
    live.commit(tx).expect("commit");
    let s = live.snapshot();
    // The base is in natural order: live id 4 is external id 13.
    let dead: VertexId = 4;
    assert!(!s.is_alive(dead));
    for v in [dead, s.id_bound() as VertexId, VertexId::MAX] {
        let unknown = QueryError::UnknownVertex {
            v,
            version: s.version(),
        };
        assert_eq!(
            query::neighbors(&s, v, Direction::Out).err(),
            Some(unknown.clone())
        );
        assert_eq!(
            query::degree(&s, v, Direction::In).err(),
            Some(unknown.clone())
        );
        assert_eq!(query::has_edge(&s, 0, v).err(), Some(unknown.clone()));
        assert_eq!(query::has_edge(&s, v, 0).err(), Some(unknown.clone()));
        assert_eq!(query::khop(&s, v, 2).err(), Some(unknown.clone()));
        assert_eq!(query::khop_count(&s, v, 2).err(), Some(unknown.clone()));
        assert_eq!(query::path(&s, v, 0).err(), Some(unknown.clone()));
        assert_eq!(query::path(&s, 0, v).err(), Some(unknown.clone()));
        assert!(unknown.to_string().contains("does not exist"));
    }
}

#[test]
fn shortest_paths_refuse_a_negative_weight_committed_after_the_base() {
    let live = small(true, true);
    let s0 = live.snapshot();
    let mut tx = live.begin();
    let (u, v) = (ExternalId::Int(10), ExternalId::Int(13));
    tx.apply(Op::AddEdge {
        u,
        v,
        w: Some(-1.0),
    })
    .expect("add");
    live.commit(tx).expect("commit");
    let s1 = live.snapshot();
    let mut sc = QueryScratch::new();
    let p = query::path_with(&s0, 0, 3, &mut sc).expect("old version is fine");
    assert_eq!(p.map(|p| p.length), Some(Some(9.0)));
    let err = query::path_with(&s1, 0, 3, &mut sc).expect_err("negative weight");
    assert!(
        matches!(err, QueryError::InvalidWeight { w, .. } if w == -1.0),
        "{err}"
    );
    assert!(query::path_with(&s0, 0, 3, &mut sc).is_ok());
}

#[test]
fn shortest_paths_refuse_a_negative_weight_in_the_base() {
    let edges = EdgeBuffer {
        src: vec![0, 1],
        dst: vec![1, 2],
        weights: Some(vec![1.0, -2.0]),
    };
    let g = build(
        3,
        edges,
        IdMap::from_ints(vec![5, 6, 7]),
        &BuildOptions::directed(),
    )
    .expect("graph");
    let live = LiveGraph::in_memory(Arc::new(g));
    let s = live.snapshot();
    let err = query::path(&s, 0, 1).expect_err("negative weight");
    assert_eq!(
        err,
        QueryError::InvalidWeight {
            u: 1,
            v: 2,
            w: -2.0
        }
    );
}

#[test]
fn a_path_to_itself_is_the_vertex_and_an_unreachable_one_is_none() {
    for weighted in [false, true] {
        let live = small(true, weighted);
        let s = live.snapshot();
        let p = query::path(&s, 2, 2).expect("path").expect("itself");
        assert_eq!((p.vertices, p.hops), (vec![2], 0));
        assert_eq!(p.length, weighted.then_some(0.0));
        assert_eq!(query::path(&s, 3, 0).expect("path"), None);
        assert_eq!(query::path(&s, 0, 4).expect("path"), None);
        let p = query::path(&s, 0, 3).expect("path").expect("reachable");
        assert_eq!((p.vertices, p.hops), (vec![0, 1, 2, 3], 3));
        assert_eq!(p.length, weighted.then_some(9.0));
    }
}

/// Queries large enough to switch a sparse scratch to dense arrays
/// mid-query agree with a dense scratch and a fresh one.
#[test]
fn a_scratch_switching_to_dense_arrays_mid_query_agrees() {
    let n = 20_000u32;
    let edges: Vec<(u32, u32, u8)> = (0..n)
        .flat_map(|v| [(v, (v * 7 + 1) % n, 1), (v, (v * 13 + 5) % n, 2)])
        .collect();
    for weighted in [false, true] {
        let live = LiveGraph::in_memory(base(n as usize, &edges, true, weighted, false, false));
        let s = live.snapshot();
        let mut sparse = QueryScratch::new();
        let mut dense = QueryScratch::dense();
        for v in [0, 17, 9_999] {
            let a = query::khop_with(&s, v, 12, &mut sparse).expect("khop");
            assert_eq!(a, query::khop_with(&s, v, 12, &mut dense).expect("khop"));
            assert_eq!(a, query::khop(&s, v, 12).expect("khop"));
            let c = query::khop_count_with(&s, v, 12, &mut sparse).expect("count");
            assert_eq!(c, a.len() as u64);
            let far = a.last().map_or(v, |x| x.0);
            let p = query::path_with(&s, v, far, &mut sparse).expect("path");
            let q = query::path_with(&s, v, far, &mut dense).expect("path");
            assert_eq!(
                p.as_ref().map(|p| (p.hops, p.length)),
                q.map(|q| (q.hops, q.length))
            );
        }
    }
}
