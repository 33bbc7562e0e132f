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
//! - the engine's public modules and its `pub use` list are the ones its front door names
//!   (docs/ARCHITECTURE.md, "Invariants");
//! - platform code lives in `iocap-platform` (docs/ARCHITECTURE.md, "Windows"): no `#[path]`
//!   chooses a file by system elsewhere, and no Windows module appears outside that crate and
//!   the engine's backends but those listed as still to move;
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

/// The engine's front door paragraph of docs/ARCHITECTURE.md's Invariants.
fn front_door(doc: &str) -> &str {
    doc.split("\n- ")
        .find(|p| p.starts_with("**The engine's front door.**"))
        .expect("docs/ARCHITECTURE.md names the engine's front door under Invariants")
}

/// The names a crate root's `pub use` statements export (the last segment, or what `as` renames
/// it to), sorted. A statement starts a line; one level of braces.
fn pub_use_names(lib: &str) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in lib.split(';') {
        let Some(at) = stmt.find("\npub use ") else {
            continue;
        };
        let path = &stmt[at + "\npub use ".len()..];
        let items = match path.find('{') {
            Some(b) => path[b + 1..].trim_end().trim_end_matches('}'),
            None => path,
        };
        for item in items.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let name = item.rsplit(" as ").next().unwrap_or(item);
            out.push(name.rsplit("::").next().unwrap_or(name).trim().to_string());
        }
    }
    out.sort();
    out
}

fn sorted(mut v: Vec<&str>) -> Vec<&str> {
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn the_engine_s_public_modules_are_its_front_door() {
    let lib = read(&root().join("crates/iocap-engine/src/lib.rs"));
    let public: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    let doc = read(&root().join("docs/ARCHITECTURE.md"));
    let named = ticked_after(front_door(&doc), "Its public modules:");
    assert_eq!(
        sorted(public),
        sorted(named),
        "crates/iocap-engine/src/lib.rs's `pub mod`s against the modules docs/ARCHITECTURE.md's \
         front door names: make a new module private (`mod`), or name it there and say why"
    );
}

#[test]
fn the_engine_s_re_exports_are_its_front_door() {
    let lib = read(&root().join("crates/iocap-engine/src/lib.rs"));
    let exported = pub_use_names(&lib);
    let doc = read(&root().join("docs/ARCHITECTURE.md"));
    let named = sorted(ticked_after(front_door(&doc), "Its re-exports:"));
    assert_eq!(
        exported.iter().map(String::as_str).collect::<Vec<_>>(),
        named,
        "crates/iocap-engine/src/lib.rs's `pub use` list against the names docs/ARCHITECTURE.md's \
         front door gives: keep a new item inside the engine, or name it there and say why"
    );
}

#[test]
fn pub_use_names_reads_groups_renames_and_single_paths() {
    let lib = "//! a; pub use in a comment\npub use a::B;\npub use c::{d as e, F,\n    g::H};\n";
    assert_eq!(pub_use_names(lib), ["B", "F", "H", "e"]);
}

/// Windows modules (`mod` under a `cfg` naming `windows`, or `not(target_os = "linux")`)
/// outside `iocap-platform` and the engine's backends, written before the platform crate: the
/// engine's and verify's opens and checks of targets (issue 35's claim reworks them), fsync's
/// and the audit's Windows calls, and the trace's stand-in for Linux's FIEMAP. The list only
/// shrinks.
const WINDOWS_MODULES_TO_MOVE: [&str; 7] = [
    "crates/iocap-audit/src/windows/mod.rs: lsa",
    "crates/iocap-audit/src/windows/mod.rs: read",
    "crates/iocap-engine/src/lock.rs: plat",
    "crates/iocap-engine/src/marker.rs: plat",
    "crates/iocap-engine/src/plat.rs: imp",
    "crates/iocap-fsync/src/lib.rs: measure_windows",
    "crates/iocap-trace/src/filemap/scan.rs: fiemap",
];

/// The module a line declares (`mod x;`, `pub mod x {`, `pub(crate) mod x;`), if any.
fn declared_module(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let t = t
        .strip_prefix("pub ")
        .or_else(|| t.strip_prefix("pub(crate) "))
        .or_else(|| t.strip_prefix("pub(super) "))
        .unwrap_or(t);
    let name = t.strip_prefix("mod ")?;
    let end = name.find([';', ' ', '{'])?;
    Some(&name[..end])
}

/// `file: module` for each Windows module `text` declares, and `file: #[path …]` for each
/// `#[path]` that names anything but a test file (`*_tests.rs`).
fn platform_switches(file: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut windows = false;
    for line in text.lines().map(str::trim) {
        if let Some(path) = line.strip_prefix("#[path = ") {
            if !path
                .trim_end_matches(']')
                .trim_matches('"')
                .ends_with("_tests.rs")
            {
                out.push(format!("{file}: {line}"));
            }
        }
        if line.starts_with("#[cfg(") {
            windows |= line.contains("windows") || line.contains("not(target_os = \"linux\")");
            continue;
        }
        if line.starts_with("#[") || line.starts_with("//") {
            continue;
        }
        if windows {
            if let Some(m) = declared_module(line) {
                out.push(format!("{file}: {m}"));
            }
        }
        windows = false;
    }
    out
}

#[test]
fn platform_code_stays_in_the_platform_crate() {
    let mut files = rust_files(&root().join("src"));
    for c in crates().iter().filter(|c| *c != "iocap-platform") {
        files.extend(rust_files(&root().join("crates").join(c).join("src")));
    }
    let mut found = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        // a backend is one system's by nature (IOCP, io_uring): its file is its switch
        if !rel.starts_with("crates/iocap-engine/src/backend/") {
            found.extend(platform_switches(&rel, &read(&f)));
        }
    }
    let new: Vec<&String> = found
        .iter()
        .filter(|f| !WINDOWS_MODULES_TO_MOVE.contains(&f.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "platform code outside crates/iocap-platform (docs/ARCHITECTURE.md, \"Windows\"): put \
         each system's calls in its sys/linux/ and sys/windows/ files of one name, and re-export \
         them from a neutral module at its root:\n{new:#?}"
    );
    let gone: Vec<&str> = WINDOWS_MODULES_TO_MOVE
        .into_iter()
        .filter(|m| !found.iter().any(|f| f == m))
        .collect();
    assert!(
        gone.is_empty(),
        "moved or renamed, so take them off tests/tidy.rs's WINDOWS_MODULES_TO_MOVE: {gone:?}"
    );
}

#[test]
fn a_path_switch_and_a_windows_module_are_found() {
    let text = "#[cfg(windows)]\n#[path = \"x_win.rs\"]\npub mod x;\n#[cfg(test)]\n\
                #[path = \"x_tests.rs\"]\nmod tests;\n#[cfg(not(target_os = \"linux\"))]\n\
                mod plat {\n}\n#[cfg(target_os = \"linux\")]\nmod linux;\n";
    assert_eq!(
        platform_switches("f.rs", text),
        ["f.rs: #[path = \"x_win.rs\"]", "f.rs: x", "f.rs: plat"]
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
