//! The plain sequential reference (Dijkstra), the verifier and the
//! conformance check of the driver against the fast kernel.
use super::*;

/// Plain sequential Dijkstra with a binary heap (lazy deletion).
/// `iterations` counts the vertices settled.
pub fn reference(g: &Graph, cfg: &Config) -> Result<Output, AlgoError> {
    prepare(g, cfg)?;
    use std::cmp::Reverse;
    let n = g.num_vertices();
    let mut dist = vec![f64::INFINITY; n];
    dist[cfg.source as usize] = 0.0;
    // Non-negative f64s order like their bit patterns.
    let mut heap = std::collections::BinaryHeap::from([Reverse((0u64, cfg.source))]);
    let mut settled = 0;
    while let Some(Reverse((bits, u))) = heap.pop() {
        let du = f64::from_bits(bits);
        if du > dist[u as usize] {
            continue;
        }
        settled += 1;
        let ws = g.out_weights(u).unwrap_or(&[]);
        for (&v, &w) in g.out_neighbors(u).iter().zip(ws) {
            let nd = du + w;
            if nd < dist[v as usize] {
                dist[v as usize] = nd;
                heap.push(Reverse((nd.to_bits(), v)));
            }
        }
    }
    let parent = parents(g, cfg.source, &dist);
    Ok(Output {
        dist,
        parent,
        iterations: settled,
    })
}

/// Whether `a ≤ b` up to the verifier's relative tolerance.
pub(super) fn le_eps(a: f64, b: f64) -> bool {
    a <= b + VERIFY_EPSILON * b.abs().max(1.0)
}

/// Checks the shortest-path properties on any weighted graph: the source is
/// at 0 and its own parent; no distance is negative or NaN; every edge
/// `u → v` from a reached `u` satisfies `dist[v] ≤ dist[u] + w` (relative
/// tolerance [`VERIFY_EPSILON`]); every reached vertex's parent edge exists
/// and achieves its distance (same tolerance) and following parents leads
/// to the source (so each distance is the length of a real path);
/// unreached vertices have no parent. Together: distances are shortest.
pub fn verify(g: &Graph, cfg: &Config, out: &Output) -> Result<(), VerifyError> {
    prepare(g, cfg).map_err(|e| VerifyError::new(format!("cannot verify: {e}")))?;
    let n = g.num_vertices();
    let (dist, parent) = (&out.dist, &out.parent);
    if dist.len() != n || parent.len() != n {
        return Err(VerifyError::new(format!(
            "output has the wrong length for {n} vertices"
        )));
    }
    let s = cfg.source;
    if dist[s as usize] != 0.0 || parent[s as usize] != s {
        return Err(VerifyError::new(format!(
            "source {s} has distance {} and parent {}",
            dist[s as usize], parent[s as usize]
        )));
    }
    for v in 0..n as VertexId {
        let d = dist[v as usize];
        if d.is_nan() || d < 0.0 {
            return Err(VerifyError::new(format!("vertex {v} has distance {d}")));
        }
        let p = parent[v as usize];
        if d == f64::INFINITY {
            if p != NO_PARENT {
                return Err(VerifyError::new(format!(
                    "unreached vertex {v} has parent {p}"
                )));
            }
            continue;
        }
        // Triangle inequality on every out-edge.
        let ws = g.out_weights(v).unwrap_or(&[]);
        for (&w_, &wt) in g.out_neighbors(v).iter().zip(ws) {
            if !le_eps(dist[w_ as usize], d + wt) {
                return Err(VerifyError::new(format!(
                    "edge {v} -> {w_} (weight {wt}): distance {} at {w_} exceeds {d} + {wt}",
                    dist[w_ as usize]
                )));
            }
        }
        if v == s {
            continue;
        }
        // Tightness of the parent edge.
        if p as usize >= n {
            return Err(VerifyError::new(format!(
                "reached vertex {v} (distance {d}) has no parent"
            )));
        }
        let dp = dist[p as usize];
        let ws = g.in_weights(v).unwrap_or(&[]);
        let tight = g
            .in_neighbors(v)
            .iter()
            .zip(ws)
            .any(|(&u, &w)| u == p && le_eps(dp + w, d) && le_eps(d, dp + w));
        if !tight {
            return Err(VerifyError::new(format!(
                "vertex {v} at distance {d}: no edge {p} -> {v} from its parent (at {dp}) achieves it"
            )));
        }
    }
    // Parent chains reach the source (no cycles among parents).
    let mut state = vec![0u8; n]; // 0 unknown, 1 on the current chain, 2 leads to the source
    state[s as usize] = 2;
    for v in 0..n {
        if parent[v] == NO_PARENT || state[v] == 2 {
            continue;
        }
        let mut chain = vec![];
        let mut x = v;
        while state[x] == 0 {
            state[x] = 1;
            chain.push(x);
            x = parent[x] as usize;
        }
        if state[x] == 1 {
            return Err(VerifyError::new(format!(
                "the parents of vertex {v} form a cycle through vertex {x} that misses the source"
            )));
        }
        for c in chain {
            state[c] = 2;
        }
    }
    Ok(())
}

/// The conformance check of [`SsspDriver`] on `exec` (see
/// [`crate::conformance`]): distances and parents equal [`run`]'s bit for
/// bit, and the result passes [`verify`]. Unweighted graphs are skipped.
pub fn check_on<E: Executor>(g: &Graph, exec: &E, seed: u64) -> Result<(), String> {
    if !g.is_weighted() {
        return Ok(());
    }
    let n = g.num_vertices().max(1) as u64;
    let cfg = Config {
        source: (seed % n) as VertexId,
        delta: [None, Some(0.5), Some(3.0)][(seed >> 8) as usize % 3],
    };
    let got = run_on(exec, &cfg).map_err(|e| e.to_string())?;
    verify(g, &cfg, &got).map_err(|e| e.to_string())?;
    let fast = run(g, &cfg).map_err(|e| e.to_string())?;
    let bits = |d: &[f64]| d.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    crate::conformance::same("dist", &bits(&got.dist), &bits(&fast.dist))?;
    crate::conformance::same("parent", &got.parent, &fast.parent)
}
