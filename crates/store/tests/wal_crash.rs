//! Crash points, failed writes and failed syncs, on the in-memory FaultyFs,
//! checked against a model: what comes back after a crash is a prefix of
//! what was attempted (failed commits removed) holding every acknowledged
//! commit.
mod wal_common;

use plexus_store::fault::{Fault, FaultKind, FaultyFs};
use plexus_store::wal::Wal;
use plexus_store::StoreError;
use std::path::Path;
use std::sync::{Arc, Mutex};
use wal_common::{check_recovered, record};

const LOG: &str = "data/g.log";

/// What a stream of commits saw.
#[derive(Debug, Default)]
struct Outcome {
    /// Versions enqueued, in log order.
    attempted: Vec<u64>,
    /// Versions whose commit failed with `LogWrite` (certainly not applied).
    failed: Vec<u64>,
    /// Versions whose `wait_durable` returned `Ok`.
    acked: Vec<u64>,
    /// Some commit failed because the log was poisoned.
    poisoned: bool,
}

/// `threads` committers, `per_thread` commits each, versions from `first`,
/// on the log of `fs`; stops early once the log fails.
fn run_stream(fs: &FaultyFs, threads: usize, per_thread: usize, first: u64) -> Outcome {
    let Ok((wal, _)) = Wal::open(LOG, Arc::new(fs.clone())) else {
        return Outcome::default();
    };
    let commit = Mutex::new((first, Vec::new()));
    let results = Mutex::new(Outcome::default());
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                for _ in 0..per_thread {
                    let (v, ticket) = {
                        let mut c = commit.lock().expect("commit mutex");
                        let v = c.0;
                        let Ok(t) = wal.enqueue(&record(v)) else {
                            return;
                        };
                        c.1.push(v);
                        c.0 += 1;
                        (v, t)
                    };
                    let res = wal.wait_durable(ticket);
                    let mut r = results.lock().expect("results");
                    match res {
                        Ok(()) => r.acked.push(v),
                        Err(StoreError::LogWrite { .. }) => r.failed.push(v),
                        Err(StoreError::LogFailed { .. }) => {
                            r.poisoned = true;
                            return;
                        }
                        Err(e) => panic!("unexpected error: {e}"),
                    }
                }
            });
        }
    });
    let mut out = results.into_inner().expect("results");
    out.attempted = commit.into_inner().expect("commit").1;
    out
}

fn kind(variant: u64, k: u64) -> FaultKind {
    match variant {
        0 => FaultKind::Stop { keep: 0 },
        1 => FaultKind::Stop { keep: 5 },
        2 => FaultKind::Stop {
            keep: 13 + k as usize,
        },
        3 => FaultKind::Stop { keep: usize::MAX },
        4 => FaultKind::Fail {
            errno: libc::EIO,
            keep: 0,
        },
        5 => FaultKind::Fail {
            errno: libc::ENOSPC,
            keep: 20,
        },
        6 => FaultKind::Fail {
            errno: libc::EIO,
            keep: usize::MAX,
        },
        _ => FaultKind::Stop {
            keep: (k * 7919) as usize % 300,
        },
    }
}

/// Reopens the crash image `disk`, checks it against `out`, and checks that
/// the log takes new commits. Returns whether a torn tail was dropped.
fn reopen_and_check(disk: &FaultyFs, out: &Outcome, label: &str) -> bool {
    let (wal, rec) = Wal::open(LOG, Arc::new(disk.clone()))
        .unwrap_or_else(|e| panic!("{label}: reopen failed: {e}"));
    if let Err(why) = check_recovered(&rec.records, &out.attempted, &out.failed, &out.acked) {
        panic!("{label}: {why}; outcome {out:?}");
    }
    let next = out.attempted.iter().max().map_or(1, |m| m + 1);
    wal.append(&record(next))
        .unwrap_or_else(|e| panic!("{label}: append after recovery: {e}"));
    drop(wal);
    let (_, again) = Wal::open(LOG, Arc::new(disk.clone())).expect("reopens twice");
    assert_eq!(again.records.len(), rec.records.len() + 1, "{label}");
    assert_eq!(again.records.last(), Some(&record(next)), "{label}");
    rec.torn.is_some()
}

#[test]
fn every_crash_point_of_a_group_committed_stream_recovers_a_prefix_holding_every_ack() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 25;
    let clean = FaultyFs::new();
    let out = run_stream(&clean, THREADS, PER_THREAD, 1);
    assert_eq!(out.acked.len(), THREADS * PER_THREAD);
    let total_ops = clean.ops();
    let (mut runs, mut torn, mut write_failed, mut poisoned, mut acked_after_failure) =
        (0, 0, 0, 0, 0);
    // Thread timing changes the number of groups, so go a little past the
    // clean run's op count; past the end nothing fails, which is checked too.
    for k in 1..=total_ops + 20 {
        for variant in 0..8 {
            let fs = FaultyFs::new();
            fs.inject(Fault {
                at_op: k,
                kind: kind(variant, k),
            });
            let out = run_stream(&fs, THREADS, PER_THREAD, 1);
            let disk = fs.crash_image(k * 31 + variant);
            let label = format!("crash at op {k}, {:?}", kind(variant, k));
            torn += u32::from(reopen_and_check(&disk, &out, &label));
            runs += 1;
            write_failed += u32::from(!out.failed.is_empty());
            poisoned += u32::from(out.poisoned);
            let first_failed = out.failed.iter().min();
            acked_after_failure +=
                u32::from(first_failed.is_some_and(|f| out.acked.iter().any(|a| a > f)));
        }
    }
    eprintln!(
        "{runs} crash points over {total_ops} ops: {torn} torn tails, {write_failed} failed groups, {poisoned} poisoned logs, {acked_after_failure} logs that went on after a failed write"
    );
    assert!(runs >= 1000, "only {runs} crash points");
    assert!(torn > 0 && write_failed > 0 && poisoned > 0 && acked_after_failure > 0);
}

#[test]
fn a_full_disk_fails_the_whole_group_applies_nothing_and_the_log_goes_on_when_space_returns() {
    let fs = FaultyFs::new();
    let (wal, _) = Wal::open(LOG, Arc::new(fs.clone())).expect("creates");
    for v in 1..=10 {
        wal.append(&record(v)).expect("appends");
    }
    let size = wal.size_bytes();
    fs.set_capacity(Some(fs.used_bytes() + 20));
    let tickets: Vec<_> = (11..=13)
        .map(|v| wal.enqueue(&record(v)).expect("enqueues"))
        .collect();
    for t in tickets {
        let err = wal.wait_durable(t).expect_err("the disk is full");
        let msg = err.to_string();
        assert!(matches!(err, StoreError::LogWrite { .. }), "{msg}");
        assert!(
            msg.contains("No space left on device") && msg.contains(LOG),
            "{msg}"
        );
    }
    let err = wal.append(&record(11)).expect_err("still full");
    assert!(err.to_string().contains("No space left on device"), "{err}");
    assert_eq!(
        (wal.size_bytes(), wal.record_count(), wal.last_version()),
        (size, 10, Some(10))
    );
    // Nothing half-applied, whether the machine goes on or loses power now.
    for disk in [fs.clone(), fs.crash_image(7)] {
        let (_, rec) = Wal::open(LOG, Arc::new(disk)).expect("reopens");
        assert_eq!(rec.records, (1..=10).map(record).collect::<Vec<_>>());
        assert!(rec.torn.is_none());
    }
    fs.set_capacity(None);
    wal.append(&record(11))
        .expect("space is back; the failed version is free again");
    wal.append(&record(12)).expect("appends");
    drop(wal);
    let (_, rec) = Wal::open(LOG, Arc::new(fs.crash_image(8))).expect("reopens");
    assert_eq!(rec.records, (1..=12).map(record).collect::<Vec<_>>());
}

#[test]
fn a_failed_fdatasync_poisons_the_log_until_it_is_reopened() {
    let fs = FaultyFs::new();
    let (wal, _) = Wal::open(LOG, Arc::new(fs.clone())).expect("creates");
    wal.append(&record(1)).expect("appends");
    // The next group's ops: its write, then its sync.
    fs.inject(Fault {
        at_op: fs.ops() + 2,
        kind: FaultKind::Fail {
            errno: libc::EIO,
            keep: 0,
        },
    });
    let err = wal.append(&record(2)).expect_err("the sync fails");
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("the log at {LOG} failed (fdatasync failed: ")),
        "{msg}"
    );
    assert!(msg.ends_with("; reopen the graph"), "{msg}");
    let ops = fs.ops();
    for v in [3, 4] {
        let err = wal.append(&record(v)).expect_err("poisoned");
        assert!(err.to_string().contains("reopen the graph"), "{err}");
    }
    assert!(wal.rewrite_after(0).is_err());
    assert_eq!(fs.ops(), ops, "a poisoned log never touches the file again");
    drop(wal);
    let (wal, rec) = Wal::open(LOG, Arc::new(fs.crash_image(3))).expect("reopens");
    assert!(rec.records.len() <= 2 && rec.records[0] == record(1));
    wal.append(&record(5)).expect("appends after reopening");
}

#[test]
fn a_crash_at_any_point_of_a_rewrite_leaves_the_old_or_the_new_log() {
    let mut seen = (false, false);
    for k in 1..=8 {
        for variant in 0..8 {
            let fs = FaultyFs::new();
            let (wal, _) = Wal::open(LOG, Arc::new(fs.clone())).expect("creates");
            for v in 1..=30 {
                wal.append(&record(v)).expect("appends");
            }
            fs.inject(Fault {
                at_op: fs.ops() + k,
                kind: kind(variant, k),
            });
            let rewrote = wal.rewrite_after(10).is_ok();
            let acked = wal.append(&record(31)).is_ok();
            drop(wal);
            let label = format!("crash at rewrite op {k}, {:?}", kind(variant, k));
            let disk = fs.crash_image(k * 8 + variant);
            let (_, rec) =
                Wal::open(LOG, Arc::new(disk)).unwrap_or_else(|e| panic!("{label}: {e}"));
            let mut got: Vec<u64> = rec.records.iter().map(|r| r.version).collect();
            if got.last() == Some(&31) {
                got.pop();
            } else {
                assert!(!acked, "{label}: acknowledged version 31 lost");
            }
            let old: Vec<u64> = (1..=30).collect();
            let new: Vec<u64> = (11..=30).collect();
            assert!(got == old || got == new, "{label}: recovered {got:?}");
            assert!(
                !rewrote || got == new,
                "{label}: a finished rewrite came undone"
            );
            seen.0 |= got == old;
            seen.1 |= got == new;
        }
    }
    assert!(seen.0 && seen.1, "both outcomes occur");
}

#[test]
fn rewrites_while_committers_wait_lose_no_commit_above_the_cut() {
    let fs = FaultyFs::new();
    let (wal, _) = Wal::open(LOG, Arc::new(fs.clone())).expect("creates");
    let next = Mutex::new(1u64);
    let mut cut = 0;
    std::thread::scope(|sc| {
        for _ in 0..4 {
            sc.spawn(|| {
                for _ in 0..50 {
                    let ticket = {
                        let mut n = next.lock().expect("mutex");
                        let t = wal.enqueue(&record(*n)).expect("enqueues");
                        *n += 1;
                        t
                    };
                    wal.wait_durable(ticket).expect("commits");
                }
            });
        }
        for _ in 0..20 {
            if let Some(last) = wal.last_version() {
                cut = cut.max(last.saturating_sub(5));
                wal.rewrite_after(cut).expect("rewrites");
            }
            std::thread::yield_now();
        }
    });
    drop(wal);
    let (_, rec) = Wal::open(LOG, Arc::new(fs.crash_image(1))).expect("reopens");
    let got: Vec<u64> = rec.records.iter().map(|r| r.version).collect();
    assert_eq!(got, (cut + 1..=200).collect::<Vec<_>>());
    assert!(Path::new(LOG).parent().is_some());
}
