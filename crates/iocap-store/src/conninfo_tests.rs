use super::*;

fn no_env(_: &str) -> Option<String> {
    None
}

fn password(cfg: &Config) -> Option<String> {
    cfg.get_password()
        .map(|p| String::from_utf8_lossy(p).into_owned())
}

#[test]
fn every_form_is_recognised() {
    for s in [
        "postgres://iocap@h/db",
        "postgresql://iocap@h/db",
        "POSTGRES://iocap@h/db",
        "PostgreSQL://iocap@h/db",
    ] {
        assert!(url(s).unwrap().starts_with("postgres"), "{s}");
    }
    assert_eq!(url("POSTGRES://u@h/db").unwrap(), "postgres://u@h/db");
    assert_eq!(url("results.db"), None);
    assert_eq!(url("pg"), None);
    for s in [
        "host=127.0.0.1 user=iocap password=S3cret dbname=db",
        "dbname = db",
        "password='a b'",
    ] {
        assert!(is_conninfo(s), "{s}");
    }
    for s in ["runs.db", "./a=b.db", "/tmp/x=y", "=x", "1=2", "my runs.db"] {
        assert!(!is_conninfo(s), "{s}");
    }
}

#[test]
fn url_passwords_are_masked() {
    for (given, shown) in [
        (
            "postgres://iocap:S3cret@db:5432/results",
            "postgres://iocap:***@db:5432/results",
        ),
        (
            "POSTGRES://iocap:S3cret@db/results",
            "POSTGRES://iocap:***@db/results",
        ),
        ("postgres://iocap@db/results", "postgres://iocap@db/results"),
        (
            "postgres://iocap@127.0.0.1:5432/db?password=S3cret",
            "postgres://iocap@127.0.0.1:5432/db?password=***",
        ),
        (
            "postgres://iocap@h/db?sslmode=disable&password=S3cret&options=-cx%3Dy",
            "postgres://iocap@h/db?sslmode=disable&password=***&options=-cx%3Dy",
        ),
        (
            "postgres://u:p%40ss@h/db?pass%77ord=S3cret",
            "postgres://u:***@h/db?pass%77ord=***",
        ),
        // an unencoded '@', '/' or '?' in a password hides nothing of it (nor, then, the host)
        ("postgres://u:S3@c/ret@h/db", "postgres://***@h/db"),
        ("postgres://u:S3?cret@h/db", "postgres://u:***@h/db"),
        (
            "postgres://u@h/db?password=S3@cret&x=1",
            "postgres://***&x=1",
        ),
        (
            "postgres://u:pw@h/db?application_name=a@b&password=S3cret",
            "postgres://***@b&password=***",
        ),
    ] {
        assert_eq!(masked(given), shown, "{given}");
    }
}

#[test]
fn conninfo_passwords_are_masked() {
    for (given, shown) in [
        (
            "host=127.0.0.1 user=iocap password=S3cret dbname=db",
            "host=127.0.0.1 user=iocap password=*** dbname=db",
        ),
        (
            "host=h password='a b S3cret' dbname=db",
            "host=h password=*** dbname=db",
        ),
        (
            "host=h password = 'it\\'s S3cret' user=u",
            "host=h password = *** user=u",
        ),
        ("host=h password=S3\\ cret", "host=h password=***"),
        ("host=h pasword=S3cret", "host=h pasword=***"),
        // unreadable: no value at all is shown
        ("host=h password='S3cret", "host=... password=..."),
    ] {
        assert_eq!(masked(given), shown, "{given}");
    }
}

#[test]
fn the_crate_reads_every_form_with_its_password() {
    for (s, pw) in [
        ("postgres://iocap:S3cret@h/db", "S3cret"),
        ("POSTGRES://iocap:S3cret@h/db", "S3cret"),
        ("postgresql://iocap@h/db?password=S3cret", "S3cret"),
        ("host=h user=iocap password=S3cret dbname=db", "S3cret"),
        ("host=h user=iocap password='a b' dbname=db", "a b"),
    ] {
        let cfg = config(s, &no_env).unwrap();
        assert_eq!(password(&cfg).as_deref(), Some(pw), "{s}");
        assert_eq!(cfg.get_user(), Some("iocap"), "{s}");
    }
    let cfg = config("postgres://u@h/db?options=-csearch_path%3Dx", &no_env).unwrap();
    assert_eq!(
        cfg.get_options(),
        Some("-csearch_path=x"),
        "other params are kept"
    );
}

#[test]
fn unreadable_conninfo_is_an_error_without_the_password() {
    for s in [
        "host=h password='S3cret",
        "host=h nonsense=S3cret",
        "a=b.db password=S3cret",
    ] {
        let e = config(s, &no_env).unwrap_err().to_string();
        assert!(!e.contains("S3cret"), "{e}");
        assert!(e.contains("cannot be read"), "{e}");
    }
    let e = config("host=h nonsense=S3cret", &no_env).unwrap_err();
    assert!(e.to_string().contains("unknown option `nonsense`"), "{e}");
}

#[test]
fn pgpassword_fills_a_missing_password_only() {
    let env = |k: &str| (k == "PGPASSWORD").then(|| "FromEnv".to_string());
    let cfg = config("host=h user=u dbname=db", &env).unwrap();
    assert_eq!(password(&cfg).as_deref(), Some("FromEnv"));
    let cfg = config("postgres://u@h/db", &env).unwrap();
    assert_eq!(password(&cfg).as_deref(), Some("FromEnv"));
    let cfg = config("postgres://u:Given@h/db", &env).unwrap();
    assert_eq!(password(&cfg).as_deref(), Some("Given"));
}

#[test]
fn the_password_file_fills_a_missing_password() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".pgpass");
    std::fs::write(&file, "h:5432:db:u:FromFile\nh:5433:*:u:OtherPort\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let h = home.path().to_str().unwrap().to_string();
    let env = move |k: &str| (k == "HOME").then(|| h.clone());
    let pw = |s: &str| password(&config(s, &env).unwrap());
    assert_eq!(pw("host=h user=u dbname=db").as_deref(), Some("FromFile"));
    assert_eq!(pw("postgres://u@h/db").as_deref(), Some("FromFile"));
    assert_eq!(pw("postgres://u@h:5433/x").as_deref(), Some("OtherPort"));
    assert_eq!(pw("postgres://u@elsewhere/db"), None);
    // PGPASSWORD comes first, as in libpq
    let h = home.path().to_str().unwrap().to_string();
    let env = move |k: &str| match k {
        "HOME" => Some(h.clone()),
        "PGPASSWORD" => Some("FromEnv".into()),
        _ => None,
    };
    let cfg = config("host=h user=u dbname=db", &env).unwrap();
    assert_eq!(password(&cfg).as_deref(), Some("FromEnv"));
    // PGPASSFILE names another file
    let other = home.path().join("pw");
    std::fs::write(&other, "*:*:*:*:Elsewhere\n").unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = other.to_str().unwrap().to_string();
    let env = move |k: &str| (k == "PGPASSFILE").then(|| o.clone());
    let cfg = config("host=h user=u dbname=db", &env).unwrap();
    assert_eq!(password(&cfg).as_deref(), Some("Elsewhere"));
}

#[test]
fn libpq_s_passfile_keyword_names_the_password_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw file");
    std::fs::write(&file, "h:5432:db:u:FromPassfile\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    // PGPASSFILE names another file: the string's passfile comes first, as in libpq
    let other = dir.path().join("other");
    std::fs::write(&other, "*:*:*:*:FromEnvFile\n").unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = other.to_str().unwrap().to_string();
    let env = move |k: &str| (k == "PGPASSFILE").then(|| o.clone());
    let f = file.to_str().unwrap();
    let conninfo = format!("host=h user=u passfile='{f}' dbname=db");
    let cfg = config(&conninfo, &env).unwrap();
    assert_eq!(password(&cfg).as_deref(), Some("FromPassfile"));
    assert_eq!(cfg.get_dbname(), Some("db"));
    let enc = f.replace(' ', "%20");
    let cfg = config(
        &format!("postgres://u@h/db?passfile={enc}&sslmode=disable"),
        &env,
    )
    .unwrap();
    assert_eq!(password(&cfg).as_deref(), Some("FromPassfile"));
    let cfg = config(&format!("postgres://u@h/db?passfile={enc}"), &env).unwrap();
    assert_eq!(password(&cfg).as_deref(), Some("FromPassfile"));
    // the path is shown, not hidden as a password would be
    assert!(masked(&conninfo).contains(f), "{}", masked(&conninfo));
    // one that others may read is ignored, as PGPASSFILE's would be
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cfg = config(&conninfo, &env).unwrap();
    assert_eq!(password(&cfg), None);
}

#[test]
fn the_environment_fills_what_the_string_leaves_out() {
    let env = |k: &str| match k {
        "PGHOST" => Some("envhost".to_string()),
        "PGPORT" => Some("5433".to_string()),
        "PGUSER" => Some("envuser".to_string()),
        "PGDATABASE" => Some("envdb".to_string()),
        _ => None,
    };
    let cfg = config("password=x", &env).unwrap();
    assert_eq!(cfg.get_hosts(), &[Host::Tcp("envhost".into())]);
    assert_eq!(cfg.get_ports(), &[5433]);
    assert_eq!(cfg.get_user(), Some("envuser"));
    assert_eq!(cfg.get_dbname(), Some("envdb"));
    let cfg = config("host=h port=1 user=u dbname=d", &env).unwrap();
    assert_eq!(cfg.get_hosts(), &[Host::Tcp("h".into())]);
    assert_eq!(cfg.get_user(), Some("u"));
}

#[test]
fn scrub_hides_every_spelling_of_the_password() {
    let s = "postgres://u:p%40ssw0rd@h/db";
    let cfg = config(s, &no_env).unwrap();
    let msg = format!("failed for {s}: p@ssw0rd / p%40ssw0rd");
    let out = scrub(&msg, s, Some(&cfg));
    assert_eq!(out, "failed for postgres://u:***@h/db: *** / ***");
}

#[test]
fn no_host_at_all_means_the_local_server() {
    let cfg = config("dbname=d user=u", &no_env).unwrap();
    match cfg.get_hosts() {
        [Host::Unix(p)] => assert!(p.join(".s.PGSQL.5432").exists(), "{p:?}"),
        [Host::Tcp(h)] => assert_eq!(h, "localhost"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_piece_of_an_awkward_password_is_shown() {
    for special in ["@", "/", "?", "&", ":", "=", "@/?", "?@", "#", "%40"] {
        let pw = format!("Zq{special}Xj");
        let conninfo_pw = pw.replace('\\', "\\\\").replace('\'', "\\'");
        for s in [
            format!("postgres://u:{pw}@h:5432/db"),
            format!("postgres://u@h/db?sslmode=disable&password={pw}"),
            format!("host=h user=u password='{conninfo_pw}' dbname=db"),
        ] {
            let m = masked(&s);
            assert!(!m.contains("Zq") && !m.contains("Xj"), "{s} shown as {m}");
        }
    }
}
