//! Rules of the code base that a reader would otherwise have to keep checking by hand, after
//! rust-analyzer's tidy test: each one failing names the file and what to change. They read the
//! source tree only (no build, no I/O beyond reading files), in well under a second.
//!
//! - every crate is in docs/ARCHITECTURE.md's map, is built and tested by the README's `cargo
//!   test` (the workspace's default members; iocap-mpi needs an MPI library and is CI's own
//!   suite), and takes the workspace's lints (every `unsafe` block has a `// SAFETY:` comment:
//!   clippy's `undocumented_unsafe_blocks`, denied in Cargo.toml);
//! - `iocap-model` and `iocap-assess` stay pure: no file system, environment, clock or process
//!   calls outside their tests;
//! - `src/cli` stays within its bounds (docs/ARCHITECTURE.md, "Size of the command line");
//! - the engine's public modules are the ones its front door names (docs/ARCHITECTURE.md,
//!   "Invariants");
//! - the model's `String` and `Option<String>` fields are the ones `tests/model_strings.txt`
//!   allows (names, paths, free text): a fixed set of names is an enum (docs/ARCHITECTURE.md,
//!   "Invariants");
//! - a run's part (`preflight`, `cost`, ...) is set through `RunResult::set`, outside tests.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn crates() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").exists())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A file's code before its test module (`#[cfg(test)]` at the start of a line).
fn non_test_code(text: &str) -> &str {
    ["\n#[cfg(test)]", "\n#[cfg(all(test"]
        .iter()
        .filter_map(|m| text.find(m))
        .min()
        .map_or(text, |i| &text[..i])
}

#[test]
fn every_crate_is_in_the_architecture_map() {
    let doc = read(&root().join("docs/ARCHITECTURE.md"));
    let missing: Vec<String> = crates()
        .into_iter()
        .filter(|c| !doc.contains(&format!("| `{c}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "not in docs/ARCHITECTURE.md's crate map (a row `| `name` | one line |`): {missing:?}"
    );
}

/// The names in backticks in `text` after `from`, up to the next full stop.
fn ticked_after<'a>(text: &'a str, from: &str) -> Vec<&'a str> {
    let start = text.find(from).map_or(text.len(), |i| i + from.len());
    let rest = &text[start..];
    let end = rest.find(". ").unwrap_or(rest.len());
    rest[..end].split('`').skip(1).step_by(2).collect()
}

#[test]
fn the_engine_s_public_modules_are_its_front_door() {
    let lib = read(&root().join("crates/iocap-engine/src/lib.rs"));
    let mut public: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    public.dedup(); // devinfo: one per system
    let doc = read(&root().join("docs/ARCHITECTURE.md"));
    let door = doc
        .split("\n- ")
        .find(|p| p.starts_with("**The engine's front door.**"))
        .expect("docs/ARCHITECTURE.md names the engine's front door under Invariants");
    let named = ticked_after(door, "public modules:");
    assert_eq!(
        public, named,
        "crates/iocap-engine/src/lib.rs's `pub mod`s against the modules docs/ARCHITECTURE.md's \
         front door names: make a new module private (`mod`), or name it there and say why"
    );
}

#[test]
fn every_crate_is_tested_by_cargo_test_and_takes_the_workspace_lints() {
    let manifest = read(&root().join("Cargo.toml"));
    let members = &manifest[manifest.find("default-members").expect("default-members")..];
    let members = &members[..members.find(']').unwrap()];
    for c in crates() {
        if c != "iocap-mpi" {
            assert!(
                members.contains(&format!("\"crates/{c}\"")),
                "crates/{c} is not in Cargo.toml's default-members: the README's `cargo test` \
                 would neither build nor test it"
            );
        }
        let own = read(&root().join("crates").join(&c).join("Cargo.toml"));
        assert!(
            own.contains("[lints]\nworkspace = true"),
            "crates/{c}/Cargo.toml lacks `[lints]\\nworkspace = true` (the SAFETY-comment rule)"
        );
    }
}

#[test]
fn model_and_assess_make_no_io_calls() {
    const FORBIDDEN: [&str; 7] = [
        "std::fs::",
        "std::env::",
        "Instant::now",
        "SystemTime",
        "std::process::",
        "std::net::",
        "File::open",
    ];
    // a file's kind is a type of std::fs, classified purely
    const ALLOWED: [&str; 1] = ["std::fs::FileType"];
    let mut found = Vec::new();
    for krate in ["iocap-model", "iocap-assess"] {
        for f in rust_files(&root().join("crates").join(krate).join("src")) {
            let text = read(&f);
            for (n, line) in non_test_code(&text).lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                let mut rest = code.to_string();
                for a in ALLOWED {
                    rest = rest.replace(a, "");
                }
                for bad in FORBIDDEN.iter().filter(|b| rest.contains(*b)) {
                    found.push(format!("{}:{}: {bad}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "iocap-model and iocap-assess are pure (docs/ARCHITECTURE.md): the caller reads files, \
         the clock and the environment and passes what it read in:\n{}",
        found.join("\n")
    );
}

/// Functions of `text` longer than `max` lines: (name, first line, length). A function is a
/// `fn` line and the lines up to the `}` at its indentation (rustfmt's layout).
fn long_functions(text: &str, max: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let is_fn = ["fn ", "pub fn ", "pub(crate) fn ", "pub(super) fn "]
            .iter()
            .any(|p| t.starts_with(p));
        if !is_fn || t.ends_with(';') {
            continue;
        }
        let indent = &l[..l.len() - t.len()];
        let close = format!("{indent}}}");
        if let Some(len) = lines[i..].iter().position(|x| *x == close) {
            if len + 1 > max {
                let name = t.split('(').next().unwrap_or(t).to_string();
                out.push((name, i + 1, len + 1));
            }
        }
    }
    out
}

#[test]
fn the_command_line_stays_within_its_bounds() {
    const TOTAL_LINES: usize = 3_000;
    const FILE_LINES: usize = 300;
    const FN_LINES: usize = 80;
    let mut total = 0;
    let mut over = Vec::new();
    for f in rust_files(&root().join("src/cli")) {
        let text = read(&f);
        let n = text.lines().count();
        total += n;
        if n > FILE_LINES {
            over.push(format!("{}: {n} lines (at most {FILE_LINES})", f.display()));
        }
        for (name, at, len) in long_functions(&text, FN_LINES) {
            over.push(format!(
                "{}:{at}: {name} is {len} lines (at most {FN_LINES})",
                f.display()
            ));
        }
    }
    assert!(
        total <= TOTAL_LINES,
        "src/cli is {total} lines, over its {TOTAL_LINES}: move what is not flags, a call and \
         printing into the library crates (docs/ARCHITECTURE.md, \"Size of the command line\")"
    );
    assert!(over.is_empty(), "{}", over.join("\n"));
}

#[test]
fn a_long_function_is_found_and_a_short_one_is_not() {
    let body = "    let x = 1;\n".repeat(85);
    let text = format!("fn short() {{\n}}\n\npub fn long(a: u8) {{\n{body}}}\n");
    assert_eq!(
        long_functions(&text, 80),
        vec![("pub fn long".to_string(), 4, 87)]
    );
}

/// The `pub` fields typed `String` or `Option<String>` in `text` (a file's code before its
/// tests), as `Struct.field`, each under the last `pub struct` or `pub enum` above it.
fn string_fields(text: &str) -> Vec<String> {
    let mut owner = "";
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        for kw in ["pub struct ", "pub enum "] {
            if let Some(rest) = line.strip_prefix(kw) {
                owner = rest
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .next()
                    .unwrap_or("");
            }
        }
        let Some((name, ty)) = line.strip_prefix("pub ").and_then(|l| l.split_once(": ")) else {
            continue;
        };
        let stringly = matches!(ty.trim_end_matches(','), "String" | "Option<String>");
        if stringly && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            out.push(format!("{owner}.{name}"));
        }
    }
    out
}

#[test]
fn the_model_s_string_fields_are_the_allowed_ones() {
    let list = read(&root().join("tests/model_strings.txt"));
    let allowed: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let src = root().join("crates/iocap-model/src");
    let mut found = Vec::new();
    for f in rust_files(&src) {
        let file = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = read(&f);
        for field in string_fields(non_test_code(&text)) {
            found.push(format!("{file} {field}"));
        }
    }
    let new: Vec<&String> = found
        .iter()
        .filter(|f| !allowed.contains(&f.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "iocap-model has string fields that tests/model_strings.txt does not allow: {new:?}; \
         a fixed set of names is an enum serialising to them (docs/ARCHITECTURE.md, \
         \"Invariants\"), a name, path or free text a line in that file"
    );
    let gone: Vec<&&str> = allowed
        .iter()
        .filter(|a| !found.iter().any(|f| f == *a))
        .collect();
    assert!(
        gone.is_empty(),
        "tests/model_strings.txt lists fields that are no longer strings: {gone:?}; remove them"
    );
}

#[test]
fn a_string_field_is_found_under_its_struct() {
    let text = "pub struct A {\n    pub name: String,\n    pub n: u32,\n}\n\
                pub struct B<T> {\n    pub note: Option<String>,\n    pub tags: Vec<String>,\n\
                    pub(crate) x: String,\n}\n";
    assert_eq!(string_fields(text), ["A.name", "B.note"]);
}

/// The parts of a run, each of one kind (`iocap_model::kind`).
const RUN_PARTS: [&str; 10] = [
    "preflight",
    "cachescan",
    "saturation",
    "cost",
    "fsync",
    "scaleup",
    "verify",
    "suite",
    "workload",
    "replay",
];

#[test]
fn a_run_s_part_is_set_through_its_payload() {
    let model_kind = root().join("crates/iocap-model/src/kind.rs");
    let mut dirs = vec![root().join("src")];
    dirs.extend(
        crates()
            .iter()
            .map(|c| root().join("crates").join(c).join("src")),
    );
    let mut bad = Vec::new();
    for f in dirs.iter().flat_map(|d| rust_files(d)) {
        let name = f.file_name().unwrap().to_string_lossy();
        let in_tests = f.components().any(|c| c.as_os_str() == "tests");
        if f == model_kind || in_tests || name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = read(&f);
        for part in RUN_PARTS {
            if non_test_code(&text).contains(&format!(".{part} = Some(")) {
                bad.push(format!("{}: .{part} = Some(..)", f.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a run's part is set with `run.set(Payload::..)`, which keeps a run to one kind: {bad:?}"
    );
}
