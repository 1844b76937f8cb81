//! A full disk during a commit of a live graph (the in-memory `FaultyFs`
//! with a capacity): the commit fails with a message naming the cause,
//! nothing of it is visible or half-applied, the graph refuses further
//! commits until it is reopened, a recovery (on the same disk or after a
//! power cut) shows exactly the acknowledged versions, and once space is
//! back the reopened graph commits again.
mod live_common;

use std::sync::{Arc, Mutex};

use live_common::{check_snapshot, id, random_op, Model};
use plexus_graph::Graph;
use plexus_store::fault::FaultyFs;
use plexus_store::version::PART_SIZE;
use plexus_store::wal::Wal;
use plexus_store::{LiveGraph, Op, StoreError};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const LOG: &str = "data/g.log";

/// Recovers the log on `disk` into a live graph logging to it; checks that
/// its records are exactly `acked` (versions 1, 2, ... in order) and that
/// the recovered graph equals `model`.
fn recover(
    disk: &FaultyFs,
    base: &Arc<Graph>,
    acked: &[Vec<Op>],
    model: &Model,
    what: &str,
) -> LiveGraph {
    let (wal, rec) = Wal::open(LOG, Arc::new(disk.clone())).expect("the store still opens");
    assert!(rec.torn.is_none(), "a failed commit left a torn record");
    let got: Vec<(u64, &Vec<Op>)> = rec.records.iter().map(|r| (r.version, &r.ops)).collect();
    let want: Vec<(u64, &Vec<Op>)> = acked
        .iter()
        .enumerate()
        .map(|(i, ops)| (i as u64 + 1, ops))
        .collect();
    assert!(
        got == want,
        "{what}: recovered versions {:?}, acknowledged {:?}",
        got.iter().map(|r| r.0).collect::<Vec<_>>(),
        want.iter().map(|r| r.0).collect::<Vec<_>>()
    );
    let live = LiveGraph::with_log(base.clone(), Some(Arc::new(wal)));
    live.replay(rec.records).expect("replays");
    check_snapshot(&live.snapshot(), model, what).unwrap_or_else(|e| panic!("{e}"));
    live
}

/// A transaction of `k` edges between new vertices (ids from `from`).
fn edges_tx(live: &LiveGraph, from: i64, k: i64, weighted: bool) -> plexus_store::Transaction {
    let mut tx = live.begin();
    for i in 0..k {
        tx.apply(Op::AddEdge {
            u: id(from + i),
            v: id(from + i + 1),
            w: weighted.then_some(0.5 * i as f64),
        })
        .expect("a new edge");
    }
    tx
}

/// One committer: ten commits fit, the eleventh (50 edges) does not.
#[test]
fn a_commit_that_does_not_fit_fails_poisons_the_graph_and_loses_nothing_acknowledged() {
    let seed = live_common::seed("disk full", 4704);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let edges: Vec<(u32, u32, u8)> = (0..40)
        .map(|_| {
            (
                rng.gen_range(0..30),
                rng.gen_range(0..30),
                rng.gen_range(0..8),
            )
        })
        .collect();
    let (base, mut model) = live_common::base(30, &edges, true, true);
    let pool: Vec<i64> = (0..30).map(live_common::ext).collect();
    let fs = FaultyFs::new();
    let (wal, _) = Wal::open(LOG, Arc::new(fs.clone())).expect("creates the log");
    let live = LiveGraph::with_log(base.clone(), Some(Arc::new(wal)));
    let mut acked = Vec::new();
    while acked.len() < 10 {
        let mut tx = live.begin();
        for _ in 0..3 {
            let _ = tx.apply(random_op(&mut rng, &tx, &pool, true));
        }
        let ops = tx.ops().to_vec();
        if ops.is_empty() {
            continue;
        }
        let v = live.commit(tx).expect("fits");
        assert_eq!(v, acked.len() as u64 + 1);
        model.apply_all(&ops, "acknowledged");
        acked.push(ops);
    }
    // Room for a small record, not for fifty edges.
    fs.set_capacity(Some(fs.used_bytes() + 60));
    let big = edges_tx(&live, 100, 50, true);
    let big_ops = big.ops().to_vec();
    let err = live.commit(big).expect_err("the disk is full");
    let msg = err.to_string();
    assert!(matches!(err, StoreError::LogWrite { .. }), "{msg}");
    assert!(msg.contains("No space left on device"), "{msg}");
    assert!(msg.contains("the commit did not happen"), "{msg}");
    // Nothing of it is visible; readers go on at version 10.
    let s = live.snapshot();
    assert_eq!(s.version(), 10);
    check_snapshot(&s, &model, "after the failed commit").unwrap_or_else(|e| panic!("{e}"));
    assert!(live.begin().lookup(&id(100)).is_none());
    // The graph refuses every later commit, even one that would fit.
    let small = edges_tx(&live, 200, 1, true);
    let err = live.commit(small).expect_err("poisoned");
    let msg = err.to_string();
    assert!(matches!(err, StoreError::Poisoned(_)), "{msg}");
    assert!(
        msg.contains("reopen it") && msg.contains("No space left on device"),
        "{msg}"
    );
    assert_eq!(live.snapshot().version(), 10);
    drop(live);
    // Recovery, with the disk still full: on the running machine and after
    // a power cut.
    for disk in [fs.clone(), fs.crash_image(seed)] {
        recover(&disk, &base, &acked, &model, "disk full");
    }
    let still_full = recover(&fs, &base, &acked, &model, "disk full");
    let err = still_full
        .commit(edges_tx(&still_full, 100, 50, true))
        .expect_err("still full");
    assert!(err.to_string().contains("No space left on device"), "{err}");
    drop(still_full);
    // Space is back: the reopened graph commits, and the commit survives a
    // power cut.
    fs.set_capacity(None);
    let live = recover(&fs, &base, &acked, &model, "disk full");
    let again = edges_tx(&live, 100, 50, true);
    assert_eq!(again.ops(), &big_ops[..]);
    assert_eq!(live.commit(again).expect("space is back"), 11);
    model.apply_all(&big_ops, "after space came back");
    acked.push(big_ops);
    drop(live);
    recover(
        &fs.crash_image(seed + 1),
        &base,
        &acked,
        &model,
        "space back",
    );
}

/// Four committers on four partitions fill the disk: each failed commit
/// fails with the cause or because the graph is poisoned, and recovery
/// shows exactly the acknowledged versions (a durable commit is never
/// reported as failed, nor a failed one recovered). Repeated over 60
/// capacities and thread timings.
#[test]
fn concurrent_committers_filling_the_disk_lose_no_ack_and_leave_no_unacknowledged_commit() {
    let seed = live_common::seed("disk full, four committers", 4705);
    concurrent_disk_full(60, seed);
}

/// The same over 3,000 rounds (a durable commit reported as failed showed
/// up about once in 900 rounds before the fix in `LiveGraph::commit`):
/// `cargo test -p plexus-store --release --test live_diskfull -- --ignored`.
#[test]
#[ignore = "slow: 3,000 rounds (about 50 seconds in release); run with -- --ignored"]
fn concurrent_committers_filling_the_disk_3000_rounds() {
    let seed = live_common::seed("disk full, four committers, 3,000 rounds", 4706);
    concurrent_disk_full(3000, seed);
}

fn concurrent_disk_full(rounds: u64, seed: u64) {
    let threads = 4;
    let local = |t: usize, k: usize| (t * PART_SIZE + 31 * k) as u32;
    let edges: Vec<(u32, u32, u8)> = (0..threads)
        .flat_map(|t| (0..8).map(move |k| (local(t, k), local(t, (k + 1) % 8), 1)))
        .collect();
    let (base, base_model) = live_common::base(threads * PART_SIZE, &edges, false, false);
    let pools: Vec<Vec<i64>> = (0..threads)
        .map(|t| {
            (0..8)
                .map(|k| live_common::ext(local(t, k) as usize))
                .collect()
        })
        .collect();
    let (mut write_failed, mut refused) = (0, 0);
    for round in 0..rounds {
        let fs = FaultyFs::new();
        let (wal, _) = Wal::open(LOG, Arc::new(fs.clone())).expect("creates the log");
        fs.set_capacity(Some(fs.used_bytes() + 300 + 37 * (round % 64)));
        let live = LiveGraph::with_log(base.clone(), Some(Arc::new(wal)));
        let acked = Mutex::new(Vec::new());
        let ends: Vec<u32> = std::thread::scope(|sc| {
            let handles: Vec<_> = pools
                .iter()
                .enumerate()
                .map(|(t, pool)| {
                    let (live, acked) = (&live, &acked);
                    sc.spawn(move || {
                        let mut rng =
                            Xoshiro256PlusPlus::seed_from_u64(seed + round * 8 + t as u64);
                        loop {
                            let mut tx = live.begin();
                            for _ in 0..rng.gen_range(1..4) {
                                let _ = tx.apply(random_op(&mut rng, &tx, pool, false));
                            }
                            let ops = tx.ops().to_vec();
                            if ops.is_empty() {
                                continue;
                            }
                            match live.commit(tx) {
                                Ok(v) => acked.lock().unwrap().push((v, ops)),
                                Err(StoreError::Conflict { .. }) => {}
                                Err(e @ StoreError::LogWrite { .. }) => {
                                    assert!(
                                        e.to_string().contains("No space left on device"),
                                        "{e}"
                                    );
                                    return 1;
                                }
                                Err(
                                    e @ (StoreError::Poisoned(_) | StoreError::LogFailed { .. }),
                                ) => {
                                    assert!(
                                        e.to_string().contains("No space left on device"),
                                        "{e}"
                                    );
                                    return 2;
                                }
                                Err(e) => panic!("round {round}: unexpected error {e}"),
                            }
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        write_failed += ends.iter().filter(|&&e| e == 1).count();
        refused += ends.iter().filter(|&&e| e == 2).count();
        let mut acked = acked.into_inner().unwrap();
        acked.sort_by_key(|a| a.0);
        let mut model = base_model.clone();
        for (v, ops) in &acked {
            model.apply_all(ops, &format!("round {round}, version {v}"));
        }
        let acked_ops: Vec<Vec<Op>> = acked.into_iter().map(|a| a.1).collect();
        drop(live);
        for disk in [fs.clone(), fs.crash_image(round)] {
            recover(
                &disk,
                &base,
                &acked_ops,
                &model,
                &format!("seed {seed}, round {round}"),
            );
        }
    }
    eprintln!("{write_failed} commits failed writing, {refused} refused after a failure");
    assert!(write_failed as u64 >= rounds && refused > 0);
}

/// Sets the process's file-size limit (`RLIMIT_FSIZE`) while alive and
/// restores it when dropped; SIGXFSZ is ignored, so a write past the limit
/// fails with EFBIG ("File too large") as one on a full disk fails with
/// ENOSPC. No other test of this binary writes real files.
struct FileSizeLimit(libc::rlimit);

impl FileSizeLimit {
    #[allow(unsafe_code)]
    fn set(bytes: u64) -> FileSizeLimit {
        // SAFETY: `signal` with SIG_IGN and `get`/`setrlimit` with a
        // pointer to a local, initialized struct: no memory is shared.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let mut old = std::mem::zeroed::<libc::rlimit>();
            assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut old), 0);
            let new = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: old.rlim_max,
            };
            assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &new), 0);
            FileSizeLimit(old)
        }
    }
}

impl Drop for FileSizeLimit {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: as in `set`.
        unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &self.0) };
    }
}

/// A real write failure (a file-size limit) under a graph opened from a
/// data directory: the commit fails naming the cause, the graph refuses
/// further commits and compaction (compaction used to wait forever for
/// the failed version to be published), and reopening shows exactly the
/// acknowledged versions and compacts.
#[test]
fn a_real_write_failure_poisons_an_opened_graph_and_compaction_refuses() {
    use plexus_graph::{store::Provenance, DataDir};
    use plexus_store::Access;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = DataDir::new(dir.path());
    let (g, mut model) = live_common::base(100, &[(1, 2, 1), (2, 3, 1)], false, false);
    data.save("g", &g, &Provenance::default(), false)
        .expect("saves");
    let (live, _) = LiveGraph::open(&data, "g", Access::Write).expect("opens");
    let mut acked = Vec::new();
    for k in 0..5 {
        let tx = edges_tx(&live, 1000 * k, 3, false);
        let ops = tx.ops().to_vec();
        live.commit(tx).expect("fits");
        model.apply_all(&ops, "acknowledged");
        acked.push(ops);
    }
    let biggest = std::fs::read_dir(data.graph_dir("g"))
        .expect("the graph's directory")
        .map(|e| e.and_then(|e| e.metadata()).map_or(0, |m| m.len()))
        .max()
        .unwrap_or(0);
    let live = Arc::new(live);
    {
        let _limit = FileSizeLimit::set(biggest + 64 * 1024);
        let err = live
            .commit(edges_tx(&live, 100_000, 8000, false))
            .expect_err("over the limit");
        let msg = err.to_string();
        assert!(matches!(err, StoreError::LogWrite { .. }), "{msg}");
        assert!(msg.contains("File too large"), "{msg}");
        let err = live
            .commit(edges_tx(&live, 200_000, 1, false))
            .expect_err("poisoned");
        assert!(matches!(err, StoreError::Poisoned(_)), "{err}");
        let (tx, rx) = std::sync::mpsc::channel();
        let l2 = Arc::clone(&live);
        let compaction = std::thread::spawn(move || {
            let _ = tx.send(l2.compact().map(|_| ()));
        });
        let res = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("compaction of a poisoned graph returns");
        compaction.join().expect("the compaction thread");
        assert!(matches!(res, Err(StoreError::Poisoned(_))), "{res:?}");
    }
    drop(live);
    let (live, report) = LiveGraph::open(&data, "g", Access::Write).expect("reopens");
    assert_eq!((report.replayed, report.torn), (5, None));
    check_snapshot(&live.snapshot(), &model, "reopened").unwrap_or_else(|e| panic!("{e}"));
    let tx = edges_tx(&live, 100_000, 8000, false);
    let ops = tx.ops().to_vec();
    assert_eq!(live.commit(tx).expect("no limit now"), 6);
    model.apply_all(&ops, "after the limit");
    live.compact().expect("compacts");
    drop(live);
    let (live, report) = LiveGraph::open(&data, "g", Access::Write).expect("reopens");
    assert_eq!((report.base_version, report.replayed), (6, 0));
    check_snapshot(&live.snapshot(), &model, "compacted").unwrap_or_else(|e| panic!("{e}"));
    data.check("g").expect("passes info --check");
}
