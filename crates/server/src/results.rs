//! Finished jobs' per-vertex results as a table in external ids, written as
//! JSON, CSV, Parquet or an Arrow IPC stream in blocks of rows, so that a
//! download is streamed rather than built in memory as text.
use std::io::Write;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};
use plexus_graph::{ExternalId, Graph, IdKind};
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
    /// Named columns in the registry's order.
    pub columns: Vec<(&'static str, Column)>,
    /// Graphalytics conventions (BFS depth of unreached vertices i64::MAX).
    pub graphalytics: bool,
}

impl ResultTable {
    /// The columns of a managed job's output, named as `plexus run` names
    /// them (SSSP parents derived from the distances, as `plexus run` does).
    pub fn of_output(out: JobOutput) -> ResultTable {
        let snapshot = Arc::clone(out.snapshot());
        let parents = out.values().sssp_parents(snapshot.graph());
        let columns = match out.into_values() {
            Values::Bfs { depth, parent, .. } => {
                vec![
                    ("depth", Column::Depth(depth)),
                    ("parent", Column::Vertex(parent)),
                ]
            }
            Values::Sssp { dist, .. } => vec![
                ("distance", Column::Float(dist)),
                ("parent", Column::Vertex(parents.unwrap_or_default())),
            ],
            Values::PageRank { rank, .. } => vec![("rank", Column::Float(rank))],
            Values::Wcc { component, .. } => vec![("component", Column::Vertex(component))],
            Values::Cdlp { label, .. } => vec![("label", Column::Natural(label))],
        };
        ResultTable {
            snapshot,
            columns,
            graphalytics: false,
        }
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
        self.columns
            .iter()
            .map(|(_, c)| match c {
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
        let mut names = vec!["id"];
        names.extend(self.columns.iter().map(|(n, _)| *n));
        write!(w, "{{\"columns\":{},\"rows\":[", json!(names))?;
        for v in 0..self.rows() {
            let mut row = Vec::with_capacity(names.len());
            row.push(self.ext_json(v as u32));
            row.extend(self.columns.iter().map(|(_, c)| self.json_cell(c, v)));
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
        let mut line = String::from("id");
        for (n, _) in &self.columns {
            line.push(',');
            line.push_str(n);
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
        let g = self.graph();
        for v in 0..self.rows() {
            line.clear();
            csv_text(&g.ids().external_string(v as u32), &mut line);
            for (_, c) in &self.columns {
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
        for (name, c) in &self.columns {
            let t = match c {
                Column::Depth(_) => DataType::Int64,
                Column::Vertex(_) | Column::Natural(_) => id_type.clone(),
                Column::Int(_) => DataType::UInt64,
                Column::Float(_) => DataType::Float64,
                Column::Bool(_) => DataType::Boolean,
            };
            fields.push(Field::new(*name, t, true));
        }
        Arc::new(Schema::new(fields))
    }

    /// Rows `lo..hi` as a record batch.
    fn batch(&self, schema: &Arc<Schema>, lo: usize, hi: usize) -> Result<RecordBatch, String> {
        let g = self.graph();
        let mut arrays: Vec<ArrayRef> = vec![self.id_array(lo, hi, |v| Some(v as u32))];
        for (_, c) in &self.columns {
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
    /// column (ranks, distances: largest first) and a log2 histogram of
    /// that column, or for vertex-valued columns (components, labels) the
    /// sizes of the groups, largest first, and their log2 histogram.
    pub fn digest(&self, k: usize) -> Value {
        let Some((name, col)) = self.columns.first() else {
            return Value::Null;
        };
        match col {
            Column::Float(x) => {
                let mut order: Vec<usize> = (0..x.len()).filter(|&v| x[v].is_finite()).collect();
                let k = k.min(order.len());
                if k > 0 {
                    order.select_nth_unstable_by(k - 1, |&a, &b| x[b].total_cmp(&x[a]));
                    order[..k].sort_by(|&a, &b| x[b].total_cmp(&x[a]));
                }
                let top: Vec<Value> = order[..k]
                    .iter()
                    .map(|&v| json!({"id": self.ext_json(v as u32), "value": x[v]}))
                    .collect();
                let positive: Vec<f64> = x
                    .iter()
                    .copied()
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .collect();
                json!({"column": name, "top": top, "histogram": log2_histogram_f64(&positive)})
            }
            Column::Vertex(x) | Column::Natural(x) => {
                let mut sizes = std::collections::HashMap::<u32, u64>::new();
                for &c in x.iter().filter(|&&c| c != u32::MAX) {
                    *sizes.entry(c).or_default() += 1;
                }
                let mut groups: Vec<(u32, u64)> = sizes.into_iter().collect();
                groups.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                let g = self.graph();
                let natural = matches!(col, Column::Natural(_));
                let top: Vec<Value> = groups
                    .iter()
                    .take(k)
                    .map(|&(c, s)| {
                        let v = if natural { g.from_natural(c) } else { c };
                        json!({"id": self.ext_json(v), "size": s})
                    })
                    .collect();
                let sizes: Vec<u64> = groups.iter().map(|g| g.1).collect();
                json!({"column": name, "groups": groups.len(), "top": top,
                       "histogram": log2_histogram(&sizes)})
            }
            Column::Depth(d) => {
                let reached: Vec<u64> = d
                    .iter()
                    .filter(|&&x| x != u32::MAX)
                    .map(|&x| x as u64 + 1)
                    .collect();
                json!({"column": name, "histogram": log2_histogram(&reached)})
            }
            Column::Int(x) => json!({"column": name, "histogram": log2_histogram(x)}),
            Column::Bool(x) => {
                json!({"column": name, "true": x.iter().filter(|&&b| b).count()})
            }
        }
    }
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
        bins[63 - x.leading_zeros() as usize] += 1;
    }
    let rows: Vec<Value> = bins
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &c)| json!([1u64 << i.min(63), c]))
        .collect();
    Value::Array(rows)
}

/// Counts of positive values in bins `[2^i, 2^(i+1))` for integer `i`
/// (negative for values below 1), as `[[2^i, count], ...]`.
fn log2_histogram_f64(xs: &[f64]) -> Value {
    let mut bins = std::collections::BTreeMap::<i32, u64>::new();
    for &x in xs {
        *bins.entry(x.log2().floor() as i32).or_default() += 1;
    }
    Value::Array(
        bins.into_iter()
            .map(|(i, c)| json!([2f64.powi(i), c]))
            .collect(),
    )
}
