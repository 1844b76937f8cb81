//! The algorithm registry: the one list of algorithms, their parameters,
//! the executors that run them and what their results hold. The CLI's
//! `run`, `algorithms`, `demo` and `batch`, the tests and the benchmark
//! harness all read it; no other list of algorithm names exists.
//!
//! Adding an algorithm: write `algo/NAME.rs` (`Config`, `Output`, `run`,
//! `reference`, `verify`, and a driver with `run_on` and `check_on` when
//! it fits the vertex-program contract), add a variant to [`Algorithm`],
//! and add its [`Entry`] to [`ALGORITHMS`].
use serde::Serialize;

/// An algorithm of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Algorithm {
    Bfs,
    Nhop,
    Sssp,
    PageRank,
    Ppr,
    Wcc,
    Scc,
    Betweenness,
    Triangles,
    Lcc,
    Kcore,
    Cdlp,
    Coloring,
    Mis,
}

/// An executor that can run an algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ExecutorKind {
    /// In memory, with the algorithm's fast kernel (the default).
    Memory,
    /// The shared-scan executor running the algorithm's driver (one job).
    Scan,
    /// The out-of-core executor (`plexus-ooc`) running the algorithm's
    /// driver over the stored graph under a memory budget.
    Ooc,
    /// The distributed executor (`plexus-dist`) running the algorithm's
    /// driver on every rank: thread ranks, or MPI processes under `mpirun`.
    Dist,
}

impl ExecutorKind {
    /// Every executor, in the order `--executor` lists them.
    pub const ALL: &'static [ExecutorKind] = &[
        ExecutorKind::Memory,
        ExecutorKind::Scan,
        ExecutorKind::Ooc,
        ExecutorKind::Dist,
    ];

    /// The name `--executor` takes.
    pub fn name(self) -> &'static str {
        match self {
            ExecutorKind::Memory => "memory",
            ExecutorKind::Scan => "scan",
            ExecutorKind::Ooc => "ooc",
            ExecutorKind::Dist => "dist",
        }
    }

    /// The executor named `name`.
    pub fn parse(name: &str) -> Option<ExecutorKind> {
        ExecutorKind::ALL.iter().copied().find(|e| e.name() == name)
    }
}

/// The kind of value a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamKind {
    /// A vertex, by external id.
    Vertex,
    /// A non-negative integer.
    Integer,
    /// A number.
    Number,
    /// One of a fixed set of words.
    Choice,
}

/// A parameter an algorithm may take.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Param {
    /// Its name (`--NAME` on the command line, the key in JSON jobs).
    pub name: &'static str,
    /// Its kind of value.
    pub kind: ParamKind,
    /// The values it accepts and its default, in words.
    pub rule: &'static str,
}

/// Every parameter any algorithm takes.
pub const PARAMS: &[Param] = &[
    Param {
        name: "source",
        kind: ParamKind::Vertex,
        rule: "a vertex of the graph; default: the first vertex",
    },
    Param {
        name: "hops",
        kind: ParamKind::Integer,
        rule: ">= 0; default 2",
    },
    Param {
        name: "delta",
        kind: ParamKind::Number,
        rule: "bucket width > 0; default 4 x mean weight / mean out-degree",
    },
    Param {
        name: "damping",
        kind: ParamKind::Number,
        rule: "in [0, 1); default 0.85",
    },
    Param {
        name: "iterations",
        kind: ParamKind::Integer,
        rule: "a fixed number of iterations; default: until converged (cdlp: 10)",
    },
    Param {
        name: "tolerance",
        kind: ParamKind::Number,
        rule: "> 0; stop when the L1 change is below n x tolerance; default 1e-6 (ppr: 1e-4/n)",
    },
    Param {
        name: "method",
        kind: ParamKind::Choice,
        rule: "jacobi, gauss-seidel, push or chebyshev; default: chosen by the graph",
    },
    Param {
        name: "precision",
        kind: ParamKind::Choice,
        rule: "double or single; default: single where its rounding is far below the tolerance",
    },
    Param {
        name: "seed",
        kind: ParamKind::Integer,
        rule: "any integer; default 1",
    },
    Param {
        name: "samples",
        kind: ParamKind::Integer,
        rule: "1..=n sources, drawn among vertices with out-degree > 0; default: all (exact)",
    },
    Param {
        name: "k",
        kind: ParamKind::Integer,
        rule: "<= n; also report membership of the k-core",
    },
    Param {
        name: "semantics",
        kind: ParamKind::Choice,
        rule: "networkx (default) or graphalytics",
    },
];

/// One algorithm's entry.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Entry {
    /// Which algorithm.
    #[serde(skip)]
    pub algorithm: Algorithm,
    /// Its name on the command line and in job files.
    pub name: &'static str,
    /// What it computes, in one line.
    pub about: &'static str,
    /// The parameters it takes (names in [`PARAMS`]).
    pub params: &'static [&'static str],
    /// The executors that run it (the first is the default).
    pub executors: &'static [ExecutorKind],
    /// The per-vertex result columns it writes.
    pub columns: &'static [&'static str],
    /// The graph must be weighted.
    pub needs_weights: bool,
    /// The LDBC Graphalytics name that selects its Graphalytics semantics.
    pub graphalytics: Option<&'static str>,
    /// What `--verify` checks.
    pub verifies: &'static str,
    /// Whether `plexus batch` (the job manager) runs it as a job.
    pub batch: bool,
    /// The graphs the benchmark harness runs it on (where the peer
    /// libraries define it); `None`: not benchmarked.
    pub bench_graphs: Option<BenchGraphs>,
}

/// Which graphs the benchmark harness runs an algorithm on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BenchGraphs {
    /// Directed and undirected graphs.
    Any,
    /// Undirected graphs only.
    Undirected,
    /// Directed graphs only.
    Directed,
}

/// In memory, the shared scan and distributed (`--executor dist`): every
/// algorithm with a driver.
const BOTH: &[ExecutorKind] = &[ExecutorKind::Memory, ExecutorKind::Scan, ExecutorKind::Dist];
/// Those and out of core (`--executor ooc`).
const ALL_THREE: &[ExecutorKind] = &[
    ExecutorKind::Memory,
    ExecutorKind::Scan,
    ExecutorKind::Ooc,
    ExecutorKind::Dist,
];
const MEMORY: &[ExecutorKind] = &[ExecutorKind::Memory];

/// The algorithms, in the order the CLI and the demo list them.
pub const ALGORITHMS: &[Entry] = &[
    Entry {
        algorithm: Algorithm::Bfs,
        name: "bfs",
        about: "breadth-first search: hop depth and a parent of every vertex",
        params: &["source", "semantics"],
        executors: ALL_THREE,
        columns: &["depth", "parent"],
        needs_weights: false,
        graphalytics: Some("BFS"),
        verifies: "depths are hop distances and every parent is an in-neighbour one level up",
        batch: true,
        bench_graphs: Some(BenchGraphs::Any),
    },
    Entry {
        algorithm: Algorithm::Sssp,
        name: "sssp",
        about: "single-source shortest paths (delta-stepping) on non-negative weights",
        params: &["source", "delta", "semantics"],
        executors: ALL_THREE,
        columns: &["distance", "parent"],
        needs_weights: true,
        graphalytics: Some("SSSP"),
        verifies: "no edge can shorten a distance and every parent edge is tight",
        batch: true,
        bench_graphs: Some(BenchGraphs::Any),
    },
    Entry {
        algorithm: Algorithm::PageRank,
        name: "pagerank",
        about: "PageRank",
        params: &[
            "damping",
            "iterations",
            "tolerance",
            "method",
            "precision",
            "semantics",
        ],
        executors: ALL_THREE,
        columns: &["rank"],
        needs_weights: false,
        graphalytics: Some("PR"),
        verifies: "one more iteration moves the ranks by less than the stopping rule allows",
        batch: true,
        bench_graphs: Some(BenchGraphs::Any),
    },
    Entry {
        algorithm: Algorithm::Ppr,
        name: "ppr",
        about: "personalised PageRank from one source",
        params: &[
            "source",
            "damping",
            "iterations",
            "tolerance",
            "method",
            "precision",
        ],
        executors: ALL_THREE,
        columns: &["rank"],
        needs_weights: false,
        graphalytics: None,
        verifies: "one more iteration moves the ranks by less than the stopping rule allows",
        batch: true,
        bench_graphs: Some(BenchGraphs::Any),
    },
    Entry {
        algorithm: Algorithm::Wcc,
        name: "wcc",
        about: "weakly connected components, labelled by their smallest vertex",
        params: &["semantics"],
        executors: ALL_THREE,
        columns: &["component"],
        needs_weights: false,
        graphalytics: Some("WCC"),
        verifies: "every edge joins equal labels and every label names a vertex of its component",
        batch: true,
        bench_graphs: Some(BenchGraphs::Any),
    },
    Entry {
        algorithm: Algorithm::Scc,
        name: "scc",
        about: "strongly connected components, labelled by their smallest vertex",
        params: &[],
        executors: BOTH,
        columns: &["component"],
        needs_weights: false,
        graphalytics: None,
        verifies: "the components equal Kosaraju's",
        batch: false,
        bench_graphs: Some(BenchGraphs::Directed),
    },
    Entry {
        algorithm: Algorithm::Betweenness,
        name: "betweenness",
        about: "betweenness centrality (Brandes), exact or from sampled sources",
        params: &["samples", "seed"],
        executors: BOTH,
        columns: &["betweenness"],
        needs_weights: false,
        graphalytics: None,
        verifies: "the centralities equal a sequential Brandes run from the same sources",
        batch: false,
        bench_graphs: Some(BenchGraphs::Any),
    },
    Entry {
        algorithm: Algorithm::Triangles,
        name: "triangles",
        about: "triangle count, per vertex and in total",
        params: &[],
        executors: MEMORY,
        columns: &["triangles"],
        needs_weights: false,
        graphalytics: None,
        verifies: "per-vertex counts sum to three times the total and match list intersections",
        batch: false,
        bench_graphs: Some(BenchGraphs::Undirected),
    },
    Entry {
        algorithm: Algorithm::Lcc,
        name: "lcc",
        about: "local clustering coefficient",
        params: &["semantics"],
        executors: MEMORY,
        columns: &["lcc"],
        needs_weights: false,
        graphalytics: Some("LCC"),
        verifies: "each coefficient equals its neighbourhood's edge count over the possible pairs",
        batch: false,
        bench_graphs: Some(BenchGraphs::Undirected),
    },
    Entry {
        algorithm: Algorithm::Kcore,
        name: "kcore",
        about: "k-core decomposition: the core number of every vertex",
        params: &["k"],
        executors: ALL_THREE,
        columns: &["core"],
        needs_weights: false,
        graphalytics: None,
        verifies: "each k-core has minimum degree k and no vertex outside it could join",
        batch: false,
        bench_graphs: Some(BenchGraphs::Undirected),
    },
    Entry {
        algorithm: Algorithm::Cdlp,
        name: "cdlp",
        about: "community detection by label propagation",
        params: &["iterations", "semantics"],
        executors: ALL_THREE,
        columns: &["label"],
        needs_weights: false,
        graphalytics: Some("CDLP"),
        verifies: "the labels equal a sequential run of the same iterations",
        batch: true,
        bench_graphs: Some(BenchGraphs::Undirected),
    },
    Entry {
        algorithm: Algorithm::Coloring,
        name: "coloring",
        about: "greedy graph colouring (Jones-Plassmann)",
        params: &["seed"],
        executors: ALL_THREE,
        columns: &["color"],
        needs_weights: false,
        graphalytics: None,
        verifies: "no edge joins two vertices of one colour",
        batch: false,
        bench_graphs: Some(BenchGraphs::Undirected),
    },
    Entry {
        algorithm: Algorithm::Mis,
        name: "mis",
        about: "maximal independent set (Luby)",
        params: &["seed"],
        executors: ALL_THREE,
        columns: &["in_set"],
        needs_weights: false,
        graphalytics: None,
        verifies: "no edge joins two members and every other vertex has a member neighbour",
        batch: false,
        bench_graphs: Some(BenchGraphs::Undirected),
    },
    Entry {
        algorithm: Algorithm::Nhop,
        name: "nhop",
        about: "the vertices within n hops of a source",
        params: &["source", "hops"],
        executors: BOTH,
        columns: &["depth"],
        needs_weights: false,
        graphalytics: None,
        verifies: "depths are hop distances up to the hop limit",
        batch: false,
        bench_graphs: None,
    },
];

/// The entry named `name`, or by its Graphalytics name in any case (then
/// with `true`: the caller applies Graphalytics semantics).
pub fn find(name: &str) -> Option<(&'static Entry, bool)> {
    ALGORITHMS
        .iter()
        .find(|e| e.name == name)
        .map(|e| (e, false))
        .or_else(|| {
            ALGORITHMS
                .iter()
                .find(|e| {
                    e.graphalytics
                        .is_some_and(|ga| ga.eq_ignore_ascii_case(name))
                })
                .map(|e| (e, true))
        })
}

/// The entry of `algorithm`.
pub fn entry(algorithm: Algorithm) -> &'static Entry {
    ALGORITHMS
        .iter()
        .find(|e| e.algorithm == algorithm)
        .unwrap_or(&ALGORITHMS[0])
}

/// The parameter named `name`.
pub fn param(name: &str) -> Option<&'static Param> {
    PARAMS.iter().find(|p| p.name == name)
}

impl Entry {
    /// Whether the algorithm takes parameter `name`.
    pub fn takes(&self, name: &str) -> bool {
        self.params.contains(&name)
    }

    /// Whether `executor` runs it.
    pub fn runs_on(&self, executor: ExecutorKind) -> bool {
        self.executors.contains(&executor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_param_and_entry_is_unique_and_known() {
        for (i, e) in ALGORITHMS.iter().enumerate() {
            assert!(ALGORITHMS[..i]
                .iter()
                .all(|o| o.name != e.name && o.algorithm != e.algorithm));
            for p in e.params {
                assert!(param(p).is_some(), "{}: unknown parameter {p}", e.name);
            }
            assert_eq!(entry(e.algorithm).name, e.name);
            assert_eq!(e.executors.first(), Some(&ExecutorKind::Memory));
        }
        assert_eq!(
            find("PR").map(|(e, ga)| (e.name, ga)),
            Some(("pagerank", true))
        );
        assert_eq!(
            find("kcore").map(|(e, ga)| (e.name, ga)),
            Some(("kcore", false))
        );
        assert_eq!(
            find("pr").map(|(e, ga)| (e.name, ga)),
            Some(("pagerank", true))
        );
        assert!(find("nope").is_none());
    }
}
