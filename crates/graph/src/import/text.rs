//! Reading text inputs in parallel: an input (a file, a FIFO, a process
//! substitution or `-` for standard input) is opened once and read as one
//! stream, decompressed when its first bytes are a gzip or zstd magic
//! number (the name does not matter); it is cut into blocks at line
//! boundaries, blocks are parsed in parallel, and errors carry the line number.
use std::fs::File;
use std::io::{BufRead, Read};
use std::path::Path;

use rayon::prelude::*;

use super::Progress;
use crate::{GraphError, Result};

/// Size of a parse block in bytes.
const BLOCK: usize = 4 << 20;

/// Compression of an input, from its magic bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// Bytes read ahead at open: the magic numbers, and a Matrix Market banner.
const HEAD: usize = 64;

impl Compression {
    /// Whether `head` is the start of a gzip or zstd magic number.
    fn is_magic_prefix(head: &[u8]) -> bool {
        [&[0x1f, 0x8b][..], &[0x28, 0xb5, 0x2f, 0xfd][..]]
            .iter()
            .any(|m| m.starts_with(&head[..head.len().min(m.len())]))
    }
    /// The compression whose magic number `head` starts with.
    pub fn of_magic(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// Whether `path` names standard input (`-`).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// An opened input: its decompressed bytes, buffered, with what is known
/// about it. Opening reads nothing twice, so pipes and FIFOs work.
pub struct Input {
    /// The decompressed bytes.
    pub reader: Box<dyn BufRead + Send>,
    /// The compression found in the first bytes.
    pub compression: Compression,
    /// The size in bytes of an uncompressed regular file (for progress).
    pub size: Option<u64>,
}

impl Input {
    /// The first bytes of the decompressed stream, without consuming them
    /// (fewer when the input is shorter).
    pub fn peek(&mut self) -> std::io::Result<&[u8]> {
        self.reader.fill_buf()
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reader.read(buf)
    }
}

/// Opens `path` (`-`: standard input) as a decompressed stream; a directory
/// or a missing file is an error naming it.
pub fn open_input(path: &Path) -> Result<Input> {
    let (mut raw, size): (Box<dyn Read + Send>, Option<u64>) = if is_stdin(path) {
        (Box::new(std::io::stdin()), None)
    } else {
        let f = File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => GraphError::bad_input(path, "no such file"),
            _ => GraphError::io(path, e),
        })?;
        let meta = f.metadata().map_err(|e| GraphError::io(path, e))?;
        if meta.is_dir() {
            return Err(GraphError::bad_input(
                path,
                "is a directory, expected a file",
            ));
        }
        (Box::new(f), meta.is_file().then_some(meta.len()))
    };
    // The first bytes (the magic number, and enough to tell a format by)
    // are read from the stream and put back in front of it.
    let mut magic = Vec::with_capacity(HEAD);
    while magic.len() < HEAD {
        let mut b = [0u8; HEAD];
        match raw.read(&mut b[..HEAD - magic.len()]) {
            Ok(0) => break,
            Ok(k) => magic.extend_from_slice(&b[..k]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(GraphError::io(path, e)),
        }
    }
    let compression = Compression::of_magic(&magic);
    if magic.len() < 4 && !magic.is_empty() && Compression::is_magic_prefix(&magic) {
        return Err(GraphError::bad_input(
            path,
            "truncated or corrupt compressed data: the file ends inside its magic number",
        ));
    }
    let raw = std::io::BufReader::with_capacity(1 << 20, std::io::Cursor::new(magic).chain(raw));
    let reader: Box<dyn BufRead + Send> = match compression {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(std::io::BufReader::new(
            flate2::bufread::MultiGzDecoder::new(raw),
        )),
        Compression::Zstd => Box::new(std::io::BufReader::new(
            zstd::stream::read::Decoder::with_buffer(raw).map_err(|e| GraphError::io(path, e))?,
        )),
    };
    Ok(Input {
        reader,
        compression,
        size: size.filter(|_| compression == Compression::None),
    })
}

/// The file name without a compression suffix, lower-cased (for format detection).
pub fn base_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    for suf in [".gz", ".zst", ".zstd"] {
        if let Some(s) = name.strip_suffix(suf) {
            return s.to_string();
        }
    }
    name
}

/// An error reading `path`'s stream: corrupt compressed data or an I/O error.
pub(crate) fn stream_error(path: &Path, c: Compression, e: std::io::Error) -> GraphError {
    if c != Compression::None {
        GraphError::bad_input(
            path,
            format!("truncated or corrupt {:?} data: {e}", c).to_lowercase(),
        )
    } else {
        GraphError::io(path, e)
    }
}

/// The outcome of parsing one block: a value, the number of lines it held,
/// or an error at a line of the block (1-based within the block).
pub struct Parsed<T> {
    pub value: T,
    pub lines: u64,
}

/// A parse error inside a block: line within the block (1-based), message.
pub type BlockError = (u64, String);

/// Cuts `input` (opened from `path`) into line-aligned blocks and parses
/// them in parallel with `parse(block)`; `lines_before` lines were already
/// read from it (a header). Returns the parsed values in input order, or the
/// first error with its absolute line number.
pub fn parse_blocks<T, F>(
    input: Input,
    path: &Path,
    lines_before: u64,
    progress: &dyn Progress,
    parse: F,
) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(&[u8]) -> std::result::Result<Parsed<T>, BlockError> + Sync,
{
    let mut out = Vec::new();
    parse_blocks_each(input, path, lines_before, progress, parse, |v| {
        out.push(v);
        Ok(())
    })?;
    Ok(out)
}

/// [`parse_blocks`] handing each parsed block to `sink` in input order
/// instead of keeping them all (a few blocks are in memory at a time).
pub fn parse_blocks_each<T, F>(
    input: Input,
    path: &Path,
    lines_before: u64,
    progress: &dyn Progress,
    parse: F,
    mut sink: impl FnMut(T) -> Result<()>,
) -> Result<()>
where
    T: Send,
    F: Fn(&[u8]) -> std::result::Result<Parsed<T>, BlockError> + Sync,
{
    let mut line_base = lines_before;
    let mut handle = |batch: Vec<Vec<u8>>, line_base: &mut u64| -> Result<()> {
        let bytes: u64 = batch.iter().map(|b| b.len() as u64).sum();
        let results: Vec<_> = batch.par_iter().map(|b| parse(b)).collect();
        for r in results {
            match r {
                Ok(p) => {
                    *line_base += p.lines;
                    sink(p.value)?;
                }
                Err((line, msg)) => {
                    return Err(GraphError::parse(
                        path.to_path_buf(),
                        *line_base + line,
                        msg,
                    ))
                }
            }
        }
        progress.advance(bytes, 0);
        Ok(())
    };
    // Plain files are streamed too (not memory-mapped), so the input's
    // pages do not stay resident beside the parsed edges.
    progress.begin("reading", input.size);
    let compression = input.compression;
    let mut reader = input.reader;
    let mut carry: Vec<u8> = Vec::new();
    let per_batch = rayon::current_num_threads() * 2;
    let mut eof = false;
    while !eof {
        let mut batch_bufs: Vec<Vec<u8>> = Vec::with_capacity(per_batch);
        while batch_bufs.len() < per_batch && !eof {
            let mut buf = std::mem::take(&mut carry);
            let have = buf.len();
            buf.resize(have + BLOCK, 0);
            let mut filled = have;
            while filled < buf.len() {
                match reader.read(&mut buf[filled..]) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(k) => filled += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(stream_error(path, compression, e)),
                }
            }
            buf.truncate(filled);
            if !eof {
                // Keep the partial last line for the next block.
                match buf.iter().rposition(|&c| c == b'\n') {
                    Some(i) => carry = buf.split_off(i + 1),
                    None => {
                        carry = buf;
                        continue;
                    }
                }
            }
            if !buf.is_empty() {
                batch_bufs.push(buf);
            }
        }
        if batch_bufs.is_empty() {
            break;
        }
        handle(batch_bufs, &mut line_base)?;
    }
    Ok(())
}

#[inline]
pub fn memchr(c: u8, s: &[u8]) -> Option<usize> {
    s.iter().position(|&x| x == c)
}

/// Reads one line (up to and without its `\n` or `\r\n`) from `input`;
/// `None` at the end.
pub fn read_line(input: &mut Input, path: &Path) -> Result<Option<String>> {
    let mut buf = Vec::new();
    let k = input
        .reader
        .read_until(b'\n', &mut buf)
        .map_err(|e| stream_error(path, input.compression, e))?;
    if k == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

/// Tokenises one line on ASCII whitespace.
#[inline]
pub fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|c| c.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
}

/// Parses a signed decimal integer token.
#[inline]
pub fn parse_i64(t: &[u8]) -> Option<i64> {
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut x: i64 = 0;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        x = x.checked_mul(10)?.checked_add(d as i64)?;
    }
    Some(if neg { -x } else { x })
}

/// Parses a finite float weight token.
pub fn parse_weight(t: &[u8]) -> std::result::Result<f64, String> {
    // Unsigned integers of up to 15 digits (most weights in practice) are
    // below 2^53, so the integer converts to exactly the f64 that the float
    // parser would give, and cheaper.
    if !t.is_empty() && t.len() <= 15 && t.iter().all(u8::is_ascii_digit) {
        let x = t.iter().fold(0u64, |x, &c| x * 10 + u64::from(c - b'0'));
        return Ok(x as f64);
    }
    let s = std::str::from_utf8(t).map_err(|_| "weight is not valid UTF-8".to_string())?;
    let w: f64 = s
        .parse()
        .map_err(|_| format!("expected a numeric weight, found '{s}'"))?;
    if !w.is_finite() {
        return Err(format!("weight '{s}' is not a finite number"));
    }
    Ok(w)
}

/// Shows a token in an error message: lossy UTF-8, at most 40 characters.
pub fn show(t: &[u8]) -> String {
    let s = String::from_utf8_lossy(t);
    match s.char_indices().nth(40) {
        // Cut at a character boundary, never inside one.
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_weights_parse_to_the_same_f64_as_the_float_parser() {
        let mut x = 1u64;
        let mut tokens: Vec<String> = ["0", "7", "255", "00012", "999999999999999"]
            .iter()
            .map(|t| t.to_string())
            .collect();
        for _ in 0..2000 {
            // A spread of magnitudes up to 15 digits.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            tokens.push((x % 10u64.pow(1 + (x >> 60) as u32 % 15)).to_string());
        }
        // Forms the integer path leaves to the float parser.
        for t in ["1234567890123456", "+5", "-0", "-3", "2.5", "1e3"] {
            tokens.push(t.to_string());
        }
        for t in &tokens {
            let want: f64 = t.parse().unwrap();
            let got = parse_weight(t.as_bytes()).unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "token {t}");
        }
        assert!(parse_weight(b"").is_err());
        assert!(parse_weight(b"12a").is_err());
        assert!(parse_weight(b"inf").is_err());
    }
}
