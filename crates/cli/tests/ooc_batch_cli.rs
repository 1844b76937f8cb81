//! `plexus batch JOBS.toml --executor ooc --memory SIZE`: every job's
//! result equals the in-memory batch's (exact where exact) and its solo
//! out-of-core run's, the shared batch reads fewer bytes than the solo
//! runs together, and options that do not apply are refused in one line.
use std::collections::HashMap;
use std::path::Path;

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

/// A result file as id → the other columns.
fn rows(path: &Path) -> HashMap<String, Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split(',').map(str::to_string);
            let id = f.next().unwrap();
            (id, f.collect())
        })
        .collect()
}

const JOBS: &str = r#"
graph = "g"

[[job]]
name = "bfs-a"
algorithm = "bfs"
source = 0

[[job]]
name = "bfs-b"
algorithm = "bfs"
source = 5

[[job]]
name = "sssp"
algorithm = "sssp"
source = 1

[[job]]
name = "pr"
algorithm = "pagerank"
iterations = 12

[[job]]
name = "wcc"
algorithm = "wcc"

[[job]]
name = "cdlp"
algorithm = "cdlp"
iterations = 6
at = 0.2
"#;

#[test]
fn a_shared_out_of_core_batch_answers_as_in_memory_and_reads_less_than_its_jobs_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let g = plexus(
        d,
        &[
            "generate",
            "rmat",
            "--scale",
            "11",
            "--weighted",
            "--name",
            "g",
        ],
    );
    assert!(g.status.success(), "{}", String::from_utf8_lossy(&g.stderr));
    let jobs = d.join("jobs.toml");
    std::fs::write(&jobs, JOBS).unwrap();
    let jobs = jobs.to_str().unwrap();
    let (ooc_dir, mem_dir) = (d.join("ooc-out"), d.join("mem-out"));
    let ooc = json(&plexus(
        d,
        &[
            "batch",
            jobs,
            "--executor",
            "ooc",
            "--memory",
            "64M",
            "--json",
            "--out-dir",
            ooc_dir.to_str().unwrap(),
        ],
    ));
    let mem = json(&plexus(
        d,
        &[
            "batch",
            jobs,
            "--mode",
            "sequential",
            "--json",
            "--out-dir",
            mem_dir.to_str().unwrap(),
        ],
    ));
    assert_eq!(ooc["executor"], "ooc");
    assert_eq!(ooc["jobs_done"], 6);
    assert_eq!(mem["jobs_done"], 6);
    // Integer results exactly, distances exactly: the in-memory batch's.
    for (name, col) in [
        ("bfs-a", 0),
        ("bfs-b", 0),
        ("sssp", 0),
        ("wcc", 0),
        ("cdlp", 0),
    ] {
        let a = rows(&ooc_dir.join(format!("{name}.csv")));
        let b = rows(&mem_dir.join(format!("{name}.csv")));
        assert_eq!(a.len(), b.len(), "{name}");
        for (id, r) in &a {
            assert_eq!(r[col], b[id][col], "{name}: vertex {id}");
        }
    }
    // Each job as its solo out-of-core run; the solo runs read more together.
    let mut solo_bytes = 0u64;
    let by_name: HashMap<&str, &Value> = ooc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["name"].as_str().unwrap(), j))
        .collect();
    for (name, args) in [
        ("bfs-a", vec!["bfs", "g", "--source", "0"]),
        ("bfs-b", vec!["bfs", "g", "--source", "5"]),
        ("sssp", vec!["sssp", "g", "--source", "1"]),
        ("pr", vec!["pagerank", "g", "--iterations", "12"]),
        ("wcc", vec!["wcc", "g"]),
        ("cdlp", vec!["cdlp", "g", "--iterations", "6"]),
    ] {
        let mut a = vec!["run"];
        a.extend(args);
        a.extend(["--executor", "ooc", "--memory", "64M", "--json"]);
        let solo = json(&plexus(d, &a));
        solo_bytes += solo["ooc"]["bytes_read"].as_u64().unwrap();
        let job = by_name[name];
        assert_eq!(job["state"], "done");
        assert_eq!(
            job["supersteps"].as_u64().unwrap(),
            solo["ooc"]["supersteps"].as_array().unwrap().len() as u64,
            "{name}"
        );
        if name == "pr" {
            // The driver's ranks, bit for bit: the solo run's top vertex.
            let top = &job["summary"]["top"][0];
            assert_eq!(top["rank"], solo["top"][0]["value"], "{name}");
            assert_eq!(
                top["id"].to_string(),
                solo["top"][0]["id"].to_string().replace('"', "")
            );
        }
    }
    // The late job joined at a round after its time.
    let cdlp = by_name["cdlp"];
    assert!(
        cdlp["ooc"]["joined_seconds"].as_f64().unwrap() >= 0.2,
        "{cdlp}"
    );
    let shared = ooc["shared"][0]["bytes_read"].as_u64().unwrap();
    assert!(
        shared < solo_bytes,
        "shared {shared} bytes, solo runs {solo_bytes}"
    );
    assert!(ooc["shared"][0]["rounds"].as_u64().unwrap() > 0);
    assert_no_ooc_leftovers(d);
}

#[test]
fn an_out_of_core_batch_refuses_what_does_not_apply_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert!(
        plexus(d, &["generate", "kron", "--scale", "10", "--name", "g"])
            .status
            .success()
    );
    let jobs = d.join("jobs.toml");
    let late = d.join("late.toml");
    std::fs::write(&jobs, "graph = \"g\"\n[[job]]\nalgorithm = \"wcc\"\n").unwrap();
    std::fs::write(
        &late,
        "graph = \"g\"\n[[job]]\nalgorithm = \"wcc\"\ndeadline_seconds = 1.5\n",
    )
    .unwrap();
    let (jobs, late) = (jobs.to_str().unwrap(), late.to_str().unwrap());
    for (args, needle) in [
        (vec!["batch", jobs, "--executor", "ooc"], "--memory"),
        (
            vec![
                "batch",
                jobs,
                "--executor",
                "ooc",
                "--memory",
                "64M",
                "--no-fuse",
            ],
            "--no-fuse",
        ),
        (
            vec!["batch", late, "--executor", "ooc", "--memory", "64M"],
            "'deadline_seconds'",
        ),
        (vec!["batch", jobs, "--memory", "64M"], "--executor ooc"),
        (
            vec!["batch", jobs, "--executor", "ooc", "--memory", "16K"],
            "at least",
        ),
    ] {
        let out = plexus(d, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
