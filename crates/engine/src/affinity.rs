//! CPU sets of threads and pools that own theirs.
//!
//! A new thread starts with the affinity of the thread that creates it.
//! Every CLI command runs on a worker pinned to one CPU, so a rayon pool
//! built from there and left alone would have all its workers on that one
//! CPU: a 15-thread pool would compute at one thread's speed. Every pool
//! of Plexus is therefore built with [`PoolPinning`], whose start handler
//! sets each worker's affinity explicitly: one CPU per worker when the
//! pool has exactly one thread per CPU of its set, the whole set otherwise.
//! The set is the one the caller names, by default the CPUs the process
//! may use ([`allowed_cpus`], the main thread's set), never the creating
//! thread's.

/// The CPUs this process may run on (`Cpus_allowed_list` of
/// `/proc/self/status`, the main thread's set), ascending; `None` when
/// unknown (not Linux, or the file is unreadable or malformed).
pub fn allowed_cpus() -> Option<Vec<usize>> {
    cpus_of_status("/proc/self/status")
}

/// The CPUs the calling thread may run on (`Cpus_allowed_list` of
/// `/proc/thread-self/status`), ascending; `None` when unknown.
pub fn thread_cpus() -> Option<Vec<usize>> {
    cpus_of_status("/proc/thread-self/status")
}

fn cpus_of_status(path: &str) -> Option<Vec<usize>> {
    let status = std::fs::read_to_string(path).ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    parse_cpulist(list.trim()).filter(|c| !c.is_empty())
}

/// How many CPUs this process may run on: [`allowed_cpus`], else
/// `available_parallelism`. Unlike `available_parallelism` alone (the
/// calling thread's affinity), the same on a pinned pool worker, where
/// every CLI command runs.
pub fn process_cpu_count() -> usize {
    allowed_cpus().map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |c| c.len(),
    )
}

/// Parses a kernel CPU list such as `0-3,8-11,16`; `None` when malformed.
pub fn parse_cpulist(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    if s.is_empty() {
        return Some(out);
    }
    for part in s.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// The CPU worker `index` of a pool of `threads` workers gets to itself,
/// or `None` when the worker gets the pool's whole set: a pool with
/// exactly one worker per CPU in `set` (and more than one) pins worker `i`
/// to the `i`-th of them. Without that, the kernel can wake two workers of
/// such a pool onto one CPU and keep them there for a whole short run; a
/// smaller pool takes the whole set so that several pools (or processes)
/// can share it.
pub fn worker_cpu(set: &[usize], threads: usize, index: usize) -> Option<usize> {
    (threads > 1 && threads == set.len())
        .then(|| set.get(index).copied())
        .flatten()
}

/// The CPU set of one rayon pool and how its workers take it: a start
/// handler calls [`PoolPinning::pin`] with the worker's index, which sets
/// the worker's affinity to its own CPU ([`worker_cpu`]) or to the pool's
/// whole set, whichever thread built the pool. [`PoolPinning::builder`]
/// gives a builder with both the size and the handler set.
#[derive(Clone, Debug)]
pub struct PoolPinning {
    set: Vec<usize>,
    threads: usize,
}

impl PoolPinning {
    /// For a pool of `threads` threads (0: one per CPU of the set) on the
    /// CPUs `cpus` (`None`: the CPUs this process may use).
    pub fn new(threads: usize, cpus: Option<Vec<usize>>) -> Self {
        let set = cpus.unwrap_or_else(|| allowed_cpus().unwrap_or_default());
        // "All cores" counts the CPUs of the set, not
        // `available_parallelism`, which is the *calling thread's*
        // affinity: one CPU on a pinned worker.
        let threads = match threads {
            0 if !set.is_empty() => set.len(),
            0 => process_cpu_count(),
            t => t,
        };
        PoolPinning { set, threads }
    }

    /// The pool's size: the `threads` asked for, or for 0 one per CPU of
    /// the set. Build the pool with this, not with 0.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The pool's CPU set (empty when the process's set is unknown).
    pub fn cpus(&self) -> &[usize] {
        &self.set
    }

    /// The CPUs worker `index` runs on: its own CPU ([`worker_cpu`]) or
    /// the pool's set.
    pub fn cpus_of(&self, index: usize) -> Vec<usize> {
        match worker_cpu(&self.set, self.threads, index) {
            Some(cpu) => vec![cpu],
            None => self.set.clone(),
        }
    }

    /// Sets the calling thread's affinity to worker `index`'s CPUs
    /// ([`PoolPinning::cpus_of`]). Best effort: with an unknown set, or
    /// when the kernel refuses, the thread keeps the affinity it was born
    /// with and computes the same.
    pub fn pin(&self, index: usize) {
        let cpus = self.cpus_of(index);
        if !cpus.is_empty() {
            let _ = pin_current_thread(&cpus);
        }
    }

    /// A rayon pool builder of [`PoolPinning::threads`] threads whose start
    /// handler pins each worker ([`PoolPinning::pin`]).
    pub fn builder(self) -> rayon::ThreadPoolBuilder {
        rayon::ThreadPoolBuilder::new()
            .num_threads(self.threads)
            .start_handler(move |i| self.pin(i))
    }
}

/// Bits in the kernel affinity mask `libc::cpu_set_t`.
fn mask_bits() -> usize {
    std::mem::size_of::<libc::cpu_set_t>() * 8
}

/// Pins the calling thread to `cpus` (`sched_setaffinity`). An empty list
/// is refused; ids past the kernel's `CPU_SETSIZE` are an error.
#[allow(unsafe_code)]
pub fn pin_current_thread(cpus: &[usize]) -> std::io::Result<()> {
    if cpus.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "no CPU to pin to",
        ));
    }
    let max = mask_bits();
    if let Some(&c) = cpus.iter().find(|&&c| c >= max) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("CPU {c} is past the affinity mask's {max} bits"),
        ));
    }
    // SAFETY: `cpu_set_t` is plain bits, valid when zeroed; CPU_SET writes
    // only bits below its size (checked above); sched_setaffinity reads
    // `size_of::<cpu_set_t>()` bytes of the set we own, and pid 0 is the
    // calling thread. No memory is shared or retained by the call.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The CPUs the calling thread may run on, from `sched_getaffinity`,
/// ascending.
#[allow(unsafe_code)]
pub fn current_thread_affinity() -> std::io::Result<Vec<usize>> {
    // SAFETY: `cpu_set_t` is plain bits, valid when zeroed;
    // sched_getaffinity writes at most `size_of::<cpu_set_t>()` bytes into
    // the set we own (pid 0: the calling thread); CPU_ISSET reads bits
    // below the set's size only (`c < mask_bits()`).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((0..mask_bits())
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The affinity of every worker of `pool`, by worker index.
    fn affinities(pool: &rayon::ThreadPool) -> Vec<(usize, Vec<usize>)> {
        let mut got = pool.broadcast(|ctx| {
            (
                ctx.index(),
                current_thread_affinity().expect("sched_getaffinity"),
            )
        });
        got.sort();
        got
    }

    /// A pool built on a worker pinned to one CPU must not inherit that
    /// CPU: every worker of the new pool has its pool's set (the process's
    /// CPUs, or the one given), each CPU to itself when the pool has one
    /// thread per CPU.
    #[test]
    fn a_pool_built_on_a_pinned_worker_owns_its_cpus() {
        let Some(allowed) = allowed_cpus().filter(|c| c.len() >= 2) else {
            eprintln!("skipped: fewer than two CPUs");
            return;
        };
        let first = allowed[0];
        let outer = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .start_handler(move |_| pin_current_thread(&[first]).unwrap())
            .build()
            .unwrap();
        let (me, pools) = outer.install(|| {
            let me = current_thread_affinity().unwrap();
            let built = [
                (1, None),
                (2, None),
                (0, None),
                (allowed.len() + 1, None),
                (1, Some(allowed[1..].to_vec())),
                (0, Some(allowed.clone())),
            ]
            .map(|(threads, cpus)| {
                let pinning = PoolPinning::new(threads, cpus);
                let want: Vec<Vec<usize>> =
                    (0..pinning.threads()).map(|i| pinning.cpus_of(i)).collect();
                let pool = pinning.builder().build().unwrap();
                (want, affinities(&pool))
            });
            let engine = crate::with_threads(1, || current_thread_affinity().unwrap()).unwrap();
            (me, (built, engine))
        });
        assert_eq!(me, vec![first], "the outer worker is pinned");
        let (built, engine) = pools;
        assert_eq!(engine, allowed, "with_threads(1) runs on every CPU");
        for (want, got) in built {
            assert_eq!(got.len(), want.len());
            for (i, cpus) in got {
                assert_eq!(cpus, want[i], "worker {i}");
            }
        }
        // What the cases mean: a one-thread pool has every CPU, a pool of
        // one thread per CPU one CPU each, a given set is kept.
        let p = PoolPinning::new(1, None);
        assert_eq!(p.cpus_of(0), allowed);
        let p = PoolPinning::new(0, None);
        assert_eq!(p.threads(), allowed.len());
        assert_eq!(p.cpus_of(1), vec![allowed[1]]);
        assert_eq!(
            PoolPinning::new(1, Some(allowed[1..].to_vec())).cpus_of(0),
            allowed[1..].to_vec()
        );
    }

    #[test]
    fn the_affinity_read_back_is_the_one_set() {
        let Some(allowed) = allowed_cpus() else {
            eprintln!("skipped: /proc/self/status has no Cpus_allowed_list");
            return;
        };
        let last = *allowed.last().unwrap();
        let got = std::thread::spawn(move || {
            pin_current_thread(&[last]).unwrap();
            (current_thread_affinity().unwrap(), thread_cpus())
        })
        .join()
        .unwrap();
        assert_eq!(got, (vec![last], Some(vec![last])));
        assert!(pin_current_thread(&[]).is_err());
        assert!(pin_current_thread(&[1 << 20]).is_err());
    }

    #[test]
    fn only_a_pool_with_one_worker_per_cpu_is_pinned_one_per_cpu() {
        let set = [0usize, 1, 4, 5];
        assert_eq!(worker_cpu(&set, 4, 2), Some(4));
        assert_eq!(worker_cpu(&set, 4, 3), Some(5));
        assert_eq!(worker_cpu(&set, 4, 4), None);
        assert_eq!(worker_cpu(&set, 2, 0), None);
        assert_eq!(worker_cpu(&[3], 1, 0), None);
        let p = PoolPinning::new(3, Some(set.to_vec()));
        assert_eq!(p.cpus_of(0), set.to_vec());
        assert_eq!(p.threads(), 3);
        let p = PoolPinning::new(0, Some(set.to_vec()));
        assert_eq!((p.threads(), p.cpus_of(2)), (4, vec![4]));
        if cfg!(target_os = "linux") {
            assert!(allowed_cpus().is_some_and(|c| !c.is_empty()));
        }
    }

    #[test]
    fn cpulists_parse_ranges_and_singles() {
        assert_eq!(
            parse_cpulist("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpulist(""), Some(vec![]));
        assert_eq!(parse_cpulist("3-1"), None);
        assert_eq!(parse_cpulist("x"), None);
    }
}
