//! cpu0's data cache sizes as Linux's sysfs reports them
//! (`/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}`): what
//! the tile build sizes its blocks by (L2) and the job manager its chunk
//! scans (the last level). Every function returns `None` off Linux or when
//! sysfs cannot be read.

use std::path::Path;

/// `(level, bytes)` of each data or unified cache of cpu0, in sysfs order,
/// read once per process: the sizes do not change while it runs, and
/// reading sysfs costs a measurable share of a short PageRank run.
fn data_caches() -> &'static [(u32, u64)] {
    static CACHES: std::sync::OnceLock<Vec<(u32, u64)>> = std::sync::OnceLock::new();
    CACHES.get_or_init(read_data_caches)
}

/// [`data_caches`] from sysfs.
fn read_data_caches() -> Vec<(u32, u64)> {
    let dir = Path::new("/sys/devices/system/cpu/cpu0/cache");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut caches = Vec::new();
    for entry in entries.flatten() {
        let read = |name: &str| std::fs::read_to_string(entry.path().join(name)).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        if kind.trim() == "Instruction" {
            continue;
        }
        if let (Ok(level), Some(bytes)) = (level.trim().parse::<u32>(), parse_size(size.trim())) {
            caches.push((level, bytes));
        }
    }
    caches
}

/// Bytes of cpu0's data or unified cache of `level` (1: L1d, 2: L2).
pub fn level_bytes(level: u32) -> Option<u64> {
    data_caches()
        .iter()
        .find(|&&(l, _)| l == level)
        .map(|&(_, bytes)| bytes)
}

/// Bytes of one core's L2.
pub fn l2_bytes() -> Option<u64> {
    level_bytes(2)
}

/// Bytes of cpu0's last-level data or unified cache (the first listed of
/// the highest level).
pub fn last_level_bytes() -> Option<u64> {
    let mut best: Option<(u32, u64)> = None;
    for &(level, bytes) in data_caches() {
        if !matches!(best, Some((l, _)) if l >= level) {
            best = Some((level, bytes));
        }
    }
    best.map(|(_, bytes)| bytes)
}

/// Parses sysfs sizes such as `32768K`, `4M`, `512`.
fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1u64 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes_parse() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("4M"), Some(4 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("1024K"), Some(1 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn the_last_level_is_at_least_l2_where_sysfs_says_both() {
        if let (Some(l2), Some(last)) = (l2_bytes(), last_level_bytes()) {
            assert!(last >= l2, "{last} < {l2}");
        }
    }
}
