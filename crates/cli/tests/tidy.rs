//! House rules over every crate's sources (`crates/*/src/**/*.rs`), as
//! rust-analyzer's tidy test keeps its own:
//! - no function longer than [`MAX_FN_LINES`] lines (from its `fn` line to
//!   its closing brace): split it into named steps;
//! - comments state rules, units and invariants, not history: no reference
//!   to a numbered work session or round (`session 23`, `round 5`) and no
//!   citation of `RESULTS.md` or `NOTES.md` (measurements live in bench/);
//! - every `unsafe` block, `unsafe impl` and `unsafe fn` has its argument:
//!   a `// SAFETY:` comment (or, for an `unsafe fn`, a `# Safety` doc
//!   section) within the few lines above it.
//!
//! [`ALLOWED`] lists the exceptions still to fix, each with its reason; an
//! entry that no longer matches anything fails the test, so the list only
//! shrinks.
use std::path::{Path, PathBuf};

/// The longest a function may be, in lines.
const MAX_FN_LINES: usize = 150;

/// How many lines above an `unsafe` its `// SAFETY:` comment may start.
const SAFETY_REACH: usize = 6;

/// Known exceptions: (file relative to the repository root, rule, reason).
/// Rules: `long-fn NAME`, `history`, `unsafe`.
const ALLOWED: &[(&str, &str, &str)] = &[];

/// One broken rule: file, line, rule, detail.
struct Finding {
    file: String,
    line: usize,
    rule: String,
    detail: String,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/cli sits two levels below the root")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every `crates/*/src/**/*.rs`, relative to the root.
fn sources(root: &Path) -> Vec<(String, String)> {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    let mut files = Vec::new();
    for c in crates {
        rust_files(&c, &mut files);
    }
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The source with comments, string and character literals blanked
/// (newlines kept), and the comments alone, one string per line.
fn split_code_and_comments(src: &str) -> (String, Vec<String>) {
    let b: Vec<char> = src.chars().collect();
    let mut code = String::with_capacity(src.len());
    let mut comments = vec![String::new()];
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, c)| b.get(i + k) == Some(&c));
    while i < b.len() {
        let c = b[i];
        if at(i, "//") {
            while i < b.len() && b[i] != '\n' {
                comments.last_mut().unwrap().push(b[i]);
                code.push(' ');
                i += 1;
            }
            continue;
        }
        if at(i, "/*") {
            let mut depth = 0;
            while i < b.len() {
                if at(i, "/*") {
                    depth += 1;
                    code.push_str("  ");
                    comments.last_mut().unwrap().push_str("/*");
                    i += 2;
                    continue;
                }
                if at(i, "*/") {
                    depth -= 1;
                    code.push_str("  ");
                    comments.last_mut().unwrap().push_str("*/");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                    continue;
                }
                if b[i] == '\n' {
                    comments.push(String::new());
                } else {
                    comments.last_mut().unwrap().push(b[i]);
                }
                code.push(blank(b[i]));
                i += 1;
            }
            continue;
        }
        let ident_before = i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_');
        // Raw strings: r"…", r#"…"#, br"…".
        if !ident_before && (c == 'r' || (c == 'b' && b.get(i + 1) == Some(&'r'))) {
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) == Some(&'"') {
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let mut k = j + 1;
                while k < b.len() && !at(k, &close) {
                    k += 1;
                }
                let end = (k + close.chars().count()).min(b.len());
                for &ch in &b[i..end] {
                    code.push(blank(ch));
                    if ch == '\n' {
                        comments.push(String::new());
                    }
                }
                i = end;
                continue;
            }
        }
        if c == '"' {
            let mut k = i + 1;
            while k < b.len() && b[k] != '"' {
                if b[k] == '\\' {
                    k += 1;
                }
                k += 1;
            }
            let end = (k + 1).min(b.len());
            for &ch in &b[i..end] {
                code.push(blank(ch));
                if ch == '\n' {
                    comments.push(String::new());
                }
            }
            i = end;
            continue;
        }
        if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime.
            let len = if b.get(i + 1) == Some(&'\\') {
                (i + 2..b.len().min(i + 12))
                    .find(|&k| b[k] == '\'')
                    .map(|k| k + 1 - i)
            } else if b.get(i + 2) == Some(&'\'') {
                Some(3)
            } else {
                None
            };
            if let Some(len) = len {
                code.extend(std::iter::repeat_n(' ', len));
                i += len;
                continue;
            }
        }
        if c == '\n' {
            comments.push(String::new());
        }
        code.push(c);
        i += 1;
    }
    (code, comments)
}

/// Functions longer than [`MAX_FN_LINES`]: (line of `fn`, name, lines).
fn long_functions(code: &str) -> Vec<(usize, String, usize)> {
    let b: Vec<char> = code.chars().collect();
    let line_of = |i: usize| b[..i].iter().filter(|&&c| c == '\n').count() + 1;
    let mut out = Vec::new();
    let mut i = 0;
    while i + 3 < b.len() {
        let word_start = i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_');
        if !(word_start && b[i] == 'f' && b[i + 1] == 'n' && b[i + 2].is_whitespace()) {
            i += 1;
            continue;
        }
        let mut j = i + 2;
        while j < b.len() && b[j].is_whitespace() {
            j += 1;
        }
        let name: String = b[j..]
            .iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        // The body's `{`, unless a `;` ends a declaration first.
        let mut k = j;
        while k < b.len() && b[k] != '{' && b[k] != ';' {
            k += 1;
        }
        if k >= b.len() || b[k] == ';' || name.is_empty() {
            i = j;
            continue;
        }
        let mut depth = 0usize;
        let mut end = k;
        for (off, &ch) in b[k..].iter().enumerate() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + off;
                        break;
                    }
                }
                _ => {}
            }
        }
        let (first, last) = (line_of(i), line_of(end));
        if last - first + 1 > MAX_FN_LINES {
            out.push((first, name, last - first + 1));
        }
        i = j;
    }
    out
}

/// Whether `text` names a numbered session or round ("session 23",
/// "Sessions 5", "round 12").
fn numbered_history(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    for word in ["sessions ", "session ", "rounds ", "round "] {
        let mut from = 0;
        while let Some(p) = lower[from..].find(word) {
            let start = from + p;
            let after = start + word.len();
            let word_start = start == 0 || !lower.as_bytes()[start - 1].is_ascii_alphanumeric();
            if word_start && lower.as_bytes().get(after).is_some_and(u8::is_ascii_digit) {
                let end = (after + 4).min(text.len());
                return Some(text.get(start..end).unwrap_or(word).to_string());
            }
            from = after;
        }
    }
    None
}

/// `unsafe` blocks, impls and fns without their argument above them.
fn unargued_unsafe(code_lines: &[&str], src_lines: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in code_lines.iter().enumerate() {
        let Some(p) = line.find("unsafe") else {
            continue;
        };
        let rest = line[p + "unsafe".len()..].trim_start();
        let kind = if rest.starts_with('{') {
            "unsafe block"
        } else if rest.starts_with("fn ") {
            "unsafe fn"
        } else if rest.starts_with("impl") {
            "unsafe impl"
        } else {
            continue;
        };
        let above = &src_lines[n.saturating_sub(SAFETY_REACH)..=n];
        let argued = above.iter().any(|l| l.contains("// SAFETY:"))
            || (kind == "unsafe fn" && {
                // The doc comment and attributes right above the fn.
                let mut k = n;
                let mut found = false;
                while k > 0 {
                    k -= 1;
                    let t = src_lines[k].trim_start();
                    if t.starts_with("///") || t.starts_with("#[") {
                        found |= t.contains("# Safety");
                    } else {
                        break;
                    }
                }
                found
            });
        if !argued {
            out.push((n + 1, kind.to_string()));
        }
    }
    out
}

fn check(file: &str, src: &str) -> Vec<Finding> {
    let (code, comments) = split_code_and_comments(src);
    let mut found = Vec::new();
    let mut add = |line: usize, rule: String, detail: String| {
        found.push(Finding {
            file: file.to_string(),
            line,
            rule,
            detail,
        })
    };
    for (line, name, len) in long_functions(&code) {
        add(
            line,
            format!("long-fn {name}"),
            format!("`{name}` is {len} lines (at most {MAX_FN_LINES})"),
        );
    }
    for (n, c) in comments.iter().enumerate() {
        if let Some(what) = numbered_history(c) {
            add(
                n + 1,
                "history".into(),
                format!("numbered session or round: \"{what}\""),
            );
        }
        for log in ["RESULTS.md", "NOTES.md"] {
            if c.contains(log) {
                add(n + 1, "history".into(), format!("cites {log}"));
            }
        }
    }
    let code_lines: Vec<&str> = code.lines().collect();
    let src_lines: Vec<&str> = src.lines().collect();
    for (line, kind) in unargued_unsafe(&code_lines, &src_lines) {
        add(
            line,
            "unsafe".into(),
            format!("{kind} without a `// SAFETY:` comment above"),
        );
    }
    found
}

#[test]
fn every_source_file_keeps_the_house_rules() {
    let root = repo_root();
    let files = sources(&root);
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut broken = Vec::new();
    let mut used = vec![false; ALLOWED.len()];
    for (file, src) in &files {
        for f in check(file, src) {
            match ALLOWED
                .iter()
                .position(|(p, r, _)| *p == f.file && *r == f.rule)
            {
                Some(i) => used[i] = true,
                None => broken.push(format!("{}:{}: {}: {}", f.file, f.line, f.rule, f.detail)),
            }
        }
    }
    for (i, (p, r, _)) in ALLOWED.iter().enumerate() {
        if !used[i] {
            broken.push(format!(
                "{p}: allow-list entry `{r}` matches nothing: remove it"
            ));
        }
    }
    assert!(
        broken.is_empty(),
        "house rules broken:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_checks_catch_what_they_are_for() {
    let long = format!(
        "fn big() {{\n{}}}\n",
        "    let x = 1;\n".repeat(MAX_FN_LINES)
    );
    let f = check("x.rs", &long);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].rule, "long-fn big");
    let short = format!("fn ok() {{\n{}}}\n", "    let s = \"{{\";\n".repeat(10));
    assert!(check("x.rs", &short).is_empty());
    let history = "/// Faster (bench/NOTES.md, session 31).\nfn f() {}\n// Round 2 of the plan.\n";
    let rules: Vec<String> = check("x.rs", history).into_iter().map(|f| f.rule).collect();
    assert_eq!(rules, ["history", "history", "history"]);
    assert!(check(
        "x.rs",
        "// the sessions of a user; a round trip\nfn f() {}\n"
    )
    .is_empty());
    let bare = "fn f(v: &mut Vec<u8>) {\n    unsafe { v.set_len(0) };\n}\n";
    assert_eq!(check("x.rs", bare)[0].rule, "unsafe");
    let argued =
        "fn f(v: &mut Vec<u8>) {\n    // SAFETY: 0 <= len.\n    unsafe { v.set_len(0) };\n}\n";
    assert!(check("x.rs", argued).is_empty());
    let doc = "/// Adds.\n///\n/// # Safety\n/// `p` is valid.\nunsafe fn f(p: *const u8) {}\n";
    assert!(check("x.rs", doc).is_empty());
    assert!(check("x.rs", "const S: &str = \"unsafe { }\";\n").is_empty());
}
