//! `plexus probe`: the machine's sustainable memory bandwidth, measured with
//! the four STREAM kernels (McCalpin): copy `c = a`, scale `b = s·c`, add
//! `c = a + b`, triad `a = b + s·c`, over `f64` arrays far larger than the
//! last-level cache, on the worker threads.
//!
//! Bytes are counted as STREAM counts them (each array element read or
//! written once, write-allocate traffic not counted: 16 B per element for
//! copy and scale, 24 B for add and triad), and each kernel's rate is its
//! best over the repetitions. The result is stored as `machine.json` in the
//! data directory for the benchmark harness and the scheduler to reuse.
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::graph_cmds::Ctx;

/// File in the data directory holding the last probe.
pub const MACHINE_FILE: &str = "machine.json";

/// File in the data directory remembering the detected last-level cache
/// (`plexus_jobs::cache::detect_llc_cached`).
pub const LLC_FILE: &str = "llc.json";

/// Where `batch` remembers the detected LLC: [`LLC_FILE`] in the data directory.
pub fn llc_cache_path(ctx: &Ctx) -> std::path::PathBuf {
    ctx.data.root().join(LLC_FILE)
}

#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// Size of each of the three arrays, in MiB (default 512: 1.5 GiB in all,
    /// well beyond any last-level cache).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub array_mib: u64,
    /// Timed repetitions of each kernel; the best is reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repetitions: u32,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Do not store the result in the data directory.
    #[arg(long)]
    pub no_store: bool,
}

/// One probe's result: best rates in GB/s (10⁹ bytes per second).
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Bandwidth {
    pub threads: usize,
    pub array_bytes: u64,
    pub repetitions: u32,
    pub copy_gbs: f64,
    pub scale_gbs: f64,
    pub add_gbs: f64,
    pub triad_gbs: f64,
    /// Seconds since the Unix epoch when measured.
    pub measured_at: u64,
}

/// Elements per parallel task: 64 KiB of each array, so tasks are cheap to
/// steal and stay page-aligned for the first touch.
const BLOCK: usize = 8192;

/// Runs the four kernels on `len`-element arrays and returns the best rates.
pub fn measure(len: usize, repetitions: u32) -> Bandwidth {
    // First touch in parallel so pages land where the threads run.
    let alloc = |x: f64| -> Vec<f64> {
        let mut v = Vec::with_capacity(len);
        v.spare_capacity_mut().par_chunks_mut(BLOCK).for_each(|c| {
            c.iter_mut().for_each(|e| {
                e.write(x);
            })
        });
        // SAFETY: every element of the spare capacity was initialised above.
        #[allow(unsafe_code)]
        unsafe {
            v.set_len(len)
        };
        v
    };
    let (mut a, mut b, mut c) = (alloc(1.0), alloc(2.0), alloc(0.0));
    let s = 3.0;
    let mut best = [f64::INFINITY; 4];
    for _ in 0..repetitions {
        let t = Instant::now();
        c.par_chunks_mut(BLOCK)
            .zip(a.par_chunks(BLOCK))
            .for_each(|(c, a)| c.copy_from_slice(a));
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        b.par_chunks_mut(BLOCK)
            .zip(c.par_chunks(BLOCK))
            .for_each(|(b, c)| b.iter_mut().zip(c).for_each(|(b, c)| *b = s * c));
        best[1] = best[1].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        c.par_chunks_mut(BLOCK)
            .zip(a.par_chunks(BLOCK).zip(b.par_chunks(BLOCK)))
            .for_each(|(c, (a, b))| {
                c.iter_mut()
                    .zip(a.iter().zip(b))
                    .for_each(|(c, (a, b))| *c = a + b)
            });
        best[2] = best[2].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        a.par_chunks_mut(BLOCK)
            .zip(b.par_chunks(BLOCK).zip(c.par_chunks(BLOCK)))
            .for_each(|(a, (b, c))| {
                a.iter_mut()
                    .zip(b.iter().zip(c))
                    .for_each(|(a, (b, c))| *a = b + s * c)
            });
        best[3] = best[3].min(t.elapsed().as_secs_f64());
    }
    // Keep the arrays observable so the kernels cannot be elided.
    std::hint::black_box((&a, &b, &c));
    let bytes = (len * 8) as f64;
    let gbs = |arrays: f64, secs: f64| arrays * bytes / secs / 1e9;
    Bandwidth {
        threads: rayon::current_num_threads(),
        array_bytes: (len * 8) as u64,
        repetitions,
        copy_gbs: gbs(2.0, best[0]),
        scale_gbs: gbs(2.0, best[1]),
        add_gbs: gbs(3.0, best[2]),
        triad_gbs: gbs(3.0, best[3]),
        measured_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    }
}

pub fn probe(ctx: &Ctx, a: ProbeArgs) -> anyhow::Result<()> {
    let need = 3 * (a.array_mib << 20);
    if let Some(have) = plexus_graph::generate::available_memory().filter(|&h| need > h) {
        anyhow::bail!(
            "--array-mib {} needs {} for its three arrays; {} is available",
            a.array_mib,
            crate::fmt::bytes(need),
            crate::fmt::bytes(have)
        );
    }
    let len = (a.array_mib << 20) as usize / 8;
    let bw = measure(len, a.repetitions);
    if !a.no_store {
        let root = ctx.data.root();
        std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
        let path = root.join(MACHINE_FILE);
        let prefix = format!(".{MACHINE_FILE}.tmp-");
        plexus_graph::export::remove_stale(root, &prefix);
        let tmp = root.join(format!("{prefix}{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_string_pretty(&bw)?)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&bw)?);
    } else {
        println!(
            "memory bandwidth, {} threads, 3 × {} MiB arrays, best of {}:",
            bw.threads, a.array_mib, bw.repetitions
        );
        for (name, v) in [
            ("copy", bw.copy_gbs),
            ("scale", bw.scale_gbs),
            ("add", bw.add_gbs),
            ("triad", bw.triad_gbs),
        ] {
            println!("  {name:<6}{v:>8.2} GB/s");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_probe_reports_positive_finite_rates() {
        let bw = measure(1 << 16, 2);
        for r in [bw.copy_gbs, bw.scale_gbs, bw.add_gbs, bw.triad_gbs] {
            assert!(r.is_finite() && r > 0.0, "rate {r}");
        }
        assert_eq!(bw.array_bytes, 8 << 16);
    }
}
