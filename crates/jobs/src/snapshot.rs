//! Snapshots: the graph versions jobs pin.
//!
//! A [`Snapshot`] is one immutable version of a named graph: the opened
//! store (its arrays memory-mapped, shared by every job) plus a version
//! number. A job pins the snapshot that was current when it was submitted
//! (an `Arc`), so a version published later by the transactional store is
//! seen only by jobs submitted after it, and a version's topology lives as
//! long as some job still reads it. Today every graph has one version; the
//! [`Catalog`] already hands out new version numbers on [`Catalog::publish`].
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use plexus_graph::Graph;

/// A version of a graph: numbers grow with every publication in a catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SnapshotId(pub u64);

impl std::fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// One immutable version of a named graph.
#[derive(Debug)]
pub struct Snapshot {
    name: String,
    id: SnapshotId,
    graph: Graph,
}

impl Snapshot {
    /// A snapshot of `graph` named `name` with version `id`.
    pub fn new(name: impl Into<String>, id: SnapshotId, graph: Graph) -> Self {
        Snapshot {
            name: name.into(),
            id,
            graph,
        }
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The version.
    pub fn id(&self) -> SnapshotId {
        self.id
    }

    /// The topology, shared by every job on this snapshot.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
}

/// The current snapshot of each named graph.
#[derive(Debug, Default)]
pub struct Catalog {
    inner: Mutex<CatalogInner>,
}

#[derive(Debug, Default)]
struct CatalogInner {
    current: HashMap<String, Arc<Snapshot>>,
    last_version: u64,
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Catalog::default()
    }

    /// Makes `graph` the current version of `name` and returns it. Jobs
    /// already running keep the version they pinned.
    pub fn publish(&self, name: &str, graph: Graph) -> Arc<Snapshot> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.last_version += 1;
        let snap = Arc::new(Snapshot::new(name, SnapshotId(inner.last_version), graph));
        inner.current.insert(name.to_string(), Arc::clone(&snap));
        snap
    }

    /// The current version of `name`, pinned (the caller holds it alive).
    pub fn pin(&self, name: &str) -> Option<Arc<Snapshot>> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.current.get(name).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_graph::BuildOptions;

    #[test]
    fn a_pinned_snapshot_outlives_a_newer_version() {
        let cat = Catalog::new();
        let g1 = Graph::from_edges(2, &[(0, 1)], &BuildOptions::directed()).unwrap();
        let g2 = Graph::from_edges(3, &[(0, 1), (1, 2)], &BuildOptions::directed()).unwrap();
        cat.publish("g", g1);
        let pinned = cat.pin("g").unwrap();
        cat.publish("g", g2);
        assert_eq!(pinned.id(), SnapshotId(1));
        assert_eq!(pinned.graph().num_vertices(), 2);
        let now = cat.pin("g").unwrap();
        assert_eq!(now.id(), SnapshotId(2));
        assert_eq!(now.graph().num_vertices(), 3);
        assert!(cat.pin("h").is_none());
    }
}
