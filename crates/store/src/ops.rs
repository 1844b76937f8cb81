//! The changes a transaction makes, in external ids.
//!
//! Ops name vertices by external id so that the log survives compaction
//! (which renumbers internal ids) and replays to the same graph.
use plexus_graph::{ExternalId, Weight};

/// One change. Semantics, checked when a transaction applies it:
/// - `AddVertex`: the vertex must not exist.
/// - `RemoveVertex`: the vertex must exist; its edges go with it.
/// - `AddEdge`: endpoints are created when missing; the edge must not
///   exist; a weight is required on weighted graphs and refused on
///   unweighted ones. On undirected graphs `(u, v)` is `{u, v}`.
/// - `RemoveEdge`: the edge must exist; every stored copy is removed.
/// - `SetWeight`: the edge must exist; every copy gets the weight.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    AddVertex(ExternalId),
    RemoveVertex(ExternalId),
    AddEdge {
        u: ExternalId,
        v: ExternalId,
        w: Option<Weight>,
    },
    RemoveEdge {
        u: ExternalId,
        v: ExternalId,
    },
    SetWeight {
        u: ExternalId,
        v: ExternalId,
        w: Weight,
    },
}

impl Op {
    /// One line of a transaction file as `plexus tx` reads it (comments and
    /// blank lines already stripped): `add-edge U V [W]`, `remove-edge U V`,
    /// `add-vertex U`, `remove-vertex U`, `set-weight U V W`, ids parsed as
    /// `s`'s id kind. The error is one line naming what is wrong.
    pub fn parse_line(line: &str, s: &crate::Snapshot) -> Result<Op, String> {
        let t: Vec<&str> = line.split_whitespace().collect();
        let Some(&name) = t.first() else {
            return Err("empty line".into());
        };
        let id = |k: usize| s.parse_id(t[k]).map_err(|e| e.to_string());
        let weight = |k: usize| -> Result<Weight, String> {
            t[k].parse::<Weight>()
                .ok()
                .filter(|w| w.is_finite())
                .ok_or_else(|| format!("weight '{}' is not a finite number", t[k]))
        };
        let arity = |want: &[usize]| -> Result<(), String> {
            if want.contains(&(t.len() - 1)) {
                return Ok(());
            }
            let w: Vec<String> = want.iter().map(|w| w.to_string()).collect();
            Err(format!(
                "'{name}' takes {} argument(s), got {}",
                w.join(" or "),
                t.len() - 1
            ))
        };
        Ok(match name {
            "add-edge" => {
                arity(&[2, 3])?;
                let w = if t.len() == 4 { Some(weight(3)?) } else { None };
                Op::AddEdge { u: id(1)?, v: id(2)?, w }
            }
            "remove-edge" => {
                arity(&[2])?;
                Op::RemoveEdge { u: id(1)?, v: id(2)? }
            }
            "add-vertex" => {
                arity(&[1])?;
                Op::AddVertex(id(1)?)
            }
            "remove-vertex" => {
                arity(&[1])?;
                Op::RemoveVertex(id(1)?)
            }
            "set-weight" => {
                arity(&[3])?;
                Op::SetWeight { u: id(1)?, v: id(2)?, w: weight(3)? }
            }
            other => return Err(format!(
                "unknown op '{other}' (expected add-edge, remove-edge, add-vertex, remove-vertex, set-weight)"
            )),
        })
    }
}
