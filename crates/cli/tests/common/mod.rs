//! What several CLI test files share: the binary under test and a runner.
//! (Each test file is its own crate; items one of them does not use are
//! allowed to be dead there.)
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The `plexus` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_plexus");

/// `plexus --data-dir DATA -q ARGS...`, run to the end.
pub fn plexus(data: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("--data-dir")
        .arg(data)
        .arg("-q")
        .args(args)
        .output()
        .expect("plexus runs")
}

/// Asserts that an out-of-core run left no temporary directory
/// (`.ooc-*`) in the data directory `data`.
pub fn assert_no_ooc_leftovers(data: &Path) {
    let names: Vec<String> = std::fs::read_dir(data)
        .expect("data directory")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".ooc-"))
        .collect();
    assert!(names.is_empty(), "left behind: {names:?}");
}
