//! The public entry points of bounded builds: an import (edge list, CSV
//! table or Matrix Market file) or a generator, into a file or into a data
//! directory.
use std::path::Path;

use super::{build_file, check_options, remove_scratch, Built, Plan, Spool, Tuning, Vertices};
use crate::generate::{build_options, for_each_edge, GenOptions, Generator};
use crate::import::text::{self, parse_blocks_each};
use crate::import::{
    check_applicable, edgelist, format_of_content, format_of_name, graphalytics, mtx, BlockIds,
    EdgeBlock, Format, ImportOptions, Progress,
};
use crate::store::{write_side_files, DataDir, Provenance, GRAPH_FILE};
use crate::{GraphError, Result};

/// Imports `path` as [`crate::import_file`] would, writing the store file
/// `out` within `budget` bytes of memory; scratch files go to the
/// directory `scratch` (removed from it on return). Edge lists with
/// integer ids in `0..2^32 - 1`, CSV tables (string ids held in memory),
/// Matrix Market files and Graphalytics pairs (ids in `0..2^32 - 1`).
pub fn import_to_file(
    path: &Path,
    opts: &ImportOptions,
    budget: u64,
    scratch: &Path,
    out: &Path,
    progress: &dyn Progress,
) -> Result<Built> {
    import_tuned(
        path,
        opts,
        budget,
        scratch,
        out,
        progress,
        Tuning::default(),
    )
}

pub(crate) fn import_tuned(
    path: &Path,
    opts: &ImportOptions,
    budget: u64,
    scratch: &Path,
    out: &Path,
    progress: &dyn Progress,
    tuning: Tuning,
) -> Result<Built> {
    check_options(budget, opts.order)?;
    let job = Job {
        opts,
        budget,
        scratch,
        out,
        tuning,
    };
    let named = opts.format.or_else(|| format_of_name(path));
    match named {
        Some(Format::EdgeList) | None => {}
        Some(Format::MatrixMarket) => return import_mtx(path, &job, progress),
        Some(Format::Csv) => return super::csv::import(path, &job, progress),
        Some(Format::Graphalytics) => return import_graphalytics(path, &job, progress),
    }
    let mut input = text::open_input(path)?;
    if named.is_none() {
        let compression = input.compression;
        let head = input
            .peek()
            .map_err(|e| text::stream_error(path, compression, e))?;
        if format_of_content(head) == Format::MatrixMarket {
            drop(input);
            return import_mtx(path, &job, progress);
        }
    }
    check_applicable(Format::EdgeList, opts, path)?;
    let weighted = opts.weighted || text::base_name(path).ends_with(".wel");
    job.spool_and_build(weighted, opts.directed.unwrap_or(true), progress, |spool| {
        spool_input(input, path, 0, weighted, None, spool, progress)?;
        if spool.edges() == 0 {
            return Err(GraphError::bad_input(
                path,
                "contains no edges (empty file or only comments)",
            ));
        }
        Ok(Vertices::Seen)
    })
}

/// What the imports of every format share: the options, the budget and
/// where the build writes.
pub(super) struct Job<'a> {
    pub opts: &'a ImportOptions,
    pub budget: u64,
    scratch: &'a Path,
    out: &'a Path,
    tuning: Tuning,
}

impl Job<'_> {
    /// Spools the edges `fill` adds, then builds the store file from them
    /// with the vertices `fill` returns; the scratch directory is emptied
    /// whatever happens.
    pub(super) fn spool_and_build(
        &self,
        weighted: bool,
        directed: bool,
        progress: &dyn Progress,
        fill: impl FnOnce(&mut Spool) -> Result<Vertices>,
    ) -> Result<Built> {
        let result = (|| {
            let mut spool = Spool::new(self.scratch, weighted)?;
            let vertices = fill(&mut spool)?;
            progress.begin("building", None);
            let bo = self.opts.build_options(directed);
            let plan = Plan {
                opts: &bo,
                weighted,
                budget: self.budget,
                scratch: self.scratch.to_path_buf(),
                tuning: self.tuning,
            };
            build_file(spool, vertices, &plan, self.out)
        })();
        remove_scratch(self.scratch);
        result
    }
}

/// A Matrix Market file: vertices `1..=n` as the size line declares
/// (isolated ones too), entries spooled as an edge list's are.
fn import_mtx(path: &Path, job: &Job, progress: &dyn Progress) -> Result<Built> {
    let (opts, budget) = (job.opts, job.budget);
    check_applicable(Format::MatrixMarket, opts, path)?;
    let mut input = text::open_input(path)?;
    let h = mtx::read_header(&mut input, path)?;
    let directed = opts.directed.unwrap_or(!h.symmetric);
    let need = super::min_budget(h.n, h.n + 1, directed);
    if budget < need {
        return Err(GraphError::InvalidArgument(format!(
            "a memory budget of {} is too small for {}: its size line declares {} vertices, which need at least {}",
            super::mib(budget),
            path.display(),
            h.n,
            super::mib(need)
        )));
    }
    job.spool_and_build(h.weighted, directed, progress, |spool| {
        if h.n > 0 {
            spool.mark_range(1, h.n as u32);
        }
        let range = Some((1, h.n as i64));
        spool_input(input, path, h.lines, h.weighted, range, spool, progress)?;
        if spool.edges() != h.nnz {
            return Err(mtx::count_mismatch(path, h.nnz, spool.edges()));
        }
        Ok(Vertices::Seen)
    })
}

/// A Graphalytics pair: exactly the vertex file's ids (each once), then
/// the edge file's edges, every endpoint one of them.
fn import_graphalytics(path: &Path, job: &Job, progress: &dyn Progress) -> Result<Built> {
    check_applicable(Format::Graphalytics, job.opts, path)?;
    if text::is_stdin(path) {
        return Err(GraphError::InvalidArgument(
            "Graphalytics input is a .v and an .e file, not standard input".into(),
        ));
    }
    let f = graphalytics::files(path, job.opts)?;
    job.spool_and_build(f.weighted, f.directed, progress, |spool| {
        let mut listed = 0u64;
        let v_input = text::open_input(&f.v)?;
        parse_blocks_each(
            v_input,
            &f.v,
            0,
            progress,
            graphalytics::vertex_block,
            |ids| {
                for x in ids {
                    if !spool.mark_new(x, &f.v)? {
                        return Err(GraphError::bad_input(
                            &f.v,
                            "lists a vertex id more than once",
                        ));
                    }
                    listed += 1;
                }
                Ok(())
            },
        )?;
        if listed == 0 {
            return Err(GraphError::bad_input(&f.v, "contains no vertices"));
        }
        let e_input = text::open_input(&f.e)?;
        let (e, v) = (&f.e, &f.v);
        parse_blocks_each(
            e_input,
            e,
            0,
            progress,
            |data| edgelist::parse_block(data, f.weighted, None),
            |b: EdgeBlock| {
                if let Some(x) = b.ids_iter().find(|&x| !spool.has(x)) {
                    return Err(GraphError::bad_input(
                        e,
                        format!(
                            "vertex {x} appears in an edge but is not listed in {}",
                            v.display()
                        ),
                    ));
                }
                spool_block(spool, &b, e)
            },
        )?;
        Ok(Vertices::Seen)
    })
}

/// Parses `input`'s edge lines (ids within `range` when given) into
/// `spool`, dropping the input's pages from the cache as it goes (a plain
/// file; a pipe has none).
fn spool_input(
    input: text::Input,
    path: &Path,
    lines_before: u64,
    weighted: bool,
    range: Option<(i64, i64)>,
    spool: &mut Spool,
    progress: &dyn Progress,
) -> Result<()> {
    // (Opening a FIFO again would wait for a writer: test the path first.)
    let plain = std::fs::metadata(path)
        .is_ok_and(|m| m.is_file())
        .then(|| std::fs::File::open(path).ok())
        .flatten();
    let mut blocks = 0u64;
    parse_blocks_each(
        input,
        path,
        lines_before,
        progress,
        |data| edgelist::parse_block(data, weighted, range),
        |b: EdgeBlock| {
            blocks += 1;
            if let (Some(f), true) = (&plain, blocks.is_multiple_of(16)) {
                super::disk::drop_cached(f, 0, 0);
            }
            spool_block(spool, &b, path)
        },
    )
}

/// Adds a parsed block's edges to the spool.
fn spool_block(spool: &mut Spool, b: &EdgeBlock, path: &Path) -> Result<()> {
    let w = |i: usize| b.weights.as_ref().map_or(0.0, |w| w[i]);
    match &b.ids {
        BlockIds::Small(v) => {
            for (i, p) in v.chunks_exact(2).enumerate() {
                spool.push(i64::from(p[0]), i64::from(p[1]), w(i), path)?;
            }
        }
        BlockIds::Wide(v) => {
            for (i, p) in v.chunks_exact(2).enumerate() {
                spool.push(p[0], p[1], w(i), path)?;
            }
        }
    }
    Ok(())
}

/// Generates `kind` as [`crate::generate::generate`] would, writing the
/// store file `out` within `budget` bytes; scratch files go to `scratch`.
pub fn generate_to_file(
    kind: Generator,
    o: &GenOptions,
    budget: u64,
    scratch: &Path,
    out: &Path,
) -> Result<Built> {
    generate_tuned(kind, o, budget, scratch, out, Tuning::default())
}

pub(crate) fn generate_tuned(
    kind: Generator,
    o: &GenOptions,
    budget: u64,
    scratch: &Path,
    out: &Path,
    tuning: Tuning,
) -> Result<Built> {
    check_options(budget, o.order)?;
    let (n, _) = crate::generate::planned_size(kind, o);
    let directed = kind == Generator::Rmat;
    let need = super::min_budget(n, 0, directed);
    if budget < need {
        return Err(GraphError::InvalidArgument(format!(
            "a memory budget of {} is too small for {n} vertices: it needs at least {}",
            super::mib(budget),
            super::mib(need)
        )));
    }
    let weighted = o.max_weight.is_some();
    let result = (|| {
        let mut spool = Spool::new(scratch, weighted)?;
        let (n, directed) = for_each_edge(kind, o, |u, v, w| {
            spool.push(
                i64::from(u),
                i64::from(v),
                w.unwrap_or(0.0),
                Path::new("generator"),
            )
        })?;
        let bo = build_options(directed, o);
        let plan = Plan {
            opts: &bo,
            weighted,
            budget,
            scratch: scratch.to_path_buf(),
            tuning,
        };
        build_file(spool, Vertices::Identity(n), &plan, out)
    })();
    remove_scratch(scratch);
    result
}

/// Runs a bounded build into graph `name` of `data` (as
/// [`DataDir::save`]: temporary directory, publish, verify); `build`
/// writes the store file given the scratch directory and the file's path,
/// `prov` makes the provenance once it is built.
pub fn save_bounded(
    data: &DataDir,
    name: &str,
    replace: bool,
    build: impl FnOnce(&Path, &Path) -> Result<Built>,
    prov: impl FnOnce(&Built) -> Provenance,
) -> Result<Built> {
    let mut built = None;
    data.save_with(name, replace, |tmp| {
        let b = build(tmp, &tmp.join(GRAPH_FILE))?;
        write_side_files(tmp, &prov(&b), &b.degrees)?;
        built = Some(b);
        Ok(())
    })?;
    // The verification read the whole file through the page cache.
    if let Ok(f) = std::fs::File::open(data.graph_dir(name).join(GRAPH_FILE)) {
        super::disk::drop_cached(&f, 0, 0);
    }
    built.ok_or_else(|| GraphError::InvalidArgument("the bounded build wrote nothing".into()))
}
