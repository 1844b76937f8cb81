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
//!
//! Then what bounds any PageRank pass on this machine, whatever its
//! kernel, for the 60 %-of-triad target of issue 5:
//! - what one random f32 read costs (ns per read per thread, with eight
//!   independent sums so that the core keeps as many misses in flight as
//!   it has buffers) from regions of 16 KiB to 256 MiB;
//! - how many arcs have a source among the `L1 / 4 B` and `L2 / 4 B`
//!   vertices of largest out-degree, the most reads any vertex order can
//!   serve from each cache (sizes from `/sys/devices/system/cpu/cpu0/cache`);
//! - how many (target, source segment) runs the in-lists make when the
//!   sources are cut into L1- or L2-sized segments.
//!
//! With the triad it prints the pass time that 60 % of triad allows and a
//! least pass time for each family of designs: pull in any order (L1 reads
//! free, the rest at the measured cost of their cache), segmented pull
//! (every read from the segment's cache, plus one accumulator update a
//! run, and the bytes of partial sums), and propagation blocking (14 B an
//! arc through memory at triad). Each bound is generous to the design; a
//! design is out of reach of 60 % when its bound exceeds the allowed time.
mod common;

use std::time::Instant;

use plexus_engine::hugepages::from_fn;
use plexus_engine::prefetch::prefetch;
use rayon::prelude::*;

const BLOCK: usize = 1024;
const PASSES: usize = 7;

fn main() {
    let (args, g) = common::stored_graph_from_args("DATA_DIR GRAPH [TRIAD_GB/s]");
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
    if n == 0 {
        eprintln!("error: graph '{}' has no vertices", args[2]);
        std::process::exit(2);
    }
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
    // The same loop with every read served from a region that fits L1
    // (8,192 f32s) or L2 (262,144; lengths are powers of two, indexed by
    // the source's low bits): what the loop costs when the memory system is
    // as kind as it can be.
    for (label, len) in [
        ("graph-order gather, all from L1", 8192usize),
        ("graph-order gather, all from 1 MiB", 262_144),
    ] {
        let region: Vec<f32> = (0..len).map(|i| prev[i % n]).collect();
        let kind = |k: usize| region[sources[k] as usize & (len - 1)] as f64;
        one_and_four_sums(label, offsets, &mut out, kind, &report);
    }

    println!("random f32 reads, eight independent sums (ns per read per thread, median of {PASSES} passes):");
    let threads = rayon::current_num_threads();
    let mut costs = Vec::new();
    for kib in [
        16usize, 128, 256, 512, 1024, 4096, 8192, 16384, 32768, 65536, 262144,
    ] {
        let ns = random_read_ns(kib * 1024 / 4, threads);
        println!("  region {:>7} KiB: {ns:6.2} ns", kib);
        costs.push((kib * 1024, ns));
    }
    let cache = |level: u32| plexus_graph::caches::level_bytes(level).map(|b| b as usize);
    let l1 = cache(1).unwrap_or(32 * 1024);
    let l2 = cache(2).unwrap_or(512 * 1024);
    let mut degrees: Vec<u64> = (0..n).map(|u| g.out_degree(u as u32) as u64).collect();
    degrees.sort_unstable_by(|a, b| b.cmp(a));
    let sourced = degrees.iter().filter(|&&d| d > 0).count();
    let top = |k: usize| degrees.iter().take(k).sum::<u64>();
    let (l1_arcs, l2_arcs) = (top(l1 / 4), top(l2 / 4) - top(l1 / 4));
    let cold_arcs = arcs as u64 - l1_arcs - l2_arcs;
    let cold_bytes = sourced.saturating_sub(l2 / 4) * 4;
    println!(
        "arcs by the cache their source's f32 could stay in (the {} and {} sources of largest out-degree fill L1 {} KiB and L2 {} KiB):",
        l1 / 4,
        l2 / 4,
        l1 / 1024,
        l2 / 1024
    );
    let share = |a: u64| 100.0 * a as f64 / arcs.max(1) as f64;
    println!(
        "  L1 {l1_arcs} ({:.1} %), L2 {l2_arcs} ({:.1} %), beyond {cold_arcs} ({:.1} %, from {} KiB of f32)",
        share(l1_arcs),
        share(l2_arcs),
        share(cold_arcs),
        cold_bytes / 1024
    );
    // In-edge lists are sorted by source, so a list meets a segment of `s`
    // consecutive sources in one run: count the runs.
    let runs = |s: usize| -> u64 {
        (0..n)
            .into_par_iter()
            .map(|v| {
                let list = &sources[offsets[v] as usize..offsets[v + 1] as usize];
                let mut count = 0u64;
                let mut last = usize::MAX;
                for &u in list {
                    if u as usize / s != last {
                        last = u as usize / s;
                        count += 1;
                    }
                }
                count
            })
            .sum()
    };
    let (l1_runs, l2_runs) = (runs(l1 / 4), runs(l2 / 4));
    println!(
        "  (target, source segment) runs: {l1_runs} with L1-sized segments, {l2_runs} with L2-sized ones"
    );
    if let Some(t) = triad {
        // The cheapest measured read cost from a region larger than a size,
        // and from one no larger than a size.
        let above = |b: usize| {
            costs
                .iter()
                .find(|&&(r, _)| r > b)
                .map_or(0.0, |&(_, ns)| ns)
        };
        let below = |b: usize| {
            costs
                .iter()
                .rev()
                .find(|&&(r, _)| r <= b)
                .map_or(0.0, |&(_, ns)| ns)
        };
        let ms_of_reads = |reads: u64, ns: f64| reads as f64 * ns / threads as f64 / 1e6;
        let ms_of_bytes = |b: u64| b as f64 / (t * 1e9) * 1e3;
        let budget_ms = bytes as f64 / (0.6 * t * 1e9) * 1e3;
        println!("least time for a pass, against the {budget_ms:.1} ms that 60 % of triad allows:");
        // Pull in any vertex order: the L1 reads free, the L2 reads at the
        // cheapest cost above L1, the rest at the cheapest cost of a region
        // no larger than theirs.
        let pull = ms_of_reads(l2_arcs, above(l1)) + ms_of_reads(cold_arcs, below(cold_bytes));
        println!(
            "  pull, any order: {pull:.1} ms (L2 reads at {:.2} ns, the rest at {:.2} ns, L1 reads free)",
            above(l1),
            below(cold_bytes)
        );
        // Segmented pull (Cagra): every read from the segment's cache, but
        // each run adds its partial sum to its target's accumulator, which
        // cannot share that cache (at best an L2 read and write), and the
        // partials cross memory unless they fit there (8 B a run); each arc
        // names its source in at least 2 B.
        let l1_cost = costs.first().map_or(0.0, |&(_, ns)| ns);
        for (name, segment, runs, ns) in [
            ("L1", l1 / 4, l1_runs, l1_cost),
            ("L2", l2 / 4, l2_runs, above(l1)),
        ] {
            let reads = ms_of_reads(arcs as u64, ns) + ms_of_reads(runs, above(l1));
            let moved = 2 * arcs as u64 + 8 * runs + 24 * n as u64;
            println!(
                "  segments of {segment} sources ({name}): reads {reads:.1} ms ({ns:.2} ns an arc, {:.2} ns a run); \
                 {} MiB moved, {:.1} ms at triad",
                above(l1),
                moved >> 20,
                ms_of_bytes(moved)
            );
        }
        // Propagation blocking: every arc's value written to a bin and read
        // back (4 + 4 B), its target named in 2 B, the out-lists read (4 B).
        let moved = 14 * arcs as u64 + 24 * n as u64;
        println!(
            "  propagation blocking: {} MiB moved, {:.1} ms at triad",
            moved >> 20,
            ms_of_bytes(moved)
        );
    }
}

/// Median cost in ns per read per thread of summing 2^25 f32s read at
/// random positions (a precomputed u32 stream, read in sequence as a pass
/// reads its sources) from a region of `len` f32s on huge pages.
fn random_read_ns(len: usize, threads: usize) -> f64 {
    const READS: usize = 1 << 25;
    let region: Vec<f32> = from_fn(len, |i| (i % 13) as f32);
    let index: Vec<u32> = from_fn(READS, |i| {
        // splitmix64 of the position: independent of the region's layout.
        let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % len as u64) as u32
    });
    let mut ms: Vec<f64> = (0..PASSES)
        .map(|_| {
            let t = Instant::now();
            let total: f64 = index
                .par_chunks(1 << 14)
                .with_max_len(1)
                .map(|chunk| {
                    let mut lanes = [0f64; 8];
                    let mut groups = chunk.chunks_exact(8);
                    for group in &mut groups {
                        for (lane, &i) in lanes.iter_mut().zip(group) {
                            *lane += region[i as usize] as f64;
                        }
                    }
                    let rest: f64 = groups
                        .remainder()
                        .iter()
                        .map(|&i| region[i as usize] as f64)
                        .sum();
                    rest + lanes.iter().sum::<f64>()
                })
                .sum();
            std::hint::black_box(total);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    ms[PASSES / 2] * 1e6 * threads as f64 / READS as f64
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
