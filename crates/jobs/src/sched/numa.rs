//! NUMA nodes from sysfs and pinning a thread to a node's CPUs (the
//! pinning itself is `plexus_engine::affinity`, re-exported here).
//!
//! The topology is read from `ROOT/devices/system/node/node*/cpulist`
//! (`ROOT` is `/sys` on a real machine; tests pass a fake tree). A machine
//! without that directory (or with an unreadable one) is one node holding
//! every CPU the process may run on.
use std::path::Path;

pub use plexus_engine::affinity::{
    allowed_cpus, current_thread_affinity, parse_cpulist, pin_current_thread, process_cpu_count,
    thread_cpus, worker_cpu, PoolPinning,
};

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

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

    /// The profiler and the scheduler's units build their managers' pools
    /// on a pinned CLI worker, and a unit's resize builds the new pool on
    /// the manager's own thread, which inherited that pin: every worker of
    /// every such pool must still have its pool's CPUs (sched_getaffinity).
    #[test]
    fn manager_pools_built_on_a_pinned_thread_own_their_cpus() {
        use crate::manager::{ExecMode, JobManager, ManagerConfig};
        use crate::spec::{Algorithm, JobSpec};
        use crate::Catalog;
        use plexus_graph::{BuildOptions, Graph};
        let Some(allowed) = allowed_cpus().filter(|c| c.len() >= 2) else {
            eprintln!("skipped: fewer than two CPUs");
            return;
        };
        let first = allowed[0];
        let edges: Vec<(u32, u32)> = (0..300u32).map(|i| (i, (i * 7 + 3) % 300)).collect();
        let g = Graph::from_edges(300, &edges, &BuildOptions::directed()).unwrap();
        let snap = Catalog::new().publish("g", g);
        let want_all = |threads: usize| -> Vec<Option<Vec<usize>>> {
            let p = PoolPinning::new(threads, None);
            (0..p.threads()).map(|i| Some(p.cpus_of(i))).collect()
        };
        std::thread::spawn(move || {
            pin_current_thread(&[first]).unwrap();
            assert_eq!(current_thread_affinity().unwrap(), vec![first]);
            for mode in [ExecMode::Sequential, ExecMode::Shared] {
                for threads in [1, 2, 0, allowed.len() + 1] {
                    let mgr = JobManager::new(ManagerConfig {
                        mode,
                        threads,
                        ..Default::default()
                    })
                    .unwrap();
                    assert_eq!(mgr.worker_cpus(), want_all(threads), "{mode:?} {threads}");
                    // A resize: the pool is built on the manager's thread.
                    mgr.set_threads(1, None);
                    let h = mgr
                        .submit(Arc::clone(&snap), JobSpec::new("wcc", Algorithm::Wcc))
                        .unwrap();
                    h.wait(None);
                    assert_eq!(mgr.resizes(), 1);
                    assert_eq!(mgr.worker_cpus(), vec![Some(allowed.clone())]);
                    mgr.shutdown();
                }
            }
            // A unit pinned to a node keeps exactly that node.
            let node = vec![allowed[1]];
            let mgr = JobManager::new(ManagerConfig {
                threads: 3,
                cpus: Some(node.clone()),
                ..Default::default()
            })
            .unwrap();
            assert_eq!(mgr.worker_cpus(), vec![Some(node); 3]);
        })
        .join()
        .unwrap();
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
