//! Output paths of the commands that write files (`--out`, `--out-dir`).
//!
//! Rules: `-` is standard output; any other path is checked before the
//! command computes anything ([`check`]): its extension, its directory
//! (which must exist and be writable) and what is there now (a regular,
//! writable file or nothing; a symlink's target is written and the link
//! kept). Writes then go through `plexus_graph::export::write_atomically`.
use std::path::{Path, PathBuf};

use anyhow::bail;

/// Whether `path` is standard output (`-`).
pub fn is_stdout(path: &Path) -> bool {
    plexus_graph::export::is_stdout(path)
}

/// Checks `--out PATH` before any work: `-`, or a path whose extension is
/// one of `extensions` (any when empty) and that
/// `plexus_graph::export::check_target` accepts.
pub fn check(path: &Path, extensions: &[&str]) -> anyhow::Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    if !extensions.is_empty() {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if !extensions.contains(&ext.as_str()) {
            let names: Vec<String> = extensions.iter().map(|e| format!(".{e}")).collect();
            bail!(
                "{}: --out must name a {} file, or - for standard output",
                path.display(),
                names.join(" or ")
            );
        }
    }
    plexus_graph::export::check_target(path)?;
    Ok(())
}

/// The file a write to `path` replaces: `path`, or an existing symlink's
/// target; refused when it is not a writable regular file or new file.
/// Removes the temporary files of that name left by dead processes.
pub fn resolve(path: &Path) -> anyhow::Result<PathBuf> {
    let target = plexus_graph::export::check_target(path)?;
    // Temporary files of this name (`.NAME.tmp-PID`) left by dead processes.
    if let (Some(dir), Some(name)) = (target.parent(), target.file_name()) {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let prefix = format!(".{}.tmp-", name.to_string_lossy());
        plexus_graph::export::remove_stale(dir, &prefix);
    }
    Ok(target)
}

/// Whether a job name can be a file name as it is: letters, digits, `-`,
/// `_` and `.`, not starting with `.`, at most 100 bytes.
fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// The result file of job `i` among jobs named `names`, inside `dir`:
/// `NAME.csv` when the name is a safe file name ([`safe_name`]) that no
/// other job has; otherwise the name with other characters replaced by
/// `_`, then `~` and the job's number (`~` is in no safe name, so these
/// never meet another job's file, and never leave `dir`).
pub fn job_file<'a>(dir: &Path, names: impl IntoIterator<Item = &'a str>, i: usize) -> PathBuf {
    let names: Vec<&str> = names.into_iter().collect();
    let name = names.get(i).copied().unwrap_or("");
    let unique = names.iter().filter(|&&n| n == name).count() == 1;
    if safe_name(name) && unique {
        return dir.join(format!("{name}.csv"));
    }
    let mut s: String = name
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    s = s.trim_start_matches('.').to_string();
    dir.join(format!("{s}~{}.csv", i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_become_distinct_file_names_inside_the_directory() {
        let dir = Path::new("out");
        let names = ["bfs", "dup", "dup", "../x", "/abs/y", ".hidden", "a b"];
        let files: Vec<PathBuf> = (0..names.len()).map(|i| job_file(dir, names, i)).collect();
        assert_eq!(files[0], dir.join("bfs.csv"));
        assert_eq!(files[1], dir.join("dup~2.csv"));
        assert_eq!(files[2], dir.join("dup~3.csv"));
        for f in &files {
            assert_eq!(f.parent(), Some(dir), "{}", f.display());
            let name = f.file_name().unwrap().to_string_lossy();
            assert!(!name.starts_with('.'), "{name}");
        }
        let mut unique = files.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), files.len());
    }
}
