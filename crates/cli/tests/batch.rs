//! `plexus mix` and `plexus batch` through the real binary: the mix file,
//! the three modes giving the same results as `plexus run`, the JSON keys,
//! failing jobs, and malformed JOBS.toml files (one line naming the line,
//! exit 2).
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// A data directory with a weighted Kronecker graph `k` (scale 10) and
    /// a small string-id graph `s`.
    fn new() -> Env {
        let env = Env {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        env.ok(&[
            "generate",
            "kron",
            "--scale",
            "10",
            "--weighted",
            "--name",
            "k",
        ]);
        std::fs::write(env.path("s.csv"), "src,dst\na,b\nb,c\nc,a\nd,e\n").expect("write");
        let s = env.path("s.csv");
        env.ok(&[
            "import",
            s.to_str().unwrap_or(""),
            "--name",
            "s",
            "--ids",
            "string",
            "--src-col",
            "src",
            "--dst-col",
            "dst",
        ]);
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
    /// Asserts that two rank files (`id,rank` CSVs in the directory) hold
    /// the same vertices with ranks within 1e-12.
    fn same_ranks(&self, a: &str, b: &str) {
        let ranks = |p: &str| -> Vec<f64> {
            std::fs::read_to_string(self.path(p))
                .expect(p)
                .lines()
                .skip(1)
                .map(|l| {
                    l.split(',')
                        .nth(1)
                        .and_then(|x| x.parse().ok())
                        .expect("rank")
                })
                .collect()
        };
        let (x, y) = (ranks(a), ranks(b));
        assert_eq!(x.len(), y.len(), "{a} and {b}");
        for (u, v) in x.iter().zip(&y) {
            assert!((u - v).abs() < 1e-12, "{u} vs {v}");
        }
    }
    fn write(&self, name: &str, text: &str) -> String {
        std::fs::write(self.path(name), text).expect("write");
        self.path(name).to_str().unwrap_or("").to_string()
    }
    /// Runs a command that must fail with exit 2 and one `error:` line.
    fn fails(&self, args: &[&str], needle: &str) {
        let o = self.run(args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "plexus {args:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| l.starts_with("error")).count(),
            1,
            "plexus {args:?} printed: {err}"
        );
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "plexus {args:?}: {err}"
        );
    }
}

#[test]
fn mix_writes_a_seeded_job_file_with_every_algorithm() {
    let env = Env::new();
    let a = env.ok(&["mix", "--graph", "k", "--jobs", "10", "--seed", "7"]);
    let b = env.ok(&["mix", "--graph", "k", "--jobs", "10", "--seed", "7"]);
    assert_eq!(a, b);
    assert_eq!(a.matches("[[job]]").count(), 10);
    for alg in ["pagerank", "bfs", "sssp", "wcc", "cdlp"] {
        assert!(
            a.contains(&format!("algorithm = \"{alg}\"")),
            "{alg} missing:\n{a}"
        );
    }
    let v: toml::Value = toml::from_str(&a).expect("valid TOML");
    assert_eq!(v["graph"].as_str(), Some("k"));
    // Poisson arrivals: times grow from 0.
    let p = env.ok(&["mix", "--graph", "k", "--jobs", "6", "--poisson", "20"]);
    let v: toml::Value = toml::from_str(&p).expect("valid TOML");
    let ats: Vec<f64> = v["job"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| j["at"].as_float().expect("at"))
        .collect();
    assert_eq!(ats[0], 0.0);
    assert!(ats.windows(2).all(|w| w[0] <= w[1]), "{ats:?}");
    // An unweighted graph gets no SSSP.
    let s = env.ok(&["mix", "--graph", "s", "--jobs", "5", "--algos", "bfs,sssp"]);
    assert!(!s.contains("\"sssp\"") && s.contains("sssp left out"));
}

#[test]
fn every_mode_reports_the_same_results_with_the_documented_json_keys() {
    let env = Env::new();
    let mix = env.ok(&["mix", "--graph", "k", "--jobs", "12", "--seed", "3"]);
    let jobs = env.write("jobs.toml", &mix);
    let mut summaries: Vec<Vec<Value>> = Vec::new();
    let mut series_top: Vec<f64> = Vec::new();
    for (mode, lanes) in [
        ("sequential", false),
        ("independent", false),
        ("shared", true),
        ("shared", false),
    ] {
        let mut args = vec!["batch", &jobs, "--mode", mode, "--json", "--llc", "64K"];
        if lanes {
            args.push("--pagerank-lanes");
        }
        let out = env.ok(&args);
        let r: Value = serde_json::from_str(&out).expect("json");
        for key in [
            "mode",
            "jobs",
            "wall_seconds",
            "throughput_jobs_per_hour",
            "latency_p50_seconds",
            "latency_p95_seconds",
            "peak_rss_bytes",
            "topology_bytes_read",
        ] {
            assert!(r.get(key).is_some(), "{mode}: no key {key}");
        }
        assert_eq!(r["mode"], mode);
        assert_eq!(r["jobs_done"], 12);
        let jobs = r["jobs"].as_array().expect("jobs");
        assert!(jobs
            .iter()
            .all(|j| j["state"] == "done" && j["latency_seconds"].is_number()));
        // SSSP's superstep count depends on the order of relaxations within
        // a superstep (the engine's too); its distances do not.
        summaries.push(
            jobs.iter()
                .map(|j| {
                    let mut s = j["summary"].clone();
                    if j["algorithm"] == "sssp" {
                        if let Some(o) = s.as_object_mut() {
                            o.remove("iterations");
                        }
                    }
                    // A damping series' ranks equal the engine's within
                    // rounding, so ties among the top may order otherwise:
                    // compare their values apart.
                    if j["algorithm"] == "pagerank" && !lanes && mode == "shared" {
                        if let Some(o) = s.as_object_mut() {
                            let top = o.remove("top").unwrap_or_default();
                            series_top.extend(
                                top.as_array()
                                    .into_iter()
                                    .flatten()
                                    .filter_map(|t| t["rank"].as_f64()),
                            );
                        }
                    }
                    s
                })
                .collect(),
        );
    }
    assert_eq!(summaries[0], summaries[1]);
    assert_eq!(summaries[0], summaries[2]);
    // The series run: the same but for the ranks, which are within rounding.
    let mut lanes_top = Vec::new();
    for s in summaries[0].iter_mut() {
        if let Some(top) = s.as_object_mut().and_then(|o| o.remove("top")) {
            lanes_top.extend(
                top.as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t["rank"].as_f64()),
            );
        }
    }
    for s in summaries[3].iter_mut() {
        if let Some(o) = s.as_object_mut() {
            o.remove("top");
        }
    }
    assert_eq!(summaries[0], summaries[3]);
    assert!(!lanes_top.is_empty());
    assert_eq!(lanes_top.len(), series_top.len());
    for (a, b) in lanes_top.iter().zip(&series_top) {
        assert!((a - b).abs() <= 1e-12 * a.abs(), "rank {a} vs {b}");
    }
}

#[test]
fn batch_results_equal_plexus_run_in_external_ids() {
    let env = Env::new();
    let jobs = env.write(
        "j.toml",
        "graph = \"s\"\n[[job]]\nname = \"b\"\nalgorithm = \"bfs\"\nsource = \"b\"\n\n[[job]]\nname = \"w\"\nalgorithm = \"wcc\"\n\n[[job]]\nname = \"p\"\nalgorithm = \"pagerank\"\ndamping = 0.5\n",
    );
    env.ok(&["batch", &jobs, "--out-dir", "res", "--quiet"]);
    env.ok(&["run", "wcc", "s", "--out", "wcc.csv"]);
    // Batch PageRank jobs run Jacobi (their lanes have no Chebyshev
    // recurrence yet), `plexus run pagerank` by default Chebyshev where it
    // applies: the same stopping rule, not the same iterates.
    env.ok(&[
        "run",
        "pagerank",
        "s",
        "--damping",
        "0.5",
        "--method",
        "jacobi",
        "--out",
        "pr.csv",
    ]);
    let read = |p: &str| std::fs::read_to_string(env.path(p)).expect(p);
    let bfs = read("res/b.csv");
    assert!(bfs.starts_with("id,depth,parent\n"));
    assert!(bfs.contains("\nb,0,b\n") && bfs.contains("\nc,1,b\n") && bfs.contains("\na,2,c\n"));
    assert!(bfs.contains("\nd,,\n"));
    assert_eq!(read("res/w.csv"), read("wcc.csv"));
    env.same_ranks("res/p.csv", "pr.csv");
}

#[test]
fn batch_result_files_go_through_pid_temp_files_and_stale_ones_are_removed() {
    let env = Env::new();
    let jobs = env.write(
        "j.toml",
        "graph = \"s\"\n[[job]]\nname = \"b\"\nalgorithm = \"bfs\"\nsource = \"b\"\n",
    );
    // What a killed batch left: the temp file of a process that no longer
    // runs (no PID is that large), and one of a running process (this one).
    std::fs::create_dir_all(env.path("res")).unwrap();
    std::fs::write(env.path("res/.b.csv.tmp-999999999"), "stale").unwrap();
    let live = format!("res/.b.csv.tmp-{}", std::process::id());
    std::fs::write(env.path(&live), "in use").unwrap();
    env.ok(&["batch", &jobs, "--out-dir", "res", "--quiet"]);
    assert!(std::fs::read_to_string(env.path("res/b.csv"))
        .unwrap()
        .starts_with("id,depth,parent\n"));
    assert!(!env.path("res/.b.csv.tmp-999999999").exists());
    assert!(
        env.path(&live).exists(),
        "a running process's temp file stays"
    );
    let left: Vec<String> = std::fs::read_dir(env.path("res"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp") && n != &live[4..])
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn batch_ppr_takes_plexus_run_s_default_tolerance() {
    // Graph `k` has hundreds of vertices, so ppr's default tolerance is
    // 1e-4/n, tighter than NetworkX's 1e-6: a batch job that kept 1e-6
    // would stop iterations earlier than `plexus run ppr` and differ by
    // about 1e-4.
    let env = Env::new();
    let info: Value = serde_json::from_str(&env.ok(&["info", "k", "--json"])).expect("json");
    assert!(info["vertices"].as_u64().unwrap_or(0) > 100, "{info}");
    let source = info["out_degree"]["top"][0]["id"].to_string();
    let source = source.trim_matches('"');
    let jobs = env.write(
        "j.toml",
        &format!("graph = \"k\"\n[[job]]\nname = \"p\"\nalgorithm = \"ppr\"\nsource = {source}\n"),
    );
    env.ok(&["batch", &jobs, "--out-dir", "res", "--quiet"]);
    env.ok(&[
        "run",
        "ppr",
        "k",
        "--source",
        source,
        "--method",
        "jacobi",
        "--precision",
        "double",
        "--out",
        "ppr.csv",
    ]);
    env.same_ranks("res/p.csv", "ppr.csv");
}

#[test]
fn a_failing_job_fails_alone_and_the_batch_exits_2() {
    let env = Env::new();
    let jobs = env.write(
        "j.toml",
        "graph = \"k\"\n[[job]]\nalgorithm = \"bfs\"\nsource = 999999\n\n[[job]]\nalgorithm = \"wcc\"\n",
    );
    let o = env.run(&["batch", &jobs, "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let r: Value = serde_json::from_str(&String::from_utf8_lossy(&o.stdout)).expect("json");
    assert_eq!(r["jobs"][0]["state"], "failed");
    assert!(r["jobs"][0]["error"]
        .as_str()
        .unwrap_or("")
        .contains("unknown source vertex '999999'"));
    assert_eq!(r["jobs"][1]["state"], "done");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("error: 1 of 2 jobs did not finish"), "{err}");
}

#[test]
fn progress_is_plain_lines_when_stderr_is_not_a_terminal() {
    let env = Env::new();
    let jobs = env.write(
        "j.toml",
        "graph = \"k\"\n[[job]]\nname = \"w1\"\nalgorithm = \"wcc\"\n",
    );
    let o = env.run(&["batch", &jobs]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines().any(|l| l.contains("w1") && l.contains("done")),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("mode shared: 1 of 1 jobs done"), "{out}");
}

#[test]
fn malformed_job_files_name_the_line_and_exit_2() {
    let env = Env::new();
    let cases = [
        (
            "graph = \"k\"\n[[job]]\nalgorithm = \"bfs\"\nsorce = 1\n",
            ":4:",
            "unknown field",
        ),
        ("graph = \"k\"\n[[job]]\nalgorithm = bfs\n", ":3:", ""),
        (
            "graph = \"k\"\n\n[[job]]\nalgorithm = \"bfs\"\n",
            ":3:",
            "needs a source",
        ),
        (
            "graph = \"k\"\n[[job]]\nalgorithm = \"bogus\"\n",
            ":2:",
            "unknown algorithm 'bogus'",
        ),
        (
            "graph = \"k\"\n[[job]]\nalgorithm = \"wcc\"\ndamping = 0.5\n",
            ":2:",
            "does not apply to wcc",
        ),
        (
            "graph = \"k\"\n[[job]]\nalgorithm = \"pagerank\"\niterations = -3\n",
            ":4:",
            "",
        ),
        (
            "graph = \"nope\"\n[[job]]\nalgorithm = \"wcc\"\n",
            "nope",
            "cannot open graph",
        ),
        ("graph = \"k\"\n", "no [[job]]", ""),
    ];
    for (i, (text, at, what)) in cases.iter().enumerate() {
        let f = env.write(&format!("bad{i}.toml"), text);
        env.fails(&["batch", &f], at);
        if !what.is_empty() {
            env.fails(&["batch", &f], what);
        }
    }
    env.fails(&["batch", "missing.toml"], "cannot read missing.toml");
    let ok = env.write("ok.toml", "graph = \"k\"\n[[job]]\nalgorithm = \"wcc\"\n");
    env.fails(&["batch", &ok, "--mode", "fast"], "unknown mode 'fast'");
    env.fails(
        &["batch", &ok, "--llc", "big"],
        "--llc must be a positive size",
    );
}
