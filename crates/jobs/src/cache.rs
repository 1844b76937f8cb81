//! The last-level cache and the shared scan's chunk size.
//!
//! GraphM (Zhao et al., SC'19, §3.2) sizes a chunk `S_c` as the largest
//! value with
//!
//! ```text
//! S_c · N + (S_c · N / S_G) · |V| · U_v + r ≤ C_LLC        (Formula 1)
//! ```
//!
//! where `N` is the number of threads (each streams its own chunk), `S_G`
//! the topology bytes, `|V| · U_v` the per-vertex state of the job that is
//! processing the chunks (jobs take turns on a loaded chunk, so one job's
//! share is resident at a time), and `r` a reserve. Then the `N` chunks in
//! flight and the state they touch fit in the LLC, so a chunk is read from
//! memory once and reused by every job.
//!
//! `C_LLC` comes from sysfs (the largest data or unified cache of cpu0),
//! checked by a pointer chase: on virtual machines sysfs can report the
//! host's whole cache (260 MiB of L3 for a 2-core guest), so when the
//! measured latency already climbs to memory latency at a smaller size, the
//! measured size wins. An explicit size overrides both.
use std::time::Instant;

/// Where the LLC size came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LlcSource {
    /// Given by the user.
    Override,
    /// sysfs, confirmed (or not contradicted) by the measurement.
    Sysfs,
    /// The pointer chase, smaller than what sysfs claims.
    Measured,
    /// Nothing known: a conservative default.
    Default,
}

/// The LLC size the shared scan plans with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Llc {
    /// Bytes.
    pub bytes: u64,
    /// Where the figure came from.
    pub source: LlcSource,
    /// What sysfs said, if anything.
    pub sysfs_bytes: Option<u64>,
    /// The largest buffer the pointer chase found cache-fast, if measured.
    pub measured_bytes: Option<u64>,
}

/// Used when neither sysfs nor a measurement gives a size.
pub const DEFAULT_LLC_BYTES: u64 = 8 << 20;

/// The largest data or unified cache of cpu0 according to sysfs, in bytes
/// ([`plexus_graph::caches::last_level_bytes`]).
pub fn sysfs_llc_bytes() -> Option<u64> {
    plexus_graph::caches::last_level_bytes()
}

/// Nanoseconds per dependent load when chasing a random cyclic permutation
/// over a buffer of `bytes` (one pointer per 64-byte line).
fn chase_ns(bytes: usize, steps: usize, seed: u64) -> f64 {
    const LINE: usize = 8; // u64 slots per 64-byte line
    let lines = (bytes / 64).max(2);
    // A random cycle through all lines (Sattolo's algorithm).
    let mut order: Vec<usize> = (0..lines).collect();
    let mut x = seed | 1;
    for i in (1..lines).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % i as u64) as usize;
        order.swap(i, j);
    }
    let mut next = vec![0usize; lines * LINE];
    for w in 0..lines {
        next[order[w] * LINE] = order[(w + 1) % lines] * LINE;
    }
    // Warm up one lap (or `steps`), then time.
    let mut p = 0usize;
    for _ in 0..lines.min(steps) {
        p = next[p];
    }
    let t = Instant::now();
    for _ in 0..steps {
        p = next[p];
    }
    let ns = t.elapsed().as_nanos() as f64 / steps as f64;
    std::hint::black_box(p);
    ns
}

/// Load latency (ns per dependent load) for buffers from 256 KiB to
/// `max_bytes`, doubling.
pub fn latency_curve(max_bytes: u64) -> Vec<(u64, f64)> {
    let mut out = vec![];
    let mut s: u64 = 256 << 10;
    while s <= max_bytes {
        // The faster of two runs: other load on the machine only slows one down.
        let ns = chase_ns(s as usize, 200_000, s).min(chase_ns(s as usize, 200_000, s + 1));
        out.push((s, ns));
        s *= 2;
    }
    out
}

/// The largest buffer of a latency curve that is still clearly faster than
/// memory: latency at most half way (arithmetic) between the fastest and
/// the slowest size. `None` when the curve is too short or flat (no memory
/// latency reached).
pub fn llc_from_curve(curve: &[(u64, f64)]) -> Option<u64> {
    if curve.len() < 3 {
        return None;
    }
    let lo = curve.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
    let hi = curve.iter().map(|c| c.1).fold(0.0, f64::max);
    if hi < 2.0 * lo {
        return None;
    }
    let mid = (lo + hi) / 2.0;
    let mut best = None;
    for &(b, ns) in curve {
        if ns <= mid {
            best = Some(b);
        } else {
            break;
        }
    }
    best
}

/// Measures the LLC by a pointer chase up to `max_bytes` (a fraction of a
/// second for 64 MiB); the buffer is
/// freed afterwards.
pub fn measure_llc_bytes(max_bytes: u64) -> Option<u64> {
    llc_from_curve(&latency_curve(max_bytes))
}

/// The LLC to plan with: `override_bytes` if given; otherwise sysfs checked
/// by a pointer chase up to 64 MiB (the measurement wins when it finds
/// less than half of what sysfs claims).
pub fn detect_llc(override_bytes: Option<u64>) -> Llc {
    if let Some(b) = override_bytes {
        return Llc {
            bytes: b,
            source: LlcSource::Override,
            sysfs_bytes: sysfs_llc_bytes(),
            measured_bytes: None,
        };
    }
    let sysfs = sysfs_llc_bytes();
    let measured = measure_llc_bytes(64 << 20);
    let (bytes, source) = match (sysfs, measured) {
        (Some(s), Some(m)) if m < s / 2 => (m, LlcSource::Measured),
        (Some(s), _) => (s, LlcSource::Sysfs),
        (None, Some(m)) => (m, LlcSource::Measured),
        (None, None) => (DEFAULT_LLC_BYTES, LlcSource::Default),
    };
    Llc {
        bytes,
        source,
        sysfs_bytes: sysfs,
        measured_bytes: measured,
    }
}

/// What [`detect_llc_cached`] remembers: the detection and the machine it
/// was made on.
#[derive(serde::Serialize, serde::Deserialize)]
struct CachedLlc {
    /// `model name` of the first CPU in `/proc/cpuinfo`.
    cpu: String,
    llc: Llc,
}

/// The first CPU's model name, as `/proc/cpuinfo` gives it ("" when unknown).
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_default()
}

/// [`detect_llc`], remembered in the file `cache` (JSON) so that later
/// runs on the same machine skip the pointer chase (about a third of a
/// second per command). The file is used when it was written for the same
/// CPU model and sysfs still reports the same size; otherwise (missing,
/// unreadable, another machine) the LLC is measured again and the file
/// rewritten through a temporary file and a rename. A failed write only
/// loses the cache. An override is returned as [`detect_llc`] returns it.
pub fn detect_llc_cached(override_bytes: Option<u64>, cache: Option<&std::path::Path>) -> Llc {
    let Some(path) = cache.filter(|_| override_bytes.is_none()) else {
        return detect_llc(override_bytes);
    };
    let cpu = cpu_model();
    let sysfs = sysfs_llc_bytes();
    let remembered = std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<CachedLlc>(&b).ok())
        .filter(|c| {
            c.cpu == cpu && c.llc.sysfs_bytes == sysfs && c.llc.source != LlcSource::Override
        });
    if let Some(c) = remembered {
        return c.llc;
    }
    let llc = detect_llc(None);
    if let Ok(text) = serde_json::to_vec_pretty(&CachedLlc { cpu, llc }) {
        let tmp = path.with_extension("json.tmp");
        if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    llc
}

/// GraphM's Formula 1 solved for `S_c` (bytes of topology per chunk):
/// `(llc − reserve) / (threads · (1 + |V| · U_v / S_G))`, with the reserve
/// an eighth of the LLC, and at least 64 KiB.
pub fn chunk_bytes(
    llc_bytes: u64,
    threads: usize,
    topology_bytes: u64,
    vertices: u64,
    state_bytes_per_vertex: u64,
) -> u64 {
    let reserve = llc_bytes / 8;
    let usable = llc_bytes.saturating_sub(reserve) as f64;
    let sg = topology_bytes.max(1) as f64;
    let denom =
        threads.max(1) as f64 * (1.0 + vertices as f64 * state_bytes_per_vertex as f64 / sg);
    ((usable / denom) as u64).max(64 << 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_llc_is_reused_and_a_foreign_one_measured_again() {
        let dir = std::env::temp_dir().join(format!("plexus-llc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("llc.json");
        // A file written for this machine is returned as it is, unmeasured.
        let planted = Llc {
            bytes: 12345 << 10,
            source: LlcSource::Measured,
            sysfs_bytes: sysfs_llc_bytes(),
            measured_bytes: Some(12345 << 10),
        };
        let text = serde_json::to_vec(&CachedLlc {
            cpu: cpu_model(),
            llc: planted,
        })
        .unwrap();
        std::fs::write(&path, &text).unwrap();
        assert_eq!(detect_llc_cached(None, Some(&path)), planted);
        // An override wins and leaves the file alone.
        assert_eq!(detect_llc_cached(Some(1 << 20), Some(&path)).bytes, 1 << 20);
        assert_eq!(std::fs::read(&path).unwrap(), text);
        // Another CPU's file, or a corrupt one, is measured again and rewritten.
        for stale in [
            serde_json::to_vec(&CachedLlc {
                cpu: "another cpu".into(),
                llc: planted,
            })
            .unwrap(),
            b"{not json".to_vec(),
        ] {
            std::fs::write(&path, stale).unwrap();
            let got = detect_llc_cached(None, Some(&path));
            assert_ne!(got, planted);
            let kept: CachedLlc = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            assert_eq!(kept.llc, got);
            assert_eq!(kept.cpu, cpu_model());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn chunk_size_follows_graphm_formula() {
        // 32 MiB LLC, 2 threads, state as large as the topology: each
        // thread's chunk plus the state it touches gets half of 7/8 LLC,
        // split evenly between topology and state.
        let c = chunk_bytes(32 << 20, 2, 1 << 30, 1 << 20, 1 << 10);
        assert_eq!(c, (28 << 20) / 4);
        // The result satisfies the formula.
        let lhs = c * 2 + c * 2 * (1 << 20) * (1 << 10) / (1 << 30) + (4 << 20);
        assert!(lhs <= 32 << 20);
        // Never below 64 KiB.
        assert_eq!(chunk_bytes(1 << 10, 2, 1, 1 << 20, 8), 64 << 10);
    }

    #[test]
    fn an_override_wins_and_detection_gives_a_plausible_size() {
        assert_eq!(detect_llc(Some(12345)).bytes, 12345);
        let m = measure_llc_bytes(8 << 20);
        if let Some(b) = m {
            assert!((256 << 10..=8 << 20).contains(&b));
        }
        // A curve with a cache plateau then memory latency.
        let curve = [
            (1, 2.0),
            (2, 2.5),
            (4, 20.0),
            (8, 30.0),
            (16, 90.0),
            (32, 100.0),
        ];
        assert_eq!(llc_from_curve(&curve), Some(8));
        assert_eq!(llc_from_curve(&[(1, 2.0), (2, 2.1), (4, 2.2)]), None);
    }
}
