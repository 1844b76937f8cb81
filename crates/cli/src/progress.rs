//! Progress display on stderr: a bar on a terminal, nothing otherwise.
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use plexus_graph::Progress;

/// An indicatif bar implementing the graph crate's [`Progress`].
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A bar drawn on stderr when it is a terminal and `quiet` is false.
    pub fn new(quiet: bool) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if quiet || !std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        Bar { bar }
    }
    /// Removes the bar from the screen.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn begin(&self, phase: &str, total_bytes: Option<u64>) {
        match total_bytes {
            Some(t) => {
                self.bar.set_length(t);
                self.bar.set_position(0);
                self.bar.set_style(
                    ProgressStyle::with_template(
                        "{msg:12} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
            }
            None => {
                self.bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} {msg:12} {bytes} read, {bytes_per_sec} {elapsed}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                self.bar
                    .enable_steady_tick(std::time::Duration::from_millis(200));
            }
        }
        self.bar.set_message(phase.to_string());
    }
    fn advance(&self, bytes: u64, _edges: u64) {
        self.bar.inc(bytes);
    }
}
