//! The bytes of the log: file header, frames, records and ops.
//!
//! All integers are little-endian.
//!
//! | where        | bytes | field                                              |
//! |--------------|-------|----------------------------------------------------|
//! | file header  | 8     | magic `PLEXUSL\0`                                  |
//! |              | 4     | format, u32 = 1                                    |
//! |              | 4     | reserved, written 0, ignored on read               |
//! | each frame   | 4     | payload length `L`, u32, 12 ≤ L ≤ [`MAX_PAYLOAD`]  |
//! |              | 4     | CRC-32C (Castagnoli) of the payload, u32           |
//! |              | L     | payload                                            |
//! | payload      | 8     | version, u64                                       |
//! |              | 4     | op count, u32                                      |
//! |              | …     | ops                                                |
//! | op           | 1     | tag: 1 AddVertex(id), 2 RemoveVertex(id), 3 AddEdge(u, v, opt weight), 4 RemoveEdge(u, v), 5 SetWeight(u, v, weight) |
//! | id           | 1     | kind: 0 integer then i64; 1 string then u32 byte length and UTF-8 bytes |
//! | weight       | 8     | f64                                                |
//! | opt weight   | 1     | presence: 0 none; 1 then a weight                  |
//!
//! Decoding checks every length against the bytes present, so it never
//! panics and never allocates more than the input can hold.
use crate::error::{Result, StoreError};
use crate::ops::Op;
use plexus_graph::{ExternalId, Weight};

/// The magic bytes that open every log file.
pub const MAGIC: [u8; 8] = *b"PLEXUSL\0";
/// The format number this build writes and reads.
pub const FORMAT: u32 = 1;
/// Bytes of the file header before the first frame.
pub const HEADER_LEN: u64 = 16;
/// Bytes of a frame before its payload (length and checksum).
pub const FRAME_HEADER_LEN: u64 = 8;
/// The smallest payload: a version and an op count.
pub const MIN_PAYLOAD: u32 = 12;
/// The largest payload accepted, in bytes (1 GiB); a longer length field is
/// damage, and [`encode_frame`] refuses records that would need one.
pub const MAX_PAYLOAD: u32 = 1 << 30;

const TAG_ADD_VERTEX: u8 = 1;
const TAG_REMOVE_VERTEX: u8 = 2;
const TAG_ADD_EDGE: u8 = 3;
const TAG_REMOVE_EDGE: u8 = 4;
const TAG_SET_WEIGHT: u8 = 5;
const ID_INT: u8 = 0;
const ID_STR: u8 = 1;
/// The fewest bytes an op takes (a tag and an integer id).
pub(crate) const MIN_OP_BYTES: usize = 10;

/// One committed transaction as the log stores it.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The version the transaction created; strictly increasing in a log.
    pub version: u64,
    /// The changes, in the order the transaction made them.
    pub ops: Vec<Op>,
}

/// Why a payload did not decode. Offsets count from the payload's first byte.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The payload ended inside a field.
    #[error("payload ends at byte {at} inside {what}")]
    Truncated { what: &'static str, at: usize },
    /// An op tag outside 1..=5.
    #[error("unknown op tag {tag} at payload byte {at}")]
    BadTag { tag: u8, at: usize },
    /// An id kind other than 0 (integer) or 1 (string).
    #[error("unknown id kind {kind} at payload byte {at}")]
    BadIdKind { kind: u8, at: usize },
    /// A weight presence byte other than 0 or 1.
    #[error("weight presence byte {byte} at payload byte {at} (0 or 1 expected)")]
    BadPresence { byte: u8, at: usize },
    /// A string id that is not UTF-8.
    #[error("string id at payload byte {at} is not UTF-8")]
    BadUtf8 { at: usize },
    /// Bytes left over after the last op.
    #[error("{count} bytes after the last op")]
    Trailing { count: usize },
}

/// The 16-byte file header.
pub fn file_header() -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&FORMAT.to_le_bytes());
    h
}

/// Appends `record` as one frame (length, checksum, payload) to `out`.
/// On error (`RecordTooLarge`: more than `u32::MAX` ops, a string id over
/// `u32::MAX` bytes, or a payload over [`MAX_PAYLOAD`]) `out` is unchanged.
pub fn encode_frame(record: &Record, out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    let res = encode_frame_inner(record, out, start);
    if res.is_err() {
        out.truncate(start);
    }
    res
}

fn encode_frame_inner(record: &Record, out: &mut Vec<u8>, start: usize) -> Result<()> {
    out.extend_from_slice(&[0u8; FRAME_HEADER_LEN as usize]);
    let body = out.len();
    out.extend_from_slice(&record.version.to_le_bytes());
    let count = u32::try_from(record.ops.len()).map_err(|_| too_large(record.ops.len() as u64))?;
    out.extend_from_slice(&count.to_le_bytes());
    for op in &record.ops {
        encode_op(op, out)?;
    }
    let len = out.len() - body;
    let len32 = u32::try_from(len)
        .ok()
        .filter(|&l| l <= MAX_PAYLOAD)
        .ok_or_else(|| too_large(len as u64))?;
    let crc = crc32c::crc32c(&out[body..]);
    out[start..start + 4].copy_from_slice(&len32.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

fn too_large(bytes: u64) -> StoreError {
    StoreError::RecordTooLarge {
        bytes,
        max: u64::from(MAX_PAYLOAD),
    }
}

fn encode_op(op: &Op, out: &mut Vec<u8>) -> Result<()> {
    match op {
        Op::AddVertex(id) => {
            out.push(TAG_ADD_VERTEX);
            encode_id(id, out)
        }
        Op::RemoveVertex(id) => {
            out.push(TAG_REMOVE_VERTEX);
            encode_id(id, out)
        }
        Op::AddEdge { u, v, w } => {
            out.push(TAG_ADD_EDGE);
            encode_id(u, out)?;
            encode_id(v, out)?;
            match w {
                None => out.push(0),
                Some(w) => {
                    out.push(1);
                    out.extend_from_slice(&w.to_le_bytes());
                }
            }
            Ok(())
        }
        Op::RemoveEdge { u, v } => {
            out.push(TAG_REMOVE_EDGE);
            encode_id(u, out)?;
            encode_id(v, out)
        }
        Op::SetWeight { u, v, w } => {
            out.push(TAG_SET_WEIGHT);
            encode_id(u, out)?;
            encode_id(v, out)?;
            out.extend_from_slice(&w.to_le_bytes());
            Ok(())
        }
    }
}

fn encode_id(id: &ExternalId, out: &mut Vec<u8>) -> Result<()> {
    match id {
        ExternalId::Int(i) => {
            out.push(ID_INT);
            out.extend_from_slice(&i.to_le_bytes());
        }
        ExternalId::Str(s) => {
            let len = u32::try_from(s.len()).map_err(|_| too_large(s.len() as u64))?;
            out.push(ID_STR);
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
    }
    Ok(())
}

/// Decodes one payload (the bytes after a frame's length and checksum).
/// Never panics; any byte string gives a record or a [`DecodeError`].
pub fn decode_payload(payload: &[u8]) -> std::result::Result<Record, DecodeError> {
    let mut r = Reader {
        buf: payload,
        at: 0,
    };
    let version = r.u64("the version")?;
    let count = r.u32("the op count")? as usize;
    // Never trust the count for the allocation: each op takes at least
    // MIN_OP_BYTES, so the bytes present bound how many there can be.
    let mut ops = Vec::with_capacity(count.min(r.left() / MIN_OP_BYTES));
    for _ in 0..count {
        ops.push(r.op()?);
    }
    if r.left() > 0 {
        return Err(DecodeError::Trailing { count: r.left() });
    }
    Ok(Record { version, ops })
}

/// A bounds-checked cursor over a payload.
struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

type Decoded<T> = std::result::Result<T, DecodeError>;

impl Reader<'_> {
    fn left(&self) -> usize {
        self.buf.len() - self.at
    }

    fn take<const N: usize>(&mut self, what: &'static str) -> Decoded<[u8; N]> {
        let bytes = self
            .buf
            .get(self.at..self.at.saturating_add(N))
            .and_then(|s| <[u8; N]>::try_from(s).ok())
            .ok_or(DecodeError::Truncated { what, at: self.at })?;
        self.at += N;
        Ok(bytes)
    }

    fn u8(&mut self, what: &'static str) -> Decoded<u8> {
        Ok(self.take::<1>(what)?[0])
    }

    fn u32(&mut self, what: &'static str) -> Decoded<u32> {
        Ok(u32::from_le_bytes(self.take(what)?))
    }

    fn u64(&mut self, what: &'static str) -> Decoded<u64> {
        Ok(u64::from_le_bytes(self.take(what)?))
    }

    fn weight(&mut self) -> Decoded<Weight> {
        Ok(f64::from_le_bytes(self.take("a weight")?))
    }

    fn id(&mut self) -> Decoded<ExternalId> {
        let at = self.at;
        match self.u8("an id kind")? {
            ID_INT => Ok(ExternalId::Int(i64::from_le_bytes(
                self.take("an integer id")?,
            ))),
            ID_STR => {
                let len = self.u32("a string id length")? as usize;
                let start = self.at;
                let bytes = self.buf.get(start..start.saturating_add(len)).ok_or(
                    DecodeError::Truncated {
                        what: "a string id",
                        at: start,
                    },
                )?;
                let s =
                    std::str::from_utf8(bytes).map_err(|_| DecodeError::BadUtf8 { at: start })?;
                self.at += len;
                Ok(ExternalId::Str(s.to_owned()))
            }
            kind => Err(DecodeError::BadIdKind { kind, at }),
        }
    }

    fn op(&mut self) -> Decoded<Op> {
        let at = self.at;
        let op = match self.u8("an op tag")? {
            TAG_ADD_VERTEX => Op::AddVertex(self.id()?),
            TAG_REMOVE_VERTEX => Op::RemoveVertex(self.id()?),
            TAG_ADD_EDGE => {
                let (u, v) = (self.id()?, self.id()?);
                let pat = self.at;
                let w = match self.u8("a weight presence byte")? {
                    0 => None,
                    1 => Some(self.weight()?),
                    byte => return Err(DecodeError::BadPresence { byte, at: pat }),
                };
                Op::AddEdge { u, v, w }
            }
            TAG_REMOVE_EDGE => {
                let (u, v) = (self.id()?, self.id()?);
                Op::RemoveEdge { u, v }
            }
            TAG_SET_WEIGHT => {
                let (u, v) = (self.id()?, self.id()?);
                Op::SetWeight {
                    u,
                    v,
                    w: self.weight()?,
                }
            }
            tag => return Err(DecodeError::BadTag { tag, at }),
        };
        Ok(op)
    }
}
