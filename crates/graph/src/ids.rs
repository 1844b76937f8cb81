//! [`IdMap`]: the mapping between users' external vertex ids and dense
//! internal ids. Every output of Plexus is in external ids.
use std::fmt;

use crate::section::Section;
use crate::types::VertexId;

/// An external vertex id: a signed 64-bit integer or a string.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExternalId {
    Int(i64),
    Str(String),
}

impl fmt::Display for ExternalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExternalId::Int(i) => write!(f, "{i}"),
            ExternalId::Str(s) => f.write_str(s),
        }
    }
}

/// Kind of external ids a graph uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdKind {
    /// External id = internal id (generated graphs).
    Identity,
    /// Signed 64-bit integers.
    Int,
    /// UTF-8 strings.
    Str,
}

/// Maps internal ids `0..n` to external ids and back.
///
/// Invariants: external ids are distinct; `sorted` lists every internal id
/// once, ordered by external id, so look-ups are a binary search.
#[derive(Clone, Debug)]
pub enum IdMap {
    /// Internal id `v` is external id `v`.
    Identity { n: usize },
    /// `ext[v]` is the external id of internal `v`.
    Int {
        ext: Section<i64>,
        sorted: Section<VertexId>,
    },
    /// String `v` is `bytes[offsets[v]..offsets[v+1]]`.
    Str {
        offsets: Section<u64>,
        bytes: Section<u8>,
        sorted: Section<VertexId>,
    },
}

impl IdMap {
    /// Number of vertices covered.
    pub fn len(&self) -> usize {
        match self {
            IdMap::Identity { n } => *n,
            IdMap::Int { ext, .. } => ext.len(),
            IdMap::Str { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The kind of ids.
    pub fn kind(&self) -> IdKind {
        match self {
            IdMap::Identity { .. } => IdKind::Identity,
            IdMap::Int { .. } => IdKind::Int,
            IdMap::Str { .. } => IdKind::Str,
        }
    }

    /// Builds an integer map from external ids indexed by internal id.
    pub fn from_ints(ext: Vec<i64>) -> Self {
        let mut sorted: Vec<VertexId> = (0..ext.len() as VertexId).collect();
        use rayon::prelude::*;
        sorted.par_sort_unstable_by_key(|&v| ext[v as usize]);
        IdMap::Int {
            ext: Section::owned(ext),
            sorted: Section::owned(sorted),
        }
    }

    /// Builds a string map from external ids indexed by internal id.
    pub fn from_strings(names: &[String]) -> Self {
        let mut offsets = Vec::with_capacity(names.len() + 1);
        let mut bytes = Vec::new();
        offsets.push(0u64);
        for s in names {
            bytes.extend_from_slice(s.as_bytes());
            offsets.push(bytes.len() as u64);
        }
        let mut sorted: Vec<VertexId> = (0..names.len() as VertexId).collect();
        use rayon::prelude::*;
        sorted.par_sort_unstable_by(|&a, &b| names[a as usize].cmp(&names[b as usize]));
        IdMap::Str {
            offsets: Section::owned(offsets),
            bytes: Section::owned(bytes),
            sorted: Section::owned(sorted),
        }
    }

    /// The external id of internal `v`, as an [`ExternalId`].
    pub fn external(&self, v: VertexId) -> ExternalId {
        match self {
            IdMap::Identity { .. } => ExternalId::Int(v as i64),
            IdMap::Int { ext, .. } => ExternalId::Int(ext[v as usize]),
            IdMap::Str { .. } => ExternalId::Str(self.str_of(v).to_string()),
        }
    }

    /// Writes the external id of `v` to `out` without allocating for integers.
    pub fn write_external(
        &self,
        v: VertexId,
        out: &mut (impl std::io::Write + ?Sized),
    ) -> std::io::Result<()> {
        match self {
            IdMap::Identity { .. } => write!(out, "{v}"),
            IdMap::Int { ext, .. } => write!(out, "{}", ext[v as usize]),
            IdMap::Str { .. } => out.write_all(self.str_of(v).as_bytes()),
        }
    }

    /// The external id of `v` as a string.
    pub fn external_string(&self, v: VertexId) -> String {
        self.external(v).to_string()
    }

    fn str_of(&self, v: VertexId) -> &str {
        match self {
            IdMap::Str { offsets, bytes, .. } => {
                let (a, b) = (
                    offsets[v as usize] as usize,
                    offsets[v as usize + 1] as usize,
                );
                std::str::from_utf8(&bytes[a..b]).unwrap_or("<invalid utf-8>")
            }
            _ => "",
        }
    }

    /// Internal id of an integer external id.
    pub fn lookup_int(&self, x: i64) -> Option<VertexId> {
        match self {
            IdMap::Identity { n } => (x >= 0 && (x as u64) < *n as u64).then_some(x as VertexId),
            IdMap::Int { ext, sorted } => {
                // Dense ids (0..n in some order, the common case) sit at
                // their own rank: one probe, then the binary search.
                if let Some(&v) = usize::try_from(x).ok().and_then(|k| sorted.get(k)) {
                    if ext[v as usize] == x {
                        return Some(v);
                    }
                }
                sorted
                    .binary_search_by_key(&x, |&v| ext[v as usize])
                    .ok()
                    .map(|k| sorted[k])
            }
            IdMap::Str { .. } => self.lookup_str(&x.to_string()),
        }
    }

    /// Internal id of an external id given as text (parsed as an integer for
    /// integer maps).
    pub fn lookup_str(&self, s: &str) -> Option<VertexId> {
        match self {
            IdMap::Identity { .. } | IdMap::Int { .. } => s
                .trim()
                .parse::<i64>()
                .ok()
                .and_then(|x| self.lookup_int(x)),
            IdMap::Str { sorted, .. } => sorted
                .binary_search_by(|&v| self.str_of(v).cmp(s))
                .ok()
                .map(|k| sorted[k]),
        }
    }

    /// Looks up `s`, or returns [`crate::GraphError::UnknownVertex`].
    pub fn resolve(&self, s: &str) -> crate::Result<VertexId> {
        self.lookup_str(s)
            .ok_or_else(|| crate::GraphError::UnknownVertex(s.to_string()))
    }

    /// Applies a relabelling: the new map's internal `new` is the old map's
    /// `old_of_new[new]`.
    pub(crate) fn permuted(&self, old_of_new: &[VertexId]) -> IdMap {
        match self {
            IdMap::Identity { .. } => {
                IdMap::from_ints(old_of_new.iter().map(|&o| o as i64).collect())
            }
            IdMap::Int { ext, .. } => {
                IdMap::from_ints(old_of_new.iter().map(|&o| ext[o as usize]).collect())
            }
            IdMap::Str { .. } => {
                let names: Vec<String> = old_of_new
                    .iter()
                    .map(|&o| self.str_of(o).to_string())
                    .collect();
                IdMap::from_strings(&names)
            }
        }
    }

    /// Bytes held.
    pub fn size_bytes(&self) -> u64 {
        match self {
            IdMap::Identity { .. } => 0,
            IdMap::Int { ext, sorted } => ext.size_bytes() + sorted.size_bytes(),
            IdMap::Str {
                offsets,
                bytes,
                sorted,
            } => offsets.size_bytes() + bytes.size_bytes() + sorted.size_bytes(),
        }
    }
}
