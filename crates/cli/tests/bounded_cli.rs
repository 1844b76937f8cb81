//! `plexus import … --memory` and `plexus generate … --memory`: the same
//! store file as without, a budget too small refused in one line, and no
//! temporary files left after a disk-full failure or a killed run.
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{plexus, BIN};

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn graph_file(data: &Path, name: &str) -> Vec<u8> {
    std::fs::read(data.join(name).join("graph.plx")).unwrap()
}

/// The data directory's entries other than graphs and locks.
fn leftovers(data: &Path) -> Vec<String> {
    std::fs::read_dir(data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && !n.starts_with(".lock") && n != ".writer.lock")
        .collect()
}

#[test]
fn bounded_import_and_generate_store_the_same_file() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let el = d.join("g.wel");
    let gen = plexus(
        d,
        &[
            "generate",
            "rmat",
            "--scale",
            "10",
            "--weighted",
            "--keep-multi",
            "--out",
        ],
    );
    assert!(!gen.status.success(), "--out needs a file");
    ok(&plexus(
        d,
        &[
            "generate",
            "rmat",
            "--scale",
            "10",
            "--weighted",
            "--keep-multi",
            "--out",
            el.to_str().unwrap(),
        ],
    ));
    for (name, extra) in [("u", "--undirected"), ("d", "--directed")] {
        ok(&plexus(
            d,
            &[
                "import",
                el.to_str().unwrap(),
                "--name",
                name,
                extra,
                "--duplicates",
                "sum",
                "--order",
                "degree",
            ],
        ));
        let bname = format!("{name}-bounded");
        let out = plexus(
            d,
            &[
                "import",
                el.to_str().unwrap(),
                "--name",
                &bname,
                extra,
                "--duplicates",
                "sum",
                "--order",
                "degree",
                "--memory",
                "100M",
            ],
        );
        ok(&out);
        assert_eq!(graph_file(d, name), graph_file(d, &bname), "{extra}");
    }
    ok(&plexus(
        d,
        &["generate", "kron", "--scale", "11", "--name", "k"],
    ));
    ok(&plexus(
        d,
        &[
            "generate", "kron", "--scale", "11", "--name", "kb", "--memory", "100M",
        ],
    ));
    assert_eq!(graph_file(d, "k"), graph_file(d, "kb"));
    ok(&plexus(d, &["info", "kb", "--check"]));
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
}

#[test]
fn a_budget_too_small_is_refused_naming_the_minimum() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = plexus(d, &["generate", "kron", "--scale", "22", "--memory", "90M"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs at least 209 MiB"), "{err}");
    assert!(!d.join("kron22").exists());
}

/// A run whose files may not grow past a few MiB (`RLIMIT_FSIZE`, with
/// SIGXFSZ ignored so writes fail with EFBIG as on a full disk) fails with
/// a message and leaves no temporary files; a stale temporary directory
/// of a killed process is removed by the next run.
#[test]
fn a_failed_write_leaves_nothing_and_stale_files_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let el = d.join("g.el");
    ok(&plexus(
        d,
        &[
            "generate",
            "uniform",
            "--scale",
            "15",
            "--out",
            el.to_str().unwrap(),
        ],
    ));
    let script = format!(
        "trap '' XFSZ; ulimit -f 2048; exec {BIN} --data-dir {} -q import {} --name g --memory 100M",
        d.display(),
        el.display()
    );
    let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.to_lowercase().contains("file too large"), "{err}");
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
    assert!(!d.join("g").exists());
    // A killed run's directory (a PID that no longer runs) goes at the
    // next write.
    let stale = d.join(".tmp-g-999999999");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join(".scratch-edges"), b"x").unwrap();
    ok(&plexus(
        d,
        &[
            "import",
            el.to_str().unwrap(),
            "--name",
            "g",
            "--memory",
            "100M",
        ],
    ));
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
}

/// SIGINT during an import (its input a FIFO, so the run is caught in
/// the middle): the run fails saying so and removes its temporary files.
#[test]
fn an_interrupted_import_leaves_nothing_behind() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let fifo = d.join("edges.el");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let child = Command::new(BIN)
        .arg("--data-dir")
        .arg(d)
        .args(["-q", "import"])
        .arg(&fifo)
        .args(["--name", "g", "--memory", "100M"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Opening blocks until the import opens its input, after it has set
    // up its signal handler.
    let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    w.write_all(b"0 1\n1 2\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    w.write_all(b"2 3\n").unwrap();
    drop(w);
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interrupted"), "{err}");
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
    assert!(!d.join("g").exists());
}

#[test]
fn a_bounded_matrix_market_import_stores_the_same_file() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let m = d.join("g.mtx");
    // 400 vertices (one isolated), a symmetric weighted matrix.
    let mut text = String::from("%%MatrixMarket matrix coordinate real symmetric\n400 400 1200\n");
    for i in 0..1200u32 {
        let (a, b) = (i * 7 % 399 + 1, (i * 13 + 5) % 399 + 1);
        text.push_str(&format!("{a} {b} {}.5\n", i % 9));
    }
    std::fs::write(&m, text).unwrap();
    let ms = m.to_str().unwrap();
    ok(&plexus(d, &["import", ms, "--name", "mem"]));
    ok(&plexus(
        d,
        &["import", ms, "--name", "bnd", "--memory", "96M"],
    ));
    assert!(graph_file(d, "mem") == graph_file(d, "bnd"));
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
    let bad = d.join("bad.mtx");
    std::fs::write(
        &bad,
        "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n",
    )
    .unwrap();
    let out = plexus(
        d,
        &[
            "import",
            bad.to_str().unwrap(),
            "--name",
            "bad",
            "--memory",
            "96M",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("declares 2 entries but the file has 1"),
        "{err}"
    );
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
}

#[test]
fn a_bounded_csv_import_with_string_ids_stores_the_same_file() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let csv = d.join("people.csv");
    let mut text = String::from("who,whom,w\n");
    for i in 0..3000u32 {
        text.push_str(&format!(
            "p{},p{},{}\n",
            i % 701,
            (i * 31 + 3) % 997,
            i % 5 + 1
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let c = csv.to_str().unwrap();
    let args = ["--weight-col", "w", "--undirected"];
    let mut mem = vec!["import", c, "--name", "mem"];
    mem.extend(args);
    ok(&plexus(d, &mem));
    let mut bnd = vec!["import", c, "--name", "bnd", "--memory", "96M"];
    bnd.extend(args);
    ok(&plexus(d, &bnd));
    assert!(graph_file(d, "mem") == graph_file(d, "bnd"));
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
}
