//! The store file of a bounded build, section by section, in the byte
//! layout of [`crate::store::write_graph_file`].
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::disk::{drop_cached, ScratchWriter, SectionOut};
use super::runs::{Arc, Runs};
use super::{merge_plan, Naming, Perm, Plan};
use crate::builder::DuplicatePolicy;
use crate::chunks::{chunk_table_of_offsets, Chunk};
use crate::graph::{DegreeSummary, GraphMeta, VertexOrder};
use crate::store::{
    align_up, encode_header_fields, HeaderFields, SectionEntry, SectionKind, ENTRY_SIZE,
    FIXED_HEADER, SECTION_ALIGN, TILE_SECTIONS,
};
use crate::tiles::{Tile, Tiles, SHIFT};
use crate::types::VertexId;
use crate::{GraphError, Result};

/// What a bounded build wrote.
#[derive(Clone, Debug)]
pub struct Built {
    /// Vertices.
    pub vertices: u64,
    /// Stored arcs (the CSR's length).
    pub arcs: u64,
    /// Edges as a user counts them ([`crate::Graph::num_edges`]).
    pub edges: u64,
    pub directed: bool,
    pub weighted: bool,
    /// The out-degree summary (`degrees.json`).
    pub degrees: DegreeSummary,
}

/// Which id sections a store has (as [`crate::store`] writes them).
#[derive(Clone, Copy, PartialEq, Eq)]
enum IdSections {
    /// External id = internal id.
    None,
    /// Integer ids (or a vertex order applied to `0..n`).
    Ints,
    /// String ids of `bytes` bytes in all.
    Strings { bytes: u64 },
}

impl IdSections {
    fn of(naming: &Naming, ordered: bool) -> IdSections {
        match &naming.names {
            Some(names) => IdSections::Strings {
                bytes: names.bytes.len() as u64,
            },
            None if ordered || naming.seen.is_some() => IdSections::Ints,
            None => IdSections::None,
        }
    }

    /// The header's id kind (0 identity, 1 integers, 2 strings).
    fn kind(self) -> u32 {
        match self {
            IdSections::None => 0,
            IdSections::Ints => 1,
            IdSections::Strings { .. } => 2,
        }
    }
}

/// The sections' byte offsets, laid out in file order from the first
/// aligned byte after the header.
struct Layout {
    kinds: Vec<SectionKind>,
    lens: Vec<u64>,
}

impl Layout {
    /// The sections up to the chunk table (whose length is set later) of
    /// a graph of `n` vertices and `m` arcs, in [`crate::store`]'s order.
    fn of(
        n: u64,
        m: u64,
        directed: bool,
        weighted: bool,
        ids: IdSections,
        ordered: bool,
    ) -> Layout {
        use SectionKind::*;
        let mut lay = Layout {
            kinds: vec![OutOffsets, OutTargets],
            lens: vec![8 * (n + 1), 4 * m],
        };
        if weighted {
            lay.set(OutWeights, 8 * m);
        }
        if directed {
            lay.set(InOffsets, 8 * (n + 1));
            lay.set(InSources, 4 * m);
            if weighted {
                lay.set(InWeights, 8 * m);
            }
        }
        match ids {
            IdSections::None => {}
            IdSections::Ints => {
                lay.set(IdInts, 8 * n);
                lay.set(IdSorted, 4 * n);
            }
            IdSections::Strings { bytes } => {
                lay.set(IdStrOffsets, 8 * (n + 1));
                lay.set(IdStrBytes, bytes);
                lay.set(IdSorted, 4 * n);
            }
        }
        if ordered {
            lay.set(OldOfNew, 4 * n);
            lay.set(NewOfOld, 4 * n);
        }
        lay.set(Chunks, 0);
        lay
    }

    fn offset(&self, kind: SectionKind) -> u64 {
        let mut pos = SECTION_ALIGN;
        for (k, len) in self.kinds.iter().zip(&self.lens) {
            if *k == kind {
                return pos;
            }
            pos = align_up(pos + len);
        }
        pos
    }
    /// The file's length: the aligned end of the last section.
    fn end(&self) -> u64 {
        self.kinds
            .iter()
            .zip(&self.lens)
            .fold(SECTION_ALIGN, |pos, (_, len)| align_up(pos + len))
    }
    fn set(&mut self, kind: SectionKind, len: u64) {
        if let Some(i) = self.kinds.iter().position(|&k| k == kind) {
            self.lens[i] = len;
        } else {
            self.kinds.push(kind);
            self.lens.push(len);
        }
    }
}

/// Writes the sections of the runs' graph into `out`, then the header.
pub(super) fn write_store(
    runs: Runs,
    naming: &Naming,
    perm: Option<Perm>,
    plan: &Plan,
    run_bytes: u64,
    out: &Path,
) -> Result<Built> {
    use SectionKind::*;
    let io = |e| GraphError::io(out, e);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(out)
        .map_err(io)?;
    let n = naming.n;
    let (directed, weighted) = (plan.opts.directed, plan.weighted);
    let targets_at = align_up(SECTION_ALIGN + 8 * (n as u64 + 1));
    let t = std::time::Instant::now();
    let o = merge_out(runs, plan, run_bytes, n, &file, out, targets_at)?;
    let t = crate::trace::phase("merge out-lists", t);
    let m = o.m;
    let ordered = perm.is_some();
    let ids = IdSections::of(naming, ordered);
    let mut lay = Layout::of(n as u64, m, directed, weighted, ids, ordered);
    debug_assert_eq!(lay.offset(OutTargets), targets_at);
    let mut sums: Vec<(SectionKind, u64)> = vec![(OutTargets, o.targets_sum)];
    let put = |kind: SectionKind, bytes: &[u8], lay: &Layout, sums: &mut Vec<_>| {
        put_section(&file, out, lay, kind, bytes, sums)
    };
    if let Some(wpath) = o.weights {
        let mut s = SectionOut::new(&file, out, lay.offset(OutWeights));
        s.copy_from(wpath)?;
        sums.push((OutWeights, s.finish()?.1));
    }
    let in_offsets = match o.csc {
        Some(csc) => {
            let (offs, s_sum, w_sum) = merge_in(csc, plan, run_bytes, n, &file, out, &lay)?;
            sums.push((InSources, s_sum));
            if let Some(w) = w_sum {
                sums.push((InWeights, w));
            }
            Some(offs)
        }
        None => None,
    };
    let t = crate::trace::phase("merge in-lists", t);
    put(
        OutOffsets,
        bytemuck::cast_slice(&o.offsets),
        &lay,
        &mut sums,
    )?;
    if let Some(io) = &in_offsets {
        put(InOffsets, bytemuck::cast_slice(io), &lay, &mut sums)?;
    }
    write_ids(naming, perm.as_ref(), &file, out, &lay, &mut sums)?;
    if let Some((old_of_new, new_of_old)) = &perm {
        put(OldOfNew, bytemuck::cast_slice(old_of_new), &lay, &mut sums)?;
        put(NewOfOld, bytemuck::cast_slice(new_of_old), &lay, &mut sums)?;
    }
    drop(perm);
    let chunks: Vec<Chunk> = chunk_table_of_offsets(&o.offsets, in_offsets.as_deref());
    lay.set(Chunks, (chunks.len() * std::mem::size_of::<Chunk>()) as u64);
    put(Chunks, bytemuck::cast_slice(&chunks), &lay, &mut sums)?;
    drop(chunks);
    let tiles = Tiles::worthwhile(n, m);
    if tiles {
        let (csc_offsets, sources_at) = match &in_offsets {
            Some(io) => (io.as_slice(), lay.offset(InSources)),
            None => (o.offsets.as_slice(), lay.offset(OutTargets)),
        };
        write_tiles(
            csc_offsets,
            sources_at,
            plan,
            &file,
            out,
            &mut lay,
            &mut sums,
        )?;
        crate::trace::phase("tiles", t);
    }
    let count = lay.kinds.len();
    debug_assert_eq!(count, sums.len());
    debug_assert!(!tiles || count >= TILE_SECTIONS);
    assert!(FIXED_HEADER + ENTRY_SIZE * count + 8 <= SECTION_ALIGN as usize);
    let entries: Vec<SectionEntry> = lay
        .kinds
        .iter()
        .zip(&lay.lens)
        .map(|(&kind, &len)| SectionEntry {
            kind,
            offset: lay.offset(kind),
            len_bytes: len,
            checksum: sums.iter().find(|s| s.0 == kind).map_or(0, |s| s.1),
        })
        .collect();
    let fields = HeaderFields {
        meta: GraphMeta {
            directed,
            weighted,
            integral_weights: weighted && o.integral,
            order: if ordered {
                VertexOrder::Degree
            } else {
                VertexOrder::None
            },
            self_loops: o.self_loops,
        },
        n: n as u64,
        m,
        id_kind: ids.kind(),
        base_version: 0,
    };
    file.write_all_at(&encode_header_fields(&fields, &entries), 0)
        .map_err(io)?;
    file.set_len(lay.end()).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop_cached(&file, 0, 0);
    Ok(Built {
        vertices: n as u64,
        arcs: m,
        edges: if directed { m } else { (m + o.self_loops) / 2 },
        directed,
        weighted,
        degrees: DegreeSummary::of_offsets(&o.offsets),
    })
}

/// Writes `bytes` as section `kind` and records its checksum.
fn put_section(
    file: &File,
    out: &Path,
    lay: &Layout,
    kind: SectionKind,
    bytes: &[u8],
    sums: &mut Vec<(SectionKind, u64)>,
) -> Result<()> {
    let mut s = SectionOut::new(file, out, lay.offset(kind));
    s.put(bytes)?;
    sums.push((kind, s.finish()?.1));
    Ok(())
}

/// The out-lists' merge: what it wrote and found.
struct OutLists {
    /// CSR offsets (`n + 1`).
    offsets: Vec<u64>,
    m: u64,
    targets_sum: u64,
    /// The out-weights, in a scratch file (their offset depends on `m`).
    weights: Option<std::path::PathBuf>,
    self_loops: u64,
    /// Every weight is integral.
    integral: bool,
    /// Runs of the in-arcs, for a directed graph.
    csc: Option<Runs>,
}

/// Calls `emit` once per arc that `policy` keeps from a sorted stream
/// (copies of one `(u, v)` are adjacent, smallest weight first; `Sum`
/// adds their weights in that order); `finish` flushes the last.
struct Dedup {
    policy: DuplicatePolicy,
    pending: Option<Arc>,
}

impl Dedup {
    #[inline]
    fn push(&mut self, a: Arc, emit: &mut impl FnMut(Arc) -> Result<()>) -> Result<()> {
        if self.policy == DuplicatePolicy::Keep {
            return emit(a);
        }
        match &mut self.pending {
            Some(p) if p.u == a.u && p.v == a.v => {
                if self.policy == DuplicatePolicy::Sum {
                    p.w += a.w;
                }
                Ok(())
            }
            Some(p) => {
                let done = std::mem::replace(p, a);
                emit(done)
            }
            None => {
                self.pending = Some(a);
                Ok(())
            }
        }
    }
    fn finish(&mut self, emit: &mut impl FnMut(Arc) -> Result<()>) -> Result<()> {
        match self.pending.take() {
            Some(p) => emit(p),
            None => Ok(()),
        }
    }
}

/// Merges the out-runs into the out-targets section at `targets_at`,
/// counting degrees and feeding the in-arcs' runs of a directed graph.
fn merge_out(
    runs: Runs,
    plan: &Plan,
    run_bytes: u64,
    n: usize,
    file: &File,
    out: &Path,
    targets_at: u64,
) -> Result<OutLists> {
    let mp = merge_plan(run_bytes, runs.spilled() + 1, plan.tuning);
    // The merge's read buffers, or the arcs it sorts in memory when none
    // was spilled, stay beside the in-arcs' run buffer.
    let reading = if runs.spilled() == 0 {
        16 * runs.in_memory() as u64
    } else {
        (mp.fan_in.min(runs.spilled() + 1) * mp.read_buf) as u64
    };
    let csc_cap = plan
        .tuning
        .run_arcs
        .unwrap_or((run_bytes.saturating_sub(reading) / 16).max(1) as usize);
    let mut csc = plan
        .opts
        .directed
        .then(|| Runs::new(plan.scratch.clone(), "in", plan.weighted, csc_cap));
    let mut weights = plan
        .weighted
        .then(|| ScratchWriter::create(plan.scratch.join(".scratch-out-weights"), 1 << 20))
        .transpose()?;
    let mut targets = SectionOut::new(file, out, targets_at);
    let mut offsets = vec![0u64; n + 1];
    let (mut m, mut self_loops, mut integral) = (0u64, 0u64, true);
    let mut emit = |a: Arc| -> Result<()> {
        targets.put(&a.v.to_le_bytes())?;
        if let Some(w) = weights.as_mut() {
            w.put(&a.w.to_le_bytes())?;
            integral &= a.w.fract() == 0.0;
        }
        offsets[a.u as usize + 1] += 1;
        m += 1;
        self_loops += u64::from(a.u == a.v);
        if let Some(c) = csc.as_mut() {
            c.push(Arc {
                u: a.v,
                v: a.u,
                w: a.w,
            })?;
        }
        Ok(())
    };
    let mut dedup = Dedup {
        policy: plan.opts.duplicates,
        pending: None,
    };
    runs.merge(mp, |a| dedup.push(a, &mut emit))?;
    dedup.finish(&mut emit)?;
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let (_, targets_sum) = targets.finish()?;
    let weights = match weights {
        Some(w) => Some(w.finish()?.0),
        None => None,
    };
    Ok(OutLists {
        offsets,
        m,
        targets_sum,
        weights,
        self_loops,
        integral,
        csc,
    })
}

/// Merges the in-arcs' runs into the in-sources (and in-weights) sections;
/// returns the in-offsets and the sections' checksums.
fn merge_in(
    csc: Runs,
    plan: &Plan,
    run_bytes: u64,
    n: usize,
    file: &File,
    out: &Path,
    lay: &Layout,
) -> Result<(Vec<u64>, u64, Option<u64>)> {
    let mp = merge_plan(run_bytes, csc.spilled() + 1, plan.tuning);
    let mut sources = SectionOut::new(file, out, lay.offset(SectionKind::InSources));
    let mut weights = plan
        .weighted
        .then(|| SectionOut::new(file, out, lay.offset(SectionKind::InWeights)));
    let mut offsets = vec![0u64; n + 1];
    csc.merge(mp, |a| {
        sources.put(&a.v.to_le_bytes())?;
        if let Some(w) = weights.as_mut() {
            w.put(&a.w.to_le_bytes())?;
        }
        offsets[a.u as usize + 1] += 1;
        Ok(())
    })?;
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let s = sources.finish()?.1;
    let w = match weights {
        Some(w) => Some(w.finish()?.1),
        None => None,
    };
    Ok((offsets, s, w))
}

/// The id sections: external id of each vertex, and vertices by external
/// id (the ranks through the permutation; external ids ascend with rank).
fn write_ids(
    naming: &Naming,
    perm: Option<&Perm>,
    file: &File,
    out: &Path,
    lay: &Layout,
    sums: &mut Vec<(SectionKind, u64)>,
) -> Result<()> {
    let rank_of = |v: usize| perm.map_or(v, |p| p.0[v] as usize);
    if let Some(names) = &naming.names {
        let mut offs = SectionOut::new(file, out, lay.offset(SectionKind::IdStrOffsets));
        let mut bytes = SectionOut::new(file, out, lay.offset(SectionKind::IdStrBytes));
        let mut at = 0u64;
        offs.put(&at.to_le_bytes())?;
        for v in 0..naming.n {
            let r = rank_of(v);
            let name = &names.bytes[names.offsets[r] as usize..names.offsets[r + 1] as usize];
            bytes.put(name)?;
            at += name.len() as u64;
            offs.put(&at.to_le_bytes())?;
        }
        sums.push((SectionKind::IdStrOffsets, offs.finish()?.1));
        sums.push((SectionKind::IdStrBytes, bytes.finish()?.1));
    } else {
        if perm.is_none() && naming.seen.is_none() {
            return Ok(());
        }
        let ext = naming.ext_of_rank();
        let mut s = SectionOut::new(file, out, lay.offset(SectionKind::IdInts));
        for v in 0..naming.n {
            s.put(&i64::from(ext[rank_of(v)]).to_le_bytes())?;
        }
        sums.push((SectionKind::IdInts, s.finish()?.1));
    }
    let mut s = SectionOut::new(file, out, lay.offset(SectionKind::IdSorted));
    match perm {
        Some((_, new_of_old)) => s.put(bytemuck::cast_slice(new_of_old))?,
        None => {
            for r in 0..naming.n as VertexId {
                s.put(&r.to_le_bytes())?;
            }
        }
    }
    sums.push((SectionKind::IdSorted, s.finish()?.1));
    Ok(())
}

/// The tile sections, built block by block from the stored CSC (sources
/// read back from the file at `sources_at`), their arrays spilled to
/// scratch files and copied into place after the chunk table.
fn write_tiles(
    offsets: &[u64],
    sources_at: u64,
    plan: &Plan,
    file: &File,
    out: &Path,
    lay: &mut Layout,
    sums: &mut Vec<(SectionKind, u64)>,
) -> Result<()> {
    use SectionKind::*;
    let names = ["tile-table", "tile-targets", "tile-sources", "tile-longs"];
    let mut w: Vec<ScratchWriter> = names
        .iter()
        .map(|s| ScratchWriter::create(plan.scratch.join(format!(".scratch-{s}")), 1 << 20))
        .collect::<Result<_>>()?;
    let blocks = Tiles::build_by_blocks(
        offsets,
        |range| -> Result<Vec<u32>> {
            let mut v = vec![0u32; (range.end - range.start) as usize];
            let at = sources_at + 4 * range.start;
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut v);
            file.read_exact_at(bytes, at)
                .map_err(|e| GraphError::io(out, e))?;
            drop_cached(file, at, bytes.len() as u64);
            for x in v.iter_mut() {
                *x = u32::from_le(*x);
            }
            Ok(v)
        },
        |tiles: &[Tile], targets: &[u16], sources: &[u16], longs: &[u32]| {
            w[0].put(bytemuck::cast_slice(tiles))?;
            w[1].put(bytemuck::cast_slice(targets))?;
            w[2].put(bytemuck::cast_slice(sources))?;
            w[3].put(bytemuck::cast_slice(longs))
        },
    )?;
    let mut files = Vec::with_capacity(4);
    for s in w {
        files.push(s.finish()?);
    }
    let shift = SHIFT.to_le_bytes();
    let block_bytes: &[u8] = bytemuck::cast_slice(&blocks);
    lay.set(TileShift, 4);
    lay.set(TileBlocks, block_bytes.len() as u64);
    let kinds = [TileTable, TileTargets, TileSources, TileLongLengths];
    for (kind, (_, len)) in kinds.iter().zip(&files) {
        lay.set(*kind, *len);
    }
    for (kind, bytes) in [(TileShift, &shift[..]), (TileBlocks, block_bytes)] {
        put_section(file, out, lay, kind, bytes, sums)?;
    }
    for (kind, (path, _)) in kinds.iter().zip(files) {
        let mut s = SectionOut::new(file, out, lay.offset(*kind));
        s.copy_from(path)?;
        sums.push((*kind, s.finish()?.1));
    }
    Ok(())
}
