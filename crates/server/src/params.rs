//! A job request's JSON parameters as the library's [`RunRequest`], and the
//! choice of where it runs: the shared [`plexus_jobs::JobManager`] (bfs,
//! sssp, pagerank, ppr, wcc, cdlp with the parameters a managed job takes)
//! or a worker running [`plexus_jobs::request::execute`] (everything else).
use plexus_engine::algo::{cdlp, pagerank};
use plexus_engine::registry::{self, ExecutorKind};
use plexus_graph::Graph;
use plexus_jobs::request::{Resolved, RunRequest};
use plexus_jobs::Algorithm;
use serde_json::{Map, Value};

use crate::error::ApiError;

fn type_err(name: &str, what: &str, v: &Value) -> ApiError {
    ApiError::bad_request(format!("{name} must be {what}, got {v}"))
}

fn float(name: &str, v: &Value) -> Result<f64, ApiError> {
    v.as_f64().ok_or_else(|| type_err(name, "a number", v))
}

fn int(name: &str, v: &Value, max: u64) -> Result<u64, ApiError> {
    match v.as_u64() {
        Some(x) if x <= max => Ok(x),
        _ => Err(type_err(name, &format!("an integer in 0..={max}"), v)),
    }
}

fn text(name: &str, v: &Value) -> Result<String, ApiError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| type_err(name, "a string", v))
}

/// A vertex id as given: a JSON integer or string.
pub fn vertex_text(name: &str, v: &Value) -> Result<String, ApiError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) if n.is_i64() => Ok(n.to_string()),
        _ => Err(type_err(name, "a vertex id (integer or string)", v)),
    }
}

/// The request for `algorithm` on `graph` with the JSON `params` (`null`
/// values are "not given"). Unknown parameters are refused naming the ones
/// the algorithm takes; ranges are checked later by `request::resolve`.
pub fn request_of(
    algorithm: &str,
    graph: &str,
    params: &Map<String, Value>,
) -> Result<RunRequest, ApiError> {
    let mut r = RunRequest::new(algorithm, graph);
    r.per_vertex = true;
    for (k, v) in params {
        if v.is_null() {
            continue;
        }
        let k = k.as_str();
        match k {
            "source" => r.source = Some(vertex_text(k, v)?),
            "damping" => r.damping = Some(float(k, v)?),
            "tolerance" => r.tolerance = Some(float(k, v)?),
            "delta" => r.delta = Some(float(k, v)?),
            "iterations" => r.iterations = Some(int(k, v, u32::MAX as u64)? as usize),
            "samples" => r.samples = Some(int(k, v, u32::MAX as u64)? as usize),
            "seed" => r.seed = Some(int(k, v, u64::MAX)?),
            "hops" => r.hops = Some(int(k, v, u32::MAX as u64)? as u32),
            "k" => r.k = Some(int(k, v, u32::MAX as u64)? as u32),
            "method" => {
                r.method = Some(
                    text(k, v)?
                        .parse()
                        .map_err(|e: String| ApiError::bad_request(format!("method: {e}")))?,
                )
            }
            "precision" => {
                r.precision = Some(
                    text(k, v)?
                        .parse()
                        .map_err(|e: String| ApiError::bad_request(format!("precision: {e}")))?,
                )
            }
            "semantics" => r.semantics = Some(text(k, v)?),
            "executor" => {
                let name = text(k, v)?;
                r.executor = match ExecutorKind::parse(&name) {
                    Some(e @ (ExecutorKind::Memory | ExecutorKind::Scan)) => e,
                    _ => {
                        return Err(ApiError::bad_request(format!(
                            "executor must be memory or scan, got '{name}'"
                        )))
                    }
                }
            }
            other => {
                let takes = registry::find(algorithm)
                    .map(|(e, _)| e.params.join(", "))
                    .unwrap_or_default();
                return Err(ApiError::bad_request(if takes.is_empty() {
                    format!("{algorithm} takes no parameter '{other}'")
                } else {
                    format!("{algorithm} takes no parameter '{other}' (it takes {takes})")
                }));
            }
        }
    }
    Ok(r)
}

/// The managed job for a resolved request, when one runs it with the same
/// meaning: the job manager's algorithms, in memory, NetworkX semantics,
/// no PageRank method asked for. `None`: it runs on a worker instead.
pub fn managed_job(g: &Graph, p: &Resolved) -> Option<Algorithm> {
    let r = &p.req;
    if p.graphalytics || r.executor != ExecutorKind::Memory || r.method.is_some() {
        return None;
    }
    let source = || g.ids().external_string(p.source);
    let pr = |personalization: Option<Vec<String>>, tolerance: f64| Algorithm::PageRank {
        damping: r.damping.unwrap_or(pagerank::DEFAULT_DAMPING),
        iterations: r.iterations,
        tolerance,
        max_iterations: pagerank::DEFAULT_MAX_ITERATIONS,
        personalization,
        precision: r.precision.unwrap_or(pagerank::Precision::Double),
    };
    Some(match p.algorithm {
        "bfs" => Algorithm::Bfs { source: source() },
        "sssp" => Algorithm::Sssp {
            source: source(),
            delta: r.delta,
        },
        "pagerank" => pr(None, r.tolerance.unwrap_or(pagerank::DEFAULT_TOLERANCE)),
        "ppr" => pr(
            Some(vec![source()]),
            r.tolerance
                .unwrap_or_else(|| pagerank::personalized_default_tolerance(g.num_vertices())),
        ),
        "wcc" => Algorithm::Wcc,
        "cdlp" => Algorithm::Cdlp {
            iterations: r.iterations.unwrap_or(cdlp::DEFAULT_ITERATIONS),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn parameters_are_typed_and_unknown_ones_named() {
        let r = request_of(
            "pagerank",
            "g",
            &params(json!({"damping": 0.9, "iterations": 5})),
        )
        .unwrap();
        assert_eq!(r.damping, Some(0.9));
        assert_eq!(r.iterations, Some(5));
        let e = request_of("pagerank", "g", &params(json!({"dampening": 0.9}))).unwrap_err();
        assert!(e.message.contains("'dampening'"), "{}", e.message);
        let e = request_of("bfs", "g", &params(json!({"source": [1]}))).unwrap_err();
        assert!(e.message.starts_with("source must be"), "{}", e.message);
        let r = request_of("bfs", "g", &params(json!({"source": 7}))).unwrap();
        assert_eq!(r.source.as_deref(), Some("7"));
    }
}
