//! Issue 14: what a store must not let out or in. A PostgreSQL password, in any form of
//! connection string libpq takes, is never printed and no conninfo string becomes a file; the
//! password may come from `PGPASSWORD` or a password file; terminal escape sequences in stored
//! strings reach no terminal raw; a store whose `iocap_meta` is gone is refused in a line.

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
