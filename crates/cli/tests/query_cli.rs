//! `plexus query` end to end: every subcommand in plain text and JSON, in
//! external ids; unknown graphs and vertices end with exit status 2 and one
//! `error:` line; the hidden `bench` runs, writes its vertices and reads
//! them back; a query after `plexus tx` sees the committed change.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_plexus");

/// A temporary working directory with a data directory inside.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Env {
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }
    fn root(&self) -> &Path {
        self.dir.path()
    }
    fn data(&self) -> PathBuf {
        self.root().join("data")
    }
    fn write(&self, name: &str, contents: &str) -> String {
        let p = self.root().join(name);
        std::fs::write(&p, contents).expect("write");
        p.to_string_lossy().into_owned()
    }
    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .current_dir(self.root())
            .env_remove("PLEXUS_DATA")
            .env("RUST_BACKTRACE", "1")
            .arg("--data-dir")
            .arg(self.data())
            .args(args)
            .output()
            .expect("run plexus")
    }
    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "plexus {args:?} failed:\n{stderr}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    #[track_caller]
    fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.push("--json");
        serde_json::from_str(&self.ok(&a)).expect("one JSON object")
    }
    /// Runs and expects exit status 2 with one `error:` line; returns it.
    #[track_caller]
    fn fail(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "plexus {args:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "plexus {args:?}: stderr is not one line:\n{stderr}"
        );
        assert!(lines[0].starts_with("error: "), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        lines[0].to_string()
    }
}

/// A weighted directed graph with ids far from the internal ones:
/// 10 → 20 (1), 20 → 30 (2), 10 → 30 (5), 30 → 40 (1), 50 → 10 (4);
/// 40 has no out-edges, 60 only an in-edge from 50.
const EDGES: &str = "10 20 1\n20 30 2\n10 30 5\n30 40 1\n50 10 4\n50 60 1\n";

fn weighted_graph() -> Env {
    let env = Env::new();
    let f = env.write("g.wel", EDGES);
    env.ok(&["import", &f, "--name", "g", "--directed", "--weighted"]);
    env
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

#[test]
fn neighbors_and_degrees_are_in_external_ids() {
    let env = weighted_graph();
    let q = |args: &[&str]| env.ok(&[&["query", "g"], args].concat());
    assert_eq!(lines(&q(&["neighbors", "10"])), ["20", "30"]);
    assert_eq!(lines(&q(&["neighbors", "30", "--in"])), ["10", "20"]);
    assert_eq!(
        lines(&q(&["neighbors", "10", "--weights"])),
        ["20\t1", "30\t5"]
    );
    assert_eq!(q(&["neighbors", "40"]), "");
    assert_eq!(q(&["degree", "10"]), "2\n");
    assert_eq!(q(&["degree", "10", "--in"]), "1\n");
    assert_eq!(q(&["has-edge", "10", "30"]), "true\n");
    assert_eq!(q(&["has-edge", "30", "10"]), "false\n");
    let j = env.json(&["query", "g", "neighbors", "10", "--weights"]);
    assert_eq!(j["neighbors"], serde_json::json!([20, 30]));
    assert_eq!(j["weights"], serde_json::json!([1.0, 5.0]));
    assert_eq!(j["direction"], "out");
    assert_eq!(
        env.json(&["query", "g", "degree", "30", "--in"])["degree"],
        2
    );
    assert_eq!(
        env.json(&["query", "g", "has-edge", "50", "60"])["exists"],
        true
    );
}

#[test]
fn khop_lists_by_hop_then_id_and_counts() {
    let env = weighted_graph();
    let out = env.ok(&["query", "g", "khop", "50", "--hops", "2"]);
    assert_eq!(lines(&out), ["10\t1", "60\t1", "20\t2", "30\t2"]);
    assert_eq!(
        env.ok(&["query", "g", "khop", "50", "--hops", "9", "--count"]),
        "5\n"
    );
    let j = env.json(&["query", "g", "khop", "50", "--hops", "1"]);
    assert_eq!(j["count"], 2);
    assert_eq!(j["vertices"][0], serde_json::json!({"id": 10, "hops": 1}));
    assert_eq!(
        env.json(&["query", "g", "khop", "40", "--hops", "3", "--count"])["count"],
        0
    );
}

#[test]
fn path_is_the_least_weight_one_on_weighted_graphs() {
    let env = weighted_graph();
    assert_eq!(
        lines(&env.ok(&["query", "g", "path", "50", "40"])),
        ["50", "10", "20", "30", "40"]
    );
    let j = env.json(&["query", "g", "path", "10", "30"]);
    assert_eq!(j["path"], serde_json::json!([10, 20, 30]));
    assert_eq!(
        (j["hops"].clone(), j["length"].clone()),
        (2.into(), 3.0.into())
    );
    // Unreachable: nothing on stdout, JSON nulls, exit 0.
    assert_eq!(env.ok(&["query", "g", "path", "40", "10"]), "");
    assert!(env.json(&["query", "g", "path", "40", "10"])["path"].is_null());
}

#[test]
fn path_is_the_fewest_edges_on_unweighted_graphs() {
    let env = Env::new();
    let f = env.write("u.el", "1 2\n2 3\n3 4\n1 5\n5 4\n4 6\n");
    env.ok(&["import", &f, "--name", "u", "--undirected"]);
    let j = env.json(&["query", "u", "path", "6", "1"]);
    assert_eq!(j["hops"], 3);
    assert!(j["length"].is_null());
    let p = j["path"].as_array().expect("a path");
    assert_eq!((p[0].clone(), p[3].clone()), (6.into(), 1.into()));
    assert_eq!(
        env.ok(&["query", "u", "neighbors", "4", "--in"]),
        "3\n5\n6\n"
    );
}

#[test]
fn unknown_graphs_and_vertices_fail_with_one_error_line() {
    let env = weighted_graph();
    let e = env.fail(&["query", "g", "neighbors", "11"]);
    assert!(e.contains("vertex 11 does not exist"), "{e}");
    let e = env.fail(&["query", "g", "path", "10", "99"]);
    assert!(e.contains("99"), "{e}");
    let e = env.fail(&["query", "g", "degree", "ten"]);
    assert!(e.contains("not an integer"), "{e}");
    let e = env.fail(&["query", "nope", "degree", "10"]);
    assert!(e.contains("nope"), "{e}");
    let e = env.fail(&[
        "query",
        "g",
        "bench",
        "--kind",
        "path",
        "--vertices",
        "missing.txt",
    ]);
    assert!(e.contains("missing.txt"), "{e}");
}

#[test]
fn bench_reports_latency_and_replays_its_vertices() {
    let env = weighted_graph();
    let v = env.root().join("v.txt").to_string_lossy().into_owned();
    let r1 = env.root().join("r1.txt").to_string_lossy().into_owned();
    let r2 = env.root().join("r2.txt").to_string_lossy().into_owned();
    for kind in ["neighbors", "khop2", "khop3", "path"] {
        let j = env.json(&[
            "query",
            "g",
            "bench",
            "--kind",
            kind,
            "--queries",
            "50",
            "--seed",
            "7",
            "--save-vertices",
            &v,
            "--results",
            &r1,
        ]);
        assert_eq!(j["queries"], 50, "{j}");
        assert!(j["p50_us"].as_f64().is_some_and(|x| x >= 0.0), "{j}");
        assert!(j["p99_us"].as_f64() >= j["p50_us"].as_f64(), "{j}");
        let saved = std::fs::read_to_string(&v).expect("vertices");
        assert_eq!(saved.lines().count(), 50);
        let fields = if kind == "path" { 2 } else { 1 };
        assert!(
            saved.lines().all(|l| l.split(' ').count() == fields),
            "{saved}"
        );
        // Only vertices with out-edges are drawn (40 and 60 have none).
        assert!(saved
            .lines()
            .all(|l| !l.starts_with("40") && !l.starts_with("60")));
        env.ok(&[
            "query",
            "g",
            "bench",
            "--kind",
            kind,
            "--vertices",
            &v,
            "--results",
            &r2,
        ]);
        assert_eq!(
            std::fs::read_to_string(&r1).ok(),
            std::fs::read_to_string(&r2).ok()
        );
    }
}

#[test]
fn a_query_sees_the_newest_committed_transaction() {
    let env = weighted_graph();
    assert_eq!(env.ok(&["query", "g", "has-edge", "40", "50"]), "false\n");
    let tx = env.write(
        "t.tx",
        "# close the cycle\nadd-edge 40 50 1\nadd-vertex 70\n",
    );
    env.ok(&["tx", "g", &tx]);
    assert_eq!(env.ok(&["query", "g", "has-edge", "40", "50"]), "true\n");
    assert_eq!(env.ok(&["query", "g", "degree", "70"]), "0\n");
    let j = env.json(&["query", "g", "path", "30", "60"]);
    assert_eq!(j["path"], serde_json::json!([30, 40, 50, 60]));
    assert_eq!(j["length"], 3.0);
}
