//! Issue 14: what a store must not let out or in. A PostgreSQL password, in any form of
//! connection string libpq takes, is never printed and no conninfo string becomes a file; the
//! password may come from `PGPASSWORD` or a password file; terminal escape sequences in stored
//! strings reach no terminal raw; a store whose `iocap_meta` is gone is refused in a line. Issue
//! 23: nor do those of suite files, and the exports escape them (JSON losslessly) and keep
//! formulas out of spreadsheets.

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;

use crate::{iocap, QUICK};

const SECRET: &str = "S3cret";

/// Every form, each pointing at a server that is not there (port 1 refuses; `.invalid` never
/// resolves).
const UNREACHABLE: [&str; 6] = [
    "postgres://iocap:S3cret@127.0.0.1:1/db",
    "postgres://iocap@127.0.0.1:1/db?password=S3cret",
    "POSTGRES://iocap:S3cret@127.0.0.1:1/db",
    "host=127.0.0.1 port=1 user=iocap password=S3cret dbname=db",
    "host=127.0.0.1 port=1 user=iocap password='a S3cret b' dbname=db",
    "host=nohost.invalid user=iocap password=S3cret dbname=db",
];

/// `iocap` without the caller's PostgreSQL settings.
fn iocap_no_pg(dir: &Path) -> Command {
    let mut c = iocap(dir);
    for v in [
        "PGPASSWORD",
        "PGPASSFILE",
        "PGHOST",
        "PGUSER",
        "PGDATABASE",
        "PGPORT",
    ] {
        c.env_remove(v);
    }
    c.env("HOME", dir).timeout(Duration::from_secs(30));
    c
}

#[test]
fn a_password_is_never_printed_and_conninfo_is_never_a_file() {
    for db in UNREACHABLE {
        for args in [
            vec!["history", "--db", db],
            vec!["show", "last", "--db", db],
            vec!["run", "--duration", "60s", "--db", db],
        ] {
            let dir = tempfile::tempdir().unwrap();
            let out = iocap_no_pg(dir.path()).args(&args).output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            for text in [&stdout, &stderr] {
                assert!(!text.contains(SECRET), "{args:?} printed it: {text}");
            }
            assert!(
                stderr.contains("cannot connect to PostgreSQL") && stderr.contains("***"),
                "{args:?}: {stderr}"
            );
            let left: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert!(left.is_empty(), "{args:?} created {left:?}");
        }
    }
}

#[test]
fn unreadable_conninfo_is_refused_without_the_password() {
    let dir = tempfile::tempdir().unwrap();
    for db in [
        "host=127.0.0.1 user=iocap password='S3cret",
        "host=127.0.0.1 user=iocap pasword=S3cret",
    ] {
        let out = iocap_no_pg(dir.path())
            .args(["history", "--db", db])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("cannot be read"), "{stderr}");
        assert!(!stderr.contains(SECRET), "{stderr}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// The test server as conninfo without a password, and the password, for a fresh schema.
fn local_server() -> Option<(String, String)> {
    let url = crate::store::pg_schema()?;
    let cfg: postgres::Config = url.parse().unwrap();
    let host = match &cfg.get_hosts()[0] {
        postgres::config::Host::Tcp(h) => h.clone(),
        other => panic!("a TCP host is expected, not {other:?}"),
    };
    let conninfo = format!(
        "host={host} port={} user={} dbname={} options='{}'",
        cfg.get_ports().first().copied().unwrap_or(5432),
        cfg.get_user().unwrap(),
        cfg.get_dbname().unwrap(),
        cfg.get_options().unwrap(),
    );
    let password = String::from_utf8(cfg.get_password().unwrap().to_vec()).unwrap();
    Some((conninfo, password))
}

fn save_and_list(dir: &Path, db: &str, env: &[(&str, &str)]) -> serde_json::Value {
    let out = iocap_no_pg(dir)
        .envs(env.iter().copied())
        .arg("run")
        .args(QUICK)
        .args(["--db", db, "--output", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("saved run"), "{stderr}");
    let out = iocap_no_pg(dir)
        .envs(env.iter().copied())
        .args(["history", "--db", db, "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn conninfo_and_pgpassword_reach_the_local_server() {
    let Some((conninfo, password)) = local_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hist = save_and_list(dir.path(), &conninfo, &[("PGPASSWORD", &password)]);
    assert_eq!(hist.as_array().unwrap().len(), 1);
    // without it, the server refuses and says why
    let out = iocap_no_pg(dir.path())
        .args(["history", "--db", &conninfo])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_password_file_supplies_the_password_unless_others_can_read_it() {
    use std::os::unix::fs::PermissionsExt;
    let Some((conninfo, password)) = local_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw");
    std::fs::write(&file, format!("# test\n*:*:*:*:{password}\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let pgpassfile = file.to_str().unwrap();
    let hist = save_and_list(dir.path(), &conninfo, &[("PGPASSFILE", pgpassfile)]);
    assert_eq!(hist.as_array().unwrap().len(), 1);
    // ~/.pgpass, found through HOME (the test's directory)
    std::fs::rename(&file, dir.path().join(".pgpass")).unwrap();
    let hist = save_and_list(dir.path(), &conninfo, &[]);
    assert_eq!(hist.as_array().unwrap().len(), 2);
    // readable by others: ignored, with libpq's warning
    std::fs::set_permissions(
        dir.path().join(".pgpass"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let out = iocap_no_pg(dir.path())
        .args(["history", "--db", &conninfo])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("group or world access"), "{stderr}");
}

/// The raw bytes a terminal would act on: ESC, BEL, and C1's CSI (U+009B).
fn has_raw_controls(out: &[u8]) -> bool {
    out.contains(&0x1b) || out.contains(&0x07) || out.windows(2).any(|w| w == [0xc2, 0x9b])
}

#[test]
fn terminal_escapes_in_stored_strings_are_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    let db = db.to_str().unwrap();
    let label = "\x1b[2J\x1b]0;X\x07";
    let mut ids = Vec::new();
    for target in ["a\x1b[31m.dat", "b.dat"] {
        let out = iocap(dir.path())
            .arg("run")
            .args(QUICK)
            .args([target, "--db", db, "--label", label])
            .args(["--tag", "t\x1b[1m", "--note", "line\n\u{9b}31m"])
            .args(["--output", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // JSON keeps the label exactly
        assert_eq!(run["label"], label);
        ids.push(run["run_id"].as_str().unwrap().to_string());
    }
    for args in [
        vec!["history", "--db", db],
        vec!["show", "last", "--db", db],
        vec!["show", &ids[0], "--db", db],
        vec!["compare", &ids[1], &ids[0], "--db", db],
    ] {
        let out = iocap(dir.path()).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!has_raw_controls(&out.stdout), "{args:?}: {text:?}");
        assert!(text.contains("\\e[2J\\e]0;X\\a"), "{args:?}: {text}");
    }
    let show = iocap(dir.path())
        .args(["show", &ids[0], "--db", db])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("tags: t\\e[1m"), "{text}");
    assert!(text.contains("note: line\n\\u{9b}31m"), "{text}");
    // the targets column is among --wide's
    let hist = iocap(dir.path())
        .args(["history", "--wide", "--db", db])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&hist.stdout).contains("a\\e[31m.dat"));
    // baselines name the target, on stderr when set and in the table when shown
    let set = iocap(dir.path())
        .args(["baseline", "set", &ids[0], "--db", db])
        .output()
        .unwrap();
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    let shown = iocap(dir.path())
        .args(["baseline", "show", "--all", "--db", db])
        .output()
        .unwrap();
    for out in [&set.stderr, &shown.stdout] {
        let text = String::from_utf8_lossy(out);
        assert!(!has_raw_controls(out), "{text:?}");
        assert!(text.contains("a\\e[31m.dat"), "{text}");
    }
    // the JSON views stay exact
    let json = crate::json_of(dir.path(), &["history", "--db", db, "--output", "json"]);
    assert_eq!(json[0]["label"], label);
}

/// Issue 14 item 18: a store whose `iocap_meta` was dropped is refused in one short line that
/// names the file, not with its whole schema; nothing is written to it.
#[test]
fn a_store_without_iocap_meta_is_refused_in_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let db = path.to_str().unwrap();
    let out = iocap(dir.path())
        .arg("run")
        .args(QUICK)
        .args(["--db", db, "--output", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TABLE iocap_meta; PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    for args in [
        vec!["history", "--db", db],
        vec!["run", "--duration", "60s", "--db", db],
    ] {
        let out = iocap(dir.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("{db} is not an iocap store")) && err.contains("no iocap_meta"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.len() < 400, "{} bytes: {err}", err.len());
        for table in ["histograms", "run_tags", "series", "CREATE"] {
            assert!(!err.contains(table), "{args:?}: {err}");
        }
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "the store changed");
}

/// The raw bytes of a bidirectional override (U+202E), which reorders what follows it.
fn has_raw_bidi(out: &[u8]) -> bool {
    out.windows(3).any(|w| w == [0xe2, 0x80, 0xae])
}

/// Runs `iocap ARGS` in `dir`, which must succeed; its stdout.
fn stdout_of(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = iocap(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Issue 23: `export --format csv` wrote a label's ESC raw to the terminal, Markdown and JSON
/// passed U+202E through, and a label starting with `=` reached a spreadsheet as a formula.
/// JSON escapes the control and bidirectional characters (`\u202e`) and reads back exactly; CSV
/// and Markdown show them escaped; a text cell that would start a formula starts with `'`, a
/// number does not.
#[test]
fn exports_escape_controls_and_bidi_and_neutralise_formulas() {
    let dir = tempfile::tempdir().unwrap();
    let formula = "=HYPERLINK(\"http://x\")\u{202e}\x1b[2J";
    for label in [formula, "-1.5"] {
        let label_flag = format!("--label={label}");
        let json = stdout_of(
            dir.path(),
            &[
                &["run"][..],
                &QUICK,
                &["--db", "r.db", &label_flag, "--output", "json"],
            ]
            .concat(),
        );
        assert!(!has_raw_bidi(&json) && !has_raw_controls(&json));
        let run: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(run["label"], label, "JSON reads back exactly");
    }
    let export = |format: &str| {
        stdout_of(
            dir.path(),
            &["export", "--all", "--db", "r.db", "--format", format],
        )
    };
    let json = export("json");
    assert!(!has_raw_bidi(&json) && !has_raw_controls(&json));
    assert!(String::from_utf8_lossy(&json).contains("\\u202e"));
    let runs: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(runs[0]["label"], formula);
    // Markdown escapes the `[` too, so it starts no link
    for (format, shown) in [
        ("csv", "\\u{202e}\\e[2J"),
        ("markdown", "\\u{202e}\\e\\[2J"),
    ] {
        let out = export(format);
        let text = String::from_utf8_lossy(&out);
        assert!(
            !has_raw_bidi(&out) && !has_raw_controls(&out),
            "{format}: {text:?}"
        );
        assert!(text.contains(shown), "{format}: {text}");
    }
    let csv = String::from_utf8(export("csv")).unwrap();
    assert!(csv.contains(",\"'=HYPERLINK(\"\"http://x\"\")"), "{csv}");
    assert!(csv.contains(",-1.5,"), "a number stays a number: {csv}");
    assert!(!csv.contains("'-1.5"), "{csv}");
}

/// Issue 23: a suite file's name, description and test names, and the bad line a suite parse
/// error quotes, reached the terminal raw.
#[test]
fn suite_files_reach_the_terminal_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let suite = r#"
name = "evil\u001b[2J"
description = "d\u202e\u0007"
pause = "0s"
[defaults]
duration = "0.3s"
warmup = "0s"
size = "16M"
[[test]]
name = "t\u001b]0;X\u0007"
rw = "randread"
"#;
    std::fs::write(dir.path().join("evil.toml"), suite).unwrap();
    let show = stdout_of(dir.path(), &["suite", "show", "evil.toml"]);
    let text = String::from_utf8_lossy(&show);
    assert!(!has_raw_controls(&show) && !has_raw_bidi(&show), "{text:?}");
    assert!(text.contains("evil\\e[2J: d\\u{202e}\\a"), "{text}");
    let out = iocap(dir.path())
        .args(["suite", "run", "evil.toml", "--no-save"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for o in [&out.stdout, &out.stderr] {
        assert!(!has_raw_controls(o), "{:?}", String::from_utf8_lossy(o));
    }
    assert!(err.contains("t\\e]0;X\\a"), "{err}");
    std::fs::write(dir.path().join("bad.toml"), "name = \"x\"\nrw \x1b[2J\n").unwrap();
    let out = iocap(dir.path())
        .args(["suite", "show", "bad.toml"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!has_raw_controls(&out.stderr), "{err:?}");
    assert!(err.contains("\\e[2J"), "{err}");
}
