//! Imports every real graph in the shared data directory
//! (`<repo root>/../shared/data`) and checks |V|, |E| and the self-loop
//! counts against the table in its README. Directed graphs are imported as
//! directed; those the README lists as "undirected, each edge once" with
//! `directed: Some(false)` (the CLI's `--undirected`). Skips, with a
//! message, when the directory is absent.
use std::path::PathBuf;

use plexus_graph::{import_file, ExternalId, ImportOptions, NoProgress};

fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    if dir.join("README.md").is_file() {
        Some(dir)
    } else {
        println!("skipped: no shared data directory at {}", dir.display());
        None
    }
}

/// One row of the README table.
#[derive(Debug)]
struct Row {
    file: String,
    directed: bool,
    vertices: u64,
    edges: u64,
    /// Self-loops stated in the notes ("N self-loops", "no loops", "as
    /// above" for the previous row's), if any.
    self_loops: Option<u64>,
    notes: String,
}

fn number(s: &str) -> u64 {
    s.trim()
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("not a number in the README table: '{s}'"))
}

/// Parses the README's markdown table.
fn readme_rows(dir: &std::path::Path) -> Vec<Row> {
    let text = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let mut rows = Vec::new();
    for line in text.lines() {
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        if cells.len() < 7 || !cells[0].ends_with(".gz") {
            continue;
        }
        let kind = cells[3].to_ascii_lowercase();
        let directed = match kind.as_str() {
            "directed" => true,
            k if k.starts_with("undirected") => false,
            k => panic!(
                "unknown directedness '{k}' in the README row for {}",
                cells[0]
            ),
        };
        let notes = cells[6].to_string();
        let self_loops = if notes.contains("no loops") {
            Some(0)
        } else if notes.starts_with("as above") {
            rows.last().and_then(|r: &Row| r.self_loops)
        } else {
            notes.split(';').find_map(|part| {
                let at = part.find("self-loops")?;
                part[..at].split_whitespace().last().map(number)
            })
        };
        rows.push(Row {
            file: cells[0].to_string(),
            directed,
            vertices: number(cells[4]),
            edges: number(cells[5]),
            self_loops,
            notes,
        });
    }
    rows
}

/// Imports `file` as the README says and checks its counts.
fn check(file: &str) {
    let Some(dir) = shared_dir() else { return };
    let rows = readme_rows(&dir);
    let Some(row) = rows.iter().find(|r| r.file == file) else {
        panic!("{file} has no row in {}/README.md", dir.display());
    };
    let path = dir.join(file);
    if !path.is_file() {
        println!("skipped: {} is absent", path.display());
        return;
    }
    let opts = ImportOptions {
        directed: Some(row.directed),
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let g = import_file(&path, &opts, &NoProgress).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{file}: {} vertices, {} edges in {:.2?}",
        g.num_vertices(),
        g.num_edges(),
        t.elapsed()
    );
    assert_eq!(g.is_directed(), row.directed, "{file}");
    assert!(!g.is_weighted(), "{file}");
    assert_eq!(g.num_vertices() as u64, row.vertices, "{file}: |V|");
    assert_eq!(g.num_edges(), row.edges, "{file}: |E|");
    let arcs = if row.directed {
        row.edges
    } else {
        2 * row.edges - g.meta().self_loops
    };
    assert_eq!(g.num_arcs(), arcs, "{file}: stored arcs");
    if let Some(loops) = row.self_loops {
        assert_eq!(
            g.meta().self_loops,
            loops,
            "{file}: self-loops ({})",
            row.notes
        );
    }
    // "every listed vertex has at least one edge unless noted"
    let isolated = (0..g.num_vertices() as u32)
        .filter(|&v| g.out_degree(v) == 0 && g.in_degree(v) == 0)
        .count();
    assert_eq!(isolated, 0, "{file}: isolated vertices");
    if file == "wiki-Vote.el.gz" {
        let max = (0..g.num_vertices() as u32)
            .map(|v| g.ids().external(v))
            .max();
        assert_eq!(
            max,
            Some(ExternalId::Int(8297)),
            "{file}: original SNAP ids, max 8297"
        );
    } else {
        // 0-based, contiguous ids: the identity map.
        assert_eq!(g.ids().lookup_int(0), Some(0), "{file}: ids are 0-based");
        assert_eq!(
            g.ids().external(g.num_vertices() as u32 - 1),
            ExternalId::Int(g.num_vertices() as i64 - 1),
            "{file}: ids are contiguous"
        );
    }
}

#[test]
fn readme_table_lists_every_shared_file_and_parses() {
    let Some(dir) = shared_dir() else { return };
    let rows = readme_rows(&dir);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".gz"))
        .collect();
    files.sort();
    let mut listed: Vec<String> = rows.iter().map(|r| r.file.clone()).collect();
    listed.sort();
    assert_eq!(
        files, listed,
        "every .gz file has a README row and vice versa"
    );
    let covered = [
        "USA-road-NY.el.gz",
        "USA-road-FLA.el.gz",
        "cnr-2000.el.gz",
        "soc-Slashdot0902.el.gz",
        "email-Enron.el.gz",
        "wiki-Vote.el.gz",
        "cit-HepPh.el.gz",
        "as-caida20071105.el.gz",
    ];
    for f in &files {
        assert!(
            covered.contains(&f.as_str()),
            "{f} has no test in shared_data.rs: add one"
        );
    }
    let row = |f: &str| rows.iter().find(|r| r.file == f).unwrap();
    assert_eq!(row("soc-Slashdot0902.el.gz").self_loops, Some(78_303));
    assert_eq!(row("cnr-2000.el.gz").self_loops, Some(87_442));
    assert_eq!(row("cit-HepPh.el.gz").self_loops, Some(44));
    assert_eq!(row("USA-road-FLA.el.gz").self_loops, Some(0));
    assert!(!row("email-Enron.el.gz").directed);
    assert!(row("wiki-Vote.el.gz").directed);
}

#[test]
fn usa_road_ny_imports_undirected_with_the_readme_counts() {
    check("USA-road-NY.el.gz");
}

#[test]
fn usa_road_fla_imports_undirected_with_the_readme_counts() {
    check("USA-road-FLA.el.gz");
}

#[test]
fn cnr_2000_imports_directed_with_the_readme_counts_and_self_loops() {
    check("cnr-2000.el.gz");
}

#[test]
fn soc_slashdot_imports_directed_with_the_readme_counts_and_self_loops() {
    check("soc-Slashdot0902.el.gz");
}

#[test]
fn email_enron_imports_undirected_with_each_edge_once() {
    check("email-Enron.el.gz");
}

#[test]
fn wiki_vote_imports_directed_with_its_original_ids() {
    check("wiki-Vote.el.gz");
}

#[test]
fn cit_hepph_imports_directed_with_the_readme_counts_and_self_loops() {
    check("cit-HepPh.el.gz");
}

#[test]
fn as_caida_imports_undirected_with_the_readme_counts() {
    check("as-caida20071105.el.gz");
}
