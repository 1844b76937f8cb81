//! Times the tiled gather ([`plexus_engine::tiled::gather`], PageRank's
//! pull over a graph's tiles) on a stored graph: with the tiles in the
//! store, and with tiles rebuilt in memory for each given geometry
//! (segments of `2^SHIFT` sources, blocks of at most `BLOCK` targets), so
//! that geometries are compared on one graph in one process. Used in
//! bench/NOTES.md for the choice of block size.
//!
//! ```text
//! cargo run --release -p plexus-engine --example tiled_sweep -- DATA_DIR GRAPH [SHIFT:BLOCK,...]
//! ```
//!
//! Runs on the global rayon pool (`RAYON_NUM_THREADS`). Seven rounds; in
//! each, three gathers with every set of tiles in turn, so that the host's
//! slow spells fall on all of them alike. Prints each set's size and the
//! median and least time of its 21 gathers.
mod common;

use std::time::Instant;

use plexus_graph::tiles::Tiles;

const ROUNDS: usize = 7;
const PER_ROUND: usize = 3;

fn main() {
    let (args, g) = common::stored_graph_from_args("DATA_DIR GRAPH [SHIFT:BLOCK,...]");
    let mut sets: Vec<(String, Tiles)> = Vec::new();
    if let Some(t) = g.tiles() {
        sets.push(("stored".to_string(), t.clone()));
    }
    for spec in args
        .get(3)
        .map_or("", String::as_str)
        .split(',')
        .filter(|s| !s.is_empty())
    {
        let parsed = spec
            .split_once(':')
            .and_then(|(s, b)| Some((s.parse::<u32>().ok()?, b.parse::<usize>().ok()?)))
            .filter(|&(s, b)| s <= 16 && (1..=plexus_graph::tiles::BLOCK_TARGETS).contains(&b));
        let Some((shift, block)) = parsed else {
            eprintln!(
                "error: geometry '{spec}' is not SHIFT:BLOCK with SHIFT ≤ 16 and 1 ≤ BLOCK ≤ {}",
                plexus_graph::tiles::BLOCK_TARGETS
            );
            std::process::exit(2);
        };
        sets.push((spec.to_string(), Tiles::build_with(g.inc(), shift, block)));
    }
    if sets.is_empty() {
        eprintln!(
            "error: '{}' has no stored tiles and no geometry was given",
            args[2]
        );
        std::process::exit(2);
    }
    let n = g.num_vertices();
    let values: Vec<f32> = (0..n).map(|u| 1.0 / (1 + u % 7) as f32).collect();
    let mut sums = vec![0f64; n];
    let mut times = vec![Vec::new(); sets.len()];
    for _ in 0..ROUNDS {
        for ((_, tiles), t) in sets.iter().zip(&mut times) {
            for _ in 0..PER_ROUND {
                let started = Instant::now();
                plexus_engine::tiled::gather(tiles, &values, &mut sums);
                t.push(started.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    for ((name, tiles), mut t) in sets.iter().zip(times) {
        t.sort_by(f64::total_cmp);
        println!(
            "{name:>12}: {:>7} tiles in {:>4} blocks, {:>10} runs; gather median {:7.2} ms, least {:7.2} ms",
            tiles.tiles().len(),
            tiles.blocks().len(),
            tiles.targets().len(),
            t[t.len() / 2],
            t[0]
        );
    }
}
