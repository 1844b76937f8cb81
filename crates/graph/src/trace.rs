//! `PLEXUS_TRACE=1`: one line on stderr per phase of an import or a store
//! write, with its wall time, to see where an import spends its time. The
//! switch is the one every crate reads (the engine's traces too).
use std::sync::OnceLock;
use std::time::Instant;

/// Whether `PLEXUS_TRACE` is set (read once per process).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("PLEXUS_TRACE").is_some())
}

/// Prints `plexus-trace import <phase> <ms> ms` when tracing, and returns
/// a new start for the next phase.
pub(crate) fn phase(name: &str, start: Instant) -> Instant {
    if enabled() {
        eprintln!(
            "plexus-trace import {name} {:.1} ms",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    Instant::now()
}
