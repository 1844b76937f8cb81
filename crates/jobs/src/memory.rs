//! Memory facts from `/proc`: available memory (for refusing jobs that can
//! never fit) and the process's resident set (current and peak), which the
//! batch reports beside topology + Σ job state.

/// A field of `/proc/meminfo` or `/proc/self/status` in bytes (`kB` lines).
fn proc_field(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kb * 1024)
    })
}

/// Memory the kernel says is available for new allocations
/// (`MemAvailable`), in bytes; `None` where `/proc` is missing.
pub fn available_bytes() -> Option<u64> {
    proc_field("/proc/meminfo", "MemAvailable")
}

/// The process's peak resident set (`VmHWM`), in bytes. Mapped topology
/// pages count once they are touched.
pub fn peak_rss_bytes() -> Option<u64> {
    proc_field("/proc/self/status", "VmHWM")
}

/// The process's current resident set (`VmRSS`), in bytes.
pub fn rss_bytes() -> Option<u64> {
    proc_field("/proc/self/status", "VmRSS")
}

/// Resets the peak resident set to the current one (Linux: writes `5` to
/// `/proc/self/clear_refs`), so that a measurement starts after setup such
/// as the LLC probe. Returns whether it worked.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_reports_memory_on_linux() {
        if std::path::Path::new("/proc/self/status").exists() {
            // Kernels update the counters lazily: no order between them.
            assert!(peak_rss_bytes().unwrap() > 0);
            assert!(rss_bytes().unwrap() > 0);
            assert!(available_bytes().unwrap() > 0);
        }
    }
}
