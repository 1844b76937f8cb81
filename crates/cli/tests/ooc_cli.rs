//! `plexus run --executor ooc`: the same answers as in memory, the I/O
//! counters in `--json`, and a budget too small refused in one line.
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_plexus");

fn plexus(data: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("--data-dir")
        .arg(data)
        .arg("-q")
        .args(args)
        .output()
        .expect("plexus runs")
}

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
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".ooc-"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
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
