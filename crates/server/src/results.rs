//! Finished jobs' per-vertex results as a table in external ids, written as
//! JSON, CSV, Parquet or an Arrow IPC stream in blocks of rows, so that a
//! download is streamed rather than built in memory as text.
use std::io::Write;
use std::sync::{Arc, OnceLock};

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};
use plexus_graph::{ExternalId, Graph, IdKind};
use plexus_jobs::output::{sssp_parents, top_k};
use plexus_jobs::request::Column;
use plexus_jobs::{JobOutput, Snapshot, Values};
use serde_json::{json, Value};

/// Rows per block of a Parquet or Arrow download.
pub const BLOCK_ROWS: usize = 1 << 16;

/// A download format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `{"columns": [...], "rows": [[...], ...]}`; non-finite floats and
    /// "none" values are `null`.
    Json,
    /// `id,COLUMN,...` as `plexus run --out FILE.csv` writes it.
    Csv,
    /// Parquet (zstd), as `plexus run --out FILE.parquet` writes it.
    Parquet,
    /// An Arrow IPC stream.
    Arrow,
}

impl Format {
    /// The format named `s` (`json`, `csv`, `parquet`, `arrow`).
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "parquet" => Some(Format::Parquet),
            "arrow" => Some(Format::Arrow),
            _ => None,
        }
    }

    /// The `Content-Type` of a download.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Csv => "text/csv; charset=utf-8",
            Format::Parquet => "application/vnd.apache.parquet",
            Format::Arrow => "application/vnd.apache.arrow.stream",
        }
    }
}

/// A job's per-vertex result on its pinned snapshot (columns indexed by
/// internal id).
pub struct ResultTable {
    /// The version the job ran on.
    pub snapshot: Arc<Snapshot>,
    /// Named columns in the registry's order (a derived last column, SSSP's
    /// parents, is not among them until first needed: see [`Self::columns`]).
    columns: Vec<(&'static str, Column)>,
    /// Graphalytics conventions (BFS depth of unreached vertices i64::MAX).
    pub graphalytics: bool,
    /// SSSP's parent column, derived from the distances (one pass over the
    /// edges) on the first download, not when the job ends: a client that
    /// reads only the status never pays for it.
    parents: Option<DerivedParents>,
}

/// SSSP parents derived on demand from the first (distance) column.
struct DerivedParents {
    source: u32,
    column: OnceLock<Column>,
}

impl ResultTable {
    /// The columns of a managed job's output, named as `plexus run` names
    /// them (SSSP parents derived from the distances, as `plexus run` does).
    ///
    /// O(1) apart from moving the vectors: SSSP's parents are derived on
    /// first use ([`Self::columns`]).
    pub fn of_output(out: JobOutput) -> ResultTable {
        let snapshot = Arc::clone(out.snapshot());
        let mut parents = None;
        let columns = match out.into_values() {
            Values::Bfs { depth, parent, .. } => {
                vec![
                    ("depth", Column::Depth(depth)),
                    ("parent", Column::Vertex(parent)),
                ]
            }
            Values::Sssp { dist, source, .. } => {
                parents = Some(DerivedParents {
                    source,
                    column: OnceLock::new(),
                });
                vec![("distance", Column::Float(dist))]
            }
            Values::PageRank { rank, .. } => vec![("rank", Column::Float(rank))],
            Values::Wcc { component, .. } => vec![("component", Column::Vertex(component))],
            Values::Cdlp { label, .. } => vec![("label", Column::Natural(label))],
        };
        ResultTable {
            snapshot,
            columns,
            graphalytics: false,
            parents,
        }
    }

    /// A table of the given columns (a worker job's output).
    pub fn new(
        snapshot: Arc<Snapshot>,
        columns: Vec<(&'static str, Column)>,
        graphalytics: bool,
    ) -> ResultTable {
        ResultTable {
            snapshot,
            columns,
            graphalytics,
            parents: None,
        }
    }

    /// Every column, named, in order; derives SSSP's parents on the first
    /// call (O(edges)).
    pub fn columns(&self) -> Vec<(&'static str, &Column)> {
        let mut cols: Vec<(&'static str, &Column)> =
            self.columns.iter().map(|(n, c)| (*n, c)).collect();
        if let Some(d) = &self.parents {
            let col = d.column.get_or_init(|| {
                let Some((_, Column::Float(dist))) = self.columns.first() else {
                    return Column::Vertex(Vec::new());
                };
                Column::Vertex(sssp_parents(self.graph(), d.source, dist))
            });
            cols.push(("parent", col));
        }
        cols
    }

    fn graph(&self) -> &Graph {
        self.snapshot.graph()
    }

    /// Rows (one per vertex).
    pub fn rows(&self) -> usize {
        self.graph().num_vertices()
    }

    /// Bytes the columns hold.
    pub fn size_bytes(&self) -> u64 {
        let derived = self.parents.as_ref().and_then(|d| d.column.get());
        self.columns
            .iter()
            .map(|(_, c)| c)
            .chain(derived)
            .map(|c| match c {
                Column::Depth(x) | Column::Vertex(x) | Column::Natural(x) => 4 * x.len(),
                Column::Int(x) => 8 * x.len(),
                Column::Float(x) => 8 * x.len(),
                Column::Bool(x) => x.len(),
            } as u64)
            .sum()
    }

    /// Writes the table in `format` to `w`, in blocks of rows. An error of
    /// `w` (a client that went away) stops the write.
    pub fn write(&self, format: Format, w: &mut (dyn Write + Send)) -> std::io::Result<()> {
        match format {
            Format::Json => self.write_json(w),
            Format::Csv => self.write_csv(w),
            Format::Parquet => self.write_parquet(w).map_err(std::io::Error::other),
            Format::Arrow => self.write_arrow(w).map_err(std::io::Error::other),
        }
    }

    fn ext_json(&self, v: u32) -> Value {
        match self.graph().ids().external(v) {
            ExternalId::Int(i) => json!(i),
            ExternalId::Str(s) => json!(s),
        }
    }

    /// One cell as JSON.
    fn json_cell(&self, c: &Column, v: usize) -> Value {
        let g = self.graph();
        match c {
            Column::Depth(d) => match d[v] {
                u32::MAX if self.graphalytics => json!(i64::MAX),
                u32::MAX => Value::Null,
                x => json!(x),
            },
            Column::Vertex(x) => match x[v] {
                u32::MAX => Value::Null,
                u => self.ext_json(u),
            },
            Column::Natural(x) => self.ext_json(g.from_natural(x[v])),
            Column::Int(x) => json!(x[v]),
            Column::Float(x) if x[v].is_finite() => json!(x[v]),
            Column::Float(_) => Value::Null,
            Column::Bool(x) => json!(x[v]),
        }
    }

    fn write_json(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let cols = self.columns();
        let mut names = vec!["id"];
        names.extend(cols.iter().map(|(n, _)| *n));
        write!(w, "{{\"columns\":{},\"rows\":[", json!(names))?;
        for v in 0..self.rows() {
            let mut row = Vec::with_capacity(names.len());
            row.push(self.ext_json(v as u32));
            row.extend(cols.iter().map(|(_, c)| self.json_cell(c, v)));
            if v > 0 {
                w.write_all(b",")?;
            }
            serde_json::to_writer(&mut *w, &row)?;
        }
        w.write_all(b"]}\n")
    }

    /// One CSV cell, as `plexus run --out FILE.csv` writes it.
    fn csv_cell(&self, c: &Column, v: usize, out: &mut String) {
        use std::fmt::Write as _;
        let g = self.graph();
        match c {
            Column::Depth(d) => match d[v] {
                u32::MAX if self.graphalytics => out.push_str(&i64::MAX.to_string()),
                u32::MAX => out.push_str("inf"),
                x => {
                    let _ = write!(out, "{x}");
                }
            },
            Column::Vertex(x) => {
                if x[v] != u32::MAX {
                    csv_text(&g.ids().external_string(x[v]), out);
                }
            }
            Column::Natural(x) => csv_text(&g.ids().external_string(g.from_natural(x[v])), out),
            Column::Int(x) => {
                let _ = write!(out, "{}", x[v]);
            }
            Column::Float(x) if x[v].is_infinite() => {
                out.push_str(if x[v] > 0.0 { "inf" } else { "-inf" })
            }
            Column::Float(x) => {
                let _ = write!(out, "{:e}", x[v]);
            }
            Column::Bool(x) => out.push(if x[v] { '1' } else { '0' }),
        }
    }

    fn write_csv(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let cols = self.columns();
        let mut line = String::from("id");
        for (n, _) in &cols {
            line.push(',');
            line.push_str(n);
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
        let g = self.graph();
        for v in 0..self.rows() {
            line.clear();
            csv_text(&g.ids().external_string(v as u32), &mut line);
            for (_, c) in &cols {
                line.push(',');
                self.csv_cell(c, v, &mut line);
            }
            line.push('\n');
            w.write_all(line.as_bytes())?;
        }
        Ok(())
    }

    /// An external-id column over rows `lo..hi` (Int64 for integer ids,
    /// Utf8 for string ids), null where `pick` gives `None`.
    fn id_array(&self, lo: usize, hi: usize, pick: impl Fn(usize) -> Option<u32>) -> ArrayRef {
        let g = self.graph();
        match g.ids().kind() {
            IdKind::Str => Arc::new(StringArray::from_iter(
                (lo..hi).map(|v| pick(v).map(|u| g.ids().external_string(u))),
            )),
            _ => Arc::new(Int64Array::from_iter((lo..hi).map(|v| {
                pick(v).map(|u| match g.ids().external(u) {
                    ExternalId::Int(i) => i,
                    ExternalId::Str(_) => 0,
                })
            }))),
        }
    }

    /// The schema: `id` then the columns, with the types
    /// `plexus run --out FILE.parquet` writes.
    pub fn schema(&self) -> Arc<Schema> {
        let id_type = match self.graph().ids().kind() {
            IdKind::Str => DataType::Utf8,
            _ => DataType::Int64,
        };
        let mut fields = vec![Field::new("id", id_type.clone(), true)];
        for (name, c) in self.columns() {
            let t = match c {
                Column::Depth(_) => DataType::Int64,
                Column::Vertex(_) | Column::Natural(_) => id_type.clone(),
                Column::Int(_) => DataType::UInt64,
                Column::Float(_) => DataType::Float64,
                Column::Bool(_) => DataType::Boolean,
            };
            fields.push(Field::new(name, t, true));
        }
        Arc::new(Schema::new(fields))
    }

    /// Rows `lo..hi` as a record batch.
    fn batch(&self, schema: &Arc<Schema>, lo: usize, hi: usize) -> Result<RecordBatch, String> {
        let g = self.graph();
        let mut arrays: Vec<ArrayRef> = vec![self.id_array(lo, hi, |v| Some(v as u32))];
        for (_, c) in self.columns() {
            let arr: ArrayRef = match c {
                Column::Depth(d) => {
                    Arc::new(Int64Array::from_iter(d[lo..hi].iter().map(|&x| match x {
                        u32::MAX if self.graphalytics => Some(i64::MAX),
                        u32::MAX => None,
                        x => Some(x as i64),
                    })))
                }
                Column::Vertex(x) => self.id_array(lo, hi, |v| (x[v] != u32::MAX).then_some(x[v])),
                Column::Natural(x) => self.id_array(lo, hi, |v| Some(g.from_natural(x[v]))),
                Column::Int(x) => Arc::new(UInt64Array::from(x[lo..hi].to_vec())),
                Column::Float(x) => Arc::new(Float64Array::from(x[lo..hi].to_vec())),
                Column::Bool(x) => Arc::new(BooleanArray::from(x[lo..hi].to_vec())),
            };
            arrays.push(arr);
        }
        RecordBatch::try_new(Arc::clone(schema), arrays).map_err(|e| e.to_string())
    }

    fn blocks(&self) -> impl Iterator<Item = (usize, usize)> {
        let n = self.rows();
        (0..n.div_ceil(BLOCK_ROWS).max(1))
            .map(move |b| (b * BLOCK_ROWS, ((b + 1) * BLOCK_ROWS).min(n)))
    }

    fn write_parquet(&self, w: &mut (dyn Write + Send)) -> Result<(), String> {
        let props = parquet::file::properties::WriterProperties::builder()
            .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
            .build();
        let schema = self.schema();
        let mut pw = parquet::arrow::ArrowWriter::try_new(w, Arc::clone(&schema), Some(props))
            .map_err(|e| e.to_string())?;
        for (lo, hi) in self.blocks() {
            pw.write(&self.batch(&schema, lo, hi)?)
                .map_err(|e| e.to_string())?;
            // Each block leaves as a row group: memory stays one block.
            pw.flush().map_err(|e| e.to_string())?;
        }
        pw.close().map_err(|e| e.to_string())?;
        Ok(())
    }

    fn write_arrow(&self, w: &mut (dyn Write + Send)) -> Result<(), String> {
        let schema = self.schema();
        let mut aw =
            arrow_ipc::writer::StreamWriter::try_new(w, &schema).map_err(|e| e.to_string())?;
        for (lo, hi) in self.blocks() {
            aw.write(&self.batch(&schema, lo, hi)?)
                .map_err(|e| e.to_string())?;
        }
        aw.finish().map_err(|e| e.to_string())
    }

    /// What the web page plots: the top `k` rows by the first float
    /// column (ranks, distances: largest first, ties by smaller id) and a
    /// log2 histogram of that column, or for vertex-valued columns
    /// (components, labels) the sizes of the groups, largest first, and
    /// their log2 histogram. O(rows) time, O(rows) scratch for groups.
    pub fn digest(&self, k: usize) -> Value {
        let Some((name, col)) = self.columns.first() else {
            return Value::Null;
        };
        match col {
            Column::Float(x) => {
                let top: Vec<Value> = top_k(x.len(), k, |v| x[v].is_finite().then_some(x[v]))
                    .into_iter()
                    .map(|v| json!({"id": self.ext_json(v as u32), "value": x[v]}))
                    .collect();
                json!({"column": name, "top": top, "histogram": log2_histogram_f64(x)})
            }
            Column::Vertex(x) | Column::Natural(x) => {
                // Group keys are vertex ids (internal or natural, < rows).
                let mut sizes = vec![0u64; x.len()];
                for &c in x.iter().filter(|&&c| c != u32::MAX) {
                    if let Some(s) = sizes.get_mut(c as usize) {
                        *s += 1;
                    }
                }
                let groups = sizes.iter().filter(|&&s| s > 0).count();
                let g = self.graph();
                let natural = matches!(col, Column::Natural(_));
                let top: Vec<Value> = top_k(sizes.len(), k, |c| {
                    (sizes[c] > 0).then_some(sizes[c] as f64)
                })
                .into_iter()
                .map(|c| {
                    let c = c as u32;
                    let v = if natural { g.from_natural(c) } else { c };
                    json!({"id": self.ext_json(v), "size": sizes[c as usize]})
                })
                .collect();
                json!({"column": name, "groups": groups, "top": top,
                       "histogram": log2_histogram(&sizes)})
            }
            Column::Depth(d) => {
                let mut bins = [0u64; 65];
                for &x in d.iter().filter(|&&x| x != u32::MAX) {
                    bins[log2_floor(x as u64 + 1)] += 1;
                }
                json!({"column": name, "histogram": bins_json(&bins)})
            }
            Column::Int(x) => json!({"column": name, "histogram": log2_histogram(x)}),
            Column::Bool(x) => {
                json!({"column": name, "true": x.iter().filter(|&&b| b).count()})
            }
        }
    }
}

/// ⌊log2 x⌋ for x ≥ 1.
fn log2_floor(x: u64) -> usize {
    63 - x.leading_zeros() as usize
}

/// Non-empty bins `[2^i, 2^(i+1))` as `[[2^i, count], ...]`.
fn bins_json(bins: &[u64; 65]) -> Value {
    Value::Array(
        bins.iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| json!([1u64 << i.min(63), c]))
            .collect(),
    )
}

/// Quotes a CSV field when it needs it.
fn csv_text(s: &str, out: &mut String) {
    if s.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(s);
    }
}

/// Counts of values ≥ 1 in bins `[2^i, 2^(i+1))`, as `[[2^i, count], ...]`
/// (empty bins left out).
pub fn log2_histogram(xs: &[u64]) -> Value {
    let mut bins = [0u64; 65];
    for &x in xs.iter().filter(|&&x| x > 0) {
        bins[log2_floor(x)] += 1;
    }
    bins_json(&bins)
}

/// The exponent bias of an f64 plus its mantissa bits: the bin offset that
/// makes every finite positive value's ⌊log2⌋ (−1074 to 1023) an index.
const F64_BIN_OFFSET: i32 = 1074;

/// ⌊log2 x⌋ of a finite positive f64, exactly (from its bits).
fn f64_log2_floor(x: f64) -> i32 {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // Subnormal: the value is mantissa · 2^-1074.
        let m = bits & ((1u64 << 52) - 1);
        log2_floor(m) as i32 - F64_BIN_OFFSET
    } else {
        exp - 1023
    }
}

/// 2^i for −1074 ≤ i ≤ 1023, exactly.
fn pow2(i: i32) -> f64 {
    if i >= -1022 {
        f64::from_bits(((i + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (i + F64_BIN_OFFSET))
    }
}

/// Counts of finite positive values in bins `[2^i, 2^(i+1))` for integer
/// `i` (negative for values below 1), as `[[2^i, count], ...]`; other
/// values are left out.
fn log2_histogram_f64(xs: &[f64]) -> Value {
    let mut bins = vec![0u64; (F64_BIN_OFFSET + 1024) as usize];
    for &x in xs.iter().filter(|x| x.is_finite() && **x > 0.0) {
        bins[(f64_log2_floor(x) + F64_BIN_OFFSET) as usize] += 1;
    }
    Value::Array(
        bins.iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| json!([pow2(i as i32 - F64_BIN_OFFSET), c]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_bins_are_exact_floor_log2() {
        for (x, want) in [
            (1.0, 0),
            (1.999_999_999, 0),
            (2.0, 1),
            (0.5, -1),
            (0.75, -1),
            (f64::from_bits(f64::to_bits(8.0) - 1), 2),
            (f64::MAX, 1023),
            (f64::MIN_POSITIVE, -1022),
            (f64::from_bits(1), -1074),
            (f64::from_bits(3), -1073),
        ] {
            assert_eq!(f64_log2_floor(x), want, "{x:e}");
            assert!(pow2(want) <= x && x < 2.0 * pow2(want), "{x:e}");
        }
        let h = log2_histogram_f64(&[0.0, -1.0, f64::INFINITY, f64::NAN, 0.3, 0.26, 5.0, 1e-320]);
        let rows = h.as_array().unwrap();
        assert_eq!(rows.len(), 3, "{h}");
        assert_eq!(rows[1], json!([0.25, 2]));
        assert_eq!(rows[2], json!([4.0, 1]));
    }

    #[test]
    fn u64_histogram_bins() {
        let h = log2_histogram(&[0, 1, 2, 3, 4, 7, 8, u64::MAX]);
        assert_eq!(h, json!([[1, 1], [2, 2], [4, 2], [8, 1], [1u64 << 63, 1]]));
    }

    fn table(cols: Vec<(&'static str, Column)>) -> ResultTable {
        use plexus_graph::{BuildOptions, Graph};
        use plexus_jobs::SnapshotId;
        let g =
            Graph::from_edges(6, &[(0, 1), (2, 3), (3, 4)], &BuildOptions::undirected()).unwrap();
        ResultTable::new(Arc::new(Snapshot::new("g", SnapshotId(1), g)), cols, false)
    }

    #[test]
    fn digest_of_groups_counts_sizes_largest_first() {
        let t = table(vec![("component", Column::Vertex(vec![0, 0, 2, 2, 2, 5]))]);
        let d = t.digest(2);
        assert_eq!(d["groups"], json!(3), "{d}");
        let top = d["top"].as_array().unwrap();
        assert_eq!(top.len(), 2);
        assert_eq!(
            (top[0]["size"].clone(), top[1]["size"].clone()),
            (json!(3), json!(2))
        );
        assert_eq!(d["histogram"], json!([[1, 1], [2, 2]]));
        let t = table(vec![(
            "depth",
            Column::Depth(vec![0, 1, u32::MAX, 3, 3, 1]),
        )]);
        assert_eq!(t.digest(3)["histogram"], json!([[1, 1], [2, 2], [4, 2]]));
    }

    #[test]
    fn sssp_parents_are_derived_on_first_use() {
        use plexus_graph::{BuildOptions, Graph};
        use plexus_jobs::SnapshotId;
        let g =
            Graph::from_weighted_edges(4, &[(0, 1, 1.5), (1, 2, 1.0)], &BuildOptions::undirected())
                .unwrap();
        let mut t = ResultTable::new(
            Arc::new(Snapshot::new("g", SnapshotId(1), g)),
            vec![(
                "distance",
                Column::Float(vec![0.0, 1.5, 2.5, f64::INFINITY]),
            )],
            false,
        );
        t.parents = Some(DerivedParents {
            source: 0,
            column: OnceLock::new(),
        });
        assert_eq!(t.size_bytes(), 32, "parents not derived yet");
        let cols = t.columns();
        assert_eq!(cols.len(), 2);
        let ("parent", Column::Vertex(p)) = cols[1] else {
            panic!("no parent column")
        };
        assert_eq!(p, &vec![0, 0, 1, u32::MAX]);
        assert_eq!(t.size_bytes(), 48);
        let mut csv = Vec::new();
        t.write(Format::Csv, &mut csv).unwrap();
        assert!(String::from_utf8(csv)
            .unwrap()
            .starts_with("id,distance,parent\n"));
    }
}
