//! Live graphs from the command line: `plexus tx` applies a transaction
//! atomically and durably (every line or none; a bad line named by file and
//! line, exit 2), `run`/`info`/`export` read the newest version, `plexus
//! log` reports and repairs the log, `plexus compact` merges the changes,
//! and a second writer is refused while one holds the data directory.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_plexus");

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// A scratch directory with a stored graph `g`: a directed 6-cycle
    /// with integer ids 10, 20, …, 60 and weights.
    fn new() -> Env {
        let e = Env {
            dir: tempfile::tempdir().unwrap(),
        };
        let edges: String = (1..=6)
            .map(|i| format!("{} {} {}\n", 10 * i, 10 * (i % 6 + 1), i))
            .collect();
        let f = e.write("g.wel", edges);
        let out = e.run(&["import", &f, "--name", "g", "--directed"]);
        assert!(out.status.success(), "{}", text(&out));
        e
    }
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
    fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, contents).unwrap();
        p.to_str().unwrap().to_string()
    }
    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .current_dir(self.dir.path())
            .env_remove("PLEXUS_DATA")
            .arg("--data-dir")
            .arg(self.data())
            .args(args)
            .output()
            .unwrap()
    }
    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }
    fn log(&self) -> PathBuf {
        self.data().join("g").join("wal.log")
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Exit 2 and exactly one `error:` line containing `want`.
fn fails_with(o: &Output, want: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(want),
        "{err}"
    );
}

#[test]
fn tx_commits_and_every_reader_sees_the_new_version() {
    let e = Env::new();
    let tx = e.write(
        "t.tx",
        "# comment\nadd-edge 10 70 2.5   # 70 is new\n\nremove-edge 60 10\nset-weight 10 20 9\nadd-vertex 80\n",
    );
    let v = e.json(&["tx", "g", &tx, "--json", "--compact-share", "0"]);
    assert_eq!(v["version"], 1);
    assert_eq!(v["ops"], 4);
    let info = e.json(&["info", "g", "--json"]);
    assert_eq!(info["version"], 1);
    assert_eq!(info["changes_since_base"], 4);
    assert_eq!(info["vertices"], 8);
    assert_eq!(info["edges"], 6);
    // BFS from 10 on the new version: 20..50 by the cycle, 70 by the new
    // edge; 60 still reached from 50; the removed 60 → 10 does not matter.
    let run = e.json(&["run", "bfs", "g", "--source", "10", "--json"]);
    assert_eq!(run["reached"], 7, "{run}");
    // Export shows the weights as changed.
    let out = e.run(&["export", "g", "--out", "-"]);
    let el = String::from_utf8_lossy(&out.stdout);
    assert!(el.lines().any(|l| l == "10 20 9"), "{el}");
    assert!(el.lines().any(|l| l == "10 70 2.5"), "{el}");
    assert!(!el.lines().any(|l| l.starts_with("60 10")), "{el}");
    // From standard input too.
    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(e.data())
        .args(["tx", "g", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"remove-vertex 80\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(text(&out).contains("committed version 2"), "{}", text(&out));
}

#[test]
fn a_bad_line_fails_the_whole_transaction() {
    let e = Env::new();
    let cases: &[(&str, &str)] = &[
        (
            "add-edge 10 70 1\nremove-edge 10 30\n",
            "t.tx:2: edge 10 30 does not exist",
        ),
        (
            "add-edge 10 70 1\nadd-edge 10 20 1\n",
            "t.tx:2: edge 10 20 already exists",
        ),
        (
            "add-edge 10 70\n",
            "t.tx:1: this graph is weighted: add-edge needs a weight",
        ),
        ("remove-vertex 99\n", "t.tx:1: vertex 99 does not exist"),
        (
            "add-edge 10 x 1\n",
            "t.tx:1: vertex id 'x' is not an integer",
        ),
        ("frobnicate 10\n", "t.tx:1: unknown op 'frobnicate'"),
        (
            "add-edge 10\n",
            "t.tx:1: 'add-edge' takes 2 or 3 argument(s), got 1",
        ),
        (
            "set-weight 10 20 nan\n",
            "t.tx:1: weight 'nan' is not a finite number",
        ),
    ];
    for (body, want) in cases {
        let tx = e.write("t.tx", body);
        fails_with(&e.run(&["tx", "g", &tx]), want);
    }
    // Nothing was applied: still the base.
    let info = e.json(&["info", "g", "--json"]);
    assert_eq!(info["version"], 0, "{info}");
    assert_eq!(info["edges"], 6);
}

#[test]
fn log_reports_checks_and_repairs() {
    let e = Env::new();
    for i in 0..3 {
        let tx = e.write("t.tx", format!("add-edge {} {} 1\n", 100 + i, 200 + i));
        assert!(e
            .run(&["tx", "g", &tx, "--compact-share", "0"])
            .status
            .success());
    }
    let v = e.json(&["log", "g", "--json"]);
    assert_eq!(v["records"], 3);
    assert_eq!(v["last_version"], 3);
    // A torn tail: reported, not an error; the next writer drops it.
    let mut bytes = std::fs::read(e.log()).unwrap();
    let good = bytes.len();
    bytes.extend_from_slice(&[7, 0, 0, 0, 1, 2]);
    std::fs::write(e.log(), &bytes).unwrap();
    let out = e.run(&["log", "g", "--check"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("torn tail"), "{}", text(&out));
    // Corruption in the middle: refused with the byte offset, then repaired.
    let mut bytes = std::fs::read(e.log()).unwrap();
    bytes.truncate(good);
    bytes[30] ^= 0xff;
    std::fs::write(e.log(), &bytes).unwrap();
    fails_with(
        &e.run(&["log", "g", "--check"]),
        "corrupt at byte offset 16",
    );
    fails_with(&e.run(&["info", "g"]), "corrupt at byte 16");
    let out = e.run(&["log", "g", "--repair"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("lost"), "{}", text(&out));
    let v = e.json(&["log", "g", "--json"]);
    assert_eq!(v["records"], 0, "{v}");
    assert_eq!(e.json(&["info", "g", "--json"])["version"], 0);
}

#[test]
fn compact_merges_the_changes_into_a_new_base() {
    let e = Env::new();
    let tx = e.write("t.tx", "add-edge 10 70 1\nremove-vertex 40\n");
    assert!(e
        .run(&["tx", "g", &tx, "--compact-share", "0"])
        .status
        .success());
    let before = e.json(&["run", "pagerank", "g", "--iterations", "5", "--json"]);
    let out = e.run(&["compact", "g"]);
    assert!(
        text(&out).contains("version 1 is the new base"),
        "{}",
        text(&out)
    );
    let info = e.json(&["info", "g", "--json"]);
    assert_eq!(
        (info["version"].clone(), info["base_version"].clone()),
        (1.into(), 1.into())
    );
    assert_eq!(info["changes_since_base"], 0);
    assert_eq!(info["vertices"], 6);
    let out = e.run(&["info", "g", "--check"]);
    assert!(out.status.success(), "{}", text(&out));
    let after = e.json(&["run", "pagerank", "g", "--iterations", "5", "--json"]);
    assert_eq!(before["top"], after["top"]);
    // The next transaction goes on from the new base.
    let tx = e.write("t.tx", "add-edge 70 10 1\n");
    let v = e.json(&["tx", "g", &tx, "--json", "--compact-share", "0.1"]);
    assert_eq!(v["version"], 2);
    // Past --compact-share of the base's arcs, tx compacts by itself.
    assert_eq!(v["compacted"], 2, "{v}");
    assert_eq!(e.json(&["info", "g", "--json"])["base_version"], 2);
}

#[test]
fn a_second_writer_is_refused_while_one_holds_the_store() {
    let e = Env::new();
    let lock = plexus_store::WriterLock::acquire(Path::new(&e.data())).unwrap();
    let tx = e.write("t.tx", "add-edge 10 70 1\n");
    fails_with(
        &e.run(&["tx", "g", &tx]),
        &format!("graph store is locked by PID {}", std::process::id()),
    );
    // Readers are not held up.
    assert!(e.run(&["info", "g"]).status.success());
    drop(lock);
    assert!(e.run(&["tx", "g", &tx]).status.success());
}
