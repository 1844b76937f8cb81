//! Property tests of the builder against a plain reference model.
//!
//! Random small graphs (0–30 vertices, 0–120 edges with self-loops,
//! duplicates and optional weights, identity / shuffled integer / string
//! external ids) are built under every combination of directedness,
//! [`LoopPolicy`], [`DuplicatePolicy`] and [`OrderChoice`]. The CSR and the
//! CSC must hold exactly the arc multiset a `BTreeMap` model computes, in
//! external ids; the structural invariants (sorted lists, offsets, chunk
//! table, order permutation) must hold; and a save → open round trip through
//! [`DataDir`] must give the same graph.
use std::collections::BTreeMap;

use plexus_graph::store::check_graph_file;
use plexus_graph::{
    build, BuildOptions, DataDir, DuplicatePolicy, EdgeBuffer, ExternalId, Graph, IdMap,
    LoopPolicy, OrderChoice, Provenance, VertexId, VertexOrder,
};
use proptest::prelude::*;

const LOOPS: [LoopPolicy; 2] = [LoopPolicy::Keep, LoopPolicy::Drop];
const DUPS: [DuplicatePolicy; 4] = [
    DuplicatePolicy::Keep,
    DuplicatePolicy::Drop,
    DuplicatePolicy::Min,
    DuplicatePolicy::Sum,
];
const ORDERS: [OrderChoice; 4] = [
    OrderChoice::Exactly(VertexOrder::None),
    OrderChoice::Exactly(VertexOrder::Degree),
    OrderChoice::Exactly(VertexOrder::Rcm),
    // Inputs here are far below `AUTO_MIN_VERTICES`: the natural order.
    OrderChoice::Auto,
];

/// The order a build of `n` vertices under `o` records.
fn applied(o: &BuildOptions, n: usize) -> VertexOrder {
    match o.order {
        _ if n == 0 => VertexOrder::None,
        OrderChoice::Exactly(order) => order,
        OrderChoice::Auto => VertexOrder::None,
    }
}

/// External ids of an input graph, indexed by input (natural) id.
#[derive(Clone, Debug)]
enum Ids {
    Identity,
    Int(Vec<i64>),
    Str(Vec<String>),
}

/// A random input: `n` vertices, edges in input ids, optional weights given
/// in quarters (so every sum of them is exact in `f64`).
#[derive(Clone, Debug)]
struct Input {
    n: usize,
    edges: Vec<(VertexId, VertexId)>,
    quarters: Option<Vec<i64>>,
    ids: Ids,
}

impl Input {
    fn ext(&self, v: VertexId) -> ExternalId {
        match &self.ids {
            Ids::Identity => ExternalId::Int(v as i64),
            Ids::Int(x) => ExternalId::Int(x[v as usize]),
            Ids::Str(x) => ExternalId::Str(x[v as usize].clone()),
        }
    }
    fn id_map(&self) -> IdMap {
        match &self.ids {
            Ids::Identity => IdMap::Identity { n: self.n },
            Ids::Int(x) => IdMap::from_ints(x.clone()),
            Ids::Str(x) => IdMap::from_strings(x),
        }
    }
    fn buffer(&self) -> EdgeBuffer {
        EdgeBuffer {
            src: self.edges.iter().map(|e| e.0).collect(),
            dst: self.edges.iter().map(|e| e.1).collect(),
            weights: self
                .quarters
                .as_ref()
                .map(|q| q.iter().map(|&x| x as f64 / 4.0).collect()),
        }
    }
    fn build(&self, o: &BuildOptions) -> Graph {
        build(self.n, self.buffer(), self.id_map(), o).expect("a valid input builds")
    }
}

fn input() -> impl Strategy<Value = Input> {
    (0usize..=30)
        .prop_flat_map(|n| {
            let edges = if n == 0 {
                Just(Vec::new()).boxed()
            } else {
                prop::collection::vec((0..n as VertexId, 0..n as VertexId), 0..=120).boxed()
            };
            let ids = prop_oneof![
                Just(Ids::Identity),
                prop::collection::btree_set(-1000i64..1000, n..=n)
                    .prop_map(|s| s.into_iter().collect::<Vec<_>>())
                    .prop_shuffle()
                    .prop_map(Ids::Int),
                prop::collection::btree_set(-1000i64..1000, n..=n)
                    .prop_map(|s| s.into_iter().map(|x| format!("v{x}")).collect::<Vec<_>>())
                    .prop_shuffle()
                    .prop_map(Ids::Str),
            ];
            (Just(n), edges, any::<bool>(), ids)
        })
        .prop_flat_map(|(n, edges, weighted, ids)| {
            let m = edges.len();
            let quarters = if weighted {
                prop::collection::vec(-8i64..=40, m..=m)
                    .prop_map(Some)
                    .boxed()
            } else {
                Just(None).boxed()
            };
            (Just(n), Just(edges), quarters, Just(ids))
        })
        .prop_map(|(n, edges, quarters, ids)| Input {
            n,
            edges,
            quarters,
            ids,
        })
}

/// An arc in external ids with its weight in quarters (0 when unweighted).
type Arc = (ExternalId, ExternalId, i64);

/// The reference model: adjacency multisets keyed by external ids, with
/// the self-loop and duplicate policies applied.
fn reference(inp: &Input, o: &BuildOptions) -> Vec<Arc> {
    let mut adj: BTreeMap<(ExternalId, ExternalId), Vec<i64>> = BTreeMap::new();
    for (k, &(u, v)) in inp.edges.iter().enumerate() {
        if u == v && o.self_loops == LoopPolicy::Drop {
            continue;
        }
        let w = inp.quarters.as_ref().map_or(0, |q| q[k]);
        adj.entry((inp.ext(u), inp.ext(v))).or_default().push(w);
        if !o.directed && u != v {
            adj.entry((inp.ext(v), inp.ext(u))).or_default().push(w);
        }
    }
    let mut out = Vec::new();
    for ((s, d), mut ws) in adj {
        ws.sort_unstable();
        let kept = match o.duplicates {
            DuplicatePolicy::Keep => ws,
            DuplicatePolicy::Drop | DuplicatePolicy::Min => vec![ws[0]],
            DuplicatePolicy::Sum => vec![ws.iter().sum()],
        };
        out.extend(kept.into_iter().map(|w| (s.clone(), d.clone(), w)));
    }
    out
}

fn quarters_of(w: Option<f64>) -> i64 {
    let q = w.unwrap_or(0.0) * 4.0;
    assert_eq!(q.fract(), 0.0, "weight {w:?} is not a sum of input weights");
    q as i64
}

/// The arcs of one direction, `(src, dst, w)` in external ids, sorted.
fn external_arcs(g: &Graph, incoming: bool) -> Vec<Arc> {
    let ids = g.ids();
    let adj = if incoming { g.inc() } else { g.out() };
    let mut v = Vec::new();
    for x in 0..g.num_vertices() as VertexId {
        let ws = adj.weights(x);
        for (i, &y) in adj.neighbors(x).iter().enumerate() {
            let (s, d) = if incoming { (y, x) } else { (x, y) };
            v.push((
                ids.external(s),
                ids.external(d),
                quarters_of(ws.map(|w| w[i])),
            ));
        }
    }
    v.sort();
    v
}

/// The arcs of one direction as `(src, dst, weight bits)` in internal ids, sorted.
fn internal_arcs(g: &Graph, incoming: bool) -> Vec<(VertexId, VertexId, u64)> {
    let adj = if incoming { g.inc() } else { g.out() };
    let mut v = Vec::new();
    for x in 0..g.num_vertices() as VertexId {
        let ws = adj.weights(x);
        for (i, &y) in adj.neighbors(x).iter().enumerate() {
            let (s, d) = if incoming { (y, x) } else { (x, y) };
            v.push((s, d, ws.map_or(0, |w| w[i].to_bits())));
        }
    }
    v.sort_unstable();
    v
}

/// Checks one built graph against the model and the structural invariants.
fn check(inp: &Input, o: &BuildOptions, g: &Graph) -> Result<(), TestCaseError> {
    let what = format!("{o:?}");
    let n = inp.n;
    let want = reference(inp, o);
    let loops = want.iter().filter(|a| a.0 == a.1).count() as u64;

    // Counts and meta.
    prop_assert_eq!(g.num_vertices(), n, "{}", what);
    prop_assert_eq!(g.is_directed(), o.directed, "{}", what);
    prop_assert_eq!(g.is_weighted(), inp.quarters.is_some(), "{}", what);
    // An empty graph has no permutation, so it records no order.
    let want_order = applied(o, n);
    prop_assert_eq!(g.meta().order, want_order, "{}", what);
    prop_assert_eq!(g.num_arcs(), want.len() as u64, "{}", what);
    prop_assert_eq!(g.meta().self_loops, loops, "{}", what);
    let edges = if o.directed {
        want.len() as u64
    } else {
        (want.len() as u64 + loops) / 2
    };
    prop_assert_eq!(g.num_edges(), edges, "{}", what);
    if g.is_weighted() {
        let integral = want.iter().all(|a| a.2 % 4 == 0);
        prop_assert_eq!(g.meta().integral_weights, integral, "{}", what);
    }

    // The arc multisets, in external ids.
    prop_assert_eq!(&external_arcs(g, false), &want, "CSR: {}", what);
    prop_assert_eq!(&external_arcs(g, true), &want, "CSC: {}", what);
    // CSC is the transpose of CSR (internal ids, exact weights).
    prop_assert_eq!(
        internal_arcs(g, false),
        internal_arcs(g, true),
        "transpose: {}",
        what
    );
    prop_assert_eq!(g.arcs().count() as u64, g.num_arcs());

    // Offsets and sorted lists (kept duplicates ordered by weight).
    for adj in [g.out(), g.inc()] {
        let off = adj.offsets();
        prop_assert_eq!(off.len(), n + 1);
        prop_assert_eq!(off[0], 0);
        prop_assert_eq!(off[n], adj.num_edges());
        prop_assert!(
            off.windows(2).all(|w| w[0] <= w[1]),
            "offsets decrease: {}",
            what
        );
        for v in 0..n as VertexId {
            let nb = adj.neighbors(v);
            prop_assert_eq!(nb.len(), adj.degree(v));
            prop_assert!(nb.iter().all(|&t| (t as usize) < n));
            let ws = adj.weights(v);
            for k in 1..nb.len() {
                let sorted = match ws {
                    None => nb[k - 1] <= nb[k],
                    Some(w) => (nb[k - 1], w[k - 1]) <= (nb[k], w[k]),
                };
                prop_assert!(
                    sorted,
                    "list of {} not sorted: {:?} {:?} ({})",
                    v,
                    nb,
                    ws,
                    what
                );
            }
        }
    }

    // Chunk table: non-empty chunks covering 0..n contiguously.
    let chunks = g.chunks();
    if n == 0 {
        prop_assert!(chunks.is_empty());
    } else {
        prop_assert!(!chunks.is_empty());
        prop_assert_eq!(chunks[0].start, 0);
        prop_assert_eq!(chunks[chunks.len() - 1].end, n as u64);
        for c in chunks {
            prop_assert!(c.start < c.end, "empty chunk {:?}", c);
            let r = c.start as usize..c.end as usize;
            prop_assert_eq!(
                c.out_edges,
                g.out().offsets()[r.end] - g.out().offsets()[r.start]
            );
            prop_assert_eq!(
                c.in_edges,
                g.inc().offsets()[r.end] - g.inc().offsets()[r.start]
            );
        }
        for w in chunks.windows(2) {
            prop_assert_eq!(w[0].end, w[1].start);
            prop_assert_eq!(w[1].start % 64, 0);
        }
    }

    // Vertex order: natural_id / from_natural are inverse permutations and
    // the id map follows the relabelling.
    let mut seen = vec![false; n];
    for v in 0..n as VertexId {
        let r = g.natural_id(v);
        prop_assert!((r as usize) < n);
        prop_assert!(!seen[r as usize], "natural_id is not a permutation");
        seen[r as usize] = true;
        prop_assert_eq!(g.from_natural(r), v);
        prop_assert_eq!(g.natural_id(g.from_natural(v)), v);
        prop_assert_eq!(
            g.ids().external(v),
            inp.ext(r),
            "external id of {} ({})",
            v,
            what
        );
        prop_assert_eq!(g.ids().resolve(&g.ids().external_string(v)).ok(), Some(v));
        if applied(o, n) == VertexOrder::None {
            prop_assert_eq!(r, v);
        }
    }
    prop_assert_eq!(g.old_of_new().is_some(), applied(o, n) != VertexOrder::None);
    if applied(o, n) == VertexOrder::Degree {
        // Descending degree, ties in natural order. The degree is the arcs
        // the input gives a vertex under the self-loop policy, duplicates
        // counted: a directed edge adds to both ends, an undirected one to
        // both ends but a self-loop, stored once, to its vertex once.
        let mut deg = vec![0u64; n];
        for &(a, b) in &inp.edges {
            if a == b && o.self_loops == LoopPolicy::Drop {
                continue;
            }
            deg[a as usize] += 1;
            if a != b || o.directed {
                deg[b as usize] += 1;
            }
        }
        let deg = |v: VertexId| deg[g.natural_id(v) as usize];
        for v in 1..n as VertexId {
            let (a, b) = (deg(v - 1), deg(v));
            prop_assert!(
                a > b || (a == b && g.natural_id(v - 1) < g.natural_id(v)),
                "degree order broken at {}",
                v
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn csr_and_csc_hold_the_reference_arcs_under_every_policy_and_order(inp in input()) {
        for directed in [true, false] {
            for self_loops in LOOPS {
                for duplicates in DUPS {
                    for order in ORDERS {
                        let o = BuildOptions { directed, self_loops, duplicates, order };
                        let g = inp.build(&o);
                        check(&inp, &o, &g)?;
                    }
                }
            }
        }
    }

    #[test]
    fn the_reverse_holds_every_arc_backwards_on_the_same_arrays(inp in input()) {
        let swap = |arcs: Vec<(VertexId, VertexId, u64)>| {
            let mut v: Vec<_> = arcs.into_iter().map(|(s, d, w)| (d, s, w)).collect();
            v.sort_unstable();
            v
        };
        for directed in [true, false] {
            let o = BuildOptions { directed, ..BuildOptions::default() };
            let g = inp.build(&o);
            let r = g.reversed();
            prop_assert_eq!(r.num_vertices(), g.num_vertices());
            prop_assert_eq!(r.is_directed(), directed);
            prop_assert_eq!(r.old_of_new(), g.old_of_new());
            if directed {
                prop_assert_eq!(internal_arcs(&r, false), swap(internal_arcs(&g, false)));
                prop_assert_eq!(internal_arcs(&r, true), swap(internal_arcs(&g, true)));
                // Shared, not copied.
                prop_assert!(std::ptr::eq(r.out().neighbor_array(), g.inc().neighbor_array()));
            } else {
                prop_assert_eq!(internal_arcs(&r, false), internal_arcs(&g, false));
            }
            for c in r.chunks() {
                let (lo, hi) = (c.start as usize, c.end as usize);
                prop_assert_eq!(c.out_edges, r.out().offsets()[hi] - r.out().offsets()[lo]);
                prop_assert_eq!(c.in_edges, r.inc().offsets()[hi] - r.inc().offsets()[lo]);
            }
        }
    }

    #[test]
    fn saving_and_opening_through_the_data_dir_gives_the_same_graph(
        inp in input(),
        directed in any::<bool>(),
        l in 0usize..2,
        d in 0usize..4,
        r in 0usize..4,
    ) {
        let o = BuildOptions { directed, self_loops: LOOPS[l], duplicates: DUPS[d], order: ORDERS[r] };
        // Known bug, see `empty_graph_built_with_a_vertex_order_can_be_saved_and_reopened`.
        prop_assume!(inp.n > 0 || applied(&o, inp.n) == VertexOrder::None);
        let g = inp.build(&o);
        let dir = tempfile::tempdir().unwrap();
        let dd = DataDir::new(dir.path());
        dd.save("g", &g, &Provenance::default(), false).unwrap();
        let h = dd.open("g").unwrap();
        check_graph_file(&dd.graph_dir("g").join(plexus_graph::store::GRAPH_FILE)).unwrap();
        prop_assert_eq!(h.meta(), g.meta());
        prop_assert_eq!(h.num_vertices(), g.num_vertices());
        prop_assert_eq!(h.ids().kind(), g.ids().kind());
        prop_assert_eq!(internal_arcs(&h, false), internal_arcs(&g, false));
        prop_assert_eq!(internal_arcs(&h, true), internal_arcs(&g, true));
        prop_assert_eq!(h.chunks(), g.chunks());
        for v in 0..g.num_vertices() as VertexId {
            prop_assert_eq!(h.ids().external(v), g.ids().external(v));
            prop_assert_eq!(h.natural_id(v), g.natural_id(v));
            prop_assert_eq!(h.from_natural(v), g.from_natural(v));
        }
        // The reopened (memory-mapped) graph satisfies the model too.
        check(&inp, &o, &h)?;
        let listed = dd.list().unwrap();
        prop_assert_eq!(listed.len(), 1);
        prop_assert_eq!(listed[0].vertices, g.num_vertices() as u64);
        prop_assert_eq!(listed[0].edges, g.num_edges());
    }
}

#[test]
fn graph_with_no_vertices_builds_saves_and_opens() {
    for directed in [true, false] {
        let o = BuildOptions {
            directed,
            ..Default::default()
        };
        let g = build(0, EdgeBuffer::default(), IdMap::Identity { n: 0 }, &o).unwrap();
        assert_eq!((g.num_vertices(), g.num_arcs()), (0, 0));
        assert!(g.chunks().is_empty());
        let dir = tempfile::tempdir().unwrap();
        let dd = DataDir::new(dir.path());
        dd.save("empty", &g, &Provenance::default(), false).unwrap();
        let h = dd.open("empty").unwrap();
        assert_eq!(
            (h.num_vertices(), h.num_arcs(), h.is_directed()),
            (0, 0, directed)
        );
    }
}

#[test]
fn empty_graph_built_with_a_vertex_order_can_be_saved_and_reopened() {
    for order in [VertexOrder::Degree, VertexOrder::Rcm] {
        let o = BuildOptions {
            order: order.into(),
            ..Default::default()
        };
        let g = build(0, EdgeBuffer::default(), IdMap::Identity { n: 0 }, &o).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let dd = DataDir::new(dir.path());
        dd.save("empty", &g, &Provenance::default(), false).unwrap();
        let h = dd
            .open("empty")
            .unwrap_or_else(|e| panic!("{order:?}: {e}"));
        assert_eq!(h.meta(), g.meta());
    }
}

#[test]
fn endpoint_beyond_the_vertex_count_is_rejected() {
    let buf = EdgeBuffer::from_pairs(&[(0, 1), (1, 3)]);
    let e = build(3, buf, IdMap::Identity { n: 3 }, &BuildOptions::directed()).unwrap_err();
    assert!(e.to_string().contains("edge endpoint 3"), "{e}");
}

#[test]
fn id_map_of_the_wrong_length_is_rejected() {
    let buf = EdgeBuffer::from_pairs(&[(0, 1)]);
    let e = build(
        2,
        buf,
        IdMap::from_ints(vec![5, 6, 7]),
        &BuildOptions::directed(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("3 entries for 2 vertices"), "{e}");
}
