//! The floor under a PageRank pass on a stored graph: how long this machine
//! takes to stream the in-edge sources alone, to gather from an array in
//! sequential order, and to gather in the graph's own (random) order, with
//! none of a pass's per-vertex work. Used in bench/NOTES.md to say how far
//! the fused kernel is from what the memory system allows.
//!
//! ```text
//! cargo run --release -p plexus-engine --example gather_floor -- DATA_DIR GRAPH [TRIAD_GB/s]
//! ```
//!
//! Every variant walks the CSC in 1,024-vertex blocks on the global rayon
//! pool (`RAYON_NUM_THREADS`), writes one f32 per vertex and prints the
//! median and minimum of 7 passes, and, given the triad bandwidth, the
//! fraction of it that the harness's byte count for PageRank (offsets 8 B
//! per vertex, sources 4 B per arc, 24 B of state per vertex) would report
//! at that pass time.
use std::time::Instant;

use plexus_engine::hugepages::from_fn;
use plexus_engine::prefetch::prefetch;
use plexus_graph::store::DataDir;
use rayon::prelude::*;

const BLOCK: usize = 1024;
const PASSES: usize = 7;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: gather_floor DATA_DIR GRAPH [TRIAD_GB/s]");
        std::process::exit(2);
    }
    let g = match DataDir::new(&args[1]).open(&args[2]) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let triad: Option<f64> = match args.get(3).map(|t| t.parse::<f64>()) {
        None => None,
        Some(Ok(t)) if t > 0.0 => Some(t),
        Some(_) => {
            eprintln!(
                "error: TRIAD_GB/s must be a positive number, got '{}'",
                args[3]
            );
            std::process::exit(2);
        }
    };
    let n = g.num_vertices();
    let offsets = g.inc().offsets();
    let sources = g.inc().neighbor_array();
    let arcs = sources.len();
    // Contributions as a pass reads them (f32), and a power-of-two copy
    // for the sequential gather, indexed by the arc position; on huge
    // pages, as the kernel keeps them.
    let prev: Vec<f32> = from_fn(n, |u| 1.0 / (1 + g.out_degree(u as u32)) as f32);
    let mask = n.next_power_of_two() - 1;
    let seq: Vec<f32> = from_fn(mask + 1, |i| 1.0 / (1 + i % 7) as f32);
    let bytes = 8 * (n + 1) + 4 * arcs + 24 * n;
    println!(
        "{}: {n} vertices, {arcs} arcs; a pass counts {bytes} bytes",
        args[2]
    );
    let report = |name: &str, ms: Vec<f64>| {
        let median = ms[PASSES / 2];
        let share = triad
            .map(|t| {
                format!(
                    ", {:.0} % of triad",
                    100.0 * bytes as f64 / (median * 1e6) / t
                )
            })
            .unwrap_or_default();
        println!(
            "  {name:46} median {median:7.1} ms, min {:7.1} ms{share}",
            ms[0]
        );
    };
    let mut out = vec![0f32; n];
    report(
        "stream sources (one f64 sum)",
        passes(offsets, &mut out, |a, b| {
            sources[a..b].iter().map(|&w| w as f64).sum()
        }),
    );
    // One read per arc position `k`: from an array in sequence, or the
    // contribution of the arc's source, asking the cache for the one 32
    // arcs ahead as the kernel does.
    let sequential = |k: usize| seq[k & mask] as f64;
    let graph_order = |k: usize| {
        if let Some(&w) = sources.get(k + 32) {
            prefetch(&prev, w as usize);
        }
        prev[sources[k] as usize] as f64
    };
    one_and_four_sums("sequential gather", offsets, &mut out, sequential, &report);
    one_and_four_sums(
        "graph-order gather",
        offsets,
        &mut out,
        graph_order,
        &report,
    );
}

/// Reports the passes that sum `read(k)` over each in-list's positions in
/// one sum and in four.
fn one_and_four_sums(
    label: &str,
    offsets: &[u64],
    out: &mut [f32],
    read: impl Fn(usize) -> f64 + Sync + Copy,
    report: &impl Fn(&str, Vec<f64>),
) {
    let one = passes(offsets, out, |a, b| (a..b).map(read).sum());
    report(&format!("{label}, one f64 sum"), one);
    let four = passes(offsets, out, |a, b| four_sums(a, b, read));
    report(&format!("{label}, four f64 sums"), four);
}

/// `Σ read(k)` over `a..b` in four independent sums (positions `k ≡ q`
/// mod 4 from `a`), the rest added after them.
fn four_sums(a: usize, b: usize, read: impl Fn(usize) -> f64) -> f64 {
    let mut lanes = [0f64; 4];
    let mut k = a;
    while k + 4 <= b {
        for (q, lane) in lanes.iter_mut().enumerate() {
            *lane += read(k + q);
        }
        k += 4;
    }
    (k..b).map(read).sum::<f64>() + lanes.iter().sum::<f64>()
}

/// Times [`PASSES`] passes that write `sum(first, end)` of every vertex's
/// in-list range to `out`, in 1,024-vertex blocks (one rayon task each);
/// returns the pass times in ms, sorted.
fn passes(offsets: &[u64], out: &mut [f32], sum: impl Fn(usize, usize) -> f64 + Sync) -> Vec<f64> {
    let mut ms: Vec<f64> = (0..PASSES)
        .map(|_| {
            let t = Instant::now();
            let total: f64 = out
                .par_chunks_mut(BLOCK)
                .enumerate()
                .with_max_len(1)
                .map(|(b, slots)| {
                    let lo = b * BLOCK;
                    let mut block = 0.0;
                    for (i, slot) in slots.iter_mut().enumerate() {
                        let s = sum(offsets[lo + i] as usize, offsets[lo + i + 1] as usize);
                        *slot = s as f32;
                        block += s;
                    }
                    block
                })
                .sum();
            std::hint::black_box(total);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    ms
}
