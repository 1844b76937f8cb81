//! The engine's conformance check on the MPI transport: run under
//! `mpirun -np P`, every rank builds the same pseudo-random graphs
//! (directed and undirected, weighted or not, duplicate arcs or not) and
//! checks every driver on the distributed executor against the in-memory
//! kernel. Rank 0 prints one summary line; the exit status is non-zero on
//! any failure. `crates/dist/tests/mpi.sh` runs it with 1, 2 and 4 ranks.
use std::process::ExitCode;

use plexus_dist::comm::Comm;
use plexus_dist::DistExecutor;
use plexus_engine::conformance::check;
use plexus_engine::registry::{ExecutorKind, ALGORITHMS};
use plexus_graph::{BuildOptions, DuplicatePolicy, Graph, VertexId};

/// Graph `i` of the fixed family (the same on every rank).
fn graph(i: u64) -> Graph {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (i + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let n = 20 + next() % 200;
    let m = next() % (4 * n);
    let edges: Vec<(VertexId, VertexId, f64)> = (0..m)
        .map(|k| {
            let u = if k.is_multiple_of(5) { 1 } else { next() % n };
            (
                u as VertexId,
                (next() % n) as VertexId,
                (next() % 9) as f64 * 0.5,
            )
        })
        .collect();
    let opts = BuildOptions {
        directed: i.is_multiple_of(2),
        duplicates: if i.is_multiple_of(3) {
            DuplicatePolicy::Drop
        } else {
            DuplicatePolicy::Keep
        },
        ..BuildOptions::default()
    };
    let built = if i % 4 == 1 {
        Graph::from_weighted_edges(n as usize, &edges, &opts)
    } else {
        let pairs: Vec<(VertexId, VertexId)> = edges.iter().map(|e| (e.0, e.1)).collect();
        Graph::from_edges(n as usize, &pairs, &opts)
    };
    built.unwrap_or_else(|e| panic!("graph {i}: {e}"))
}

fn main() -> ExitCode {
    let (_universe, comm) = match plexus_dist::mpi::init() {
        Ok(x) => x,
        Err(e) => {
            eprintln!("mpi_conformance: {e}");
            return ExitCode::FAILURE;
        }
    };
    let graphs: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let algorithms: Vec<_> = ALGORITHMS
        .iter()
        .filter(|e| e.runs_on(ExecutorKind::Dist))
        .collect();
    let mut failures = 0u64;
    for i in 0..graphs {
        let g = graph(i);
        let exec = match DistExecutor::new(&comm, &g) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("rank {}: {e}", comm.rank());
                return ExitCode::FAILURE;
            }
        };
        for e in &algorithms {
            if let Err(m) = check(e.algorithm, &g, &exec, i) {
                eprintln!("rank {}: graph {i}: {}: {m}", comm.rank(), e.name);
                failures += 1;
            }
            if let Some(f) = exec.fault() {
                eprintln!("rank {}: {f}", comm.rank());
                return ExitCode::FAILURE;
            }
        }
    }
    let total = match comm.all_reduce_sum(&[failures]) {
        Ok(x) => x[0],
        Err(e) => {
            eprintln!("rank {}: {e}", comm.rank());
            return ExitCode::FAILURE;
        }
    };
    if comm.rank() == 0 {
        let names: Vec<&str> = algorithms.iter().map(|e| e.name).collect();
        println!(
            "mpi conformance on {} ranks: {graphs} graphs x {} drivers ({}): {}",
            comm.size(),
            names.len(),
            names.join(" "),
            if total == 0 {
                "ok".to_string()
            } else {
                format!("{total} failures")
            }
        );
    }
    if total == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
