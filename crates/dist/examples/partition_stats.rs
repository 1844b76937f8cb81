//! Partition statistics of a Kronecker graph too large to build here, for
//! the scaling model of `bench/dist_model.py` (issue 50: kron26–kron28 cut
//! into 8–64 parts).
//!
//! The edges are streamed twice from the generator (`generate::for_each_edge`,
//! the same edges `plexus generate kron` makes), never held whole:
//! 1. degrees (self-loops dropped; duplicate edges counted, since removing
//!    them would need the edges in memory: the JSON says so);
//! 2. for each part count `p`, the cuts of [`Cuts::balanced`] over the
//!    vertices in degree order (descending, ties in id order: the order
//!    `plexus generate` stores a Kronecker graph in), and per part a bitmap
//!    of its mirrors: the vertices mastered elsewhere that have an arc to
//!    or from one of its masters (on an undirected graph the sparse and the
//!    dense mirrors of a part are the same set).
//!
//! Prints one JSON object per part count on stdout:
//! `{"scale", "vertices", "arcs", "parts", "masters": [...], "arcs_per_part":
//! [...], "mirrors": [...], "cut_arcs": [...]}` (arcs counted at their
//! target's part: Gemini's `|E_i|`).
//!
//! Usage: `cargo run --release -p plexus-dist --example partition_stats --
//! SCALE [PARTS,...] [ALPHA]` (default parts 8,16,32,64; ALPHA: a fixed
//! vertex cost instead of Gemini's `8(p − 1)`, for what-if cuts). Memory: about
//! `n · (17 + Σ parts / 8)` bytes plus one batch of edges (`n = 2^scale`).
use std::sync::atomic::{AtomicU64, Ordering};

use plexus_dist::part::Cuts;
use plexus_graph::generate::{for_each_edge, GenOptions, Generator};
use plexus_graph::VertexId;
use rayon::prelude::*;

/// Edges buffered before a parallel pass over them.
const BATCH: usize = 1 << 24;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scale: u32 = args
        .first()
        .ok_or("usage: partition_stats SCALE [PARTS,...]")?
        .parse()?;
    // A fixed `α` for every part count instead of Gemini's `8(p − 1)`.
    let fixed_alpha: Option<u64> = args.get(2).map(|a| a.parse()).transpose()?;
    let parts: Vec<usize> = match args.get(1) {
        Some(s) => s.split(',').map(str::parse).collect::<Result<_, _>>()?,
        None => vec![8, 16, 32, 64],
    };
    if parts.iter().any(|&p| p == 0 || p > 255) {
        return Err("part counts must be in 1..=255".into());
    }
    let o = GenOptions {
        scale,
        ..GenOptions::default()
    };
    let t = std::time::Instant::now();
    let n = 1usize << scale;
    // Pass 1: degrees (arcs out plus in; the graph is symmetrised).
    let mut deg = vec![0u32; n];
    let mut arcs = 0u64;
    for_each_edge(Generator::Kron, &o, |u, v, _| {
        if u != v {
            deg[u as usize] += 1;
            deg[v as usize] += 1;
            arcs += 2;
        }
        Ok(())
    })?;
    eprintln!("degrees in {:.1} s", t.elapsed().as_secs_f64());
    // Degree order: position of each vertex.
    let mut order: Vec<VertexId> = (0..n as VertexId).collect();
    order.par_sort_by_key(|&x| std::cmp::Reverse(deg[x as usize]));
    let mut pos = vec![0 as VertexId; n];
    for (i, &v) in order.iter().enumerate() {
        pos[v as usize] = i as VertexId;
    }
    let deg_in_order: Vec<u64> = order.iter().map(|&v| u64::from(deg[v as usize])).collect();
    drop(order);
    drop(deg);
    let cuts: Vec<Cuts> = parts
        .iter()
        .map(|&p| match fixed_alpha {
            None => Cuts::balanced(&deg_in_order, p),
            Some(a) => cuts_with_alpha(&deg_in_order, p, a),
        })
        .collect();
    // Part of each position, per part count.
    let part_of: Vec<Vec<u8>> = cuts
        .iter()
        .map(|c| {
            let mut a = vec![0u8; n];
            for r in 0..c.ranks() {
                let range = c.range(r);
                a[range.start as usize..range.end as usize].fill(r as u8);
            }
            a
        })
        .collect();
    let words = n.div_ceil(64);
    let bitmaps: Vec<Vec<Vec<AtomicU64>>> = parts
        .iter()
        .map(|&p| {
            (0..p)
                .map(|_| (0..words).map(|_| AtomicU64::new(0)).collect())
                .collect()
        })
        .collect();
    let cut: Vec<Vec<AtomicU64>> = parts
        .iter()
        .map(|&p| (0..p).map(|_| AtomicU64::new(0)).collect())
        .collect();
    let mark = |batch: &[(VertexId, VertexId)]| {
        batch.par_chunks(1 << 14).for_each(|chunk| {
            for &(u, v) in chunk {
                let (pu, pv) = (pos[u as usize] as usize, pos[v as usize] as usize);
                for k in 0..parts.len() {
                    let (a, b) = (part_of[k][pu] as usize, part_of[k][pv] as usize);
                    if a != b {
                        // u is a mirror on b's part, v on a's.
                        bitmaps[k][b][pu / 64].fetch_or(1 << (pu % 64), Ordering::Relaxed);
                        bitmaps[k][a][pv / 64].fetch_or(1 << (pv % 64), Ordering::Relaxed);
                        cut[k][a].fetch_add(1, Ordering::Relaxed);
                        cut[k][b].fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        });
    };
    // Pass 2: mirrors.
    let mut batch: Vec<(VertexId, VertexId)> = Vec::with_capacity(BATCH);
    for_each_edge(Generator::Kron, &o, |u, v, _| {
        if u != v {
            batch.push((u, v));
            if batch.len() == BATCH {
                mark(&batch);
                batch.clear();
            }
        }
        Ok(())
    })?;
    mark(&batch);
    eprintln!("mirrors in {:.1} s", t.elapsed().as_secs_f64());
    for (k, &p) in parts.iter().enumerate() {
        let c = &cuts[k];
        let alpha = fixed_alpha.unwrap_or_else(|| plexus_dist::part::alpha(p));
        let masters: Vec<u64> = (0..p).map(|r| c.range(r).len() as u64).collect();
        let arcs_per_part: Vec<u64> = (0..p)
            .map(|r| {
                let range = c.range(r);
                deg_in_order[range.start as usize..range.end as usize]
                    .iter()
                    .sum()
            })
            .collect();
        let mirrors: Vec<u64> = bitmaps[k]
            .iter()
            .map(|b| {
                b.iter()
                    .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
                    .sum()
            })
            .collect();
        let cut_arcs: Vec<u64> = cut[k].iter().map(|x| x.load(Ordering::Relaxed)).collect();
        // Mirrors whose master is part i, summed over the parts holding them:
        // the messages part i receives per dense superstep.
        let mastered: Vec<u64> = (0..p)
            .map(|i| {
                let r = c.range(i);
                bitmaps[k]
                    .par_iter()
                    .map(|b| count_range(b, r.start as usize, r.end as usize))
                    .sum()
            })
            .collect();
        println!(
            "{{\"scale\":{scale},\"vertices\":{n},\"arcs\":{arcs},\"duplicates_counted\":true,\
             \"parts\":{p},\"alpha\":{alpha},\"masters\":{masters:?},\"arcs_per_part\":{arcs_per_part:?},\
             \"mirrors\":{mirrors:?},\"cut_arcs\":{cut_arcs:?},\"mirrors_mastered\":{mastered:?}}}"
        );
    }
    Ok(())
}

/// Set bits of `b` in `start..end`.
fn count_range(b: &[AtomicU64], start: usize, end: usize) -> u64 {
    let word = |i: usize| b[i].load(Ordering::Relaxed);
    let mut total = 0u64;
    let mut i = start;
    while i < end {
        let w = i / 64;
        let lo = i % 64;
        let hi = (end - w * 64).min(64);
        let mask = if hi - lo == 64 {
            u64::MAX
        } else {
            ((1u64 << (hi - lo)) - 1) << lo
        };
        total += u64::from((word(w) & mask).count_ones());
        i = (w + 1) * 64;
    }
    total
}

/// [`Cuts::balanced`]'s rule with a given `α`: ranges of about equal
/// `α·|V_i| + |E_i|`.
fn cuts_with_alpha(degree: &[u64], p: usize, a: u64) -> Cuts {
    let total: u64 = degree.iter().map(|d| d + a).sum();
    let mut bounds = vec![0 as VertexId];
    let mut acc = 0u64;
    let mut i = 1;
    for (v, d) in degree.iter().enumerate() {
        while i < p && acc >= (u128::from(total) * i as u128 / p as u128) as u64 {
            bounds.push(v as VertexId);
            i += 1;
        }
        acc += d + a;
    }
    while bounds.len() < p {
        bounds.push(degree.len() as VertexId);
    }
    bounds.push(degree.len() as VertexId);
    Cuts::from_bounds(bounds).expect("bounds are non-decreasing from 0 to n")
}
