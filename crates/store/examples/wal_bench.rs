//! Group-commit throughput of the write-ahead log with real fdatasync.
//!
//! `cargo run -p plexus-store --release --example wal_bench -- [--dir D] [--seconds S]`
//!
//! For transactions of 1, 100 and 10,000 `AddEdge` ops (integer ids,
//! weights) and 1 and 8 committer threads, commits for S seconds (default
//! 3) to a fresh log in a temporary directory under D (default: the system
//! temporary directory; use a real disk, not tmpfs), and prints a markdown
//! table: records (commits) per second, ops per second, and the mean number
//! of fdatasync calls per commit. Each committer takes a commit mutex,
//! assigns the next version, enqueues, releases the mutex and waits for
//! durability, as a transaction manager does.
use plexus_graph::ExternalId;
use plexus_store::fault::{FileLayer, LogFile, RealFs};
use plexus_store::wal::{Record, Wal};
use plexus_store::Op;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The real file system, counting `sync_data` calls.
#[derive(Debug, Default)]
struct CountingFs {
    syncs: Arc<AtomicU64>,
}

#[derive(Debug)]
struct CountingFile {
    inner: Box<dyn LogFile>,
    syncs: Arc<AtomicU64>,
}

impl FileLayer for CountingFs {
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        RealFs.read(path)
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let inner = RealFs.open_append(path)?;
        Ok(Box::new(CountingFile {
            inner,
            syncs: Arc::clone(&self.syncs),
        }))
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let inner = RealFs.create(path)?;
        Ok(Box::new(CountingFile {
            inner,
            syncs: Arc::clone(&self.syncs),
        }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealFs.rename(from, to)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        RealFs.sync_dir(dir)
    }
}

impl LogFile for CountingFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        self.syncs.fetch_add(1, Ordering::Relaxed);
        self.inner.sync_data()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
}

/// One measured configuration.
struct Row {
    ops: usize,
    threads: usize,
    commits: u64,
    secs: f64,
    syncs: u64,
}

fn ops_for(seed: usize, n: usize) -> Vec<Op> {
    (0..n)
        .map(|i| {
            let u = (seed * 1_000_003 + i * 7) as i64;
            Op::AddEdge {
                u: ExternalId::Int(u),
                v: ExternalId::Int(u + 1 + i as i64 % 97),
                w: Some(1.0 + (i % 13) as f64 * 0.25),
            }
        })
        .collect()
}

fn run(
    dir: &Path,
    ops: usize,
    threads: usize,
    secs: f64,
) -> Result<Row, Box<dyn std::error::Error>> {
    let path = dir.join(format!("bench-{ops}-{threads}.log"));
    let layer = CountingFs::default();
    let syncs = Arc::clone(&layer.syncs);
    let (wal, _) = Wal::open(&path, Arc::new(layer))?;
    let next = Mutex::new(1u64);
    let commits = AtomicU64::new(0);
    let warmup = Duration::from_secs_f64((secs / 6.0).min(0.5));
    let start = Instant::now();
    let measure_from = start + warmup;
    let stop = measure_from + Duration::from_secs_f64(secs);
    let (sync0, commit0) = (AtomicU64::new(u64::MAX), AtomicU64::new(0));
    std::thread::scope(|sc| -> Result<(), String> {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (wal, next, commits, syncs) = (&wal, &next, &commits, &syncs);
                let (sync0, commit0) = (&sync0, &commit0);
                sc.spawn(move || -> Result<(), String> {
                    let mut record = Record {
                        version: 0,
                        ops: ops_for(t, ops),
                    };
                    loop {
                        let now = Instant::now();
                        if now >= stop {
                            return Ok(());
                        }
                        if now >= measure_from && sync0.load(Ordering::Relaxed) == u64::MAX {
                            // The first thread past the warm-up takes the baseline.
                            let s = syncs.load(Ordering::Relaxed);
                            if sync0
                                .compare_exchange(u64::MAX, s, Ordering::Relaxed, Ordering::Relaxed)
                                .is_ok()
                            {
                                commit0.store(commits.load(Ordering::Relaxed), Ordering::Relaxed);
                            }
                        }
                        let ticket = {
                            let mut n = next.lock().map_err(|e| e.to_string())?;
                            record.version = *n;
                            *n += 1;
                            wal.enqueue(&record).map_err(|e| e.to_string())?
                        };
                        wal.wait_durable(ticket).map_err(|e| e.to_string())?;
                        commits.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().map_err(|_| "a committer panicked".to_owned())??;
        }
        Ok(())
    })?;
    let secs_measured = Instant::now().duration_since(measure_from).as_secs_f64();
    let row = Row {
        ops,
        threads,
        commits: commits.load(Ordering::Relaxed) - commit0.load(Ordering::Relaxed),
        secs: secs_measured,
        syncs: syncs.load(Ordering::Relaxed)
            - sync0
                .load(Ordering::Relaxed)
                .min(syncs.load(Ordering::Relaxed)),
    };
    drop(wal);
    std::fs::remove_file(&path)?;
    Ok(row)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut base: PathBuf = std::env::temp_dir();
    let mut secs = 3.0;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--dir" => base = args.next().ok_or("--dir needs a directory")?.into(),
            "--seconds" => secs = args.next().ok_or("--seconds needs a number")?.parse()?,
            other => {
                return Err(format!("unknown argument {other}; use --dir D --seconds S").into())
            }
        }
    }
    let dir = tempfile::tempdir_in(&base)?;
    println!(
        "wal_bench: {} s per row, log in {}",
        secs,
        dir.path().display()
    );
    println!();
    println!(
        "| ops/txn | committers | commits | records/s | ops/s | fsyncs/commit | vs 1 committer |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for ops in [1usize, 100, 10_000] {
        let mut single = None;
        for threads in [1usize, 8] {
            let r = run(dir.path(), ops, threads, secs)?;
            let rate = r.commits as f64 / r.secs;
            let speedup = single.map_or(1.0, |s: f64| rate / s);
            single.get_or_insert(rate);
            println!(
                "| {} | {} | {} | {:.0} | {:.0} | {:.3} | {:.2}x |",
                r.ops,
                r.threads,
                r.commits,
                rate,
                rate * r.ops as f64,
                r.syncs as f64 / r.commits.max(1) as f64,
                speedup
            );
        }
    }
    Ok(())
}
