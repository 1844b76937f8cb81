//! `plexus run --executor scan` against `--executor memory` for every
//! algorithm the registry (read through `plexus algorithms --json`) says the
//! scan executor runs: verified, and the output files equal by the
//! algorithm's rule (exact, BFS parents any valid one, floating-point
//! results within the drivers' stated bounds). Also: options an algorithm
//! does not take are errors.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn plexus(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(args)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .current_dir(dir)
        .output()
        .expect("run plexus")
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let o = plexus(dir, args);
    assert!(
        o.status.success(),
        "plexus {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A weighted Kronecker graph `k` and a directed copy `kd` of its edges.
fn data() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    ok(
        d,
        &[
            "generate",
            "kron",
            "--scale",
            "10",
            "--edge-factor",
            "8",
            "--weighted",
            "--out",
            "k.el",
        ],
    );
    ok(
        d,
        &[
            "import",
            "k.el",
            "--name",
            "k",
            "--weighted",
            "--undirected",
        ],
    );
    ok(
        d,
        &["import", "k.el", "--name", "kd", "--weighted", "--directed"],
    );
    dir
}

/// The CSV's rows as columns of strings (header first).
fn columns(path: &PathBuf) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).expect("read csv");
    let rows: Vec<Vec<String>> = text
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let width = rows.first().map_or(0, Vec::len);
    (0..width)
        .map(|c| rows.iter().map(|r| r[c].clone()).collect())
        .collect()
}

/// Whether two cells agree: exactly, or as numbers within `rel`.
fn agree(a: &str, b: &str, rel: f64) -> bool {
    if a == b {
        return true;
    }
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => (x - y).abs() <= rel * x.abs().max(y.abs()).max(1e-300),
        _ => false,
    }
}

#[test]
fn every_scan_algorithm_is_verified_and_equals_memory() {
    let dir = data();
    let d = dir.path();
    let registry: serde_json::Value =
        serde_json::from_str(&ok(d, &["algorithms", "--json"])).expect("registry json");
    let algorithms = registry["algorithms"].as_array().expect("algorithms");
    let mut checked = 0;
    for e in algorithms {
        let name = e["name"].as_str().expect("name");
        let scan = e["executors"].as_array().expect("executors");
        if !scan.iter().any(|x| x == "scan") {
            continue;
        }
        for graph in ["k", "kd"] {
            let mut common = vec!["run", name, graph, "--verify"];
            let mut memory_only = vec![];
            if name == "pagerank" || name == "ppr" {
                // The driver's method; memory must run the same one.
                memory_only.extend(["--method", "jacobi", "--precision", "double"]);
                common.extend(["--tolerance", "1e-9"]);
            }
            if name == "betweenness" {
                common.extend(["--samples", "8"]);
            }
            let mem_out = format!("{name}-{graph}-memory.csv");
            let scan_out = format!("{name}-{graph}-scan.csv");
            let mut m = common.clone();
            m.extend(memory_only.iter().copied());
            m.extend(["--out", &mem_out]);
            let mut s = common.clone();
            s.extend(["--executor", "scan", "--out", &scan_out]);
            let mo = ok(d, &m);
            let so = ok(d, &s);
            assert!(
                mo.contains("verified: yes"),
                "{name} on {graph} (memory): {mo}"
            );
            assert!(
                so.contains("verified: yes"),
                "{name} on {graph} (scan): {so}"
            );
            let (mc, sc) = (columns(&d.join(&mem_out)), columns(&d.join(&scan_out)));
            assert_eq!(mc.len(), sc.len(), "{name} on {graph}: columns differ");
            for (a, b) in mc.iter().zip(&sc) {
                let column = a[0].as_str();
                if name == "bfs" && column == "parent" {
                    continue; // any in-neighbour one level up; verified above
                }
                let rel = match name {
                    "pagerank" | "ppr" => 1e-9,
                    "betweenness" => 1e-9,
                    _ => 0.0,
                };
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    assert!(
                        agree(x, y, rel),
                        "{name} on {graph}, column {column}, row {i}: memory {x}, scan {y}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 24, "only {checked} algorithm runs compared");
}

#[test]
fn options_an_algorithm_does_not_take_are_errors() {
    let dir = data();
    let d = dir.path();
    let fails = |args: &[&str], needle: &str| {
        let o = plexus(d, args);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "plexus {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "plexus {args:?}: {err}");
    };
    fails(
        &["run", "pagerank", "k", "--source", "1"],
        "pagerank takes no --source; personalised PageRank is `ppr`",
    );
    fails(
        &["run", "wcc", "k", "--damping", "0.5"],
        "wcc takes no --damping (it takes --semantics)",
    );
    fails(
        &["run", "scc", "k", "--seed", "3"],
        "scc takes no --seed; scc takes no options",
    );
    fails(
        &["run", "triangles", "k", "--executor", "scan"],
        "triangles runs only on the memory executor",
    );
    fails(
        &[
            "run",
            "pagerank",
            "k",
            "--executor",
            "scan",
            "--method",
            "push",
        ],
        "--executor scan runs pagerank's driver",
    );
    // A value clap refuses: its message, then its usage text.
    let o = plexus(d, &["run", "bfs", "k", "--executor", "gpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown executor 'gpu'"));
}
