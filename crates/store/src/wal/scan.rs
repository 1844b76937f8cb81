//! Reading a whole log: which records are good, and whether the bytes after
//! the last good record are a torn tail (dropped) or corruption (refused).
//!
//! The rule: a bad frame (cut short, a length out of range, a checksum
//! mismatch) is a *torn tail* when no valid frame starts at any later byte
//! offset, that is when only nothing, zeros or unreadable bytes follow it;
//! this is what a crash in the middle of a write (or a file extended but
//! not yet filled) leaves. A bad frame with a valid frame after it is
//! *corruption*: records that were acknowledged would be lost. A frame with
//! a valid checksum that does not decode, or whose version is not above the
//! previous record's, is always corruption.
use super::codec::{
    decode_payload, Record, FORMAT, FRAME_HEADER_LEN, HEADER_LEN, MAGIC, MAX_PAYLOAD, MIN_OP_BYTES,
    MIN_PAYLOAD,
};
use std::ops::Range;

/// A damaged stretch at the end of a log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset in the file where the first bad frame (or header) starts.
    pub offset: u64,
    /// Bytes from `offset` to the end of the file.
    pub bytes: u64,
    /// What is wrong there, in words.
    pub reason: String,
}

/// The verdict on the bytes after the last good record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tail {
    /// The file ends exactly after the last good record.
    Clean,
    /// A torn tail: drop it.
    Torn(Damage),
    /// Corruption: refuse to open.
    Corrupt(Damage),
}

/// One good frame.
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    pub record: Record,
    /// The frame's bytes in the file (header and payload).
    pub span: Range<u64>,
}

/// What a whole file holds.
#[derive(Clone, Debug)]
pub(crate) struct Scan {
    /// The file header is missing or torn: the file must be (re)started.
    pub needs_header: bool,
    pub frames: Vec<Frame>,
    /// The offset just after the last good frame (or after the header).
    pub good_end: u64,
    pub tail: Tail,
}

/// Reads a whole log image. Never panics.
pub(crate) fn scan(bytes: &[u8]) -> Scan {
    let total = bytes.len() as u64;
    let mut out = Scan {
        needs_header: false,
        frames: Vec::new(),
        good_end: HEADER_LEN,
        tail: Tail::Clean,
    };
    if let Some(tail) = check_header(bytes) {
        out.good_end = 0;
        if let Tail::Torn(_) | Tail::Clean = tail {
            out.needs_header = true;
        }
        out.tail = tail;
        return out;
    }
    let mut at = HEADER_LEN;
    let mut last: Option<u64> = None;
    while at < total {
        let bad = match frame_at(bytes, at) {
            Ok(payload) => match decode_payload(payload) {
                Ok(record) if last.is_some_and(|l| record.version <= l) => {
                    let reason = format!(
                        "version {} follows version {}; versions must increase",
                        record.version,
                        last.unwrap_or_default()
                    );
                    out.tail = Tail::Corrupt(damage(at, total, reason));
                    return out;
                }
                Ok(record) => {
                    let end = at + FRAME_HEADER_LEN + payload.len() as u64;
                    last = Some(record.version);
                    out.frames.push(Frame {
                        record,
                        span: at..end,
                    });
                    out.good_end = end;
                    at = end;
                    continue;
                }
                Err(e) => {
                    let reason =
                        format!("the checksum matches but the record does not decode: {e}");
                    out.tail = Tail::Corrupt(damage(at, total, reason));
                    return out;
                }
            },
            Err(reason) => reason,
        };
        out.tail = match valid_frame_after(bytes, at + 1, last) {
            Some(next) => Tail::Corrupt(damage(
                at,
                total,
                format!("{bad}, and a valid record follows at byte {next}"),
            )),
            None => Tail::Torn(damage(at, total, bad)),
        };
        return out;
    }
    out
}

fn damage(offset: u64, total: u64, reason: String) -> Damage {
    Damage {
        offset,
        bytes: total - offset,
        reason,
    }
}

/// `None` when the header is whole and right; otherwise the verdict on the
/// file: empty (`Clean`, a fresh file), torn (a prefix of a header, or
/// zeros), or corrupt (not a Plexus log, or another format).
fn check_header(bytes: &[u8]) -> Option<Tail> {
    let total = bytes.len() as u64;
    if bytes.is_empty() {
        return Some(Tail::Clean);
    }
    let header = super::codec::file_header();
    let prefix_len = bytes.len().min(header.len());
    let torn_header = bytes.len() < header.len() && bytes == &header[..prefix_len];
    if torn_header || bytes.iter().all(|&b| b == 0) {
        let reason = "the file header was cut short by a crash".to_owned();
        return Some(Tail::Torn(damage(0, total, reason)));
    }
    if bytes.len() < header.len() || bytes[..8] != MAGIC {
        let reason = "not a Plexus log (the file does not start with PLEXUSL\\0)".to_owned();
        return Some(Tail::Corrupt(damage(0, total, reason)));
    }
    let format = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if format != FORMAT {
        let reason = format!("log format {format}; this build reads format {FORMAT}");
        return Some(Tail::Corrupt(damage(8, total - 8, reason)));
    }
    None
}

/// The payload of the frame at `at` when its header, length and checksum
/// hold; otherwise why not.
fn frame_at(bytes: &[u8], at: u64) -> Result<&[u8], String> {
    let total = bytes.len() as u64;
    let left = total - at;
    if left < FRAME_HEADER_LEN {
        return Err(format!("the frame header is cut short ({left} of 8 bytes)"));
    }
    let a = at as usize;
    let len = u32::from_le_bytes([bytes[a], bytes[a + 1], bytes[a + 2], bytes[a + 3]]);
    let crc = u32::from_le_bytes([bytes[a + 4], bytes[a + 5], bytes[a + 6], bytes[a + 7]]);
    if len < MIN_PAYLOAD {
        return Err(format!(
            "frame length {len} is below the minimum {MIN_PAYLOAD}"
        ));
    }
    if len > MAX_PAYLOAD {
        return Err(format!(
            "frame length {len} is above the maximum {MAX_PAYLOAD}"
        ));
    }
    let room = left - FRAME_HEADER_LEN;
    if u64::from(len) > room {
        return Err(format!(
            "the frame of {len} bytes runs past the end of the file ({room} bytes left)"
        ));
    }
    let start = a + FRAME_HEADER_LEN as usize;
    let payload = &bytes[start..start + len as usize];
    let actual = crc32c::crc32c(payload);
    if actual != crc {
        return Err(format!(
            "checksum mismatch (stored {crc:#010x}, computed {actual:#010x})"
        ));
    }
    Ok(payload)
}

/// The first offset at or after `from` where a frame with a valid checksum,
/// a decodable payload and a version above `last` starts.
///
/// Every byte offset is a candidate, so cheap structural filters (the
/// length fits, the version is above `last`, the op count fits the length,
/// the first op's tag and id kind are valid) come before the checksum; the
/// scan stops at the first valid frame, so it reads at most the bytes up to
/// it (for a torn tail: the rest of one frame).
fn valid_frame_after(bytes: &[u8], from: u64, last: Option<u64>) -> Option<u64> {
    let total = bytes.len() as u64;
    let min_frame = FRAME_HEADER_LEN + u64::from(MIN_PAYLOAD);
    let mut at = from;
    while at + min_frame <= total {
        if plausible_frame(bytes, at as usize, last) {
            if let Ok(payload) = frame_at(bytes, at) {
                if decode_payload(payload).is_ok() {
                    return Some(at);
                }
            }
        }
        at += 1;
    }
    None
}

/// Whether the bytes at `a` (with at least a minimal frame's bytes after
/// it) could start a frame following version `last`, by its fixed fields.
fn plausible_frame(bytes: &[u8], a: usize, last: Option<u64>) -> bool {
    let word = |i: usize, n: usize| {
        bytes[i..i + n]
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
    };
    let len = word(a, 4);
    let body = a + FRAME_HEADER_LEN as usize;
    if len < u64::from(MIN_PAYLOAD) || (body as u64) + len > bytes.len() as u64 {
        return false;
    }
    if last.is_some_and(|l| word(body, 8) <= l) {
        return false;
    }
    let count = word(body + 8, 4);
    let ops_bytes = len - u64::from(MIN_PAYLOAD);
    if count == 0 {
        return ops_bytes == 0;
    }
    if count.saturating_mul(MIN_OP_BYTES as u64) > ops_bytes {
        return false;
    }
    let first_op = body + MIN_PAYLOAD as usize;
    (1..=5).contains(&bytes[first_op]) && bytes[first_op + 1] <= 1
}
