//! The writer lock within one process (the child-process case, a holder
//! killed with SIGKILL, is in wal_kill.rs). A binary of its own: a fork in
//! a concurrent test shares the lock's file description until its exec.
use plexus_store::{StoreError, WriterLock};

#[test]
fn a_second_writer_is_refused_with_the_holders_pid_until_the_first_lets_go() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = WriterLock::acquire(dir.path()).expect("the first writer");
    let pid = std::process::id();
    let text = std::fs::read_to_string(first.path()).expect("reads the lock file");
    assert_eq!(text.trim(), pid.to_string());
    // A second descriptor in the same process is a second writer to flock.
    let err = WriterLock::acquire(dir.path()).expect_err("a second writer");
    assert_eq!(
        err.to_string(),
        format!(
            "graph store is locked by PID {pid} ({})",
            dir.path().display()
        )
    );
    drop(first);
    let again = WriterLock::acquire(dir.path()).expect("free again");
    assert!(again.path().ends_with(".writer.lock"));
    let missing = WriterLock::acquire(&dir.path().join("nope")).expect_err("no such directory");
    assert!(matches!(missing, StoreError::Io { .. }), "{missing}");
}
