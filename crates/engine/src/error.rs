//! Errors of the engine: bad parameters for an algorithm, and verifier
//! failures that name the vertex or edge that broke the property.

/// A parameter or input an algorithm cannot accept. One line, says what and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AlgoError {
    /// A parameter out of range (negative damping, k larger than |V|, ...).
    #[error("{0}")]
    InvalidParameter(String),
    /// The graph lacks something the algorithm needs (weights, ...).
    #[error("{0}")]
    UnsupportedGraph(String),
    /// A vertex id (internal) outside the graph.
    #[error("vertex {0} is not in the graph")]
    NoSuchVertex(u64),
    /// A negative edge weight where the algorithm cannot take one.
    #[error("negative weight {weight} on edge {src} -> {dst}; {algorithm} needs weights >= 0")]
    NegativeWeight {
        algorithm: &'static str,
        src: u64,
        dst: u64,
        weight: f64,
    },
    /// The caller's [`crate::progress::Observer`] asked the kernel to stop.
    #[error("the computation was cancelled")]
    Cancelled,
    /// The executor could not make the storage for a per-vertex array
    /// ([`crate::vertex_array::Backing`]); the message says which and why.
    #[error("per-vertex state storage: {0}")]
    StateStorage(String),
}

/// A result that fails its algorithm's defining property. The message names
/// the vertex or edge (internal ids) and the values that disagree.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("verification failed: {0}")]
pub struct VerifyError(pub String);

impl VerifyError {
    /// Makes an error from anything printable.
    pub fn new(msg: impl Into<String>) -> Self {
        VerifyError(msg.into())
    }
}
