//! Delta-stepping by rounds of the rayon pool (when another team holds the
//! team guard).
use super::*;

/// Delta-stepping on the in-memory executor with GAPBS's bucket layout: each
/// thread relaxes its share of the current bucket's vertices (push only, as
/// GAPBS; the [`Program`]'s arithmetic on the tentative-distance [`Word`])
/// and files each lowered vertex straight into its own bins, so no round
/// needs a global regrouping step. Stale entries (a vertex whose distance
/// has since dropped to a lower bucket) are skipped when popped. Same
/// distances as [`delta_stepping`] on any executor.
pub(super) fn delta_stepping_in_memory<W: Word>(
    g: &Graph,
    source: VertexId,
    delta: f64,
) -> Result<Option<(Vec<f64>, usize)>, AlgoError> {
    use std::sync::Mutex;
    let n = g.num_vertices();
    let p = Tentative::<W>::new(g, source, delta);
    let out = g.out();
    let threads = rayon::current_num_threads();
    let bins: Vec<Mutex<LocalBins>> = (0..threads).map(|_| Mutex::default()).collect();
    let lock = |i: usize| bins[i].lock().unwrap_or_else(|e| e.into_inner());
    let mut base = 0u64;
    let mut k = 0u64;
    let mut frontier: Vec<VertexId> = vec![source];
    let mut iterations = 0;
    // The distance each vertex last sent along its edges.
    let relaxed_at = stamps::<W>(n);
    loop {
        if !frontier.is_empty() {
            if crate::progress::cancel_requested() {
                return Err(AlgoError::Cancelled);
            }
            iterations += 1;
            crate::progress::superstep(frontier.len() as u64);
            // u's message if u is still in bucket k and its distance changed
            // since it last sent one (see the tasks below).
            let fresh = |u: VertexId| claim_fresh(&p, &relaxed_at, u, k);
            // Tasks: (vertex, its message, first edge, end edge), high
            // degrees split. A vertex is relaxed only if it is still in
            // bucket k (not lowered into an earlier one since it was filed)
            // and its distance changed since it was last relaxed: duplicate
            // entries and repeat visits at the same distance are skipped.
            // Each entry's distance and stamp miss the cache: they are asked
            // for [`TEAM_FAR`] entries ahead, as in the team rounds.
            let tasks: Vec<(VertexId, W, usize, usize)> = frontier
                .par_chunks(1024)
                .flat_map_iter(|chunk| {
                    let mut tasks = Vec::new();
                    for &u in chunk.iter().take(TEAM_FAR) {
                        prefetch_state(&p, &relaxed_at, out, u);
                    }
                    for (j, &u) in chunk.iter().enumerate() {
                        if let Some(&w) = chunk.get(j + TEAM_FAR) {
                            prefetch_state(&p, &relaxed_at, out, w);
                        }
                        if let Some(m) = fresh(u) {
                            let d = out.degree(u);
                            tasks
                                .extend((0..d.div_ceil(EDGE_GRAIN).max(1)).map(|b| {
                                    (u, m, b * EDGE_GRAIN, ((b + 1) * EDGE_GRAIN).min(d))
                                }));
                        }
                    }
                    tasks
                })
                .collect();
            // Relaxes edges lo..hi of u with message m, filing lowered
            // vertices into `local`.
            let relax = |local: &mut LocalBins, u: VertexId, m: W, lo: usize, hi: usize| {
                // prepare() checked that the graph is weighted.
                let ws = out.weights(u).map_or(&[][..], |w| &w[lo..hi]);
                local.relax(&p, &out.neighbors(u)[lo..hi], ws, m, base);
            };
            let cur = (k - base) as usize;
            tasks.par_chunks(16).for_each(|chunk| {
                let mut local = lock(rayon::current_thread_index().unwrap_or(0) % threads);
                let local = &mut *local;
                for (j, &(u, m, lo, hi)) in chunk.iter().enumerate() {
                    // The out-list of a task a few places on (its offset was
                    // read when the tasks were made).
                    if let Some(&(w, _, at, _)) = chunk.get(j + TEAM_AHEAD) {
                        prefetch_edges(out, out.offsets()[w as usize] as usize + at);
                    }
                    relax(local, u, m, lo, hi);
                    // Bucket fusion (GAPBS): while this thread's own share of
                    // the current bucket is small, relax it right away
                    // instead of waiting for the next round.
                    while local
                        .near
                        .get(cur)
                        .is_some_and(|b| !b.is_empty() && b.len() < FUSE_BELOW)
                    {
                        let bin = std::mem::take(&mut local.near[cur]);
                        for &u in &bin {
                            if let Some(m) = fresh(u) {
                                relax(local, u, m, 0, out.degree(u));
                            }
                        }
                    }
                }
            });
        }
        if W::NARROW && (0..threads).any(|t| lock(t).overflow) {
            return Ok(None);
        }
        // The next bucket: the lowest non-empty near bin of any thread.
        let next = (0..threads)
            .filter_map(|t| {
                let l = lock(t);
                let from = (k.saturating_sub(base)) as usize;
                l.near
                    .iter()
                    .enumerate()
                    .skip(from)
                    .find(|(_, b)| !b.is_empty())
                    .map(|(i, _)| base + i as u64)
            })
            .min();
        match next {
            Some(b) => {
                k = b;
                let i = (b - base) as usize;
                frontier.clear();
                for t in 0..threads {
                    let mut l = lock(t);
                    if let Some(bin) = l.near.get_mut(i) {
                        frontier.append(bin);
                    }
                }
            }
            None => {
                // The window is empty: restart it at the lowest far bucket.
                // Entries now in a bucket below the window are stale (any
                // lowering into the window was filed there and processed).
                let end = base.saturating_add(BIN_WINDOW);
                let far: Vec<VertexId> = (0..threads)
                    .flat_map(|t| std::mem::take(&mut lock(t).far))
                    .filter(|&v| p.bucket(p.get(v)) >= end)
                    .collect();
                let Some(lowest) = far.par_iter().map(|&v| p.bucket(p.get(v))).min() else {
                    break;
                };
                base = lowest;
                k = lowest;
                for t in 0..threads {
                    lock(t).near.clear();
                }
                let mut l = lock(0);
                for v in far {
                    l.file(v, p.bucket(p.get(v)), base);
                }
                frontier = std::mem::take(&mut l.near[0]);
            }
        }
    }
    Ok(Some((p.into_f64(), iterations)))
}
