//! `plexus run --executor ooc`: the same answers as in memory, the I/O
//! counters in `--json`, and a budget too small refused in one line.

use serde_json::Value;

mod common;
use common::{assert_no_ooc_leftovers, plexus};

fn json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON summary")
}

#[test]
fn out_of_core_runs_answer_as_in_memory_and_report_their_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let g = plexus(
        d,
        &[
            "generate",
            "rmat",
            "--scale",
            "12",
            "--weighted",
            "--name",
            "g",
        ],
    );
    assert!(g.status.success(), "{}", String::from_utf8_lossy(&g.stderr));
    for (alg, key) in [
        ("bfs", "reached"),
        ("sssp", "max_distance"),
        ("wcc", "components"),
        ("kcore", "max_core"),
        ("coloring", "colors"),
        ("mis", "size"),
    ] {
        let mem = json(&plexus(
            d,
            &["run", alg, "g", "--json", "--executor", "scan"],
        ));
        for io in ["active", "full"] {
            let ooc = json(&plexus(
                d,
                &[
                    "run",
                    alg,
                    "g",
                    "--json",
                    "--executor",
                    "ooc",
                    "--memory",
                    "1M",
                    "--io",
                    io,
                ],
            ));
            assert_eq!(ooc[key], mem[key], "{alg} --io {io}");
            assert_eq!(ooc["executor"], "ooc");
            assert!(ooc["ooc"]["bytes_read"].as_u64().unwrap() > 0, "{alg}");
            assert!(ooc["ooc"]["supersteps"].as_array().is_some());
            assert!(ooc["peak_rss_bytes"].as_u64().is_some());
        }
    }
    // Nothing is left in the data directory but the graph.
    assert_no_ooc_leftovers(d);
}

#[test]
fn a_budget_too_small_is_refused_in_one_line_with_the_minimum() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert!(
        plexus(d, &["generate", "kron", "--scale", "12", "--name", "k"])
            .status
            .success()
    );
    let out = plexus(
        d,
        &["run", "bfs", "k", "--executor", "ooc", "--memory", "64K"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("at least"), "{err}");
    // --memory without the out-of-core executor is refused.
    let out = plexus(d, &["run", "bfs", "k", "--memory", "1G"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A result file's rows after the header, split into fields.
fn csv_rows(path: &std::path::Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn verify_and_out_work_out_of_core_as_with_the_driver_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let g = plexus(
        d,
        &[
            "generate",
            "rmat",
            "--scale",
            "10",
            "--weighted",
            "--name",
            "g",
        ],
    );
    assert!(g.status.success(), "{}", String::from_utf8_lossy(&g.stderr));
    for (alg, extra, exact) in [
        ("bfs", vec![], 1),
        ("sssp", vec![], 1),
        ("wcc", vec![], 1),
        ("cdlp", vec!["--iterations", "5"], 1),
        ("kcore", vec![], 1),
        ("mis", vec![], 1),
        ("pagerank", vec!["--iterations", "8"], 0),
    ] {
        let (o1, o2) = (
            d.join(format!("ooc-{alg}.csv")),
            d.join(format!("scan-{alg}.csv")),
        );
        let mut args = vec!["run", alg, "g", "--json", "--verify"];
        args.extend(&extra);
        let mut ooc_args = args.clone();
        ooc_args.extend([
            "--executor",
            "ooc",
            "--memory",
            "64M",
            "--out",
            o1.to_str().unwrap(),
        ]);
        let ooc = json(&plexus(d, &ooc_args));
        assert_eq!(ooc["verified"], true, "{alg}");
        assert_eq!(ooc["out"], o1.to_str().unwrap());
        args.extend(["--executor", "scan", "--out", o2.to_str().unwrap()]);
        json(&plexus(d, &args));
        let (a, b) = (csv_rows(&o1), csv_rows(&o2));
        assert_eq!(a.len(), b.len(), "{alg}");
        for (x, y) in a.iter().zip(&b) {
            // The id and the first value column (depth, distance, label, …):
            // exactly the driver's in memory; ranks within 1e-12.
            assert_eq!(x[0], y[0], "{alg}");
            if exact == 1 {
                assert_eq!(x[1], y[1], "{alg}: vertex {}", x[0]);
            } else {
                let (p, q): (f64, f64) = (x[1].parse().unwrap(), y[1].parse().unwrap());
                assert!((p - q).abs() <= 1e-12, "{alg}: vertex {}: {p} vs {q}", x[0]);
            }
        }
    }
    // Parquet, and `--out -`: the CSV on standard output, the summary on
    // standard error.
    let pq = d.join("bfs.parquet");
    let out = plexus(
        d,
        &[
            "run",
            "bfs",
            "g",
            "--executor",
            "ooc",
            "--memory",
            "64M",
            "--out",
            pq.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&pq).unwrap().len() > 0);
    let out = plexus(
        d,
        &[
            "run",
            "wcc",
            "g",
            "--executor",
            "ooc",
            "--memory",
            "64M",
            "--out",
            "-",
        ],
    );
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("id,component\n"), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("out of core"));
    // A bad --out is refused before any work.
    let out = plexus(
        d,
        &[
            "run",
            "bfs",
            "g",
            "--executor",
            "ooc",
            "--memory",
            "64M",
            "--out",
            "x.txt",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
}
