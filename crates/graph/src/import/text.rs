//! Reading text inputs in parallel: files are cut into blocks at line
//! boundaries (plain files through a memory map, `.gz`/`.zst` through a
//! streaming decoder), blocks are parsed in parallel, and errors carry the
//! file's line number.
use std::fs::File;
use std::io::Read;
use std::path::Path;

use rayon::prelude::*;

use super::Progress;
use crate::{GraphError, Result};

/// Size of a parse block in bytes.
const BLOCK: usize = 4 << 20;

/// Compression of an input file, from its name (or magic bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// Detects compression from the extension, falling back to magic bytes.
pub fn compression_of(path: &Path) -> Compression {
    let name = path.to_string_lossy().to_ascii_lowercase();
    if name.ends_with(".gz") {
        return Compression::Gzip;
    }
    if name.ends_with(".zst") || name.ends_with(".zstd") {
        return Compression::Zstd;
    }
    let mut magic = [0u8; 4];
    if let Ok(mut f) = File::open(path) {
        if f.read_exact(&mut magic).is_ok() {
            if magic[..2] == [0x1f, 0x8b] {
                return Compression::Gzip;
            }
            if magic == [0x28, 0xb5, 0x2f, 0xfd] {
                return Compression::Zstd;
            }
        }
    }
    Compression::None
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

/// Opens `path` as a decompressed byte stream.
pub fn open_stream(path: &Path) -> Result<Box<dyn Read + Send>> {
    let f = File::open(path).map_err(|e| GraphError::io(path, e))?;
    let f = std::io::BufReader::with_capacity(1 << 20, f);
    Ok(match compression_of(path) {
        Compression::None => Box::new(f),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(f)),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(f).map_err(|e| GraphError::io(path, e))?,
        ),
    })
}

fn stream_error(path: &Path, e: std::io::Error) -> GraphError {
    let c = compression_of(path);
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

/// Cuts `path` into line-aligned blocks and parses them in parallel with
/// `parse(block, first_line_hint)`. `skip_lines` lines at the start of the
/// file are not given to the parser (already read by a header reader).
/// Returns the parsed values in file order, or the first error with its
/// absolute line number.
pub fn parse_blocks<T, F>(
    path: &Path,
    skip_lines: u64,
    progress: &dyn Progress,
    parse: F,
) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(&[u8]) -> std::result::Result<Parsed<T>, BlockError> + Sync,
{
    let mut out = Vec::new();
    let mut line_base = 0u64;
    let mut first = true;
    let handle = |batch: Vec<&[u8]>, out: &mut Vec<T>, line_base: &mut u64| -> Result<()> {
        let bytes: u64 = batch.iter().map(|b| b.len() as u64).sum();
        let results: Vec<_> = batch.par_iter().map(|b| parse(b)).collect();
        for r in results {
            match r {
                Ok(p) => {
                    *line_base += p.lines;
                    out.push(p.value);
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
    let skip = |data: &[u8], first: &mut bool, line_base: &mut u64| -> usize {
        if !*first {
            return 0;
        }
        *first = false;
        let mut pos = 0;
        for _ in 0..skip_lines {
            match memchr(b'\n', &data[pos..]) {
                Some(i) => pos += i + 1,
                None => pos = data.len(),
            }
            *line_base += 1;
        }
        pos
    };
    {
        // Plain files are streamed too (not memory-mapped), so the input's
        // pages do not stay resident beside the parsed edges.
        let total = match compression_of(path) {
            Compression::None => std::fs::metadata(path).map(|m| m.len()).ok(),
            _ => None,
        };
        progress.begin("reading", total);
        let mut reader = open_stream(path)?;
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
                        Err(e) => return Err(stream_error(path, e)),
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
            let s = skip(&batch_bufs[0], &mut first, &mut line_base);
            let mut views: Vec<&[u8]> = batch_bufs.iter().map(|b| b.as_slice()).collect();
            views[0] = &views[0][s..];
            handle(views, &mut out, &mut line_base)?;
        }
    }
    Ok(out)
}

#[inline]
pub fn memchr(c: u8, s: &[u8]) -> Option<usize> {
    s.iter().position(|&x| x == c)
}

/// Reads the first lines of a (possibly compressed) file, for headers.
pub fn read_head_lines(path: &Path, max_lines: usize) -> Result<Vec<String>> {
    use std::io::BufRead;
    let r = std::io::BufReader::new(open_stream(path)?);
    let mut v = Vec::new();
    for line in r.lines().take(max_lines) {
        v.push(line.map_err(|e| stream_error(path, e))?);
    }
    Ok(v)
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
    // parser would give, and cheaper (bench/NOTES.md, "Parsing weights").
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

/// Shows a token in an error message (lossy, shortened).
pub fn show(t: &[u8]) -> String {
    let s = String::from_utf8_lossy(t);
    if s.len() > 40 {
        format!("{}…", &s[..40])
    } else {
        s.to_string()
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
