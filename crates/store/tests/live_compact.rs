//! Compaction of a stored live graph: the merged version becomes the base
//! (renumbered in the base's vertex order), commits made during a
//! background compaction are carried over, snapshots taken before it keep
//! reading the old base, and a reopened graph equals the one before.
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use plexus_graph::{
    BuildOptions, DataDir, ExternalId, Graph, OrderChoice, Provenance, VertexOrder,
};
use plexus_store::{Access, LiveGraph, Op, Snapshot};

/// Every arc of `s` as a pair of external ids.
fn arcs(s: &Snapshot) -> BTreeSet<(ExternalId, ExternalId)> {
    let mut out = BTreeSet::new();
    for v in 0..s.id_bound() as u32 {
        if s.is_alive(v) {
            for &y in s.out(v).0 {
                out.insert((s.external(v), s.external(y)));
            }
        }
    }
    out
}

fn edge(u: i64, v: i64) -> Op {
    Op::AddEdge {
        u: ExternalId::Int(u),
        v: ExternalId::Int(v),
        w: None,
    }
}

#[test]
fn compaction_keeps_every_version_readable() {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::new(dir.path());
    // A star plus a path, in degree order so compaction must renumber.
    let mut pairs: Vec<(u32, u32)> = (1..300).map(|v| (0, v)).collect();
    pairs.extend((300..600).map(|v| (v, v + 1)));
    let opts = BuildOptions {
        order: OrderChoice::Exactly(VertexOrder::Degree),
        ..BuildOptions::undirected()
    };
    let g = Graph::from_edges(602, &pairs, &opts).unwrap();
    data.save("g", &g, &Provenance::default(), false).unwrap();

    let (live, _) = LiveGraph::open(&data, "g", Access::Write).unwrap();
    let live = Arc::new(live);
    for i in 0..50 {
        let mut tx = live.begin();
        tx.apply(edge(1000 + i, 5 + i)).unwrap();
        tx.apply(Op::RemoveEdge {
            u: ExternalId::Int(0),
            v: ExternalId::Int(1 + i),
        })
        .unwrap();
        live.commit(tx).unwrap();
    }
    let before = live.snapshot();
    let before_graph = before.graph().unwrap();
    let want = arcs(&before);
    assert!(live.compact_in_background(0.01));
    // Commits go on while it runs.
    let mut tx = live.begin();
    tx.apply(edge(5000, 5001)).unwrap();
    live.commit(tx).unwrap();
    while live.compacting() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let report = live.last_compaction().unwrap().unwrap();
    assert_eq!(report.version, 50);
    let now = live.snapshot();
    assert_eq!(now.version(), 51);
    assert_eq!(now.ops_since_base(), 1);
    assert_eq!(now.base().base_version(), 50);
    let mut want_now = want.clone();
    want_now.insert((ExternalId::Int(5000), ExternalId::Int(5001)));
    want_now.insert((ExternalId::Int(5001), ExternalId::Int(5000)));
    assert_eq!(arcs(&now), want_now);
    // The old snapshot and its graph still read the old base.
    assert_eq!(arcs(&before), want);
    assert_eq!(before_graph.num_arcs(), before.num_arcs());
    // The new base is in degree order: vertex 0 of it has the top degree.
    let base = now.base();
    let top = (0..base.num_vertices() as u32)
        .map(|v| base.out_degree(v))
        .max();
    assert_eq!(Some(base.out_degree(0)), top);
    drop(live);
    // Reopened: the same newest version.
    let (again, report) = LiveGraph::open(&data, "g", Access::Write).unwrap();
    assert_eq!(report.base_version, 50);
    assert_eq!(report.replayed, 1);
    assert_eq!(arcs(&again.snapshot()), want_now);
    data.check("g").unwrap();
}
