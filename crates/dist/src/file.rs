//! Part files: one rank's [`Part`] and the replicated [`DistView`], written
//! by `plexus partition GRAPH --ranks N` so that `--executor dist --parts
//! DIR` runs on hosts that do not share a disk (each host needs only its
//! own rank's file). Rank 0's file also holds the external ids (rank 0
//! resolves `--source` and writes the results).
//!
//! Layout (little-endian; `docs/dist.md` has the byte table): the magic
//! `PLXPART\0`, a `u32` version (1), the rank and the rank count (`u64`
//! each, readable alone by [`peek`]), then the graph's name, the cuts, the
//! view, the lists and the ids in the engine's [`Wire`] encoding, and last
//! a `u64` hash of every byte before it. A file is written to a temporary
//! name and renamed, so a crash leaves the old file or none. Reading checks
//! the magic, version, hash and every list invariant; a damaged file gives
//! [`DistError::PartFile`] naming the file and what is wrong, never a
//! panic.
use std::io::Read;
use std::path::{Path, PathBuf};

use plexus_engine::program::Wire;
use plexus_graph::{IdMap, VertexId, Weight};

use crate::error::{DistError, Result};
use crate::part::{Cuts, Lists, Part};
use crate::view::DistView;

/// The first bytes of a part file.
pub const MAGIC: &[u8; 8] = b"PLXPART\0";
/// The layout version this build writes and reads.
pub const VERSION: u32 = 1;

/// A part file's contents.
#[derive(Debug)]
pub struct PartFile {
    /// The stored graph's name.
    pub graph: String,
    /// The whole-graph facts.
    pub view: DistView,
    /// The rank's part.
    pub part: Part,
    /// The external ids (rank 0's file only).
    pub ids: Option<IdMap>,
}

/// The file of rank `rank` in `dir`: `rank-R.plxp`.
pub fn path(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("rank-{rank}.plxp"))
}

fn fnv(bytes: &[u8]) -> u64 {
    // Eight bytes at a time: part files run to gigabytes.
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for w in bytes.chunks(8) {
        let mut b = [0u8; 8];
        b[..w.len()].copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn encode_lists(l: &Lists, out: &mut Vec<u8>) {
    let (keys, offsets, ends, weights) = l.raw();
    keys.to_vec().encode(out);
    offsets.to_vec().encode(out);
    ends.to_vec().encode(out);
    weights.map(<[Weight]>::to_vec).encode(out);
}

fn decode_lists(s: &mut &[u8], n: usize) -> std::result::Result<Lists, String> {
    let keys = Vec::<VertexId>::decode(s).ok_or("the keys do not decode")?;
    let offsets = Vec::<u64>::decode(s).ok_or("the offsets do not decode")?;
    let ends = Vec::<VertexId>::decode(s).ok_or("the ends do not decode")?;
    let weights = Option::<Vec<Weight>>::decode(s).ok_or("the weights do not decode")?;
    Lists::from_raw(n, keys, offsets, ends, weights)
}

fn encode_ids(ids: &IdMap, out: &mut Vec<u8>) {
    match ids {
        IdMap::Identity { n } => {
            0u8.encode(out);
            (*n as u64).encode(out);
        }
        IdMap::Int { ext, .. } => {
            1u8.encode(out);
            ext.as_slice().to_vec().encode(out);
        }
        IdMap::Str { .. } => {
            2u8.encode(out);
            let names: Vec<Vec<u8>> = (0..ids.len() as VertexId)
                .map(|v| ids.external_string(v).into_bytes())
                .collect();
            names.encode(out);
        }
    }
}

fn decode_ids(s: &mut &[u8], n: usize) -> std::result::Result<IdMap, String> {
    let ids = match u8::decode(s).ok_or("the id kind does not decode")? {
        0 => IdMap::Identity {
            n: u64::decode(s).ok_or("the id count does not decode")? as usize,
        },
        1 => IdMap::from_ints(Vec::<i64>::decode(s).ok_or("the ids do not decode")?),
        2 => {
            let raw = Vec::<Vec<u8>>::decode(s).ok_or("the ids do not decode")?;
            let names = raw
                .into_iter()
                .map(String::from_utf8)
                .collect::<std::result::Result<Vec<String>, _>>()
                .map_err(|_| "an id is not UTF-8")?;
            IdMap::from_strings(&names)
        }
        k => return Err(format!("unknown id kind {k}")),
    };
    if ids.len() != n {
        return Err(format!("{} ids for {n} vertices", ids.len()));
    }
    Ok(ids)
}

/// Writes `part` of `graph` (and `ids`, for rank 0) with `view` to `path`,
/// through a temporary file in the same directory.
pub fn write(
    path: &Path,
    graph: &str,
    view: &DistView,
    part: &Part,
    ids: Option<&IdMap>,
) -> Result<()> {
    let mut b = Vec::with_capacity(64 + part.bytes() as usize);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    (part.rank() as u64).encode(&mut b);
    (part.cuts().ranks() as u64).encode(&mut b);
    graph.as_bytes().to_vec().encode(&mut b);
    part.cuts().bounds().to_vec().encode(&mut b);
    view.encode(&mut b);
    let (into, out_of) = part.pieces();
    encode_lists(into, &mut b);
    out_of.is_some().encode(&mut b);
    if let Some(l) = out_of {
        encode_lists(l, &mut b);
    }
    ids.is_some().encode(&mut b);
    if let Some(ids) = ids {
        encode_ids(ids, &mut b);
    }
    let h = fnv(&b);
    h.encode(&mut b);
    let err = |e: std::io::Error| DistError::PartFile {
        path: path.display().to_string(),
        what: e.to_string(),
    };
    let tmp = path.with_extension("plxp.tmp");
    std::fs::write(&tmp, &b).map_err(err)?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// The rank and rank count of the part file at `path`, from its first 28
/// bytes.
pub fn peek(path: &Path) -> Result<(usize, usize)> {
    let bad = |what: String| DistError::PartFile {
        path: path.display().to_string(),
        what,
    };
    let mut head = [0u8; 28];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .map_err(|e| bad(e.to_string()))?;
    header(&head).map_err(bad)
}

fn header(b: &[u8]) -> std::result::Result<(usize, usize), String> {
    if b.len() < 28 || &b[..8] != MAGIC {
        return Err("not a part file (no PLXPART magic)".into());
    }
    let mut s = &b[8..];
    let version = u32::decode(&mut s).ok_or("truncated")?;
    if version != VERSION {
        return Err(format!(
            "layout version {version}; this build reads {VERSION}"
        ));
    }
    let rank = u64::decode(&mut s).ok_or("truncated")? as usize;
    let ranks = u64::decode(&mut s).ok_or("truncated")? as usize;
    if ranks == 0 || rank >= ranks {
        return Err(format!("rank {rank} of {ranks}"));
    }
    Ok((rank, ranks))
}

/// Reads the part file at `path` (see the module docs for what is checked).
pub fn read(path: &Path) -> Result<PartFile> {
    let bad = |what: String| DistError::PartFile {
        path: path.display().to_string(),
        what,
    };
    let b = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    decode(&b).map_err(bad)
}

fn decode(b: &[u8]) -> std::result::Result<PartFile, String> {
    let (rank, ranks) = header(b)?;
    let (body, tail) = b.split_at(b.len() - 8);
    if u64::from_le_bytes(tail.try_into().map_err(|_| "truncated")?) != fnv(body) {
        return Err("the checksum does not match (a damaged or truncated file)".into());
    }
    let mut s = &body[28..];
    let name = Vec::<u8>::decode(&mut s).ok_or("the graph name does not decode")?;
    let graph = String::from_utf8(name).map_err(|_| "the graph name is not UTF-8")?;
    let bounds = Vec::<VertexId>::decode(&mut s).ok_or("the cuts do not decode")?;
    let cuts = Cuts::from_bounds(bounds).ok_or("the cuts are not ranges from 0")?;
    let view = DistView::decode(&mut s)?;
    let n = plexus_engine::program::GraphView::num_vertices(&view);
    if cuts.ranks() != ranks || cuts.bounds()[ranks] as usize != n {
        return Err(format!(
            "the cuts do not cut {n} vertices into {ranks} ranks"
        ));
    }
    let into = decode_lists(&mut s, n)?;
    let out_of = match bool::decode(&mut s).ok_or("truncated")? {
        true => Some(decode_lists(&mut s, n)?),
        false => None,
    };
    if out_of.is_some() != plexus_engine::program::GraphView::is_directed(&view) {
        return Err("the lists do not match the graph's direction".into());
    }
    let ids = match bool::decode(&mut s).ok_or("truncated")? {
        true => Some(decode_ids(&mut s, n)?),
        false => None,
    };
    if !s.is_empty() {
        return Err(format!("{} bytes after the last field", s.len()));
    }
    let part = Part::from_pieces(rank, cuts, into, out_of).ok_or("rank out of range")?;
    Ok(PartFile {
        graph,
        view,
        part,
        ids,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use plexus_graph::{BuildOptions, Graph};

    fn sample() -> (Graph, DistView, Part) {
        let g = Graph::from_weighted_edges(
            5,
            &[
                (0, 1, 1.5),
                (1, 2, 2.0),
                (2, 0, 0.5),
                (3, 4, 1.0),
                (1, 2, 3.0),
            ],
            &BuildOptions::directed(),
        )
        .unwrap();
        let view = DistView::of(&g).unwrap();
        let cuts = Cuts::balanced(&view.total_degrees(), 2);
        let part = Part::from_slices(&g, cuts, 0);
        (g, view, part)
    }

    #[test]
    fn a_written_part_reads_back_equal() {
        let (g, view, part) = sample();
        let dir = std::env::temp_dir().join(format!("plexus-part-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = path(&dir, 0);
        write(&p, "g", &view, &part, Some(g.ids())).unwrap();
        assert_eq!(peek(&p).unwrap(), (0, 2));
        let f = read(&p).unwrap();
        assert_eq!((f.graph.as_str(), &f.view, &f.part), ("g", &view, &part));
        assert_eq!(f.ids.map(|i| i.len()), Some(5));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_damaged_byte_is_refused_without_a_panic() {
        let (g, view, part) = sample();
        let dir = std::env::temp_dir().join(format!("plexus-part-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = path(&dir, 0);
        write(&p, "g", &view, &part, Some(g.ids())).unwrap();
        let good = std::fs::read(&p).unwrap();
        for i in 0..good.len() {
            let mut b = good.clone();
            b[i] ^= 0x5a;
            assert!(decode(&b).is_err(), "byte {i} flipped was accepted");
        }
        for len in 0..good.len() {
            assert!(
                decode(&good[..len]).is_err(),
                "a file cut at {len} was accepted"
            );
        }
        std::fs::write(&p, b"PLXPART\0junk").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("rank-0.plxp"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
