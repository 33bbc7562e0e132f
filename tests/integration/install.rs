//! Installation as users of Rust tools expect it: `--version` naming the build, shell
//! completions and man pages generated from the parser, and build.rs outside a git checkout.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command as Std;

use crate::iocap;

fn stdout_of(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "iocap {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `iocap args..`, which must fail with exit code 2, and returns its stderr.
fn refusal(dir: &Path, args: &[&str]) -> String {
    let out = iocap(dir).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "iocap {args:?}");
    assert!(out.stdout.is_empty(), "iocap {args:?} printed to stdout");
    String::from_utf8(out.stderr).unwrap()
}

/// The visible top-level subcommands, as `iocap --help` lists them.
fn subcommands_in_help() -> Vec<String> {
    let help = stdout_of(&["--help"]);
    let list = help.split("Commands:").nth(1).unwrap();
    let list = list.split("\n\n").next().unwrap();
    list.lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completion_is_valid_and_completes_subcommands() {
    let script = stdout_of(&["completions", "bash"]);
    assert!(script.contains("complete"), "{script}");
    for sub in ["preflight", "run", "sqlio-batch", "man", "completions"] {
        assert!(script.contains(sub), "bash completion lacks {sub}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("iocap.bash");
    std::fs::write(&file, &script).unwrap();
    let check = Std::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(check.status.success(), "bash -n: {check:?}");
    // what a user sees on `iocap pre<TAB>`
    let tab = format!(
        "source {}; COMP_WORDS=(iocap pre); COMP_CWORD=1; COMP_LINE='iocap pre'; \
         COMP_POINT=9; _iocap iocap pre iocap; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display()
    );
    let out = Std::new("bash").arg("-c").arg(&tab).output().unwrap();
    let words = String::from_utf8(out.stdout).unwrap();
    assert_eq!(words.split_whitespace().collect::<Vec<_>>(), ["preflight"]);
}

#[test]
fn zsh_fish_and_powershell_completions_name_the_subcommands() {
    for (shell, marker) in [
        ("zsh", "#compdef iocap"),
        ("fish", "complete -c iocap"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.contains(marker), "{shell}: no {marker}");
        assert!(script.contains("preflight"), "{shell}: no preflight");
    }
}

#[test]
fn an_unknown_shell_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let err = refusal(dir.path(), &["completions", "tcsh"]);
    assert!(err.contains("tcsh") && err.contains("bash"), "{err}");
}

#[test]
fn man_prints_the_page_of_iocap_and_of_a_subcommand() {
    let page = stdout_of(&["man"]);
    assert!(page.starts_with(".TH IOCAP 1 "), "{}", &page[..80]);
    assert!(page.contains(".SH NAME") && page.contains("preflight"));
    let run = stdout_of(&["man", "run"]);
    assert!(run.starts_with(".TH IOCAP-RUN 1 "), "{}", &run[..80]);
    assert!(
        run.contains("write\\-through"),
        "iocap-run(1) lacks --write-through"
    );
    let nested = stdout_of(&["man", "suite", "run"]);
    assert!(
        nested.starts_with(".TH IOCAP-SUITE-RUN 1 "),
        "{}",
        &nested[..80]
    );
}

#[test]
fn man_of_an_unknown_subcommand_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let err = refusal(dir.path(), &["man", "nosuch"]);
    assert!(err.contains("`nosuch`"), "{err}");
    let err = refusal(dir.path(), &["man", "suite", "nosuch"]);
    assert!(err.contains("`suite nosuch`"), "{err}");
    // hidden commands have no page
    let err = refusal(dir.path(), &["man", "store-fill"]);
    assert!(err.contains("store-fill"), "{err}");
}

#[test]
fn man_dir_writes_a_page_per_subcommand_and_names_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man1");
    let said = stdout_of(&["man", "--dir", dir.to_str().unwrap()]);
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(files.contains("iocap.1"));
    for sub in subcommands_in_help() {
        assert!(
            files.contains(&format!("iocap-{sub}.1")),
            "no page for {sub}"
        );
    }
    assert!(
        files.contains("iocap-suite-run.1"),
        "nested pages: {files:?}"
    );
    assert!(!files
        .iter()
        .any(|f| f.contains("store-fill") || f.contains("help")));
    let named: BTreeSet<String> = said
        .lines()
        .map(|l| l.strip_prefix("wrote ").unwrap())
        .map(|p| Path::new(p).file_name().unwrap().to_string_lossy().into())
        .collect();
    assert_eq!(named, files, "stdout names every page written");
    for f in &files {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(text.starts_with(".TH IOCAP"), "{f}");
    }
}

#[test]
fn man_dir_refuses_a_directory_that_is_not_empty() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("iocap.1"), "mine").unwrap();
    let err = refusal(tmp.path(), &["man", "--dir", "."]);
    assert!(err.contains("not empty"), "{err}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("iocap.1")).unwrap(),
        "mine"
    );
}

#[test]
fn man_pages_render_with_man_when_installed() {
    if Std::new("man").arg("--version").output().is_err() {
        crate::skip("man is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("iocap-run.1");
    std::fs::write(&page, stdout_of(&["man", "run"])).unwrap();
    let out = Std::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("NAME") && text.contains("iocap-run"),
        "{text}"
    );
    assert!(text.contains("--write-through") || text.contains("‐‐write‐through"));
}

#[test]
fn version_names_the_commit_and_the_build_date() {
    let v = stdout_of(&["--version"]);
    assert_eq!(stdout_of(&["-V"]), v);
    let rest = v
        .strip_prefix(&format!("iocap {} (", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{v}"));
    let (commit, date) = rest.strip_suffix(")\n").unwrap().split_once(' ').unwrap();
    let head = Std::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short",
            "HEAD",
        ])
        .output();
    match head {
        Ok(h) if h.status.success() => {
            assert_eq!(commit, String::from_utf8_lossy(&h.stdout).trim())
        }
        _ => assert!(commit == "unknown" || commit.len() >= 7, "{v}"),
    }
    let d: Vec<&str> = date.split('-').collect();
    assert_eq!(
        d.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [4, 2, 2],
        "{v}"
    );
    assert!(date.chars().all(|c| c.is_ascii_digit() || c == '-'), "{v}");
}

#[test]
fn version_verbose_names_features_target_rustc_and_io_uring() {
    let v = stdout_of(&["--version", "--verbose"]);
    let first = stdout_of(&["--version"]);
    assert!(v.starts_with(&first), "{v}");
    let field = |name: &str| {
        v.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap_or_else(|| panic!("no {name}: in\n{v}"))
            .trim()
            .to_string()
    };
    // the binary's cargo features (CI runs this test again with `--features mpi`)
    let features = if cfg!(feature = "mpi") { "mpi" } else { "none" };
    assert_eq!(field("features"), features);
    assert!(field("rustc").starts_with("rustc 1."), "{v}");
    if let Ok(o) = Std::new("rustc").arg("-vV").output() {
        let info = String::from_utf8_lossy(&o.stdout);
        let host = info.lines().find_map(|l| l.strip_prefix("host: "));
        assert_eq!(Some(field("target").as_str()), host, "{v}");
    }
    let uring = field("io_uring");
    let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled");
    if disabled.is_ok_and(|d| d.trim() == "2") {
        assert!(uring.starts_with("not available"), "{v}");
    }
    assert!(v.lines().all(|l| l.chars().count() <= 80), "{v}");
    // the engine's probe decides: a kernel without io_uring is named as such
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path())
        .args(["--version", "--verbose"])
        .env("IOCAP_TEST_NO_IO_URING", "1")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("io_uring: not available: disabled by IOCAP_TEST_NO_IO_URING"),
        "{text}"
    );
}

#[test]
fn verbose_without_version_and_no_subcommand_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = refusal(dir.path(), &["--verbose"]);
    assert!(err.contains("--version"), "{err}");
    let err = refusal(dir.path(), &[]);
    assert!(err.contains("subcommand"), "{err}");
    let err = refusal(dir.path(), &["--version", "run"]);
    assert!(err.contains("run"), "{err}");
}

/// build.rs compiled on its own and run as cargo would, in a directory that is not a git
/// checkout (a .crate or a tarball): the build must not fail and says `unknown`.
#[test]
fn build_script_outside_git_says_unknown_and_keeps_source_date_epoch() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("build-script");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs");
    let rustc = Std::new("rustc")
        .args(["--edition", "2021", "-o"])
        .arg(&exe)
        .arg(&src)
        .output();
    let Ok(rustc) = rustc else {
        crate::skip("rustc is not on PATH");
        return;
    };
    assert!(rustc.status.success(), "{rustc:?}");
    let tree = tmp.path().join("iocap-0.1.0");
    std::fs::create_dir(&tree).unwrap();
    let run = |epoch: &str| {
        let out = Std::new(&exe)
            .current_dir(&tree)
            .env("CARGO_MANIFEST_DIR", &tree)
            .env("SOURCE_DATE_EPOCH", epoch)
            .env("TARGET", "x86_64-unknown-linux-gnu")
            .env("RUSTC", "rustc")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let out = run("1764028800");
    assert!(
        out.contains("rustc-env=IOCAP_GIT_COMMIT=unknown\n"),
        "{out}"
    );
    assert!(
        out.contains("rustc-env=IOCAP_BUILD_DATE=2025-11-25\n"),
        "{out}"
    );
    assert!(
        !out.contains(".git"),
        "watches git files outside git: {out}"
    );
    let out = run("soon");
    assert!(out.contains("cargo:warning=SOURCE_DATE_EPOCH"), "{out}");
    // `cargo package` records the commit
    std::fs::write(
        tree.join(".cargo_vcs_info.json"),
        "{\n  \"git\": {\n    \"sha1\": \"1f56bd8e0c3a\"\n  },\n  \"path_in_vcs\": \"\"\n}",
    )
    .unwrap();
    assert!(run("0").contains("IOCAP_GIT_COMMIT=1f56bd8\n"));
    assert!(run("0").contains("IOCAP_BUILD_DATE=1970-01-01\n"));

    // in this checkout: the commit, and cargo watches HEAD through files that exist (a missing
    // one would rebuild on every build)
    let repo = env!("CARGO_MANIFEST_DIR");
    let head = Std::new("git")
        .args(["-C", repo, "rev-parse", "--short", "HEAD"])
        .output();
    let Ok(head) = head.map(|h| String::from_utf8_lossy(&h.stdout).trim().to_string()) else {
        crate::skip("git is not installed");
        return;
    };
    if head.is_empty() {
        crate::skip("this tree is not a git checkout");
        return;
    }
    let out = Std::new(&exe)
        .current_dir(repo)
        .env("CARGO_MANIFEST_DIR", repo)
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(out.contains(&format!("IOCAP_GIT_COMMIT={head}\n")), "{out}");
    let watched: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("cargo:rerun-if-changed="))
        .collect();
    assert!(watched.iter().any(|p| p.ends_with("/HEAD")), "{out}");
    for p in watched {
        assert!(Path::new(repo).join(p).is_file(), "watches missing {p}");
    }
}
