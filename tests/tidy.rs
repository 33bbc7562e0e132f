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
//! - a run's part (`preflight`, `cost`, ...) is set through `RunResult::set`, outside tests;
//! - no crate has an import cycle between its top-level modules: their `crate::` paths outside
//!   tests run one way (docs/ARCHITECTURE.md, "Invariants").

use std::collections::{BTreeMap, BTreeSet};
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
/// outside `iocap-platform` and the engine's backends, written before the platform crate. Every
/// one has moved (the engine's target opens, fsync's durable writes, the audit's Windows calls
/// and the trace's FIEMAP are the platform's `target`, `durable`, `volume`/`power`/`rights` and
/// `extents`), so none is allowed; the list stays for a module that truly cannot move, named
/// here with why.
const WINDOWS_MODULES_TO_MOVE: [&str; 0] = [];

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

/// `text` as a build outside tests compiles it, as far as its paths go: without comments and
/// without its test items (`#[cfg(test)]` or `#[cfg(all(test, ..))]` at any indentation: one
/// line ending in `;` or `}`, else up to the `}` or `};` at its indentation, rustfmt's layout).
/// Other `cfg`s stay: a path in the Windows build or the Linux one is a path.
fn code_outside_tests(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if !t.starts_with("#[cfg(test)]") && !t.starts_with("#[cfg(all(test") {
            out.push_str(line.split("//").next().unwrap_or(""));
            out.push('\n');
            continue;
        }
        let indent = &line[..line.len() - t.len()];
        let mut item = lines.by_ref().skip_while(|l| {
            let l = l.trim_start();
            l.starts_with("#[") || l.starts_with("//")
        });
        if let Some(first) = item.next().map(str::trim_end) {
            if !first.ends_with(';') && !first.ends_with('}') {
                let ends = [format!("{indent}}}"), format!("{indent}}};")];
                item.find(|l| ends.contains(&l.trim_end().to_string()));
            }
        }
    }
    out
}

/// The modules that `text` (a crate root or a module's file) declares in files of their own
/// (`mod x;` starting a line), outside tests.
fn file_modules(text: &str) -> Vec<String> {
    code_outside_tests(text)
        .lines()
        .filter(|l| !l.starts_with(' ') && l.trim_end().ends_with(';'))
        .filter_map(declared_module)
        .map(str::to_string)
        .collect()
}

/// The files of module `name`, declared by a file whose modules live in `dir` (`dir/name.rs`
/// or `dir/name/mod.rs`), and of the modules under it, each with its depth below the crate
/// root (`depth` for the module's own file).
fn module_files(dir: &Path, name: &str, depth: usize, out: &mut Vec<(PathBuf, usize)>) {
    let own = dir.join(format!("{name}.rs"));
    let file = if own.exists() {
        own
    } else {
        dir.join(name).join("mod.rs")
    };
    for sub in file_modules(&read(&file)) {
        module_files(&dir.join(name), &sub, depth + 1, out);
    }
    out.push((file, depth));
}

/// The first names of a path's rest after its root: `x` of `x::y`, `x` and `y` of
/// `{x, y::{z, w}}`.
fn first_segments(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)];
    };
    let mut out = vec![ident(group)];
    let mut depth = 0;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => out.push(ident(&group[i + 1..])),
            _ => {}
        }
    }
    out
}

/// The first name of each path from the crate root in `code`, a file `depth` modules below it:
/// `crate::x`, each name of `crate::{x, y::z}`, and a `super::` chain that climbs back to the
/// root (`super::x` in a top-level module's own file, `super::super::x` in its child's). A
/// shorter `super::` stays inside the top-level module, so it is no edge between two.
fn root_names(code: &str, depth: usize) -> BTreeSet<String> {
    let climb = "super::".repeat(depth);
    let mut out = BTreeSet::new();
    for root in ["crate::", climb.as_str()] {
        for (at, _) in code.match_indices(root) {
            let before = code[..at].chars().next_back();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                out.extend(first_segments(&code[at + root.len()..]));
            }
        }
    }
    out
}

/// A path relative to the repository, with `/`.
fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

/// The edges between the top-level modules of the crate(s) rooted in `src` (`lib.rs`,
/// `main.rs`): (from, to), each with the files of `from` whose non-test code names `to`. The
/// modules are those the root declares in files (`mod x;`), each read with every file under it.
fn module_edges(src: &Path) -> BTreeMap<(String, String), BTreeSet<String>> {
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for lib in ["lib.rs", "main.rs"].map(|f| src.join(f)) {
        if !lib.exists() {
            continue;
        }
        let tops = file_modules(&read(&lib));
        for top in &tops {
            let mut files = Vec::new();
            module_files(src, top, 1, &mut files);
            for (file, depth) in files {
                let names = root_names(&code_outside_tests(&read(&file)), depth);
                for to in names.into_iter().filter(|n| n != top && tops.contains(n)) {
                    edges
                        .entry((top.clone(), to))
                        .or_default()
                        .insert(rel(&file));
                }
            }
        }
    }
    edges
}

/// The strongly connected components of more than one node in the graph of `edges` (from,
/// to), each sorted: every node of one reaches every other, so each is an import cycle.
fn cycles<'a>(edges: &[(&'a str, &'a str)]) -> Vec<Vec<&'a str>> {
    let reach = |from: &'a str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for &(a, b) in edges {
                if a == n && seen.insert(b) {
                    todo.push(b);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&str, BTreeSet<&str>> =
        edges.iter().map(|&(a, _)| (a, reach(a))).collect();
    let mut out: Vec<Vec<&str>> = Vec::new();
    for (&n, from_n) in &reached {
        if from_n.contains(n) && !out.iter().any(|c| c.contains(&n)) {
            let back = |m: &&str| reached.get(m).is_some_and(|r| r.contains(n));
            out.push(from_n.iter().copied().filter(back).collect());
        }
    }
    out
}

#[test]
fn no_crate_has_an_import_cycle_between_its_top_level_modules() {
    let mut srcs = vec![root().join("src")];
    srcs.extend(
        crates()
            .iter()
            .map(|c| root().join("crates").join(c).join("src")),
    );
    let mut found = Vec::new();
    for src in srcs {
        let edges = module_edges(&src);
        let pairs: Vec<(&str, &str)> = edges
            .keys()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        for cycle in cycles(&pairs) {
            found.push(format!("{}: {}", rel(&src), cycle.join(", ")));
            for ((from, to), files) in &edges {
                if cycle.contains(&from.as_str()) && cycle.contains(&to.as_str()) {
                    let files: Vec<&str> = files.iter().map(String::as_str).collect();
                    found.push(format!("    {from} -> {to}: {}", files.join(", ")));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "import cycles between a crate's top-level modules (docs/ARCHITECTURE.md, \
         \"Invariants\"): move what both sides use into a lower module of its own, or into the \
         module that owns it, so that the imports run one way (the files named hold each \
         edge's `crate::` or root-climbing `super::` paths):\n{}",
        found.join("\n")
    );
}

#[test]
fn an_import_cycle_is_found_and_a_one_way_graph_passes() {
    let tangled = [
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("d", "e"),
        ("e", "d"),
    ];
    assert_eq!(cycles(&tangled), [vec!["a", "b", "c"], vec!["d", "e"]]);
    assert!(cycles(&[("a", "b"), ("b", "c"), ("a", "c")]).is_empty());
}

#[test]
fn a_file_s_paths_from_the_root_are_found_outside_tests_and_comments() {
    let text = "//! [`crate::doc`]\nuse crate::{a, b::{c, d}, e::f};\nuse super::g;\n\
                fn h() {\n    crate::i::j(); // crate::k\n}\n#[cfg(test)]\nuse crate::l;\n\
                pub(crate) fn n() {}\n#[cfg(test)]\nmod tests {\n    use crate::m;\n}\n";
    let names = root_names(&code_outside_tests(text), 1);
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["a", "b", "e", "g", "i"]
    );
    // in a top-level module's child, `super::` is that module; `super::super::` the root
    let child = root_names("use super::x;\nuse super::super::y;\n", 2);
    assert_eq!(child.into_iter().collect::<Vec<_>>(), ["y"]);
}
