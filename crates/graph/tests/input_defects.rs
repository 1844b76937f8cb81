//! Bad inputs of issue 45 (§3) at the library level: each once gave a
//! panic, a silently wrong graph or a file written where it should not be;
//! each now gives an error naming what and where, or the right result.
use std::path::{Path, PathBuf};

use plexus_graph::export::{check_target, remove_stale, write_atomically, Lock};
use plexus_graph::generate::{generate, GenOptions, Generator};
use plexus_graph::import::{CsvOptions, IdType};
use plexus_graph::store::{read_header, GRAPH_FILE};
use plexus_graph::{
    import_file, BuildOptions, DataDir, Format, Graph, GraphError, IdKind, ImportOptions,
    NoProgress, Provenance,
};

fn write(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

fn import(path: &Path, opts: &ImportOptions) -> plexus_graph::Result<Graph> {
    import_file(path, opts, &NoProgress)
}

fn csv(f: impl FnOnce(&mut CsvOptions)) -> ImportOptions {
    let mut o = ImportOptions::default();
    f(&mut o.csv);
    o
}

/// The pid of a process that has exited (for stale temporary files).
fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

fn small_graph() -> Graph {
    let edges: Vec<(u32, u32)> = (0..50u32).map(|v| (v, (v * 7 + 1) % 50)).collect();
    Graph::from_edges(50, &edges, &BuildOptions::directed()).unwrap()
}

#[test]
fn an_error_quoting_a_long_non_ascii_token_names_the_line_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let token = "€".repeat(50); // 3 bytes each: a cut at byte 40 would split one
    let p = write(dir.path(), "bad.el", format!("1 2\n3 {token}\n"));
    let e = import(&p, &ImportOptions::default()).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, GraphError::Parse { line: 2, .. }), "{text}");
    assert!(text.contains('…'), "{text}");
    // Binary garbage reaches the same formatting.
    let mut junk = vec![0xffu8, 0xfe, b' '];
    junk.extend((0..200u32).map(|i| (i * 37 % 251) as u8 | 0x80));
    let p = write(dir.path(), "junk.el", &junk);
    assert!(import(&p, &ImportOptions::default()).is_err());
}

#[test]
fn cr_only_line_ends_are_an_error_not_one_edge() {
    let dir = tempfile::tempdir().unwrap();
    for text in ["1 2\r2 3\r3 1\r", "1 2\r3 4\r"] {
        let p = write(dir.path(), "mac.el", text);
        let e = import(&p, &ImportOptions::default()).unwrap_err();
        assert!(matches!(e, GraphError::Parse { line: 1, .. }), "{e}");
        assert!(e.to_string().contains("carriage return"), "{e}");
    }
}

#[test]
fn more_columns_than_an_edge_list_has_are_an_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "wide.el", "1 2\n2 3 1 5 9\n");
    let e = import(&p, &ImportOptions::default()).unwrap_err();
    assert!(matches!(e, GraphError::Parse { line: 2, .. }), "{e}");
    assert!(e.to_string().contains("5 columns"), "{e}");
    // Four columns stay KONECT's `src dst weight timestamp`.
    let p = write(dir.path(), "konect.el", "1 2 1 100\n2 3 1 101\n");
    assert_eq!(
        import(&p, &ImportOptions::default()).unwrap().num_edges(),
        2
    );
}

#[test]
fn a_graphalytics_vertex_line_with_two_ids_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "g.v", "1\n2 3\n");
    let e_file = write(dir.path(), "g.e", "1 2\n");
    let e = import(&e_file, &ImportOptions::default()).unwrap_err();
    assert!(matches!(e, GraphError::Parse { line: 2, .. }), "{e}");
}

#[test]
fn a_csv_without_a_header_keeps_its_first_edge() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "plain.csv", "1,2\n2,3\n3,1\n");
    assert_eq!(
        import(&p, &ImportOptions::default()).unwrap().num_edges(),
        3
    );
    // A header row is still a header.
    let p = write(dir.path(), "head.csv", "src,dst\n1,2\n2,3\n");
    assert_eq!(
        import(&p, &ImportOptions::default()).unwrap().num_edges(),
        2
    );
    // String ids need --no-header to say the first row is data.
    let p = write(dir.path(), "names.csv", "a,b\nb,c\n");
    assert_eq!(
        import(&p, &ImportOptions::default()).unwrap().num_edges(),
        1
    );
    let g = import(&p, &csv(|c| c.no_header = true)).unwrap();
    assert_eq!(g.num_edges(), 2);
}

#[test]
fn csv_string_ids_are_detected_and_integers_read_before_keep_their_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "mixed.csv", "src,dst\n1,2\n2,bob\nbob,1\n");
    let g = import(&p, &ImportOptions::default()).unwrap();
    assert_eq!(g.ids().kind(), IdKind::Str);
    assert_eq!(g.num_vertices(), 3);
    assert_eq!(g.num_edges(), 3);
    assert!(g.ids().lookup_str("1").is_some() && g.ids().lookup_str("bob").is_some());
    // --ids int still insists.
    let e = import(&p, &csv(|c| c.ids = IdType::Int)).unwrap_err();
    assert!(matches!(e, GraphError::Parse { line: 3, .. }), "{e}");
}

#[test]
fn weighted_csv_without_a_weight_column_reads_the_third_column() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "w.csv", "a,b,w\n1,2,0.5\n2,3,7\n");
    let o = ImportOptions {
        weighted: true,
        ..Default::default()
    };
    let g = import(&p, &o).unwrap();
    assert!(g.is_weighted());
    let mut ws: Vec<f64> = (0..g.num_vertices() as u32)
        .flat_map(|v| g.out_weights(v).unwrap_or(&[]).to_vec())
        .collect();
    ws.sort_by(f64::total_cmp);
    assert_eq!(ws, vec![0.5, 7.0]);
    let p = write(dir.path(), "two.csv", "a,b\n1,2\n");
    let e = import(&p, &o).unwrap_err();
    assert!(e.to_string().contains("weight"), "{e}");
}

#[test]
fn csv_options_on_another_format_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "g.el", "1 2\n");
    for o in [
        csv(|c| c.src_col = Some("a".into())),
        csv(|c| c.delimiter = b';'),
        csv(|c| c.no_header = true),
        csv(|c| c.ids = IdType::Str),
    ] {
        let e = import(&p, &o).unwrap_err();
        assert!(e.to_string().contains("only for CSV"), "{e}");
    }
}

#[test]
fn an_invalid_graphalytics_directed_value_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "g.v", "1\n2\n");
    write(dir.path(), "g.e", "1 2\n");
    let props = write(
        dir.path(),
        "g.properties",
        "graph.g.vertex-file = g.v\ngraph.g.edge-file = g.e\ngraph.g.directed = yes\n",
    );
    let e = import(&props, &ImportOptions::default()).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("g.properties") && text.contains("'yes'"),
        "{text}"
    );
    // FALSE in capitals is still false.
    write(
        dir.path(),
        "g.properties",
        "graph.g.vertex-file = g.v\ngraph.g.edge-file = g.e\ngraph.g.directed = FALSE\n",
    );
    assert!(!import(&props, &ImportOptions::default())
        .unwrap()
        .is_directed());
}

#[test]
fn a_matrix_market_file_is_recognised_by_its_banner_whatever_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "matrix.data",
        "%%MatrixMarket matrix coordinate pattern general\n% c\n3 3 2\n1 2\n2 3\n",
    );
    let g = import(&p, &ImportOptions::default()).unwrap();
    assert_eq!((g.num_vertices(), g.num_edges()), (3, 2));
    // Compressed content is found by its magic bytes, not its name.
    let gz = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny.el.gz");
    let renamed = dir.path().join("tiny-edges");
    std::fs::copy(&gz, &renamed).unwrap();
    let o = ImportOptions {
        format: Some(Format::EdgeList),
        ..Default::default()
    };
    assert_eq!(import(&renamed, &o).unwrap().num_edges(), 6);
}

#[test]
fn a_graph_name_with_a_path_opens_nothing_outside_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let outside = DataDir::new(dir.path());
    outside
        .save("x", &small_graph(), &Provenance::default(), false)
        .unwrap();
    let data = DataDir::new(dir.path().join("data"));
    for name in ["../x", "..", "a/../../x", "/tmp/x"] {
        let e = data.open(name).unwrap_err();
        assert!(e.to_string().contains("invalid graph name"), "{name}: {e}");
        assert!(!data.exists(name));
        assert!(data.remove(name).is_err());
    }
    assert!(outside.exists("x"));
}

#[test]
fn a_graph_directory_without_its_file_is_listed_reported_and_removable() {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::new(dir.path());
    std::fs::create_dir_all(dir.path().join("g")).unwrap();
    std::fs::write(dir.path().join("g/meta.json"), "{}").unwrap();
    let rows = data.list().unwrap();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].incomplete);
    let e = data.open("g").unwrap_err().to_string();
    assert!(
        e.contains("no graph.plx") && e.contains("plexus remove g"),
        "{e}"
    );
    let e = data
        .save("g", &small_graph(), &Provenance::default(), false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no graph.plx"), "{e}");
    data.remove("g").unwrap();
    assert!(data.list().unwrap().is_empty());
    // A directory holding anything else is not deleted.
    std::fs::create_dir_all(dir.path().join("h")).unwrap();
    std::fs::write(dir.path().join("h/notes.txt"), "mine").unwrap();
    assert!(data.remove("h").is_err());
    assert!(dir.path().join("h/notes.txt").exists());
    // --force replaces an incomplete directory.
    std::fs::create_dir_all(dir.path().join("g")).unwrap();
    data.save("g", &small_graph(), &Provenance::default(), true)
        .unwrap();
    assert!(data.open("g").is_ok());
}

#[test]
fn a_write_through_a_symlink_replaces_its_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = write(dir.path(), "real.el", "old\n");
    let link = dir.path().join("link.el");
    std::os::unix::fs::symlink("real.el", &link).unwrap();
    write_atomically(&link, |w| w.write_all(b"new\n")).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
}

#[test]
fn non_regular_read_only_and_unreachable_targets_are_refused_before_writing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let ro = write(dir.path(), "ro.el", "keep\n");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let cases: [(PathBuf, &str); 5] = [
        (fifo.clone(), "not a regular file"),
        (PathBuf::from("/dev/null"), "not a regular file"),
        (ro.clone(), "read-only"),
        (dir.path().to_path_buf(), "directory"),
        (dir.path().join("no/such/dir/x.el"), "does not exist"),
    ];
    for (path, needle) in cases {
        let e = check_target(&path).unwrap_err().to_string();
        assert!(e.contains(needle), "{}: {e}", path.display());
        let mut called = false;
        assert!(write_atomically(&path, |_| {
            called = true;
            Ok(())
        })
        .is_err());
        assert!(!called, "{} was written", path.display());
    }
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep\n");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo_like());
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}
impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_fifo()
    }
}

#[test]
fn a_corrupted_byte_in_any_section_fails_the_next_open_naming_the_section() {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::new(dir.path());
    let g = small_graph();
    data.save("g", &g, &Provenance::default(), false).unwrap();
    let file = data.graph_dir("g").join(GRAPH_FILE);
    let orig = std::fs::read(&file).unwrap();
    data.open("g").unwrap();
    for e in read_header(&file).unwrap().sections {
        if e.len_bytes == 0 {
            continue;
        }
        let mut b = orig.clone();
        b[e.offset as usize + e.len_bytes as usize / 2] ^= 0x04;
        std::fs::write(&file, &b).unwrap();
        let err = data.open("g").unwrap_err().to_string();
        assert!(err.contains(e.kind.name()), "{}: {err}", e.kind.name());
    }
    std::fs::write(&file, &orig).unwrap();
    data.open("g").unwrap();
}

#[test]
fn a_second_writer_of_a_name_is_refused_while_the_first_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::new(dir.path());
    let g = small_graph();
    {
        let _held = Lock::acquire(&dir.path().join(".lock-g"), "graph 'g'").unwrap();
        // The same process writing twice is refused too.
        let e = data
            .save("g", &g, &Provenance::default(), true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("being written by another process"), "{e}");
    }
    // A lock left by a dead process is taken over.
    std::fs::write(dir.path().join(".lock-g"), dead_pid().to_string()).unwrap();
    data.save("g", &g, &Provenance::default(), false).unwrap();
    assert!(!dir.path().join(".lock-g").exists());
}

#[test]
fn temporary_files_of_dead_processes_are_removed_by_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let dead = dead_pid();
    let stale_dir = dir.path().join(format!(".tmp-g-{dead}"));
    std::fs::create_dir(&stale_dir).unwrap();
    std::fs::write(stale_dir.join(GRAPH_FILE), vec![0u8; 1000]).unwrap();
    let stale_out = write(dir.path(), &format!(".out.el.tmp-{dead}"), "half");
    let live = write(
        dir.path(),
        &format!(".out.el.tmp-{}", std::process::id()),
        "",
    );
    let data = DataDir::new(dir.path());
    data.save("other", &small_graph(), &Provenance::default(), false)
        .unwrap();
    assert!(!stale_dir.exists());
    write_atomically(&dir.path().join("out.el"), |w| w.write_all(b"1 2\n")).unwrap();
    assert!(!stale_out.exists());
    // A running process's file stays (this one's was reused and removed).
    let other_live = write(dir.path(), ".x.tmp-1", "");
    remove_stale(dir.path(), ".x.tmp-");
    assert!(other_live.exists());
    let _ = live;
}

#[test]
fn generating_more_than_memory_holds_is_refused_naming_the_size() {
    let o = GenOptions {
        scale: 31,
        edge_factor: 1000,
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let e = generate(Generator::Kron, &o).unwrap_err().to_string();
    assert!(t.elapsed().as_secs() < 5, "took {:?}", t.elapsed());
    assert!(
        e.contains("GiB") && e.contains("2147483648 vertices"),
        "{e}"
    );
    let e = plexus_graph::generate::generate_edges(Generator::Kron, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("GiB"), "{e}");
}
