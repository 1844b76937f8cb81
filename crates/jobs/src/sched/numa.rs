//! NUMA nodes from sysfs and pinning a thread to a node's CPUs.
//!
//! The topology is read from `ROOT/devices/system/node/node*/cpulist`
//! (`ROOT` is `/sys` on a real machine; tests pass a fake tree). A machine
//! without that directory (or with an unreadable one) is one node holding
//! every CPU the process may run on.
use std::path::Path;

/// The CPU ids of each NUMA node, in node order; never empty (one node
/// with CPUs `0..process_cpu_count()` when sysfs says nothing).
pub fn read_nodes(sys_root: &Path) -> Vec<Vec<usize>> {
    let dir = sys_root.join("devices/system/node");
    let mut nodes: Vec<(usize, Vec<usize>)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(id) = name
                .strip_prefix("node")
                .and_then(|n| n.parse::<usize>().ok())
            else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(e.path().join("cpulist")) else {
                continue;
            };
            if let Some(cpus) = parse_cpulist(text.trim()) {
                if !cpus.is_empty() {
                    nodes.push((id, cpus));
                }
            }
        }
    }
    nodes.sort();
    if nodes.is_empty() {
        return vec![(0..process_cpu_count()).collect()];
    }
    nodes.into_iter().map(|(_, c)| c).collect()
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

/// The CPUs this process may run on (`Cpus_allowed_list` of
/// `/proc/self/status`, the main thread's set), ascending; `None` when
/// unknown (not Linux, or the file is unreadable or malformed).
pub fn allowed_cpus() -> Option<Vec<usize>> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    parse_cpulist(list.trim()).filter(|c| !c.is_empty())
}

/// The CPUs the calling thread may run on (`Cpus_allowed_list` of
/// `/proc/thread-self/status`), ascending; `None` when unknown.
pub fn thread_cpus() -> Option<Vec<usize>> {
    let status = std::fs::read_to_string("/proc/thread-self/status").ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    parse_cpulist(list.trim()).filter(|c| !c.is_empty())
}

/// The CPU worker `index` of a pool of `threads` workers is pinned to, or
/// `None` to leave it unpinned: a pool with exactly one worker per CPU in
/// `allowed` (and more than one) pins worker `i` to the `i`-th of them.
/// Unpinned, the kernel can wake two workers of such a pool onto one vCPU
/// and keep them there for a whole short run (bench/NOTES.md, "Pinned
/// workers"); a smaller pool stays unpinned so that several processes can
/// share the machine.
pub fn worker_cpu(allowed: &[usize], threads: usize, index: usize) -> Option<usize> {
    (threads > 1 && threads == allowed.len())
        .then(|| allowed.get(index).copied())
        .flatten()
}

/// How the threads of one rayon pool pin themselves (a start handler
/// calls [`PoolPinning::pin`] with the thread's index): a pool with one
/// thread per CPU of its set puts thread `i` on the set's `i`-th CPU
/// ([`worker_cpu`]); any other pool pins every thread to a set it was
/// given, or leaves them free.
#[derive(Clone, Debug)]
pub struct PoolPinning {
    set: Vec<usize>,
    explicit: bool,
    threads: usize,
}

impl PoolPinning {
    /// For a pool of `threads` threads (0: one per available core) on the
    /// CPUs `cpus` (`None`: the CPUs this process may use).
    pub fn new(threads: usize, cpus: Option<Vec<usize>>) -> Self {
        let explicit = cpus.is_some();
        let set = cpus.unwrap_or_else(|| allowed_cpus().unwrap_or_default());
        // "All cores" counts the CPUs of the set (by default the process's,
        // from /proc/self/status), not `available_parallelism`, which is
        // the *calling thread's* affinity: a pool built from a pinned
        // worker (every command runs inside the CLI's pool) would get one
        // thread.
        let threads = match threads {
            0 if !set.is_empty() => set.len(),
            0 => process_cpu_count(),
            t => t,
        };
        PoolPinning {
            explicit,
            set,
            threads,
        }
    }

    /// The pool's size: the `threads` asked for, or for 0 one per CPU of
    /// the set. Build the pool with this, not with 0.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Pins the calling thread, the pool's thread `index`. Best effort: an
    /// unpinned thread computes the same.
    pub fn pin(&self, index: usize) {
        if let Some(cpu) = worker_cpu(&self.set, self.threads, index) {
            let _ = pin_current_thread(&[cpu]);
        } else if self.explicit {
            let _ = pin_current_thread(&self.set);
        }
    }
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
    let max = std::mem::size_of::<libc::cpu_set_t>() * 8;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every CLI command runs on a pinned pool worker; a pool of "all
    /// cores" built from there must still get one thread per CPU of the
    /// process (it got one thread in all: `available_parallelism` is the
    /// calling thread's affinity).
    #[test]
    fn all_cores_means_the_process_cpus_even_from_a_pinned_thread() {
        let Some(allowed) = allowed_cpus() else {
            eprintln!("skipped: /proc/self/status has no Cpus_allowed_list");
            return;
        };
        let first = allowed[0];
        let threads = std::thread::spawn(move || {
            pin_current_thread(&[first]).ok()?;
            Some((
                PoolPinning::new(0, None).threads(),
                process_cpu_count(),
                std::thread::available_parallelism().map_or(0, |n| n.get()),
            ))
        })
        .join()
        .unwrap();
        let Some((pool, count, calling)) = threads else {
            eprintln!("skipped: this thread cannot be pinned");
            return;
        };
        assert_eq!(pool, allowed.len());
        assert_eq!(count, allowed.len());
        assert_eq!(calling, 1, "the calling thread's view, for contrast");
        assert_eq!(PoolPinning::new(3, None).threads(), 3);
        assert_eq!(PoolPinning::new(0, Some(vec![0, 1, 2])).threads(), 3);
    }

    #[test]
    fn only_a_pool_with_one_worker_per_allowed_cpu_is_pinned() {
        let allowed = [0usize, 1, 4, 5];
        assert_eq!(worker_cpu(&allowed, 4, 2), Some(4));
        assert_eq!(worker_cpu(&allowed, 4, 3), Some(5));
        assert_eq!(worker_cpu(&allowed, 4, 4), None);
        assert_eq!(worker_cpu(&allowed, 2, 0), None);
        assert_eq!(worker_cpu(&[3], 1, 0), None);
        // This process's own list parses on Linux.
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

    #[test]
    fn a_fake_two_node_tree_gives_two_nodes_in_order() {
        let dir = std::env::temp_dir().join(format!("plexus-numa-{}", std::process::id()));
        for (n, list) in [(1, "4-7\n"), (0, "0-3\n")] {
            let d = dir.join(format!("devices/system/node/node{n}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("cpulist"), list).unwrap();
        }
        std::fs::write(dir.join("devices/system/node/online"), "0-1\n").unwrap();
        assert_eq!(read_nodes(&dir), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        let _ = std::fs::remove_dir_all(&dir);
        // No tree at all: one node.
        let none = read_nodes(Path::new("/nonexistent-plexus"));
        assert_eq!(none.len(), 1);
        assert!(!none[0].is_empty());
    }

    #[test]
    fn pinning_to_the_first_node_succeeds_on_this_machine() {
        let nodes = read_nodes(Path::new("/sys"));
        let cpus = nodes[0].clone();
        let r = std::thread::spawn(move || pin_current_thread(&cpus))
            .join()
            .unwrap();
        assert!(r.is_ok(), "{r:?}");
        assert!(pin_current_thread(&[]).is_err());
        assert!(pin_current_thread(&[1 << 20]).is_err());
    }
}
