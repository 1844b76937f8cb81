//! Issue 45, §2 and §3, end to end: usage errors that help, input from
//! pipes, results to standard output, and the bad inputs that once gave a
//! panic, a hang, a wrong answer or a file written in the wrong place.
//!
//! Each test runs in its own temporary directory (the working directory),
//! with `<tmp>/data` as `--data-dir`.
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use plexus_graph::store::{read_header, SectionKind, GRAPH_FILE};

const BIN: &str = env!("CARGO_BIN_EXE_plexus");

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../graph/tests/fixtures")
        .join(name);
    assert!(p.is_file(), "missing fixture {}", p.display());
    p.to_str().unwrap().to_string()
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn root(&self) -> &Path {
        self.dir.path()
    }
    fn data(&self) -> PathBuf {
        self.root().join("data")
    }
    fn path(&self, name: &str) -> String {
        self.root().join(name).to_str().unwrap().to_string()
    }
    fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> String {
        std::fs::write(self.root().join(name), contents).unwrap();
        self.path(name)
    }
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.current_dir(self.root())
            .env_remove("PLEXUS_DATA")
            .env("RUST_BACKTRACE", "1")
            .arg("--data-dir")
            .arg(self.data())
            .args(args);
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
    /// Runs with `stdin` as standard input.
    fn run_with_input(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut w = child.stdin.take().unwrap();
        let data = stdin.to_vec();
        let feeder = std::thread::spawn(move || {
            let _ = w.write_all(&data);
        });
        let out = child.wait_with_output().unwrap();
        feeder.join().unwrap();
        out
    }
    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        check_ok(&out, args)
    }
    #[track_caller]
    fn fail(&self, args: &[&str]) -> String {
        let out = self.run(args);
        one_error_line(&out, args)
    }
    fn graph_file(&self, name: &str) -> PathBuf {
        self.data().join(name).join(GRAPH_FILE)
    }
    fn edges(&self, name: &str) -> u64 {
        let v: serde_json::Value =
            serde_json::from_str(&self.ok(&["info", name, "--json"])).unwrap();
        v["edges"].as_u64().unwrap()
    }
}

fn texts(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[track_caller]
fn check_ok(out: &Output, args: &[&str]) -> String {
    let (stdout, stderr) = texts(out);
    assert!(
        out.status.success(),
        "plexus {args:?} failed ({:?}):\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("error"), "plexus {args:?}:\n{stderr}");
    stdout
}

/// Exit status 2 and exactly one stderr line, `error: …`, without a panic.
#[track_caller]
fn one_error_line(out: &Output, args: &[&str]) -> String {
    let (_, stderr) = texts(out);
    assert_eq!(out.status.code(), Some(2), "plexus {args:?}:\n{stderr}");
    assert_no_panic(&stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "plexus {args:?}: not one line:\n{stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    lines[0].to_string()
}

#[track_caller]
fn assert_no_panic(stderr: &str) {
    for bad in ["panicked", "backtrace", "internal error"] {
        assert!(!stderr.contains(bad), "a panic ({bad}):\n{stderr}");
    }
}

#[track_caller]
fn assert_contains(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "'{n}' not in: {text}");
    }
}

/// The pid of a process that has exited.
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

// ---------------------------------------------------------------- §2 usage errors

#[test]
fn a_missing_required_option_is_named_in_clap_whole_message_with_status_2() {
    let env = Env::new();
    let out = env.run(&["import", "a.el"]);
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_contains(&stderr, &["--name <NAME>", "Usage: plexus import"]);
    let out = env.run(&["improt", "a.el"]);
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_contains(&stderr, &["similar", "'import'"]);
    let out = env.run(&["import", "a.el", "--name", "g", "--order", "zigzag"]);
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_contains(&stderr, &["zigzag", "auto, none, degree or rcm"]);
}

#[test]
fn bare_plexus_prints_the_command_list() {
    let env = Env::new();
    let out = Command::new(BIN).current_dir(env.root()).output().unwrap();
    let (stdout, stderr) = texts(&out);
    let all = format!("{stdout}{stderr}");
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert_contains(&all, &["Commands:", "import", "generate", "run", "batch"]);
    assert!(!all.contains("error:"), "{all}");
}

#[test]
fn an_os_error_is_printed_once() {
    let env = Env::new();
    std::fs::write(env.data(), "a file, not a directory").unwrap();
    let line = env.fail(&["import", &fixture("tiny.el"), "--name", "g"]);
    assert_eq!(line.matches("os error").count(), 1, "{line}");
}

#[test]
fn threads_far_beyond_the_cpus_are_capped_with_a_note_instead_of_hanging() {
    let env = Env::new();
    let t = std::time::Instant::now();
    let out = env.run(&["--threads", "100000", "list"]);
    let (_, stderr) = texts(&out);
    assert!(out.status.success(), "{stderr}");
    assert_contains(&stderr, &["note: --threads 100000 is capped at"]);
    assert!(t.elapsed().as_secs() < 20, "took {:?}", t.elapsed());
}

// ---------------------------------------------------------------- §2 pipes

#[test]
fn import_reads_standard_input_in_every_text_format_compressed_or_not() {
    let env = Env::new();
    let cases: [(&str, &[&str], u64); 6] = [
        ("tiny.el", &[], 6),
        ("tiny.el.gz", &[], 6),
        ("tiny.el.zst", &[], 6),
        ("tiny.wel.gz", &["--weighted"], 6),
        ("tiny_general_pattern.mtx", &[], 5),
        ("tiny_int.csv", &["--format", "csv"], 6),
    ];
    for (i, (file, extra, edges)) in cases.iter().enumerate() {
        let name = format!("g{i}");
        let mut args = vec!["import", "-", "--name", &name];
        args.extend_from_slice(extra);
        let bytes = std::fs::read(fixture(file)).unwrap();
        let out = env.run_with_input(&args, &bytes);
        check_ok(&out, &args);
        assert_eq!(env.edges(&name), *edges, "{file}");
    }
    // /dev/stdin is the same.
    let bytes = std::fs::read(fixture("tiny.el.gz")).unwrap();
    let args = ["import", "/dev/stdin", "--name", "devstdin"];
    check_ok(&env.run_with_input(&args, &bytes), &args);
    assert_eq!(env.edges("devstdin"), 6);
}

#[test]
fn import_reads_a_fifo_and_a_process_substitution() {
    let env = Env::new();
    let fifo = env.root().join("edges.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let bytes = std::fs::read(fixture("tiny.el.zst")).unwrap();
    let f = fifo.clone();
    let writer = std::thread::spawn(move || {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f)
            .unwrap()
            .write_all(&bytes)
            .unwrap();
    });
    env.ok(&["import", fifo.to_str().unwrap(), "--name", "fifo"]);
    writer.join().unwrap();
    assert_eq!(env.edges("fifo"), 6);
    if Path::new("/bin/bash").exists() {
        let script = format!(
            "{BIN} --data-dir {} import <(cat {}) --name subst",
            env.data().display(),
            fixture("tiny.el.gz")
        );
        let out = Command::new("/bin/bash")
            .arg("-c")
            .arg(script)
            .output()
            .unwrap();
        check_ok(&out, &["<(…)"]);
        assert_eq!(env.edges("subst"), 6);
    }
}

#[test]
fn graphalytics_from_standard_input_is_an_error_naming_why() {
    let env = Env::new();
    let args = ["import", "-", "--name", "g", "--format", "graphalytics"];
    let out = env.run_with_input(&args, b"1 2\n");
    let line = one_error_line(&out, &args);
    assert_contains(&line, &["not standard input"]);
}

// ---------------------------------------------------------------- §2 results to stdout

#[test]
fn export_and_run_write_csv_to_standard_output_with_out_dash() {
    let env = Env::new();
    env.ok(&["import", &fixture("tiny.wel"), "--name", "g"]);
    let out = env.ok(&["export", "g", "--out", "-", "--format", "csv"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "src,dst,weight", "{out}");
    assert_eq!(lines.len(), 7, "{out}");
    let out = env.ok(&["export", "g", "--out", "-"]);
    assert_eq!(out.lines().count(), 6, "{out}");
    let out = env.ok(&["run", "wcc", "g", "--out", "-"]);
    assert!(out.lines().any(|l| l.starts_with("id,")), "{out}");
    let line = env.fail(&["export", "g", "--out", "-", "--format", "graphalytics"]);
    assert_contains(&line, &["standard output"]);
    // generate --out - writes the edges there too, its summary to stderr.
    let out = env.run(&["generate", "kron", "--scale", "4", "--out", "-"]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.lines().count() > 10 && !stdout.contains("wrote"));
    assert_contains(&stderr, &["wrote"]);
}

// ---------------------------------------------------------------- §2 CSV

#[test]
fn csv_third_column_string_ids_and_no_header_need_no_extra_options() {
    let env = Env::new();
    let p = env.write("w.csv", "from,to,w\nann,bob,2.5\nbob,cat,1\n");
    env.ok(&["import", &p, "--name", "w", "--weighted"]);
    let v: serde_json::Value = serde_json::from_str(&env.ok(&["info", "w", "--json"])).unwrap();
    assert_eq!(v["ids"], "str");
    assert_eq!(v["weights"], "float");
    assert_eq!(v["edges"], 2);
    let p = env.write("plain.csv", "1,2\n2,3\n3,1\n");
    env.ok(&["import", &p, "--name", "plain"]);
    assert_eq!(env.edges("plain"), 3);
    let p = env.write("names.csv", "a,b\nb,c\n");
    env.ok(&["import", &p, "--name", "names", "--no-header"]);
    assert_eq!(env.edges("names"), 2);
}

#[test]
fn options_that_do_not_apply_to_the_input_format_are_errors() {
    let env = Env::new();
    let tiny = fixture("tiny.el");
    for extra in [
        &["--src-col", "0"][..],
        &["--delimiter", ";"],
        &["--ids", "string"],
        &["--no-header"],
        &["--nodes", "n.csv"],
    ] {
        let mut args = vec!["import", &tiny, "--name", "g"];
        args.extend_from_slice(extra);
        let line = env.fail(&args);
        assert_contains(&line, &[extra[0], "only for CSV"]);
    }
    assert!(!env.data().join("g").exists());
}

// ---------------------------------------------------------------- §2 --out checked first

#[test]
fn out_problems_are_reported_before_the_computation() {
    let env = Env::new();
    env.ok(&["import", &fixture("tiny.el"), "--name", "g"]);
    std::fs::create_dir(env.root().join("dir.csv")).unwrap();
    assert!(Command::new("mkfifo")
        .arg(env.root().join("f.csv"))
        .status()
        .unwrap()
        .success());
    for (out, needle) in [
        ("missing/x.csv", "does not exist"),
        ("dir.csv", "directory"),
        ("x.txt", ".csv or .parquet"),
        ("f.csv", "not a regular file"),
    ] {
        let line = env.fail(&["run", "pagerank", "g", "--out", out]);
        assert_contains(&line, &[needle]);
    }
    // A generator that would run for long fails at once on its --out.
    let t = std::time::Instant::now();
    let line = env.fail(&["generate", "kron", "--scale", "26", "--out", "missing/k.el"]);
    assert_contains(&line, &["does not exist"]);
    assert!(t.elapsed().as_secs() < 10, "took {:?}", t.elapsed());
}

// ---------------------------------------------------------------- §3 defects

#[test]
fn a_long_non_ascii_token_in_an_import_error_is_shortened_without_a_panic() {
    let env = Env::new();
    let p = env.write("bad.el", format!("1 2\n3 {}\n", "€".repeat(50)));
    let line = env.fail(&["import", &p, "--name", "g"]);
    assert_contains(&line, &["bad.el:2:", "…"]);
}

#[test]
fn cr_only_line_ends_fail_instead_of_importing_one_edge() {
    let env = Env::new();
    let p = env.write("mac.el", "1 2\r2 3\r3 4\r4 1\r");
    let line = env.fail(&["import", &p, "--name", "g"]);
    assert_contains(&line, &["mac.el:1:", "carriage return"]);
}

#[test]
fn a_csv_without_a_header_imports_its_first_edge() {
    let env = Env::new();
    let p = env.write("e.csv", "5,6\n6,7\n");
    env.ok(&["import", &p, "--name", "g"]);
    assert_eq!(env.edges("g"), 2);
}

#[test]
fn an_invalid_graphalytics_directed_value_fails_naming_the_properties_file() {
    let env = Env::new();
    env.write("g.v", "1\n2\n");
    env.write("g.e", "1 2\n");
    let p = env.write(
        "g.properties",
        "graph.g.vertex-file = g.v\ngraph.g.edge-file = g.e\ngraph.g.directed = ture\n",
    );
    let line = env.fail(&["import", &p, "--name", "g"]);
    assert_contains(&line, &["g.properties", "'ture'", "true or false"]);
}

#[test]
fn graph_names_with_paths_are_refused_by_every_command() {
    let env = Env::new();
    env.ok(&["import", &fixture("tiny.el"), "--name", "g"]);
    // A graph beside the data directory, which `../outside` would reach.
    let other = env.root().join("outside");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(env.graph_file("g"), other.join(GRAPH_FILE)).unwrap();
    for args in [
        vec!["info", "../outside"],
        vec!["run", "bfs", "../outside", "--source", "1"],
        vec!["export", "../outside", "--out", "x.el"],
        vec!["remove", "../outside"],
        vec!["mix", "--graph", "../outside", "--jobs", "2"],
    ] {
        let line = env.fail(&args);
        assert_contains(&line, &["invalid graph name"]);
    }
    assert!(other.join(GRAPH_FILE).exists());
}

#[test]
fn a_graph_directory_without_graph_plx_is_listed_named_and_removable() {
    let env = Env::new();
    env.ok(&["import", &fixture("tiny.el"), "--name", "g"]);
    std::fs::remove_file(env.graph_file("g")).unwrap();
    assert_contains(&env.ok(&["list"]), &["g", "incomplete"]);
    let line = env.fail(&["info", "g"]);
    assert_contains(&line, &["no graph.plx", "plexus remove g"]);
    let line = env.fail(&["import", &fixture("tiny.el"), "--name", "g"]);
    assert_contains(&line, &["no graph.plx"]);
    env.ok(&["remove", "g"]);
    assert!(!env.data().join("g").exists());
    env.ok(&["import", &fixture("tiny.el"), "--name", "g"]);
}

#[test]
fn out_writes_through_a_symlink_and_refuses_fifos_devices_and_read_only_files() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.ok(&["import", &fixture("tiny.el"), "--name", "g"]);
    let real = env.write("real.el", "old");
    std::os::unix::fs::symlink("real.el", env.root().join("link.el")).unwrap();
    env.ok(&["export", "g", "--out", &env.path("link.el")]);
    assert!(std::fs::symlink_metadata(env.root().join("link.el"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap().lines().count(), 6);
    let fifo = env.root().join("f.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let ro = env.write("ro.el", "keep");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    for (out, needle) in [
        (fifo.to_str().unwrap(), "not a regular file"),
        ("/dev/full", "not a regular file"),
        (ro.as_str(), "read-only"),
    ] {
        let line = env.fail(&["export", "g", "--out", out]);
        assert_contains(&line, &[needle]);
        let line = env.fail(&["generate", "kron", "--scale", "4", "--out", out]);
        assert_contains(&line, &[needle]);
    }
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_corrupted_target_byte_fails_run_instead_of_giving_a_wrong_answer() {
    let env = Env::new();
    env.ok(&["generate", "kron", "--scale", "8", "--name", "g"]);
    let before = env.ok(&["run", "bfs", "g", "--source", "1", "--json"]);
    let h = read_header(&env.graph_file("g")).unwrap();
    let e = h
        .sections
        .iter()
        .find(|e| e.kind == SectionKind::OutTargets)
        .unwrap();
    let mut b = std::fs::read(env.graph_file("g")).unwrap();
    // A valid vertex id, so only the checksum can tell.
    let at = e.offset as usize + 4 * 10;
    b[at] ^= 0x01;
    std::fs::write(env.graph_file("g"), &b).unwrap();
    for args in [
        vec!["run", "bfs", "g", "--source", "1"],
        vec!["run", "pagerank", "g"],
        vec!["info", "g"],
        vec!["export", "g", "--out", "x.el"],
    ] {
        let line = env.fail(&args);
        assert_contains(&line, &["checksum mismatch in section out-targets"]);
    }
    b[at] ^= 0x01;
    std::fs::write(env.graph_file("g"), &b).unwrap();
    assert_eq!(
        env.ok(&["run", "bfs", "g", "--source", "1", "--json"])
            .contains("\"reached\""),
        before.contains("\"reached\"")
    );
}

#[test]
fn concurrent_imports_of_one_name_do_not_both_succeed() {
    let env = Env::new();
    env.ok(&["generate", "kron", "--scale", "14", "--out", "k.el"]);
    let k = env.path("k.el");
    let children: Vec<_> = (0..4)
        .map(|_| {
            env.command(&["import", &k, "--name", "same"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let ok = outs.iter().filter(|o| o.status.success()).count();
    assert_eq!(ok, 1, "{} succeeded", ok);
    for o in outs.iter().filter(|o| !o.status.success()) {
        let line = one_error_line(o, &["import"]);
        assert!(
            line.contains("already exists") || line.contains("being written"),
            "{line}"
        );
    }
}

#[test]
fn stale_temporaries_of_killed_writes_are_removed_by_the_next_write() {
    let env = Env::new();
    let dead = dead_pid();
    std::fs::create_dir_all(env.data().join(format!(".tmp-big-{dead}"))).unwrap();
    std::fs::write(
        env.data().join(format!(".tmp-big-{dead}")).join(GRAPH_FILE),
        vec![0u8; 4096],
    )
    .unwrap();
    let stale_out = env.write(&format!(".k.el.tmp-{dead}"), "half");
    let stale_probe = env.data().join(format!(".machine.json.tmp-{dead}"));
    std::fs::write(&stale_probe, "{").unwrap();
    env.ok(&["import", &fixture("tiny.el"), "--name", "g"]);
    assert!(!env.data().join(format!(".tmp-big-{dead}")).exists());
    env.ok(&["generate", "kron", "--scale", "4", "--out", "k.el"]);
    assert!(!Path::new(&stale_out).exists());
    env.ok(&["probe", "--array-mib", "1", "--repetitions", "1"]);
    assert!(!stale_probe.exists());
}

#[test]
fn a_closed_standard_output_ends_mix_quietly() {
    let env = Env::new();
    env.ok(&["generate", "kron", "--scale", "6", "--name", "g"]);
    let mut child = env
        .command(&["mix", "--graph", "g", "--jobs", "20000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 64];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut head)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let (_, stderr) = texts(&out);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn batch_job_names_stay_inside_the_out_dir_and_never_overwrite_each_other() {
    let env = Env::new();
    env.ok(&["generate", "kron", "--scale", "6", "--name", "g"]);
    let jobs = env.write(
        "JOBS.toml",
        "graph = \"g\"\n\
         [[job]]\nname = \"same\"\nalgorithm = \"wcc\"\n\
         [[job]]\nname = \"same\"\nalgorithm = \"wcc\"\n\
         [[job]]\nname = \"../escape\"\nalgorithm = \"wcc\"\n\
         [[job]]\nname = \"/tmp/abs-plexus-test\"\nalgorithm = \"wcc\"\n",
    );
    env.ok(&["batch", &jobs, "--out-dir", "out", "--quiet"]);
    let mut files: Vec<String> = std::fs::read_dir(env.root().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 4, "{files:?}");
    assert!(!env.root().join("escape.csv").exists());
    assert!(!Path::new("/tmp/abs-plexus-test.csv").exists());
}

#[test]
fn generating_a_graph_larger_than_memory_is_refused_at_once_naming_its_size() {
    let env = Env::new();
    let t = std::time::Instant::now();
    let line = env.fail(&["generate", "kron", "--scale", "31", "--edge-factor", "1000"]);
    assert_contains(&line, &["2147483648 vertices", "GiB"]);
    assert!(t.elapsed().as_secs() < 10, "took {:?}", t.elapsed());
}

// ---------------------------------------------------------------- more of the same classes

#[test]
fn a_matrix_market_size_line_declaring_more_vertices_than_memory_holds_is_refused() {
    let env = Env::new();
    let p = env.write(
        "huge.mtx",
        "%%MatrixMarket matrix coordinate pattern general\n4000000000 4000000000 1\n1 2\n",
    );
    let out = env.run(&["import", &p, "--name", "g"]);
    let (_, stderr) = texts(&out);
    if out.status.success() {
        // Only a machine with about 150 GiB free imports it.
        return;
    }
    let line = one_error_line(&out, &["import"]);
    assert_contains(&line, &["huge.mtx:2:", "4000000000 vertices", "GiB"]);
    assert!(!stderr.contains("memory allocation"), "{stderr}");
}

#[test]
fn probe_and_mix_refuse_sizes_that_cannot_fit_before_allocating() {
    let env = Env::new();
    let out = env.run(&["probe", "--array-mib", "65536", "--no-store"]);
    if !out.status.success() {
        let line = one_error_line(&out, &["probe"]);
        assert_contains(&line, &["--array-mib 65536", "available"]);
    }
    env.ok(&["generate", "kron", "--scale", "5", "--name", "g"]);
    let line = env.fail(&["mix", "--graph", "g", "--jobs", "100000000000"]);
    assert_contains(&line, &["--jobs must be 1 to"]);
}

#[test]
fn out_inside_a_stored_graph_directory_is_refused() {
    let env = Env::new();
    env.ok(&["import", &fixture("tiny.el"), "--name", "g"]);
    let target = env.data().join("g").join(GRAPH_FILE);
    let line = env.fail(&["export", "g", "--out", target.to_str().unwrap()]);
    assert_contains(&line, &["stored graph"]);
    env.ok(&["info", "g", "--check"]);
}

#[test]
fn standard_input_cannot_be_both_the_edges_and_the_node_table() {
    let env = Env::new();
    let args = [
        "import", "-", "--name", "g", "--format", "csv", "--nodes", "-",
    ];
    let out = env.run_with_input(&args, b"1,2\n");
    let line = one_error_line(&out, &args);
    assert_contains(&line, &["both be standard input"]);
}
