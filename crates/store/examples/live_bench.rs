//! Benchmarks of live graphs through the whole stack (transactions, the
//! log with fdatasync, recovery), driven by `bench/live.sh`.
//!
//! ```text
//! live_bench changes    --data D --graph G --share 0.01 [--seed S]
//! live_bench throughput --data D --graph G --ops 1 --writers 8 [--seconds 5] [--spread random|partitioned]
//! live_bench updates    --data D --graph G --count 1000000 --ops 10000 [--writers 1]
//! live_bench compact    --data D --graph G
//! live_bench recovery   --data D --graph G
//! ```
//! `changes`: one transaction changing `share` of the edges, half removed
//! (uniform over the stored edges), half added (uniform vertex pairs).
//! `throughput`: writers commit transactions of `ops` new edges each for
//! `seconds`; `random` picks endpoints anywhere (concurrent transactions
//! conflict when they share a partition, and are retried), `partitioned`
//! keeps writer `i`'s endpoints in the partitions `p ≡ i (mod writers)`.
//! `updates`: commits `count` new edges in transactions of `ops` (the
//! recovery benchmark's log; the decay benchmark's stream), by `writers`
//! partitioned writers. `compact`: times a compaction. `recovery`: times opening (log replay) and
//! the first materialization. Every figure is printed as one JSON line.
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use plexus_graph::{DataDir, VertexId};
use plexus_store::open::Access;
use plexus_store::version::{partition_of, PART_SIZE};
use plexus_store::{LiveGraph, Op, Snapshot, StoreError, Transaction};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

struct Args {
    cmd: String,
    data: String,
    graph: String,
    share: f64,
    seed: u64,
    ops: usize,
    writers: usize,
    seconds: f64,
    count: u64,
    partitioned: bool,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let cmd = it
        .next()
        .ok_or("usage: live_bench COMMAND --data D --graph G ...")?;
    let mut a = Args {
        cmd,
        data: "./plexus-data".into(),
        graph: String::new(),
        share: 0.01,
        seed: 1,
        ops: 1,
        writers: 1,
        seconds: 5.0,
        count: 1_000_000,
        partitioned: false,
    };
    while let Some(k) = it.next() {
        let v = it.next().ok_or(format!("{k} needs a value"))?;
        let num = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("{k}: '{v}' is not a number"))
        };
        match k.as_str() {
            "--data" => a.data = v,
            "--graph" => a.graph = v,
            "--share" => a.share = num(&v)?,
            "--seed" => a.seed = num(&v)? as u64,
            "--ops" => a.ops = num(&v)? as usize,
            "--writers" => a.writers = num(&v)? as usize,
            "--seconds" => a.seconds = num(&v)?,
            "--count" => a.count = num(&v)? as u64,
            "--spread" => a.partitioned = v == "partitioned",
            _ => return Err(format!("unknown option {k}")),
        }
    }
    Ok(a)
}

fn main() {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let data = DataDir::new(&a.data);
    let r = match a.cmd.as_str() {
        "changes" => changes(&data, &a),
        "throughput" => throughput(&data, &a),
        "updates" => updates(&data, &a),
        "recovery" => recovery(&data, &a),
        "compact" => compact(&data, &a),
        other => Err(StoreError::BadOp(format!("unknown command {other}"))),
    };
    if let Err(e) = r {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

/// A uniformly random alive vertex of the base (in writer `w`'s partitions
/// when `of` is `Some((w, writers))`).
fn vertex(s: &Snapshot, rng: &mut Xoshiro256PlusPlus, of: Option<(usize, usize)>) -> VertexId {
    let n = s.base().num_vertices();
    loop {
        let v = rng.gen_range(0..n) as VertexId;
        let mine = of.is_none_or(|(w, k)| partition_of(v) % k == w);
        if mine && s.is_alive(v) {
            return v;
        }
    }
}

/// An op adding a new edge between random vertices.
fn new_edge(
    tx: &Transaction,
    rng: &mut Xoshiro256PlusPlus,
    of: Option<(usize, usize)>,
    taken: &mut HashSet<(VertexId, VertexId)>,
) -> Op {
    let s = tx.snapshot();
    loop {
        let (u, v) = (vertex(s, rng, of), vertex(s, rng, of));
        let key = (u.min(v), u.max(v));
        if u == v || tx.has_edge(u, v) || !taken.insert(key) {
            continue;
        }
        return Op::AddEdge {
            u: s.external(u),
            v: s.external(v),
            w: s.is_weighted().then(|| rng.gen_range(1..256) as f64),
        };
    }
}

fn emit(v: serde_json::Value) {
    println!("{v}");
}

fn changes(data: &DataDir, a: &Args) -> Result<(), StoreError> {
    let (live, _) = LiveGraph::open(data, &a.graph, Access::Write)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(a.seed);
    let s = live.snapshot();
    let g = s.base().clone();
    let edges = g.num_edges();
    let k = ((edges as f64 * a.share) / 2.0).round() as u64;
    let t = Instant::now();
    let mut tx = live.begin();
    let mut taken = HashSet::new();
    let m = g.num_arcs();
    let offsets = g.out().offsets();
    let mut removed = 0;
    while removed < k {
        // A uniform stored arc: its source by binary search of the offsets.
        let e = rng.gen_range(0..m);
        let u = (offsets.partition_point(|&o| o <= e) - 1) as VertexId;
        let v = g.out().neighbor_array()[e as usize];
        let key = (u.min(v), u.max(v));
        if u == v || !taken.insert(key) {
            continue;
        }
        tx.apply(Op::RemoveEdge {
            u: s.external(u),
            v: s.external(v),
        })?;
        removed += 1;
    }
    for _ in 0..k {
        let op = new_edge(&tx, &mut rng, None, &mut taken);
        tx.apply(op)?;
    }
    let apply_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let version = live.commit(tx)?;
    let commit_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let g2 = live.snapshot().graph()?;
    emit(serde_json::json!({
        "bench": "changes", "graph": a.graph, "share": a.share, "removed": k, "added": k,
        "version": version, "apply_s": apply_s, "commit_s": commit_s,
        "materialize_s": t.elapsed().as_secs_f64(), "edges_after": g2.num_edges(),
        "log_bytes": live.log_bytes(),
    }));
    Ok(())
}

fn throughput(data: &DataDir, a: &Args) -> Result<(), StoreError> {
    let (live, _) = LiveGraph::open(data, &a.graph, Access::Write)?;
    let live = Arc::new(live);
    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicU64::new(0));
    let conflicts = Arc::new(AtomicU64::new(0));
    let start_version = live.snapshot().version();
    let t = Instant::now();
    let handles: Vec<_> = (0..a.writers)
        .map(|w| {
            let (live, stop) = (live.clone(), stop.clone());
            let (commits, conflicts) = (commits.clone(), conflicts.clone());
            let of = a.partitioned.then_some((w, a.writers));
            let (ops, seed) = (a.ops, a.seed * 1000 + w as u64);
            std::thread::spawn(move || -> Result<(), StoreError> {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
                while !stop.load(Ordering::Relaxed) {
                    let mut tx = live.begin();
                    let mut taken = HashSet::new();
                    for _ in 0..ops {
                        let op = new_edge(&tx, &mut rng, of, &mut taken);
                        tx.apply(op)?;
                    }
                    match live.commit(tx) {
                        Ok(_) => commits.fetch_add(1, Ordering::Relaxed),
                        Err(StoreError::Conflict { .. }) => {
                            conflicts.fetch_add(1, Ordering::Relaxed)
                        }
                        Err(e) => return Err(e),
                    };
                }
                Ok(())
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(a.seconds));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
    }
    let secs = t.elapsed().as_secs_f64();
    let c = commits.load(Ordering::Relaxed);
    emit(serde_json::json!({
        "bench": "throughput", "graph": a.graph, "ops_per_tx": a.ops, "writers": a.writers,
        "spread": if a.partitioned { "partitioned" } else { "random" },
        "seconds": secs, "commits": c, "commits_per_s": c as f64 / secs,
        "ops_per_s": (c * a.ops as u64) as f64 / secs,
        "conflicts": conflicts.load(Ordering::Relaxed),
        "versions": live.snapshot().version() - start_version,
        "partitions": live.snapshot().id_bound().div_ceil(PART_SIZE),
    }));
    Ok(())
}

fn updates(data: &DataDir, a: &Args) -> Result<(), StoreError> {
    let (live, _) = LiveGraph::open(data, &a.graph, Access::Write)?;
    let live = Arc::new(live);
    let t = Instant::now();
    let writers = a.writers.max(1);
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let live = live.clone();
            let of = (writers > 1).then_some((w, writers));
            let count = a.count / writers as u64 + u64::from((w as u64) < a.count % writers as u64);
            let (ops, seed) = (a.ops as u64, a.seed * 1000 + w as u64);
            std::thread::spawn(move || -> Result<u64, StoreError> {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
                let mut done = 0u64;
                while done < count {
                    let mut tx = live.begin();
                    let mut taken = HashSet::new();
                    let k = ops.min(count - done);
                    for _ in 0..k {
                        let op = new_edge(&tx, &mut rng, of, &mut taken);
                        tx.apply(op)?;
                    }
                    match live.commit(tx) {
                        Ok(_) => done += k,
                        Err(StoreError::Conflict { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(done)
            })
        })
        .collect();
    let mut done = 0;
    for h in handles {
        done += h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
    }
    emit(serde_json::json!({
        "bench": "updates", "graph": a.graph, "ops": done, "ops_per_tx": a.ops,
        "writers": writers, "seconds": t.elapsed().as_secs_f64(), "log_bytes": live.log_bytes(),
        "version": live.snapshot().version(),
    }));
    Ok(())
}

fn recovery(data: &DataDir, a: &Args) -> Result<(), StoreError> {
    let t = Instant::now();
    let (live, report) = LiveGraph::open(data, &a.graph, Access::Read)?;
    let open_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let g = live.snapshot().graph()?;
    let materialize_s = t.elapsed().as_secs_f64();
    emit(serde_json::json!({
        "bench": "recovery", "graph": a.graph, "records": report.replayed,
        "ops": report.replayed_ops, "open_s": open_s, "replay_s": report.replay_seconds,
        "materialize_s": materialize_s, "version": live.snapshot().version(),
        "vertices": g.num_vertices(),
    }));
    Ok(())
}

fn compact(data: &DataDir, a: &Args) -> Result<(), StoreError> {
    let (live, _) = LiveGraph::open(data, &a.graph, Access::Write)?;
    let c = live.compact()?;
    emit(serde_json::json!({
        "bench": "compact", "graph": a.graph, "version": c.version, "merged_ops": c.merged_ops,
        "seconds": c.seconds, "log_bytes_before": c.log_bytes_before,
        "log_bytes_after": c.log_bytes_after,
    }));
    Ok(())
}
