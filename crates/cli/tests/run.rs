//! `plexus run` driven through the real binary: outputs in external ids
//! (CSV and Parquet), the JSON summary, --verify, Graphalytics names, and bad
//! parameters (exit 2, one line, nothing written).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// A data directory with a small directed graph `g` (external ids 10..=15,
    /// 15 isolated) and a weighted copy `w`.
    fn new() -> Env {
        let env = Env {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        std::fs::write(env.path("g.el"), "10 11\n11 12\n12 10\n12 13\n13 14\n").expect("write");
        std::fs::write(env.path("g.v"), "10\n11\n12\n13\n14\n15\n").expect("write");
        std::fs::write(
            env.path("g.e"),
            "10 11 1.5\n11 12 2\n12 10 1\n12 13 4\n13 14 0.5\n",
        )
        .expect("write");
        let g = env.path("g.el");
        let e = env.path("g.e");
        assert!(env
            .run(&["import", g.to_str().unwrap_or(""), "--name", "g"])
            .status
            .success());
        assert!(env
            .run(&[
                "import",
                e.to_str().unwrap_or(""),
                "--name",
                "w",
                "--weighted"
            ])
            .status
            .success());
        env
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_plexus"))
            .args(args)
            .arg("--data-dir")
            .arg(self.path("data"))
            .current_dir(self.dir.path())
            .output()
            .expect("run plexus")
    }
    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "plexus {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).to_string()
    }
    /// Runs a command that must fail with exit 2 and one `error:` line.
    fn fails(&self, args: &[&str], needle: &str) {
        let o = self.run(args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "plexus {args:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| l.starts_with("error")).count(),
            1,
            "plexus {args:?} printed more than one line: {err}"
        );
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "plexus {args:?}: {err}"
        );
    }
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .expect("csv output")
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn bfs_writes_depths_and_parents_in_external_ids() {
    let env = Env::new();
    env.ok(&["run", "bfs", "g", "--source", "11", "--out", "bfs.csv"]);
    let rows = csv_rows(&env.path("bfs.csv"));
    assert_eq!(rows[0], ["id", "depth", "parent"]);
    let find = |id: &str| rows.iter().find(|r| r[0] == id).cloned().expect("row");
    assert_eq!(find("11"), ["11", "0", "11"]);
    assert_eq!(find("12"), ["12", "1", "11"]);
    assert_eq!(find("14"), ["14", "3", "13"]);
    assert_eq!(find("10"), ["10", "2", "12"]);
}

#[test]
fn parquet_output_holds_the_same_values_as_csv() {
    use arrow_array::{Array, Float64Array, Int64Array};
    let env = Env::new();
    env.ok(&["run", "sssp", "w", "--source", "10", "--out", "d.parquet"]);
    env.ok(&["run", "sssp", "w", "--source", "10", "--out", "d.csv"]);
    let file = std::fs::File::open(env.path("d.parquet")).expect("parquet file");
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("parquet reader")
        .build()
        .expect("build");
    let batches: Vec<_> = reader.map(|b| b.expect("batch")).collect();
    let b = &batches[0];
    let ids = b
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("id column");
    let dist = b
        .column(1)
        .as_any()
        .downcast_ref::<Float64Array>()
        .expect("distance column");
    let rows = csv_rows(&env.path("d.csv"));
    assert_eq!(ids.len(), rows.len() - 1);
    for i in 0..ids.len() {
        let row = rows
            .iter()
            .find(|r| r[0] == ids.value(i).to_string())
            .expect("same ids");
        let want: f64 = if row[1] == "inf" {
            f64::INFINITY
        } else {
            row[1].parse().expect("float")
        };
        assert_eq!(dist.value(i), want, "vertex {}", ids.value(i));
    }
    // 15 is isolated: unreachable is infinity, and its parent is null.
    let k = (0..ids.len())
        .find(|&i| ids.value(i) == 15)
        .expect("vertex 15");
    assert!(dist.value(k).is_infinite());
    assert!(b.column(2).is_null(k));
}

#[test]
fn json_summary_has_the_documented_keys_and_verify_passes() {
    let env = Env::new();
    let registry: serde_json::Value =
        serde_json::from_str(&env.ok(&["algorithms", "--json"])).expect("registry json");
    let names: Vec<String> = registry["algorithms"]
        .as_array()
        .expect("algorithms")
        .iter()
        .filter(|e| e["needs_weights"] == false)
        .filter_map(|e| e["name"].as_str().map(str::to_string))
        .collect();
    assert!(names.len() >= 13);
    for algo in names.iter().map(String::as_str) {
        let out = env.ok(&["run", algo, "g", "--json", "--verify"]);
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        for key in [
            "algorithm",
            "graph",
            "threads",
            "load_seconds",
            "compute_seconds",
            "iterations",
            "verified",
        ] {
            assert!(v.get(key).is_some(), "{algo}: missing key {key} in {out}");
        }
        assert_eq!(v["verified"], true, "{algo}");
        assert_eq!(v["graph"], "g");
    }
    let out = env.ok(&["run", "sssp", "w", "--verify"]);
    assert!(out.contains("verified: yes"), "{out}");
}

#[test]
fn graphalytics_names_select_graphalytics_semantics() {
    let env = Env::new();
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&["run", "PR", "g", "--iterations", "2", "--json"]))
            .expect("json");
    assert_eq!(v["semantics"], "graphalytics");
    assert_eq!(v["iterations"], 2);
    env.ok(&["run", "BFS", "g", "--source", "13", "--out", "b.csv"]);
    let rows = csv_rows(&env.path("b.csv"));
    let r10 = rows.iter().find(|r| r[0] == "10").expect("row");
    assert_eq!(
        r10[1],
        i64::MAX.to_string(),
        "unreachable BFS depth is i64::MAX under Graphalytics"
    );
}

#[test]
fn bad_parameters_fail_with_one_line_and_write_nothing() {
    let env = Env::new();
    env.fails(
        &["run", "dijkstra", "g", "--out", "x.csv"],
        "unknown algorithm 'dijkstra'",
    );
    env.fails(
        &["run", "bfs", "g", "--source", "99", "--out", "x.csv"],
        "unknown source vertex '99'",
    );
    env.fails(
        &[
            "run",
            "pagerank",
            "g",
            "--damping",
            "-0.5",
            "--out",
            "x.csv",
        ],
        "--damping",
    );
    env.fails(&["run", "pagerank", "g", "--damping", "1.5"], "--damping");
    env.fails(&["run", "sssp", "g", "--out", "x.csv"], "weights");
    env.fails(&["run", "betweenness", "g", "--samples", "7"], "--samples");
    env.fails(&["run", "kcore", "g", "--k", "100"], "--k");
    env.fails(
        &["run", "bfs", "nosuchgraph"],
        "no graph named 'nosuchgraph'",
    );
    env.fails(&["run", "bfs", "g", "--out", "x.txt"], ".csv or .parquet");
    assert!(!env.path("x.csv").exists());
    let leftovers: Vec<_> = std::fs::read_dir(env.dir.path())
        .expect("dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind");
}

#[test]
fn threads_option_is_honoured() {
    let env = Env::new();
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&["run", "wcc", "g", "--threads", "1", "--json"]))
            .expect("json");
    assert_eq!(v["threads"], 1);
}

#[test]
fn warmup_runs_are_untimed_and_bad_durations_are_refused() {
    let env = Env::new();
    let out = env.ok(&[
        "run", "pagerank", "g", "--repeat", "3", "--warmup", "0.05", "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(v["warmup_runs"].as_u64().unwrap_or(0) >= 1, "{v}");
    assert_eq!(
        v["compute_seconds_runs"].as_array().map(|r| r.len()),
        Some(3)
    );
    let plain: serde_json::Value =
        serde_json::from_str(&env.ok(&["run", "pagerank", "g", "--json"])).expect("json");
    assert!(plain.get("warmup_runs").is_none());
    env.fails(&["run", "pagerank", "g", "--warmup=-1"], "seconds");
    env.fails(&["run", "pagerank", "g", "--warmup", "soon"], "seconds");
}

#[test]
fn ppr_pushes_and_pagerank_uses_chebyshev_by_default_and_jacobi_for_fixed_iterations() {
    let env = Env::new();
    let json =
        |args: &[&str]| -> serde_json::Value { serde_json::from_str(&env.ok(args)).expect("json") };
    let method = |v: &serde_json::Value| v["method"].as_str().unwrap_or("").to_string();
    let pushed = json(&["run", "ppr", "g", "--source", "10", "--json", "--verify"]);
    assert_eq!(method(&pushed), "push");
    assert_eq!(pushed["verified"], true);
    let fixed = json(&[
        "run",
        "ppr",
        "g",
        "--source",
        "10",
        "--iterations",
        "5",
        "--json",
    ]);
    assert_eq!(method(&fixed), "jacobi");
    let jacobi = json(&[
        "run", "ppr", "g", "--source", "10", "--method", "jacobi", "--json", "--verify",
    ]);
    assert_eq!(method(&jacobi), "jacobi");
    assert_eq!(jacobi["verified"], true);
    // Push stops within n·tol (n = 6, tol 1e-6) of the exact ranks in L1,
    // Jacobi within d/(1 - d)·n·tol.
    let top = |v: &serde_json::Value| v["top"][0]["value"].as_f64().unwrap_or(f64::NAN);
    assert!(
        (top(&pushed) - top(&jacobi)).abs() < 1e-4,
        "{pushed} {jacobi}"
    );
    // Global PageRank by tolerance: Chebyshev (no isolated vertices here);
    // with a fixed count, Jacobi (NetworkX's and Graphalytics's iterates).
    let global = json(&["run", "pagerank", "g", "--json", "--verify"]);
    assert_eq!(global["method"], "chebyshev");
    assert_eq!(global["verified"], true);
    // Six vertices at NetworkX's tolerance: an L1 target of 6e-6, too close
    // to f32 rounding, so f64; a looser tolerance takes f32 contributions.
    assert_eq!(global["precision"], "double");
    let loose = json(&[
        "run",
        "pagerank",
        "g",
        "--tolerance",
        "1e-3",
        "--json",
        "--verify",
    ]);
    assert_eq!(loose["precision"], "single");
    assert_eq!(loose["verified"], true);
    let named = json(&[
        "run",
        "pagerank",
        "g",
        "--tolerance",
        "1e-3",
        "--precision",
        "double",
        "--json",
    ]);
    assert_eq!(named["precision"], "double");
    assert_eq!(
        json(&["run", "pagerank", "g", "--iterations", "5", "--json"])["method"],
        "jacobi"
    );
    env.fails(
        &["run", "ppr", "g", "--method", "push", "--iterations", "5"],
        "push",
    );
}

#[test]
fn ppr_by_default_ends_within_1e_4_in_l1_on_a_larger_graph() {
    // 2,048 vertex ids: NetworkX's rule alone would allow an L1 error of
    // 2,048 · 1e-6 ≈ 2e-3; ppr's default asks for 1e-4 (the push's error is
    // its residual, and `change` reports (1 - d) times it).
    let env = Env::new();
    env.ok(&["generate", "kron", "--scale", "11"]);
    let out = env.ok(&["run", "ppr", "kron11", "--json", "--verify"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["method"], "push");
    assert_eq!(v["verified"], true);
    let change = v["change"].as_f64().unwrap_or(f64::NAN);
    assert!(change < 0.15 * 1e-4, "{v}");
}
