//! The `plexus` binary end to end: every graph-management command works,
//! and every bad input ends with exit status 2, exactly one `error: …` line
//! on stderr naming the file (and line), no panic or backtrace, and nothing
//! left behind (no graph directory, no temporary files).
//!
//! Each test runs in its own temporary directory, used as the working
//! directory, with `<tmp>/data` as `--data-dir`.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use plexus_graph::store::{read_header, SectionKind, FORMAT_VERSION, GRAPH_FILE};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_plexus");

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../graph/tests/fixtures")
        .join(name);
    assert!(p.is_file(), "missing fixture {}", p.display());
    p.to_str().unwrap().to_string()
}

/// A temporary working directory with a data directory inside.
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
    /// A path inside the working directory, as a string argument.
    fn path(&self, name: &str) -> String {
        self.root().join(name).to_str().unwrap().to_string()
    }
    /// Writes a file into the working directory; returns its path.
    fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> String {
        std::fs::write(self.root().join(name), contents).unwrap();
        self.path(name)
    }
    fn command(&self) -> Command {
        let mut c = Command::new(BIN);
        c.current_dir(self.root())
            .env_remove("PLEXUS_DATA")
            .env_remove("PLEXUS_SHARED_DATA")
            // A stray panic would print a backtrace, which the tests look for.
            .env("RUST_BACKTRACE", "1");
        c
    }
    /// Runs `plexus --data-dir <data> ARGS`.
    fn run(&self, args: &[&str]) -> Output {
        self.command()
            .arg("--data-dir")
            .arg(self.data())
            .args(args)
            .output()
            .unwrap()
    }
    /// Runs and expects success; returns stdout.
    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let (stdout, stderr) = texts(&out);
        assert!(
            out.status.success(),
            "plexus {args:?} failed ({:?}):\n{stderr}",
            out.status
        );
        assert!(
            !stderr.contains("error"),
            "plexus {args:?} printed an error:\n{stderr}"
        );
        stdout
    }
    /// Runs and expects a clean failure; returns the one stderr line.
    #[track_caller]
    fn fail(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let line = clean_failure(&out, args);
        assert_no_temporaries(self.root());
        if self.data().is_dir() {
            assert_no_temporaries(&self.data());
        }
        line
    }
    /// Asserts the data directory holds no graph (absent or empty).
    #[track_caller]
    fn assert_store_empty(&self) {
        if let Ok(rd) = std::fs::read_dir(self.data()) {
            let names: Vec<String> = rd
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert!(names.is_empty(), "the data directory holds {names:?}");
        }
    }
    fn graph_file(&self, name: &str) -> PathBuf {
        self.data().join(name).join(GRAPH_FILE)
    }
    fn info_json(&self, name: &str) -> Value {
        serde_json::from_str(&self.ok(&["info", name, "--json"])).expect("info --json prints JSON")
    }
}

fn texts(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Exit status 2, exactly one line on stderr starting with `error:`, no panic.
#[track_caller]
fn clean_failure(out: &Output, args: &[&str]) -> String {
    let (_, stderr) = texts(out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "plexus {args:?}: wrong exit status; stderr:\n{stderr}"
    );
    assert_no_panic(&stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "plexus {args:?}: stderr is not one line:\n{stderr}"
    );
    assert!(lines[0].starts_with("error: "), "plexus {args:?}: {stderr}");
    lines[0].to_string()
}

#[track_caller]
fn assert_no_panic(stderr: &str) {
    for bad in ["panicked", "backtrace", "internal error", "RUST_BACKTRACE"] {
        assert!(
            !stderr.contains(bad),
            "stderr shows a panic ({bad}):\n{stderr}"
        );
    }
}

/// No `.tmp-*`, `.trash-*` or `.NAME.tmp-*` entries in `dir`.
#[track_caller]
fn assert_no_temporaries(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !(name.starts_with('.')
                && (name.contains(".tmp-")
                    || name.starts_with(".tmp-")
                    || name.starts_with(".trash-"))),
            "temporary file {name} left in {}",
            dir.display()
        );
    }
}

#[track_caller]
fn assert_contains(line: &str, needles: &[&str]) {
    for n in needles {
        assert!(line.contains(n), "'{n}' not in: {line}");
    }
}

// ---------------------------------------------------------------- commands that work

#[test]
fn import_info_list_export_and_remove_work_end_to_end() {
    let env = Env::new();
    let out = env.ok(&["import", &fixture("tiny.wel"), "--name", "tiny"]);
    assert_contains(
        &out,
        &["'tiny'", "5 vertices, 6 edges (directed, weighted)"],
    );
    assert!(env.graph_file("tiny").is_file());

    let info = env.ok(&["info", "tiny"]);
    assert_contains(
        &info,
        &[
            "vertices     5",
            "edges        6",
            "directed     yes",
            "self-loops   1",
            "weights      float",
        ],
    );

    let j = env.info_json("tiny");
    assert_eq!(j["vertices"], 5);
    assert_eq!(j["edges"], 6);
    assert_eq!(j["directed"], true);
    assert_eq!(j["self_loops"], 1);
    assert_eq!(j["checked"], false);

    let checked = env.ok(&["info", "tiny", "--check"]);
    assert_contains(&checked, &["check        ok"]);
    let j: Value = serde_json::from_str(&env.ok(&["info", "tiny", "--check", "--json"])).unwrap();
    assert_eq!(j["checked"], true);

    let list = env.ok(&["list"]);
    assert_contains(&list, &["tiny", "5", "6", "yes"]);
    let rows: Value = serde_json::from_str(&env.ok(&["list", "--json"])).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(1));
    assert_eq!(rows[0]["name"], "tiny");
    assert_eq!(rows[0]["vertices"], 5);
    assert_eq!(rows[0]["edges"], 6);

    let el = env.path("tiny-out.el");
    env.ok(&["export", "tiny", "--out", &el]);
    let text = std::fs::read_to_string(&el).unwrap();
    assert_eq!(text.lines().count(), 6);
    assert!(text.lines().any(|l| l == "1 2 0.5"), "{text}");

    let csv = env.path("tiny-out.csv");
    env.ok(&["export", "tiny", "--out", &csv, "--format", "csv"]);
    assert!(std::fs::read_to_string(&csv)
        .unwrap()
        .starts_with("src,dst,weight\n"));

    let e = env.path("ga.e");
    env.ok(&["export", "tiny", "--out", &e, "--format", "graphalytics"]);
    for f in ["ga.v", "ga.e", "ga.properties"] {
        assert!(env.root().join(f).is_file(), "{f} not written");
    }
    assert_no_temporaries(env.root());

    // The exported files import back to the same counts.
    env.ok(&["import", &el, "--name", "again", "--weighted"]);
    let j = env.info_json("again");
    assert_eq!(
        (j["vertices"].as_u64(), j["edges"].as_u64()),
        (Some(5), Some(6))
    );
    env.ok(&["import", &env.path("ga.properties"), "--name", "ga"]);
    assert_eq!(env.info_json("ga")["weights"], "float");

    let out = env.ok(&["remove", "tiny"]);
    assert_contains(&out, &["removed 'tiny'"]);
    assert!(!env.data().join("tiny").exists());
    let line = env.fail(&["info", "tiny"]);
    assert_contains(&line, &["no graph named 'tiny'"]);
    assert_no_temporaries(&env.data());
}

#[test]
fn undirected_import_counts_each_edge_once() {
    let env = Env::new();
    env.ok(&["import", &fixture("tiny.el"), "--name", "u", "--undirected"]);
    let j = env.info_json("u");
    assert_eq!(j["vertices"], 5);
    assert_eq!(j["edges"], 6);
    assert_eq!(j["arcs"], 11);
    assert_eq!(j["directed"], false);
    assert_eq!(j["weights"], "none");
}

#[test]
fn every_input_format_imports_through_the_cli() {
    let env = Env::new();
    let cases: Vec<(Vec<String>, u64, u64, bool)> = vec![
        (vec![fixture("tiny.el.gz")], 5, 6, true),
        (vec![fixture("tiny.el.zst")], 5, 6, true),
        (vec![fixture("tiny_crlf.el")], 5, 6, true),
        (vec![fixture("tiny_general_pattern.mtx")], 6, 5, true),
        (vec![fixture("tiny_symmetric_real.mtx")], 6, 5, false),
        (
            vec![
                fixture("tiny_int.csv"),
                "--weight-col".into(),
                "weight".into(),
            ],
            5,
            6,
            true,
        ),
        (
            vec![
                fixture("tiny_str.csv"),
                "--ids".into(),
                "string".into(),
                "--src-col".into(),
                "from".into(),
                "--dst-col".into(),
                "to".into(),
                "--nodes".into(),
                fixture("tiny_str_nodes.csv"),
                "--node-col".into(),
                "id".into(),
            ],
            6,
            6,
            true,
        ),
        (
            vec![
                fixture("tiny_semicolon.csv"),
                "--delimiter".into(),
                ";".into(),
            ],
            5,
            6,
            true,
        ),
        (vec![fixture("tiny.properties")], 6, 6, true),
        (vec![fixture("tinyu.e")], 6, 6, false),
    ];
    for (k, (args, n, m, directed)) in cases.iter().enumerate() {
        let name = format!("g{k}");
        let mut a: Vec<&str> = vec!["import"];
        a.extend(args.iter().map(String::as_str));
        a.extend(["--name", &name]);
        env.ok(&a);
        let j = env.info_json(&name);
        assert_eq!(j["vertices"].as_u64(), Some(*n), "{args:?}");
        assert_eq!(j["edges"].as_u64(), Some(*m), "{args:?}");
        assert_eq!(j["directed"].as_bool(), Some(*directed), "{args:?}");
    }
    let j = env.info_json("g6");
    assert_eq!(j["ids"], "str");
}

#[test]
fn import_options_for_policies_and_order_are_applied() {
    let env = Env::new();
    let input = env.write("multi.wel", "1 2 1\n1 2 2\n2 2 5\n2 3 4\n");
    env.ok(&[
        "import",
        &input,
        "--name",
        "m",
        "--self-loops",
        "drop",
        "--duplicates",
        "sum",
        "--order",
        "degree",
    ]);
    let j = env.info_json("m");
    assert_eq!(j["edges"], 2);
    assert_eq!(j["self_loops"], 0);
    assert_eq!(j["order"], "degree");
    let out = env.path("m.el");
    env.ok(&["export", "m", "--out", &out]);
    let mut lines: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        vec!["1 2 3", "2 3 4"],
        "exported in external ids with summed weights"
    );
}

#[test]
fn existing_graph_is_kept_unless_force_is_given() {
    let env = Env::new();
    env.ok(&["import", &fixture("tiny.el"), "--name", "g"]);
    let line = env.fail(&[
        "import",
        &fixture("tiny_general_pattern.mtx"),
        "--name",
        "g",
    ]);
    assert_contains(&line, &["'g' already exists", "--force"]);
    assert_eq!(env.info_json("g")["vertices"], 5);
    env.ok(&[
        "import",
        &fixture("tiny_general_pattern.mtx"),
        "--name",
        "g",
        "--force",
    ]);
    assert_eq!(env.info_json("g")["vertices"], 6);
    assert_no_temporaries(&env.data());
}

#[test]
fn plexus_data_environment_variable_selects_the_store() {
    let env = Env::new();
    let run = |args: &[&str]| {
        env.command()
            .env("PLEXUS_DATA", env.data())
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["import", &fixture("tiny.el"), "--name", "viaenv"]);
    assert!(out.status.success(), "{}", texts(&out).1);
    assert!(env.graph_file("viaenv").is_file());
    let out = run(&["list"]);
    assert!(texts(&out).0.contains("viaenv"));
}

#[test]
fn list_of_an_empty_store_says_so() {
    let env = Env::new();
    assert_contains(&env.ok(&["list"]), &["no graphs"]);
    assert_eq!(
        serde_json::from_str::<Value>(&env.ok(&["list", "--json"])).unwrap(),
        serde_json::json!([])
    );
}

#[test]
fn generate_kron_stores_a_graph_or_writes_an_edge_list() {
    let env = Env::new();
    let out = env.ok(&["generate", "kron", "--scale", "8"]);
    assert_contains(&out, &["generated 'kron8'", "256 vertices"]);
    let j = env.info_json("kron8");
    assert_eq!(j["vertices"], 256);
    assert_eq!(j["directed"], false);
    assert_eq!(j["self_loops"], 0);
    env.ok(&["info", "kron8", "--check"]);

    let file = env.path("kron8.el");
    let out = env.ok(&["generate", "kron", "--scale", "8", "--out", &file]);
    assert_contains(&out, &["4,096 edges"]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 256 * 16);
    assert!(text.lines().all(|l| l.split(' ').count() == 2
        && l.split(' ')
            .all(|t| t.parse::<u32>().is_ok_and(|x| x < 256))));
    assert_no_temporaries(env.root());

    // The same seed gives the same graph: the file imports to kron8's counts
    // once loops and duplicates are dropped.
    env.ok(&[
        "import",
        &file,
        "--name",
        "back",
        "--undirected",
        "--self-loops",
        "drop",
        "--duplicates",
        "drop",
    ]);
    let k = env.info_json("back");
    assert_eq!(k["edges"], j["edges"]);
}

#[test]
fn generate_other_kinds_and_weights_work() {
    let env = Env::new();
    env.ok(&[
        "generate",
        "rmat",
        "--scale",
        "6",
        "--edge-factor",
        "4",
        "--weighted",
    ]);
    let j = env.info_json("rmat6");
    assert_eq!(
        (j["directed"].as_bool(), j["weights"].as_str()),
        (Some(true), Some("integer"))
    );
    env.ok(&["generate", "grid2d", "--width", "3", "--height", "2"]);
    assert_eq!(env.info_json("grid3x2")["edges"], 7);
    env.ok(&["generate", "uniform", "--scale", "5", "--name", "uni"]);
    assert_eq!(env.info_json("uni")["vertices"], 32);
}

#[test]
fn demo_with_a_small_scale_prints_its_table() {
    let env = Env::new();
    let out = env.ok(&["demo", "--scale", "10"]);
    assert_contains(
        &out,
        &[
            "Plexus demo",
            "graph",
            "vertices",
            "edges",
            "demo-kron10",
            "1,024",
            "done in",
        ],
    );
    assert!(env.graph_file("demo-kron10").is_file());
    assert_no_temporaries(&env.data());
}

#[test]
fn demo_imports_the_shared_enron_graph_when_given_the_shared_data() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    if !shared.join("email-Enron.el.gz").is_file() {
        println!("skipped: no shared data at {}", shared.display());
        return;
    }
    let env = Env::new();
    let out = env.ok(&[
        "demo",
        "--scale",
        "8",
        "--shared-data",
        shared.to_str().unwrap(),
    ]);
    assert_contains(&out, &["demo-email-Enron", "36,692", "183,831"]);
}

// ---------------------------------------------------------------- bad input to import

/// Imports `input` (extra `args` after it) into a fresh store and expects a
/// clean failure naming `file` (and `:line:` if given); the store stays empty.
#[track_caller]
fn import_fails(
    env: &Env,
    input: &str,
    args: &[&str],
    file: &str,
    line: Option<u64>,
    needle: &str,
) {
    let mut a = vec!["import", input, "--name", "g"];
    a.extend_from_slice(args);
    let msg = env.fail(&a);
    assert_contains(&msg, &[file, needle]);
    if let Some(l) = line {
        assert_contains(&msg, &[&format!("{file}:{l}: ")]);
    }
    env.assert_store_empty();
}

#[test]
fn malformed_line_fails_naming_file_and_line() {
    let env = Env::new();
    let p = env.write("bad.el", "1 2\n# comment\n3\n4 5\n");
    import_fails(&env, &p, &[], "bad.el", Some(3), "found only '3'");
}

#[test]
fn non_numeric_token_fails_naming_file_and_line() {
    let env = Env::new();
    let p = env.write("bad.el", "1 2\n2 x\n");
    import_fails(&env, &p, &[], "bad.el", Some(2), "'x'");
    import_fails(
        &env,
        &fixture("bad_non_numeric.csv"),
        &["--ids", "int"],
        "bad_non_numeric.csv",
        Some(3),
        "'x'",
    );
    import_fails(
        &env,
        &fixture("bad_non_numeric.el.gz"),
        &[],
        "bad_non_numeric.el.gz",
        Some(2),
        "'x'",
    );
}

#[test]
fn weight_column_missing_on_some_lines_fails_naming_file_and_line() {
    let env = Env::new();
    let p = env.write("bad.wel", "1 2 1.5\n2 3 2\n3 1\n");
    import_fails(&env, &p, &[], "bad.wel", Some(3), "missing weight");
    let p = env.write("bad.el", "1 2 1.5\n2 3\n");
    import_fails(
        &env,
        &p,
        &["--weighted"],
        "bad.el",
        Some(2),
        "missing weight",
    );
}

#[test]
fn nan_and_infinite_weights_fail_naming_file_and_line() {
    let env = Env::new();
    for (w, line) in [("NaN", 2), ("inf", 2), ("-inf", 2), ("nan", 2)] {
        let p = env.write("bad.wel", format!("1 2 1\n2 3 {w}\n"));
        import_fails(&env, &p, &[], "bad.wel", Some(line), "not a finite number");
    }
    import_fails(
        &env,
        &fixture("bad_nan_weight.csv"),
        &["--weight-col", "weight"],
        "bad_nan_weight.csv",
        Some(3),
        "not a finite number",
    );
}

#[test]
fn negative_weights_are_accepted() {
    let env = Env::new();
    env.ok(&["import", &fixture("negative_weight.wel"), "--name", "neg"]);
    assert_eq!(env.info_json("neg")["edges"], 3);
}

#[test]
fn matrix_market_errors_fail_naming_file_and_line() {
    let env = Env::new();
    import_fails(
        &env,
        &fixture("bad_id_beyond.mtx"),
        &[],
        "bad_id_beyond.mtx",
        Some(6),
        "outside the declared range",
    );
    import_fails(
        &env,
        &fixture("bad_count.mtx"),
        &[],
        "bad_count.mtx",
        None,
        "declares 4 entries",
    );
    import_fails(
        &env,
        &fixture("bad_field.mtx"),
        &[],
        "bad_field.mtx",
        Some(1),
        "complex",
    );
}

#[test]
fn empty_file_fails_naming_it() {
    let env = Env::new();
    let p = env.write("empty.el", "");
    import_fails(&env, &p, &[], "empty.el", None, "no edges");
    let p = env.write("empty.csv", "");
    import_fails(&env, &p, &[], "empty.csv", None, "empty file");
}

#[test]
fn truncated_gzip_fails_naming_it() {
    let env = Env::new();
    import_fails(
        &env,
        &fixture("truncated.el.gz"),
        &[],
        "truncated.el.gz",
        None,
        "truncated or corrupt gzip",
    );
}

#[test]
fn missing_file_fails_naming_it() {
    let env = Env::new();
    let p = env.path("no-such-file.el");
    import_fails(&env, &p, &[], "no-such-file.el", None, "no such file");
}

#[test]
fn csv_and_graphalytics_errors_fail_naming_the_file() {
    let env = Env::new();
    import_fails(
        &env,
        &fixture("bad_one_column.csv"),
        &[],
        "bad_one_column.csv",
        None,
        "no column 1",
    );
    import_fails(
        &env,
        &fixture("bad_short_row.csv"),
        &[],
        "bad_short_row.csv",
        Some(3),
        "missing destination",
    );
    import_fails(
        &env,
        &fixture("bad_endpoint.e"),
        &[],
        "bad_endpoint.e",
        None,
        "bad_endpoint.v",
    );
}

#[test]
fn invalid_graph_name_fails_and_writes_nothing() {
    let env = Env::new();
    for name in [".hidden", "a/b", ""] {
        let line = env.fail(&["import", &fixture("tiny.el"), "--name", name]);
        assert_contains(&line, &["invalid graph name"]);
    }
    env.assert_store_empty();
}

#[test]
fn data_dir_that_is_a_file_fails_naming_it() {
    let env = Env::new();
    std::fs::write(env.data(), "not a directory").unwrap();
    let out = env.run(&["import", &fixture("tiny.el"), "--name", "g"]);
    let line = clean_failure(&out, &["import"]);
    assert_contains(&line, &[env.data().to_str().unwrap()]);
    assert_no_temporaries(env.root());
}

// ---------------------------------------------------------------- corrupt stores

/// A store with graph `g` (the tiny weighted graph) and its file's bytes.
fn stored_tiny() -> (Env, Vec<u8>) {
    let env = Env::new();
    env.ok(&["import", &fixture("tiny.wel"), "--name", "g"]);
    let bytes = std::fs::read(env.graph_file("g")).unwrap();
    (env, bytes)
}

/// Byte range of a section of the stored graph file.
fn section(env: &Env, kind: SectionKind) -> std::ops::Range<usize> {
    let h = read_header(&env.graph_file("g")).unwrap();
    let e = h
        .sections
        .iter()
        .find(|e| e.kind == kind)
        .expect("section present");
    e.offset as usize..(e.offset + e.len_bytes) as usize
}

#[track_caller]
fn info_fails_as_corrupt(env: &Env, args: &[&str], needle: &str) {
    let line = env.fail(args);
    assert_contains(&line, &["corrupt store", "graph.plx", needle]);
}

#[test]
fn truncated_store_fails_info_cleanly() {
    let (env, orig) = stored_tiny();
    for len in [orig.len() / 2, 100, 10, 0] {
        std::fs::write(env.graph_file("g"), &orig[..len]).unwrap();
        info_fails_as_corrupt(&env, &["info", "g"], "");
        info_fails_as_corrupt(&env, &["info", "g", "--check"], "");
    }
}

#[test]
fn store_with_bad_magic_fails_info_cleanly() {
    let (env, mut b) = stored_tiny();
    b[0] ^= 0x20;
    std::fs::write(env.graph_file("g"), &b).unwrap();
    info_fails_as_corrupt(&env, &["info", "g"], "bad magic");
    let line = env.fail(&["export", "g", "--out", &env.path("x.el")]);
    assert_contains(&line, &["bad magic"]);
    assert!(!env.root().join("x.el").exists());
}

#[test]
fn store_of_another_format_version_fails_info_cleanly() {
    let (env, mut b) = stored_tiny();
    let newer = FORMAT_VERSION + 1;
    b[8..12].copy_from_slice(&newer.to_le_bytes());
    std::fs::write(env.graph_file("g"), &b).unwrap();
    info_fails_as_corrupt(
        &env,
        &["info", "g"],
        &format!("format version {newer} is not supported"),
    );
}

#[test]
fn flipped_section_checksum_in_the_header_fails_info_cleanly() {
    let (env, mut b) = stored_tiny();
    // The checksum field of the first section-table entry.
    b[64 + 24] ^= 0x01;
    std::fs::write(env.graph_file("g"), &b).unwrap();
    info_fails_as_corrupt(&env, &["info", "g"], "header checksum");
}

#[test]
fn flipped_data_byte_fails_info_check() {
    let (env, orig) = stored_tiny();
    for kind in [
        SectionKind::OutTargets,
        SectionKind::OutWeights,
        SectionKind::InSources,
        SectionKind::IdInts,
    ] {
        let r = section(&env, kind);
        let mut b = orig.clone();
        b[r.start] ^= 0x01;
        std::fs::write(env.graph_file("g"), &b).unwrap();
        info_fails_as_corrupt(
            &env,
            &["info", "g", "--check"],
            &format!("checksum mismatch in section {}", kind.name()),
        );
    }
    // And a byte of padding after the last section is not data: --check passes.
    let mut b = orig.clone();
    let last = b.len() - 1;
    b[last] ^= 0x01;
    std::fs::write(env.graph_file("g"), &b).unwrap();
    env.ok(&["info", "g", "--check"]);
}

#[test]
fn flipped_offsets_byte_fails_plain_info_cleanly() {
    let (env, mut b) = stored_tiny();
    let r = section(&env, SectionKind::OutOffsets);
    b[r.start + 8 * 2 + 7] ^= 0x40; // offsets[2] becomes huge
    std::fs::write(env.graph_file("g"), &b).unwrap();
    info_fails_as_corrupt(&env, &["info", "g"], "");
}

#[test]
fn by_default_a_large_skewed_graph_is_stored_in_degree_order_and_answers_in_its_own_ids() {
    let env = Env::new();
    for (name, order) in [("auto", &[][..]), ("natural", &["--order", "none"][..])] {
        let mut args = vec!["generate", "kron", "--scale", "17", "--edge-factor", "8"];
        args.extend(["--name", name]);
        args.extend(order);
        env.ok(&args);
    }
    assert_eq!(env.info_json("auto")["order"], "degree");
    assert_eq!(env.info_json("natural")["order"], "none");
    // The same answers, in the same ids, either way.
    let a = env.ok(&["run", "bfs", "auto", "--source", "5", "--json"]);
    let b = env.ok(&["run", "bfs", "natural", "--source", "5", "--json"]);
    let reached =
        |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap()["reached"].clone();
    assert_eq!(reached(&a), reached(&b));
    // A small graph keeps its ids' order.
    env.ok(&["generate", "kron", "--scale", "10", "--name", "small"]);
    assert_eq!(env.info_json("small")["order"], "none");
}

#[test]
fn empty_matrix_market_imported_with_an_order_can_be_opened() {
    let env = Env::new();
    let p = env.write(
        "empty.mtx",
        "%%MatrixMarket matrix coordinate pattern general\n0 0 0\n",
    );
    let out = env.run(&["import", &p, "--name", "e", "--order", "degree"]);
    if out.status.success() {
        // Importing an empty graph may be allowed, but then it must open.
        assert_eq!(env.info_json("e")["vertices"], 0);
    } else {
        clean_failure(&out, &["import"]);
        env.assert_store_empty();
    }
}

#[test]
fn unknown_graph_name_fails_cleanly_for_every_command() {
    let env = Env::new();
    for args in [
        vec!["info", "nope"],
        vec!["info", "nope", "--check"],
        vec!["remove", "nope"],
        vec!["export", "nope", "--out", "x.el"],
    ] {
        let line = env.fail(&args);
        assert_contains(&line, &["no graph named 'nope'"]);
    }
    assert!(!env.root().join("x.el").exists());
}

// ---------------------------------------------------------------- bad options and export targets

#[test]
fn bad_option_values_exit_with_status_two_and_an_error_line() {
    let env = Env::new();
    for (args, needle) in [
        (
            vec!["import", "x.el", "--name", "g", "--order", "zigzag"],
            "zigzag",
        ),
        (
            vec!["import", "x.el", "--name", "g", "--duplicates", "some"],
            "some",
        ),
        (vec!["generate", "kron", "--scale", "many"], "many"),
        (vec!["frobnicate"], "frobnicate"),
        (vec!["export", "g", "--out", "x", "--format", "dot"], "dot"),
    ] {
        let out = env.run(&args);
        let (_, stderr) = texts(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_no_panic(&stderr);
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
        assert_contains(errors[0], &[needle]);
        assert!(stderr.starts_with("error:"), "{args:?}: {stderr}");
    }
    env.assert_store_empty();
}

#[test]
fn bad_option_values_print_one_error_line_then_clap_usage_help() {
    let env = Env::new();
    for args in [
        vec!["import", "x.el", "--name", "g", "--order", "zigzag"],
        vec!["frobnicate"],
    ] {
        let out = env.run(&args);
        let (_, stderr) = texts(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_no_panic(&stderr);
        let errors = stderr.lines().filter(|l| l.starts_with("error:")).count();
        assert_eq!(errors, 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(stderr.contains("--help"), "{args:?}: {stderr}");
    }
}

#[test]
fn generator_parameters_out_of_range_fail_cleanly() {
    let env = Env::new();
    let line = env.fail(&["generate", "kron", "--scale", "40"]);
    assert_contains(&line, &["scale 40"]);
    let line = env.fail(&[
        "generate", "kron", "--scale", "4", "--a", "0.9", "--b", "0.9",
    ]);
    assert_contains(&line, &["probabilities"]);
    env.assert_store_empty();
}

#[test]
fn export_into_a_missing_directory_fails_naming_the_file() {
    let (env, _) = stored_tiny();
    let out = env.path("missing/dir/out.el");
    let line = env.fail(&["export", "g", "--out", &out]);
    assert_contains(&line, &["out.el"]);
    assert!(!env.root().join("missing").exists());
}

#[test]
fn export_onto_a_directory_fails_and_leaves_no_temporary_file() {
    let (env, _) = stored_tiny();
    std::fs::create_dir(env.root().join("taken")).unwrap();
    let line = env.fail(&["export", "g", "--out", &env.path("taken")]);
    assert_contains(&line, &["taken"]);
    assert_no_temporaries(env.root());
    let line = env.fail(&[
        "generate",
        "kron",
        "--scale",
        "4",
        "--out",
        &env.path("taken"),
    ]);
    assert_contains(&line, &["taken"]);
    assert_no_temporaries(env.root());
}
