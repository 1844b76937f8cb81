//! The algorithm library. Each file opens with its contract (what it
//! returns, sentinels, method and citation, what it needs of its input), and
//! holds `run` (parallel), `reference` (plain sequential) and `verify`
//! (checks the defining property on any graph, naming what broke).

pub mod betweenness;
pub mod bfs;
pub mod cdlp;
pub mod coloring;
pub mod kcore;
pub mod lcc;
pub mod mis;
pub mod nhop;
pub mod pagerank;
pub mod pagerank_push;
pub mod scc;
pub mod sssp;
pub mod triangles;
pub mod wcc;

#[cfg(test)]
pub(crate) mod testgraphs;
