//! Hardware event counts through `perf_event_open`, for profiles: the
//! last-level cache misses on every CPU the process may use while a
//! profiled run goes on, × 64 bytes, is the memory traffic the run caused
//! (plus whatever else ran on those CPUs, so profiles are made on an idle
//! machine). Counting every CPU (`pid = -1`) needs `CAP_PERFMON` or
//! `perf_event_paranoid ≤ 0`; a KVM guest often exposes no cache-miss event
//! at all. Either way [`Counter::on_cpus`] says why, and the profile falls
//! back to the bytes the executor counts (its `counter_source` says which).
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// An event to count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// `PERF_COUNT_HW_CACHE_MISSES`: last-level cache misses (each moves a
    /// 64-byte line from memory).
    CacheMisses,
    /// `PERF_COUNT_SW_CPU_CLOCK`: nanoseconds of CPU time (a software event
    /// every kernel has; the tests count it where no hardware event exists).
    CpuClock,
}

impl Event {
    /// `(type, config)` of `perf_event_attr`.
    fn type_config(self) -> (u32, u64) {
        match self {
            Event::CacheMisses => (0, 3), // PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES
            Event::CpuClock => (1, 0),    // PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK
        }
    }
}

/// The first 64 bytes of `struct perf_event_attr` (`PERF_ATTR_SIZE_VER0`),
/// which every kernel since 2.6.31 accepts.
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// Bit flags: bit 0 `disabled`, bit 1 `inherit`, … (all 0: counting
    /// from the open, user and kernel alike).
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// One event counted on a set of CPUs, every task on them, from
/// [`Counter::on_cpus`] until it is dropped.
pub struct Counter {
    fds: Vec<OwnedFd>,
}

impl Counter {
    /// Counts `event` on each of `cpus` (system-wide on those CPUs). Fails
    /// with the first CPU's error (`ENOENT`/`EOPNOTSUPP`: no such event
    /// here; `EACCES`/`EPERM`: not allowed) or when `cpus` is empty.
    pub fn on_cpus(event: Event, cpus: &[usize]) -> io::Result<Counter> {
        if cpus.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no CPU"));
        }
        let (kind, config) = event.type_config();
        let attr = Attr {
            kind,
            size: std::mem::size_of::<Attr>() as u32,
            config,
            ..Default::default()
        };
        let mut fds = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let cpu = libc::c_int::try_from(cpu)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "CPU id too large"))?;
            // SAFETY: `attr` is a valid, initialised `perf_event_attr`
            // prefix whose `size` field says how many bytes the kernel may
            // read; pid -1 with a CPU counts every task on it; group -1 and
            // PERF_FLAG_FD_CLOEXEC (8) ask for a new, close-on-exec fd. The
            // call retains no pointer.
            #[allow(unsafe_code)]
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_perf_event_open,
                    &attr as *const Attr,
                    -1 as libc::pid_t,
                    cpu,
                    -1 as libc::c_int,
                    8 as libc::c_ulong,
                )
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: the kernel returned a new fd that nothing else owns.
            #[allow(unsafe_code)]
            fds.push(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) });
        }
        Ok(Counter { fds })
    }

    /// The count so far, summed over the CPUs.
    pub fn read(&self) -> io::Result<u64> {
        let mut total = 0u64;
        for fd in &self.fds {
            let mut value = 0u64;
            // SAFETY: reads at most 8 bytes into `value`, which we own; the
            // fd is open (owned by `self`).
            #[allow(unsafe_code)]
            let n = unsafe {
                libc::read(
                    fd.as_raw_fd(),
                    (&mut value as *mut u64).cast::<libc::c_void>(),
                    8,
                )
            };
            if n != 8 {
                return Err(if n < 0 {
                    io::Error::last_os_error()
                } else {
                    io::Error::new(io::ErrorKind::UnexpectedEof, "short counter read")
                });
            }
            total = total.wrapping_add(value);
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counting path on the software CPU clock, which every kernel
    /// offers (the cache-miss event uses the same code): across a thread
    /// spinning for 30 ms, the clock of the counted CPUs advances by at
    /// least 20 ms.
    #[test]
    fn a_cpu_clock_counted_on_every_cpu_sees_a_spinning_thread() {
        let cpus = crate::sched::numa::allowed_cpus().unwrap_or_else(|| vec![0]);
        let c = match Counter::on_cpus(Event::CpuClock, &cpus) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipped: system-wide counting not allowed here: {e}");
                return;
            }
        };
        let before = c.read().unwrap();
        std::thread::spawn(|| {
            let t = std::time::Instant::now();
            let mut x = 0u64;
            while t.elapsed().as_millis() < 30 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        })
        .join()
        .unwrap();
        let ns = c.read().unwrap() - before;
        assert!(ns >= 20_000_000, "counted {ns} ns");
        assert!(Counter::on_cpus(Event::CpuClock, &[]).is_err());
    }

    /// The cache-miss event opens, or fails with a reason (this KVM guest
    /// has none); it never panics.
    #[test]
    fn the_cache_miss_event_opens_or_says_why() {
        let cpus = crate::sched::numa::allowed_cpus().unwrap_or_else(|| vec![0]);
        match Counter::on_cpus(Event::CacheMisses, &cpus) {
            Ok(c) => assert!(c.read().is_ok()),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}
