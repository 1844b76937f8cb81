//! Job results: per-vertex values indexed by internal id, with the pinned
//! snapshot so that every id handed to a user is external.
use std::io::Write;
use std::sync::Arc;

use plexus_graph::{ExternalId, VertexId};
use serde_json::{json, Value};

use crate::snapshot::Snapshot;

/// Sentinel of unreached vertices in BFS depths and parents (the engine's).
pub const UNREACHED: u32 = u32::MAX;

/// Per-vertex values of a finished job, indexed by internal id.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// BFS: hops from the source and a parent one level up ([`UNREACHED`] when unreachable).
    Bfs {
        depth: Vec<u32>,
        parent: Vec<u32>,
        /// Supersteps run (max depth + 1).
        iterations: usize,
    },
    /// SSSP: distances (`+∞` when unreachable) from `source` (internal id).
    /// Parents are derived from them on request ([`Values::sssp_parents`]),
    /// as `plexus run sssp` does: the kernel, like GAPBS's, is the distances.
    Sssp {
        dist: Vec<f64>,
        source: VertexId,
        /// Relaxation supersteps run.
        iterations: usize,
    },
    /// PageRank: ranks summing to 1.
    PageRank {
        rank: Vec<f64>,
        iterations: usize,
        converged: bool,
    },
    /// WCC: the smallest internal id of each vertex's component.
    Wcc { component: Vec<u32>, count: u64 },
    /// CDLP: community labels as natural ids (rank in ascending external id).
    Cdlp { label: Vec<u32>, iterations: usize },
}

impl Values {
    /// SSSP parents (the engine's rule, `sssp::parents_of`: a tight
    /// in-neighbour, [`UNREACHED`] when unreachable) derived from the
    /// distances on `g`, the job's snapshot graph; `None` for other values.
    /// One pass over the in-edges.
    pub fn sssp_parents(&self, g: &plexus_graph::Graph) -> Option<Vec<u32>> {
        match self {
            Values::Sssp { dist, source, .. } => Some(sssp_parents(g, *source, dist)),
            _ => None,
        }
    }
}

/// SSSP parents from `source`'s distances `dist` on `g` (the engine's
/// rule, `sssp::parents_of`): one pass over the in-edges.
pub fn sssp_parents(g: &plexus_graph::Graph, source: VertexId, dist: &[f64]) -> Vec<u32> {
    let cfg = plexus_engine::algo::sssp::Config {
        source,
        delta: None,
    };
    plexus_engine::algo::sssp::parents_of(g, &cfg, dist)
}

/// The rows (indices `< n`) with the `k` largest keys, largest first, ties
/// by smaller index; rows whose key is `None` are left out. One pass, O(k)
/// memory.
pub fn top_k(n: usize, k: usize, key: impl Fn(usize) -> Option<f64>) -> Vec<usize> {
    // `kept` is sorted weakest first: ascending key, then descending index.
    let better = |a: (f64, usize), b: (f64, usize)| a.0 > b.0 || (a.0 == b.0 && a.1 < b.1);
    let mut kept: Vec<(f64, usize)> = Vec::with_capacity(k + 1);
    if k == 0 {
        return Vec::new();
    }
    for v in 0..n {
        let Some(x) = key(v) else { continue };
        if kept.len() == k && !better((x, v), kept[0]) {
            continue;
        }
        let at = kept.partition_point(|&e| better((x, v), e));
        kept.insert(at, (x, v));
        if kept.len() > k {
            kept.remove(0);
        }
    }
    kept.iter().rev().map(|&(_, v)| v).collect()
}

/// A finished job's result on its pinned snapshot.
#[derive(Clone, Debug)]
pub struct JobOutput {
    pub(crate) snapshot: Arc<Snapshot>,
    pub(crate) values: Values,
}

impl JobOutput {
    /// The values, indexed by internal id (for comparisons and tests).
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// The values, moved out (no copy).
    pub fn into_values(self) -> Values {
        self.values
    }

    /// The snapshot the job ran on.
    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snapshot
    }

    /// Bytes the per-vertex values hold (counted as the job's state until
    /// the result is taken).
    pub fn size_bytes(&self) -> u64 {
        let n = match &self.values {
            Values::Bfs { depth, parent, .. } => 4 * (depth.len() + parent.len()),
            Values::Sssp { dist, .. } => 8 * dist.len(),
            Values::PageRank { rank, .. } => 8 * rank.len(),
            Values::Wcc { component, .. } => 4 * component.len(),
            Values::Cdlp { label, .. } => 4 * label.len(),
        };
        n as u64
    }

    fn ext(&self, v: VertexId) -> ExternalId {
        self.snapshot.graph().ids().external(v)
    }

    fn ext_json(&self, v: VertexId) -> Value {
        match self.ext(v) {
            ExternalId::Int(x) => json!(x),
            ExternalId::Str(s) => json!(s),
        }
    }

    /// A short summary with external ids: reached vertices and depth, top
    /// ranks, component counts, and so on.
    pub fn summary(&self) -> Value {
        match &self.values {
            Values::Bfs {
                depth, iterations, ..
            } => {
                let reached = depth.iter().filter(|&&d| d != UNREACHED).count();
                let max = depth.iter().filter(|&&d| d != UNREACHED).max().copied();
                json!({"reached": reached, "max_depth": max, "iterations": iterations})
            }
            Values::Sssp {
                dist, iterations, ..
            } => {
                let reached = dist.iter().filter(|d| d.is_finite()).count();
                let max = dist
                    .iter()
                    .copied()
                    .filter(|d| d.is_finite())
                    .fold(0.0f64, f64::max);
                json!({"reached": reached, "max_distance": max, "iterations": iterations})
            }
            Values::PageRank {
                rank,
                iterations,
                converged,
            } => {
                // The 3 largest ranks, ties by smaller id.
                let top: Vec<Value> = top_k(rank.len(), 3, |v| Some(rank[v]))
                    .into_iter()
                    .map(|v| json!({"id": self.ext_json(v as u32), "rank": rank[v]}))
                    .collect();
                json!({"iterations": iterations, "converged": converged, "top": top})
            }
            Values::Wcc { component, count } => {
                // Component ids are internal ids (< n): count in an array.
                let mut sizes = vec![0u32; component.len()];
                for &c in component {
                    if let Some(s) = sizes.get_mut(c as usize) {
                        *s += 1;
                    }
                }
                let largest = sizes.iter().max().copied().unwrap_or(0);
                json!({"components": count, "largest": largest})
            }
            Values::Cdlp { label, iterations } => {
                // Labels are natural ids (< n): mark them in an array.
                let mut seen = vec![false; label.len()];
                let mut communities = 0usize;
                for &l in label {
                    if let Some(s) = seen.get_mut(l as usize) {
                        communities += usize::from(!*s);
                        *s = true;
                    }
                }
                json!({"communities": communities, "iterations": iterations})
            }
        }
    }

    /// Writes one CSV row per vertex, ids external: `id,depth,parent`,
    /// `id,distance,parent`, `id,rank`, `id,component` or `id,label`.
    pub fn write_csv(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let g = self.snapshot.graph();
        let ids = g.ids();
        let n = g.num_vertices() as VertexId;
        let id = |w: &mut dyn Write, v: VertexId| ids.write_external(v, w);
        let opt = |w: &mut dyn Write, v: u32| -> std::io::Result<()> {
            if v == UNREACHED {
                Ok(())
            } else {
                ids.write_external(v, w)
            }
        };
        match &self.values {
            Values::Bfs { depth, parent, .. } => {
                writeln!(w, "id,depth,parent")?;
                for v in 0..n {
                    id(w, v)?;
                    if depth[v as usize] == UNREACHED {
                        writeln!(w, ",,")?;
                    } else {
                        write!(w, ",{},", depth[v as usize])?;
                        opt(w, parent[v as usize])?;
                        writeln!(w)?;
                    }
                }
            }
            Values::Sssp { dist, .. } => {
                let parent = self.values.sssp_parents(g).unwrap_or_default();
                writeln!(w, "id,distance,parent")?;
                for v in 0..n {
                    id(w, v)?;
                    write!(w, ",{},", dist[v as usize])?;
                    opt(w, parent[v as usize])?;
                    writeln!(w)?;
                }
            }
            Values::PageRank { rank, .. } => {
                writeln!(w, "id,rank")?;
                for v in 0..n {
                    id(w, v)?;
                    writeln!(w, ",{:e}", rank[v as usize])?;
                }
            }
            Values::Wcc { component, .. } => {
                writeln!(w, "id,component")?;
                for v in 0..n {
                    id(w, v)?;
                    write!(w, ",")?;
                    id(w, component[v as usize])?;
                    writeln!(w)?;
                }
            }
            Values::Cdlp { label, .. } => {
                writeln!(w, "id,label")?;
                for v in 0..n {
                    id(w, v)?;
                    write!(w, ",")?;
                    id(w, g.from_natural(label[v as usize]))?;
                    writeln!(w)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::SnapshotId;
    use plexus_graph::{BuildOptions, Graph};

    fn output(values: Values) -> JobOutput {
        let g = Graph::from_edges(5, &[(0, 1), (2, 3)], &BuildOptions::undirected()).unwrap();
        JobOutput {
            snapshot: Arc::new(Snapshot::new("g", SnapshotId(1), g)),
            values,
        }
    }

    #[test]
    fn top_k_is_the_k_largest_ties_by_smaller_index() {
        let xs = [3.0, 7.0, f64::NAN, 7.0, 1.0, 9.0, 3.0];
        let key = |v: usize| (!xs[v].is_nan()).then_some(xs[v]);
        assert_eq!(top_k(xs.len(), 3, key), vec![5, 1, 3]);
        assert_eq!(top_k(xs.len(), 4, key), vec![5, 1, 3, 0]);
        assert_eq!(top_k(xs.len(), 0, key), Vec::<usize>::new());
        assert_eq!(top_k(xs.len(), 10, key), vec![5, 1, 3, 0, 6, 4]);
        // Against a sort on pseudo-random keys with many ties.
        let ys: Vec<f64> = (0..1000u64).map(|i| ((i * 7919) % 37) as f64).collect();
        let mut want: Vec<usize> = (0..ys.len()).collect();
        want.sort_by(|&a, &b| ys[b].total_cmp(&ys[a]).then(a.cmp(&b)));
        assert_eq!(top_k(ys.len(), 25, |v| Some(ys[v])), want[..25].to_vec());
    }

    #[test]
    fn pagerank_summary_is_the_top_three_ties_by_smaller_id() {
        let pr = output(Values::PageRank {
            rank: vec![0.1, 0.3, 0.25, 0.3, 0.05],
            iterations: 7,
            converged: true,
        });
        let s = pr.summary();
        let ids: Vec<&Value> = s["top"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["id"])
            .collect();
        assert_eq!(ids, [&json!(1), &json!(3), &json!(2)], "{s}");
        let two = output(Values::PageRank {
            rank: vec![0.5, 0.5],
            iterations: 1,
            converged: false,
        });
        assert_eq!(two.summary()["top"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn component_and_community_summaries_count_labels() {
        let wcc = output(Values::Wcc {
            component: vec![0, 0, 2, 2, 4],
            count: 3,
        });
        assert_eq!(wcc.summary(), json!({"components": 3, "largest": 2}));
        let cdlp = output(Values::Cdlp {
            label: vec![3, 3, 1, 1, 3],
            iterations: 10,
        });
        assert_eq!(cdlp.summary(), json!({"communities": 2, "iterations": 10}));
    }

    #[test]
    fn sssp_parents_are_derived_from_distances_on_request() {
        // 0 - 1 (weight 1.5) reached from 1; 2 - 3 and 4 not.
        let g =
            Graph::from_weighted_edges(5, &[(0, 1, 1.5), (2, 3, 1.0)], &BuildOptions::undirected())
                .unwrap();
        let out = JobOutput {
            snapshot: Arc::new(Snapshot::new("g", SnapshotId(1), g)),
            values: Values::Sssp {
                dist: vec![1.5, 0.0, f64::INFINITY, f64::INFINITY, f64::INFINITY],
                source: 1,
                iterations: 2,
            },
        };
        let g = out.snapshot().graph();
        assert_eq!(
            out.values().sssp_parents(g),
            Some(vec![1, 1, UNREACHED, UNREACHED, UNREACHED])
        );
        let mut csv = Vec::new();
        out.write_csv(&mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        assert_eq!(csv.lines().nth(1), Some("0,1.5,1"));
        assert_eq!(csv.lines().nth(2), Some("1,0,1"));
        assert_eq!(csv.lines().nth(3), Some("2,inf,"));
        let wcc = output(Values::Wcc {
            component: vec![0; 5],
            count: 1,
        });
        assert_eq!(wcc.values().sssp_parents(g), None);
    }
}
