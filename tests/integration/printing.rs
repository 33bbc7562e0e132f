//! One printing path (issue 35, §6): every line that carries a path or a user's text reaches
//! the terminal through the model's escape (`iocap_model::text::printable`), an interrupted
//! verify is PARTIAL everywhere, and lines fit 80 columns.

use iocap_model::text::acts_on_terminal;

use crate::iocap;

/// A file name holding ESC (a colour), U+202E (right-to-left override) and BEL.
const EVIL: &str = "f\x1b[31mRED\u{202e}evil\x07.dat";
/// [`EVIL`] as the escape shows it.
const SHOWN: &str = "f\\e[31mRED\\u{202e}evil\\a.dat";

/// `iocap ARGS` in `dir`: exit code, stdout, stderr.
fn output(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = iocap(dir).args(args).output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code(), text(out.stdout), text(out.stderr))
}

/// Asserts that `text` holds no character that acts on a terminal but a line break or a tab
/// (DiskSpd's text indents with tabs).
fn no_raw_controls(what: &str, text: &str) {
    let raw: Vec<char> = text
        .chars()
        .filter(|c| !matches!(c, '\n' | '\t') && acts_on_terminal(*c))
        .collect();
    assert!(raw.is_empty(), "{what}: {raw:?} raw in:\n{text}");
}

/// Defect 6: raw ESC, U+202E and BEL reached the terminal in run's and diskspd's "writing …
/// test data to PATH", in verify's "verifying …" line and its header, and in audit's path line.
#[test]
fn a_path_with_terminal_controls_reaches_the_terminal_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = [&["run"][..], &crate::QUICK, &["--no-save", EVIL]].concat();
    let (code, out, err) = output(d, &run);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(&format!("writing 16M of test data to {SHOWN}")),
        "{err}"
    );
    no_raw_controls("run", &(out + &err));
    let disk = format!("d{EVIL}");
    let (code, out, err) = output(d, &["diskspd", "-c16M", "-d1", "-W0", "--no-save", &disk]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains(&format!("test data to d{SHOWN}")), "{err}");
    no_raw_controls("diskspd", &(out + &err));
    let v = format!("v{EVIL}");
    let args = [
        "verify",
        "--size",
        "16M",
        "--duration",
        "0.3s",
        "--no-save",
        &v,
    ];
    let (code, out, err) = output(d, &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains(&format!("verifying v{SHOWN}")), "{err}");
    assert!(
        out.starts_with(&format!("iocap verify: v{SHOWN}\n")),
        "{out}"
    );
    no_raw_controls("verify", &(out + &err));
    let (_, out, err) = output(d, &["audit", EVIL]);
    assert!(out.starts_with(&format!("{SHOWN}: ")), "{out}{err}");
    no_raw_controls("audit", &(out + &err));
}

/// Defect 7: an interrupted verify was saved as "PASS: interrupted": its first line was not
/// PARTIAL and `history` said PASS. Interrupted once its fill is done (its journal's header is
/// written then: an event, not a time), it is PARTIAL in its first line, its verdict, the saved
/// run's `show` and JSON, and `history`.
#[test]
fn an_interrupted_verify_is_partial_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = ["verify", "v.dat", "--size", "16M", "--duration", "600s"];
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iocap"))
        .current_dir(d)
        .env("XDG_DATA_HOME", crate::data_home())
        .env_remove("IOCAP_DB")
        .args(args)
        .args(["--journal", "j.log", "--db", "r.db"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::metadata(d.join("j.log")).map_or(0, |m| m.len()) == 0 {
        assert!(std::time::Instant::now() < end, "the fill never ended");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // SAFETY: kill(2) on our own child, not yet waited for, with a plain signal
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let (text, err) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert_eq!(out.status.code(), Some(130), "{text}{err}");
    assert!(
        text.starts_with("PARTIAL: this verify was interrupted by SIGINT (Ctrl-C); the"),
        "{text}"
    );
    assert!(
        text.contains("  verdict         PARTIAL: interrupted: not every page was checked\n"),
        "{text}"
    );
    assert!(!text.contains("PASS"), "{text}");
    let (code, listed, err) = output(d, &["history", "--db", "r.db"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(listed.contains("partial: verify: PARTIAL, "), "{listed}");
    assert!(!listed.contains("PASS"), "{listed}");
    let (_, shown, _) = output(d, &["show", "last", "--db", "r.db"]);
    assert!(
        shown.starts_with("PARTIAL: this verify was interrupted"),
        "{shown}"
    );
    assert!(!shown.contains("PASS"), "{shown}");
    let (_, json, _) = output(d, &["show", "last", "--db", "r.db", "--output", "json"]);
    let run: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(run["interrupted_by"], "SIGINT", "{json}");
    assert_eq!(run["verify"]["passed"], false, "{json}");
    assert_eq!(run["verify"]["interrupted"], true, "{json}");
}

/// `iocap ARGS` in `dir` with `COLUMNS=80`: exit code, stdout, stderr.
fn at_80(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = iocap(dir).env("COLUMNS", "80").args(args).output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code(), text(out.stdout), text(out.stderr))
}

/// Asserts that every line of `text` fits 80 columns.
fn fits(what: &str, text: &str) {
    let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
    assert!(
        long.is_empty(),
        "{what}: over 80 columns:\n{}",
        long.join("\n")
    );
}

/// Defect 8: verify's lines ran to 205 columns, cost's findings to 247, `iocap diskspd` with no
/// target to 95, and one-line errors on stderr to 212. The views wrap at the width wherever
/// they go; the lines on stderr (errors, verify's "verifying") wrap on a terminal (`script`),
/// and off one stay whole, so a search for an error's words in a log still finds them.
#[test]
fn verify_cost_diskspd_and_errors_fit_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = "a-verify-file-with-a-name-long-enough-to-push-its-lines-past-80.dat";
    let args = [
        "verify",
        "--size",
        "16M",
        "--duration",
        "0.3s",
        "--no-save",
        name,
    ];
    let (code, out, err) = at_80(d, &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("  reads           "), "{out}");
    fits("verify", &out);
    // cost's findings: sentences under `In plain words` and `Notes`
    let cost = ["cost", "--quick", "--duration", "0.3s", "--warmup", "0.2s"];
    let targets = [
        "--size",
        "64M",
        "--target-iops",
        "200000",
        "--target-mbps",
        "2000",
    ];
    let (code, out, err) = at_80(d, &[&cost[..], &targets, &["--no-save"]].concat());
    assert_eq!(code, Some(0), "{err}");
    let at = out.find("In plain words").expect("findings");
    fits("cost's findings", &out[at..]);
    // on a terminal: verify's lines, diskspd with no target, a claim's and a foreign file's
    // refusals, each wrapped
    std::fs::write(d.join("in.log"), "fio version 3 iolog\n0 /dev/sdx add\n").unwrap();
    std::fs::write(d.join("theirs.dat"), vec![7u8; 1 << 20]).unwrap();
    let at = |f: &str| d.join(f).display().to_string();
    let quick = crate::QUICK.join(" ");
    // a path shorter than a line (a longer word would stand alone on its line)
    let (log, theirs, v) = (
        at("in.log"),
        at("theirs.dat"),
        at("a-verify-file-named-at-length.dat"),
    );
    for (args, says) in [
        (
            format!("verify --size 16M --duration 0.3s --no-save {v}"),
            "iocap: verifying",
        ),
        ("diskspd".to_string(), "DiskSpd needs at least one target"),
        (
            format!("characterise {log} --as-profile {log} --force --no-save"),
            "is the trace being read",
        ),
        (
            format!("run --rw randwrite {quick} {theirs}"),
            "iocap did not",
        ),
    ] {
        let Some(shown) = crate::on_a_terminal(&args) else {
            return;
        };
        assert!(shown.contains(says), "{args}: {shown}");
        fits(&args, &shown);
    }
    // off a terminal an error stays one line
    let profile = [
        "characterise",
        "in.log",
        "--as-profile",
        "in.log",
        "--force",
        "--no-save",
    ];
    let (code, _, err) = at_80(d, &profile);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.chars().count() > 80, "{err}");
}
