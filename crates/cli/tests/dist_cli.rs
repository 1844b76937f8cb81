//! `plexus run --executor dist --ranks N` (thread ranks): the same
//! per-vertex results as in memory (external ids, via `--out`), and the
//! per-rank, per-superstep statistics in `--json`.

use serde_json::Value;

mod common;
use common::plexus;

fn ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn thread_ranks_answer_as_in_memory_and_report_per_rank_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(plexus(
        d,
        &["generate", "kron", "--scale", "11", "--name", "k"],
    ));
    for alg in ["bfs", "wcc", "kcore", "cdlp", "coloring", "mis"] {
        let mem = d.join(format!("{alg}.mem.csv"));
        ok(plexus(
            d,
            &["run", alg, "k", "--out", mem.to_str().unwrap()],
        ));
        let want = std::fs::read_to_string(&mem).unwrap();
        for ranks in ["1", "3", "4"] {
            let out = d.join(format!("{alg}.{ranks}.csv"));
            ok(plexus(
                d,
                &[
                    "run",
                    alg,
                    "k",
                    "--executor",
                    "dist",
                    "--ranks",
                    ranks,
                    "--out",
                    out.to_str().unwrap(),
                ],
            ));
            let got = std::fs::read_to_string(&out).unwrap();
            if alg == "bfs" {
                // Parents may be any valid one: compare ids and depths.
                let cut = |s: &str| -> Vec<String> {
                    s.lines()
                        .map(|l| l.split(',').take(2).collect::<Vec<_>>().join(","))
                        .collect()
                };
                assert_eq!(cut(&got), cut(&want), "{alg} on {ranks} ranks");
            } else {
                assert_eq!(got, want, "{alg} on {ranks} ranks");
            }
        }
    }
    let j: Value = serde_json::from_str(&ok(plexus(
        d,
        &[
            "run",
            "pagerank",
            "k",
            "--executor",
            "dist",
            "--ranks",
            "2",
            "--json",
        ],
    )))
    .unwrap();
    assert_eq!(j["executor"], "dist");
    assert_eq!(j["transport"], "threads");
    let ranks = j["per_rank"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    for r in ranks {
        let steps = r["supersteps"].as_array().unwrap();
        assert!(!steps.is_empty());
        assert_eq!(steps[0]["mode"], "pagerank-pull");
        assert!(steps[0]["bytes_sent"].as_u64().unwrap() > 0);
        assert!(steps[0]["comm_ms"].as_f64().is_some());
    }
    // --ranks belongs to --executor dist.
    let bad = plexus(d, &["run", "bfs", "k", "--ranks", "2"]);
    assert!(!bad.status.success());
}

/// `--out` rows as (id, value) pairs.
fn rows(path: &std::path::Path) -> Vec<(String, f64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut f = l.split(',');
            let id = f.next()?.to_string();
            let x = f.next()?.parse().ok()?;
            Some((id, x))
        })
        .collect()
}

#[test]
fn pagerank_and_sssp_fast_paths_answer_as_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(plexus(
        d,
        &[
            "generate",
            "kron",
            "--scale",
            "11",
            "--weighted",
            "--name",
            "w",
        ],
    ));
    let file = |name: &str| d.join(name).to_str().unwrap().to_string();
    let fixed = ["--iterations", "20", "--tolerance", "1e-300"];
    let mut mem = vec!["run", "pagerank", "w", "--method", "jacobi"];
    mem.extend(["--precision", "double"]);
    mem.extend(fixed);
    let pr = file("pr.mem.csv");
    mem.extend(["--out", &pr]);
    ok(plexus(d, &mem));
    let sp = file("sssp.mem.csv");
    ok(plexus(d, &["run", "sssp", "w", "--out", &sp]));
    let want_sssp = std::fs::read_to_string(&sp).unwrap();
    for ranks in ["1", "2", "3", "4"] {
        let got = file(&format!("pr.{ranks}.csv"));
        let mut args = vec!["run", "pagerank", "w", "--executor", "dist"];
        args.extend(["--ranks", ranks, "--out", &got]);
        args.extend(fixed);
        ok(plexus(d, &args));
        let (a, b) = (rows(got.as_ref()), rows(pr.as_ref()));
        assert_eq!(a.len(), b.len());
        for ((ia, xa), (ib, xb)) in a.iter().zip(&b) {
            assert_eq!(ia, ib);
            assert!(
                (xa - xb).abs() <= 1e-12,
                "pagerank {ia} on {ranks} ranks: {xa} {xb}"
            );
        }
        let got = file(&format!("sssp.{ranks}.csv"));
        ok(plexus(
            d,
            &[
                "run",
                "sssp",
                "w",
                "--executor",
                "dist",
                "--ranks",
                ranks,
                "--out",
                &got,
            ],
        ));
        assert_eq!(
            std::fs::read_to_string(&got).unwrap(),
            want_sssp,
            "sssp on {ranks} ranks"
        );
    }
}

fn fail(out: std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(2), "expected exit status 2");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn parts_written_by_partition_answer_as_the_store_and_damage_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(plexus(
        d,
        &["generate", "kron", "--scale", "10", "--name", "k"],
    ));
    let parts = d.join("parts");
    let p = parts.to_str().unwrap();
    ok(plexus(d, &["partition", "k", "--ranks", "3", "--out", p]));
    for r in 0..3 {
        assert!(parts.join(format!("rank-{r}.plxp")).exists());
    }
    for alg in ["wcc", "nhop", "scc", "pagerank"] {
        let mem = d.join(format!("{alg}.mem.csv"));
        let got = d.join(format!("{alg}.parts.csv"));
        // PageRank's driver is compared with itself on the same ranks
        // (the in-memory kernel differs within its stated bound).
        let base: Vec<&str> = if alg == "pagerank" {
            vec!["--executor", "dist", "--ranks", "3"]
        } else {
            vec![]
        };
        let mut args = vec!["run", alg, "k", "--out", mem.to_str().unwrap()];
        args.extend(&base);
        ok(plexus(d, &args));
        ok(plexus(
            d,
            &[
                "run",
                alg,
                "k",
                "--executor",
                "dist",
                "--parts",
                p,
                "--out",
                got.to_str().unwrap(),
            ],
        ));
        assert_eq!(
            std::fs::read_to_string(&got).unwrap(),
            std::fs::read_to_string(&mem).unwrap(),
            "{alg} from parts"
        );
    }
    // --verify and --repeat on the store.
    let j: Value = serde_json::from_str(&ok(plexus(
        d,
        &[
            "run",
            "scc",
            "k",
            "--executor",
            "dist",
            "--ranks",
            "2",
            "--verify",
            "--repeat",
            "2",
            "--json",
        ],
    )))
    .unwrap();
    assert_eq!(j["verified"], true);
    assert_eq!(
        j["per_rank"][0]["compute_seconds_runs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Refusals: one line each, exit 2.
    let e = fail(plexus(
        d,
        &[
            "run",
            "wcc",
            "k",
            "--executor",
            "dist",
            "--parts",
            p,
            "--verify",
        ],
    ));
    assert!(e.contains("--verify"), "{e}");
    let e = fail(plexus(
        d,
        &["run", "wcc", "other", "--executor", "dist", "--parts", p],
    ));
    assert!(e.contains("'k'") && e.contains("'other'"), "{e}");
    let e = fail(plexus(
        d,
        &[
            "run",
            "wcc",
            "k",
            "--executor",
            "dist",
            "--parts",
            p,
            "--ranks",
            "2",
        ],
    ));
    assert!(e.contains("part 0 of 3"), "{e}");
    let e = fail(plexus(d, &["partition", "k", "--ranks", "2", "--out", p]));
    assert!(e.contains("rank-2.plxp"), "{e}");
    std::fs::write(parts.join("rank-1.plxp"), b"not a part").unwrap();
    let e = fail(plexus(
        d,
        &["run", "wcc", "k", "--executor", "dist", "--parts", p],
    ));
    assert!(e.contains("rank-1.plxp"), "{e}");
    let e = fail(plexus(d, &["run", "wcc", "k", "--parts", p]));
    assert!(e.contains("--executor dist"), "{e}");
}
