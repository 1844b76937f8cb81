//! The README's tour runs as written: every `$ plexus …` line of the
//! ```` ```console ```` blocks under its "Tour" heading is run, in order, with
//! the built binary in one scratch directory (the working directory, with
//! `--data-dir` inside it), and must behave as the README shows.
//!
//! What "as shown" means:
//! - **Exit status:** 2 when the shown output has a line starting with
//!   `error:`, else 0.
//! - **Output:** every line shown under a command must appear in what the
//!   command printed (stdout, then stderr), in the same order; lines the
//!   README leaves out are allowed, and a shown line `...` stands for any
//!   number of lines, and a shown line ending in ` …` matches any printed
//!   line that starts with the text before it. Durations (`323.0 ms`,
//!   `5.5 s`, `61 µs`) and thread counts (`2 threads`) are compared as
//!   placeholders, since they differ between machines; every other
//!   character must match, so vertex and edge counts, iteration counts,
//!   ranks and verdicts are checked.
//! - **Redirection:** `> FILE` at the end of a command writes its stdout to
//!   `FILE` in the scratch directory, as a shell would.
//!
//! Paths under `../shared/data/` and `docs/examples/` (which resolve from
//! the repository root in the README) are rewritten to absolute paths (the
//! repository's sibling `shared/data`, its own `docs/examples`). Without that directory the test is skipped with a
//! message, as the other tests that need it are.
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_plexus");
const SHARED_PREFIX: &str = "../shared/data/";
/// Files of the repository the tour names (relative to its root).
const EXAMPLES_PREFIX: &str = "docs/examples/";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One `$ plexus …` line of the tour and the output shown under it.
#[derive(Debug)]
struct Step {
    /// The command as written, without the `$ ` prompt.
    line: String,
    /// The README line number of the command, for messages.
    at: usize,
    shown: Vec<String>,
}

/// The steps of the ```` ```console ```` blocks between the first heading
/// whose title contains "Tour" and the next heading of the same or a higher
/// level.
fn tour_steps(readme: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut level = None::<usize>;
    // Inside a fenced block: whether it is a console block.
    let mut fence = None::<bool>;
    for (i, raw) in readme.lines().enumerate() {
        let line = raw.trim_end();
        if line.starts_with("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(line == "```console"),
            };
            continue;
        }
        if fence.is_none() && line.starts_with('#') {
            let hashes = line.chars().take_while(|&c| c == '#').count();
            match level {
                None if line.to_lowercase().contains("tour") => level = Some(hashes),
                Some(l) if hashes <= l => break,
                _ => {}
            }
            continue;
        }
        if level.is_none() || fence != Some(true) {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            steps.push(Step {
                line: cmd.trim().to_string(),
                at: i + 1,
                shown: Vec::new(),
            });
        } else if let Some(step) = steps.last_mut() {
            step.shown.push(line.to_string());
        }
    }
    steps
}

/// Splits a tour command into words (no quoting is used in the tour) and an
/// optional stdout redirection target.
fn parse(line: &str) -> (Vec<String>, Option<String>) {
    let mut words: Vec<String> = line.split_whitespace().map(String::from).collect();
    let mut redirect = None;
    if let Some(pos) = words.iter().position(|w| w == ">") {
        assert_eq!(
            pos + 2,
            words.len(),
            "'> FILE' must end the command: {line}"
        );
        redirect = words.pop();
        words.pop();
    }
    (words, redirect)
}

const UNITS: &[&str] = &["ns", "µs", "us", "ms", "s"];

/// `line` with every duration replaced by `<t>` and every thread count by
/// `<n> thread(s)`.
fn normalize(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_number = c.is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric());
        if !starts_number {
            out.push(c);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len()
            && (chars[j].is_ascii_digit()
                || ((chars[j] == '.' || chars[j] == ',')
                    && chars.get(j + 1).is_some_and(char::is_ascii_digit)))
        {
            j += 1;
        }
        let mut k = j;
        while k < chars.len() && chars[k] == ' ' {
            k += 1;
        }
        let word_end = (k..chars.len())
            .find(|&e| !chars[e].is_alphanumeric() && chars[e] != 'µ')
            .unwrap_or(chars.len());
        let word: String = chars[k..word_end].iter().collect();
        if UNITS.contains(&word.as_str()) {
            out.push_str("<t>");
            i = word_end;
        } else if word == "thread" || word == "threads" {
            out.push_str("<n> threads");
            i = word_end;
        } else {
            out.extend(&chars[i..j]);
            i = j;
        }
    }
    out
}

/// Whether the shown lines appear in `printed` in order (`...` matches any
/// run of lines, a line ending in ` …` any line with that prefix); on
/// failure, the first shown line that was not found.
fn missing_line<'a>(shown: &'a [String], printed: &str) -> Option<&'a str> {
    let printed: Vec<String> = printed.lines().map(|l| normalize(l.trim_end())).collect();
    let mut next = 0;
    for want in shown {
        if want.trim() == "..." || want.trim().is_empty() {
            continue;
        }
        let want = want.trim_end();
        let (want_n, prefix) = match want.strip_suffix(" …") {
            Some(start) => (normalize(start), true),
            None => (normalize(want), false),
        };
        let matches = |l: &String| {
            if prefix {
                l.starts_with(&want_n)
            } else {
                *l == want_n
            }
        };
        match printed[next..].iter().position(matches) {
            Some(p) => next += p + 1,
            None => return Some(want),
        }
    }
    None
}

#[test]
fn the_readme_tour_runs_as_written() {
    let root = repo_root();
    let shared = root.join("..").join("shared").join("data");
    if !shared.is_dir() {
        eprintln!(
            "skipping the README tour: {} is absent (the tour imports from ../shared/data)",
            shared.display()
        );
        return;
    }
    let shared = shared.canonicalize().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let steps = tour_steps(&readme);
    assert!(
        steps.len() >= 8,
        "README.md: expected the tour's ```console blocks under a 'Tour' heading, found {} commands",
        steps.len()
    );
    assert!(
        steps[0].line.contains(SHARED_PREFIX),
        "README.md:{}: the tour should start by importing a graph from {SHARED_PREFIX}",
        steps[0].at
    );

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("plexus-data");
    for step in &steps {
        let (words, redirect) = parse(&step.line);
        assert_eq!(
            words.first().map(String::as_str),
            Some("plexus"),
            "README.md:{}: a tour command must run plexus: {}",
            step.at,
            step.line
        );
        let args: Vec<String> = words[1..]
            .iter()
            .map(|w| match w.strip_prefix(SHARED_PREFIX) {
                Some(rest) => shared.join(rest).to_string_lossy().into_owned(),
                None if w.starts_with(EXAMPLES_PREFIX) => {
                    repo_root().join(w).to_string_lossy().into_owned()
                }
                None => w.clone(),
            })
            .collect();
        let out = Command::new(BIN)
            .current_dir(dir.path())
            .env_remove("PLEXUS_DATA")
            .env_remove("PLEXUS_TRACE")
            .arg("--data-dir")
            .arg(&data)
            .args(&args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The README shows the paths as written.
        let examples = repo_root().join(EXAMPLES_PREFIX);
        let printed = format!("{stdout}{stderr}")
            .replace(&format!("{}/", shared.display()), SHARED_PREFIX)
            .replace(&examples.to_string_lossy().into_owned(), EXAMPLES_PREFIX);
        let want_error = step.shown.iter().any(|l| l.starts_with("error:"));
        let want_code = if want_error { 2 } else { 0 };
        assert_eq!(
            out.status.code(),
            Some(want_code),
            "README.md:{}: `{}` exited with {:?}, the README expects {want_code}\n--- printed:\n{printed}",
            step.at,
            step.line,
            out.status.code()
        );
        if let Some(line) = missing_line(&step.shown, &printed) {
            panic!(
                "README.md:{}: `{}` did not print the line the README shows:\n  {line}\n--- printed:\n{printed}",
                step.at, step.line
            );
        }
        if let Some(file) = redirect {
            std::fs::write(dir.path().join(file), out.stdout.as_slice()).unwrap();
        }
    }
}

#[test]
fn durations_and_thread_counts_are_placeholders_and_counts_are_not() {
    assert_eq!(
        normalize("imported x as 'y': 7,115 vertices in 12.5 ms + 3 ms write"),
        "imported x as 'y': 7,115 vertices in <t> + <t> write"
    );
    assert_eq!(
        normalize("bfs on 'g' (7 vertices, 2 threads): load 61 µs, compute 1.0 s"),
        "bfs on 'g' (7 vertices, <n> threads): load <t>, compute <t>"
    );
    assert_eq!(normalize("max_depth: 8"), "max_depth: 8");
    assert_eq!(
        normalize("kron16 in 3 supersteps"),
        "kron16 in 3 supersteps"
    );
    let shown = vec!["a 1 ms".to_string(), "...".to_string(), "c 3".to_string()];
    assert_eq!(missing_line(&shown, "a 2 ms\nb\nc 3\n"), None);
    assert_eq!(missing_line(&shown, "c 3\na 2 ms\n"), Some("c 3"));
    let prefix = vec!["mode shared: 8 of 8 jobs …".to_string()];
    assert_eq!(
        missing_line(&prefix, "mode shared: 8 of 8 jobs done\n"),
        None
    );
    assert_eq!(
        missing_line(&prefix, "mode shared: 7 of 8 jobs done\n"),
        Some("mode shared: 8 of 8 jobs …")
    );
}

#[test]
fn the_tour_parser_reads_console_blocks_under_the_tour_heading_only() {
    let md = "# X\n```console\n$ plexus list\n```\n## Tour\ntext\n```console\n$ plexus info g\nvertices 3\n$ plexus mix --graph g > jobs.toml\n```\n```sh\n# a comment, not a heading\n$ plexus not-this\n```\n## Links\n```console\n$ plexus nor-this\n```\n";
    let steps = tour_steps(md);
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert_eq!(steps[0].line, "plexus info g");
    assert_eq!(steps[0].shown, vec!["vertices 3".to_string()]);
    assert_eq!(
        parse(&steps[1].line),
        (
            vec!["plexus".into(), "mix".into(), "--graph".into(), "g".into()],
            Some("jobs.toml".into())
        )
    );
}
