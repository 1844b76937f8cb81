//! The changes a transaction makes, in external ids.
//!
//! Ops name vertices by external id so that the log survives compaction
//! (which renumbers internal ids) and replays to the same graph.
use plexus_graph::{ExternalId, Weight};

/// One change. Semantics, checked when a transaction applies it:
/// - `AddVertex`: the vertex must not exist.
/// - `RemoveVertex`: the vertex must exist; its edges go with it.
/// - `AddEdge`: endpoints are created when missing; the edge must not
///   exist; a weight is required on weighted graphs and refused on
///   unweighted ones. On undirected graphs `(u, v)` is `{u, v}`.
/// - `RemoveEdge`: the edge must exist; every stored copy is removed.
/// - `SetWeight`: the edge must exist; every copy gets the weight.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    AddVertex(ExternalId),
    RemoveVertex(ExternalId),
    AddEdge {
        u: ExternalId,
        v: ExternalId,
        w: Option<Weight>,
    },
    RemoveEdge {
        u: ExternalId,
        v: ExternalId,
    },
    SetWeight {
        u: ExternalId,
        v: ExternalId,
        w: Weight,
    },
}
