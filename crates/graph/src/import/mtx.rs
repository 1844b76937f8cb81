//! Matrix Market coordinate files: `%%MatrixMarket matrix coordinate
//! (pattern|integer|real) (general|symmetric)`, a size line `rows cols nnz`,
//! then `i j [value]` entries with 1-based indices. Vertices are `1..=max(rows, cols)`
//! (isolated ones included), external id = the index. `symmetric` means
//! undirected unless `--directed` says otherwise; `integer`/`real` values are weights.
use std::path::Path;

use super::edgelist::parse_block;
use super::text::{self, parse_blocks, Input};
use super::{map_ids, ImportOptions, Progress, VertexSet};
use crate::{build, Graph, GraphError, Result};

/// A lower bound on the import's memory per declared vertex: the vertex
/// set (8 B), the id lookup (5 B), and the offsets and maps of the stored
/// graph (at least 24 B).
const BYTES_PER_VERTEX: u64 = 40;

/// What a Matrix Market banner and size line say.
pub(crate) struct Header {
    /// `integer` or `real` values: weights.
    pub weighted: bool,
    /// `symmetric`: undirected unless `--directed` says otherwise.
    pub symmetric: bool,
    /// Vertices `1..=n`.
    pub n: u64,
    /// Entries the size line declares.
    pub nnz: u64,
    /// Lines read so far (the entries start on line `lines + 1`).
    pub lines: u64,
}

/// Reads the banner, the comments and the size line of `input`.
pub(crate) fn read_header(input: &mut Input, path: &Path) -> Result<Header> {
    let Some(banner) = text::read_line(input, path)? else {
        return Err(GraphError::bad_input(
            path,
            "empty file: expected a %%MatrixMarket header",
        ));
    };
    let words: Vec<String> = banner
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    if words.len() != 5 || words[0] != "%%matrixmarket" || words[1] != "matrix" {
        return Err(GraphError::parse(
            path,
            1,
            "expected '%%MatrixMarket matrix coordinate <field> <symmetry>'",
        ));
    }
    if words[2] != "coordinate" {
        return Err(GraphError::parse(
            path,
            1,
            format!(
                "'{}' matrices are not graphs; expected 'coordinate'",
                words[2]
            ),
        ));
    }
    let weighted = match words[3].as_str() {
        "pattern" => false,
        "integer" | "real" => true,
        f => {
            return Err(GraphError::parse(
                path,
                1,
                format!("field '{f}' is not supported (pattern, integer or real)"),
            ))
        }
    };
    let symmetric = match words[4].as_str() {
        "general" => false,
        "symmetric" => true,
        s => {
            return Err(GraphError::parse(
                path,
                1,
                format!("symmetry '{s}' is not supported (general or symmetric)"),
            ))
        }
    };
    // Skip comments to the size line (`idx` lines read before it).
    let mut idx = 1;
    let size_line = loop {
        let Some(line) = text::read_line(input, path)? else {
            return Err(GraphError::bad_input(
                path,
                "missing the size line 'rows cols entries'",
            ));
        };
        if !(line.trim().is_empty() || line.trim_start().starts_with('%')) {
            break line;
        }
        idx += 1;
    };
    let nums: Vec<u64> = size_line
        .split_whitespace()
        .map(|t| t.parse::<u64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| {
            GraphError::parse(
                path,
                idx as u64 + 1,
                format!("expected 'rows cols entries', found '{}'", size_line.trim()),
            )
        })?;
    if nums.len() != 3 {
        return Err(GraphError::parse(
            path,
            idx as u64 + 1,
            "expected three numbers 'rows cols entries'",
        ));
    }
    let n = nums[0].max(nums[1]);
    if n >= crate::MAX_VERTICES {
        return Err(GraphError::TooManyVertices {
            count: n,
            limit: crate::MAX_VERTICES - 1,
        });
    }
    Ok(Header {
        weighted,
        symmetric,
        n,
        nnz: nums[2],
        lines: idx as u64 + 1,
    })
}

/// The error for a file whose entries are not the `declared` count.
pub(crate) fn count_mismatch(path: &Path, declared: u64, found: u64) -> GraphError {
    GraphError::bad_input(
        path,
        format!("the size line declares {declared} entries but the file has {found}"),
    )
}

/// Imports a Matrix Market file from `input`, opened from `path`.
pub fn import(
    mut input: Input,
    path: &Path,
    opts: &ImportOptions,
    progress: &dyn Progress,
) -> Result<Graph> {
    let Header {
        weighted,
        symmetric,
        n,
        nnz,
        lines,
    } = read_header(&mut input, path)?;
    // Every declared vertex is one (isolated ones too): refuse a size
    // line whose vertices cannot fit before allocating for them.
    let need = n.saturating_mul(BYTES_PER_VERTEX);
    if let Some(have) = crate::generate::available_memory().filter(|&h| need > h) {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        return Err(GraphError::parse(
            path,
            lines,
            format!(
                "the size line declares {n} vertices, which need at least {:.1} GiB of memory; {:.1} GiB is available",
                gib(need),
                gib(have)
            ),
        ));
    }
    // Entries: value column required for integer/real.
    let hi = n as i64;
    let blocks = parse_blocks(input, path, lines, progress, |data| {
        parse_block(data, weighted, Some((1, hi)))
    })?;
    let found: u64 = blocks.iter().map(|b| b.edges() as u64).sum();
    if found != nnz {
        return Err(count_mismatch(path, nnz, found));
    }
    let (buf, ids) = map_ids(
        blocks,
        VertexSet::Exactly((1..=hi).collect(), path.to_path_buf()),
        path,
    )?;
    let directed = opts.directed.unwrap_or(!symmetric);
    build(n as usize, buf, ids, &opts.build_options(directed))
}
