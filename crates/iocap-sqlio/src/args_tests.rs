use super::*;
use std::io;

fn no_file(path: &str) -> io::Result<String> {
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("{path}: no such file"),
    ))
}

fn parse(args: &[&str]) -> SqlioCall {
    parse_args(args, &no_file).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn err(args: &[&str]) -> SqlioError {
    parse_args(args, &no_file).unwrap_err()
}

#[test]
fn defaults_are_sqlio_defaults() {
    let c = parse(&[]);
    let s = &c.spec;
    assert_eq!(s.rw, RwMode::RandRead);
    assert_eq!(s.write_pct, 0);
    assert_eq!(s.duration_s, 30.0);
    assert_eq!((s.bs_bytes, s.align_bytes), (2048, 2048));
    assert_eq!((s.qd, s.threads), (1, 1));
    assert_eq!((s.warmup_s, s.cooldown_s), (0.0, 0.0));
    assert_eq!(s.size_bytes, 100 << 20);
    assert!(s.direct && s.write_through, "-BN is the default");
    assert_eq!(c.buffering, 'N');
    assert_eq!(c.latency_timer, None);
    assert_eq!(s.targets, vec![TargetSpec::new("testfile.dat")]);
    assert_eq!(c.targets[0].line, 0);
    assert_eq!(s.name, "sqlio -kR -frandom -b2 -o1");
    assert_eq!(s.engine, EngineChoice::Auto);
    assert!(!s.allow_overwrite);
    assert_eq!(c.notes.len(), 1, "the missing -f is noted");
    s.validate().unwrap();
}

#[test]
fn every_flag() {
    let c = parse(&[
        "-kW",
        "-s120",
        "-fsequential",
        "-o16",
        "-b64",
        "-t4",
        "-LP",
        "-BH",
        "a.dat",
    ]);
    let s = &c.spec;
    assert_eq!((s.rw, s.write_pct), (RwMode::Write, 100));
    assert_eq!(s.duration_s, 120.0);
    assert_eq!((s.bs_bytes, s.align_bytes), (64 << 10, 64 << 10));
    assert_eq!((s.qd, s.threads), (16, 4));
    assert_eq!(c.latency_timer, Some('P'));
    assert_eq!(c.buffering, 'H');
    assert_eq!(s.targets, vec![TargetSpec::new("a.dat")]);
    assert_eq!(s.name, "sqlio -kW -fsequential -b64 -o16");
    assert!(c.notes.is_empty());
    s.validate().unwrap();
}

#[test]
fn kind_and_pattern_give_the_four_modes() {
    for (k, f, rw) in [
        ("-kR", "-frandom", RwMode::RandRead),
        ("-kW", "-frandom", RwMode::RandWrite),
        ("-kR", "-fsequential", RwMode::Read),
        ("-kW", "-fsequential", RwMode::Write),
        ("-kw", "-fRANDOM", RwMode::RandWrite),
        ("-kr", "-f1", RwMode::Read),
    ] {
        assert_eq!(parse(&[k, f]).spec.rw, rw, "{k} {f}");
    }
}

#[test]
fn buffering_table() {
    for (b, direct, write_through) in [
        ("-BN", true, true),
        ("-BH", true, false),
        ("-BS", false, true),
        ("-BY", false, false),
        ("-Bn", true, true),
    ] {
        let c = parse(&[b]);
        assert_eq!(
            (c.spec.direct, c.spec.write_through),
            (direct, write_through),
            "{b}"
        );
        assert_eq!(c.buffering, b.chars().nth(2).unwrap().to_ascii_uppercase());
    }
}

#[test]
fn latency_timers() {
    assert_eq!(parse(&["-LS"]).latency_timer, Some('S'));
    assert_eq!(parse(&["-Lp"]).latency_timer, Some('P'));
}

#[test]
fn en_and_em_dashes_count_as_dashes() {
    let c = parse(&[
        "\u{2013}b8",
        "\u{2014}kW",
        "\u{2013}\u{2013}allow-overwrite",
    ]);
    assert_eq!(c.spec.bs_bytes, 8192);
    assert_eq!(c.spec.rw, RwMode::RandWrite);
    assert!(c.spec.allow_overwrite);
}

#[test]
fn several_bare_paths_are_several_targets() {
    let c = parse(&["-kR", "/mnt/a/t.dat", "-b8", "/mnt/b/t.dat"]);
    let paths: Vec<_> = c.spec.targets.iter().map(|t| t.path.as_str()).collect();
    assert_eq!(paths, ["/mnt/a/t.dat", "/mnt/b/t.dat"]);
    assert!(c
        .spec
        .targets
        .iter()
        .all(|t| t.threads.is_none() && t.size_bytes.is_none()));
    assert_eq!(c.targets.len(), 2);
}

#[test]
fn iocap_long_flags() {
    let c = parse(&["--allow-overwrite", "--engine", "psync"]);
    assert!(c.spec.allow_overwrite);
    assert_eq!(c.spec.engine, EngineChoice::Psync);
    assert_eq!(
        parse(&["--engine=io_uring"]).spec.engine,
        EngineChoice::IoUring
    );
    assert_eq!(parse(&["--engine=AUTO"]).spec.engine, EngineChoice::Auto);
}

#[test]
fn param_file_targets() {
    let read = |path: &str| -> io::Result<String> {
        assert_eq!(path, "param.txt");
        Ok("# volumes\nc:\\sqlio_test.dat 4 0x0 100\nd:\\sqlio_test.dat 2 0x3 200\n".into())
    };
    let c = parse_args(&["-kR", "-Fparam.txt", "-t8"], &read).unwrap();
    assert_eq!(c.param_file.as_deref(), Some("param.txt"));
    assert_eq!(
        c.spec.targets,
        vec![
            TargetSpec {
                path: "c:\\sqlio_test.dat".into(),
                size_bytes: Some(100 << 20),
                threads: Some(4),
                cpu_mask: None,
            },
            TargetSpec {
                path: "d:\\sqlio_test.dat".into(),
                size_bytes: Some(200 << 20),
                threads: Some(2),
                cpu_mask: Some(3),
            },
        ]
    );
    assert_eq!(c.targets.len(), 2);
    assert_eq!(c.targets[1].line, 3);
    assert_eq!(c.spec.threads, 8);
    assert!(c.notes.iter().any(|n| n.contains("-t8")), "{:?}", c.notes);
    c.spec.validate().unwrap();
}

#[test]
fn param_file_errors_name_the_file() {
    assert_eq!(
        err(&["-Fmissing.txt"]).to_string(),
        "cannot read parameter file missing.txt: missing.txt: no such file"
    );
    let read = |_: &str| -> io::Result<String> { Ok("a.dat 1\nb.dat x\n".into()) };
    let e = parse_args(&["-Fp.txt"], &read).unwrap_err();
    assert_eq!(
        e.to_string(),
        "p.txt:2: thread count 'x' is not a whole number"
    );
    let e = parse_args(&["-Fp.txt", "extra.dat"], &read).unwrap_err();
    assert!(matches!(e, SqlioError::Usage(_)), "{e}");
}

#[test]
fn errors_name_the_flag() {
    for (arg, problem) in [
        ("-kX", "takes R (read) or W (write)"),
        ("-k", "needs R (read) or W (write) attached"),
        ("-s", "needs the number of seconds attached, e.g. -s8"),
        (
            "-sabc",
            "the number of seconds must be a whole number, not 'abc'",
        ),
        ("-s0", "the number of seconds must be at least 1"),
        ("-s-5", "whole number, not '-5'"),
        ("-s99999999999999999999999", "at most"),
        ("-o0", "the number of outstanding I/Os must be at least 1"),
        ("-o5000", "at most 4096"),
        ("-b0", "the block size in KB must be at least 1"),
        ("-b131072", "at most 65536"),
        ("-t0", "the number of threads must be at least 1"),
        ("-t", "needs the number of threads"),
        ("-fzigzag", "takes random or sequential, not 'zigzag'"),
        ("-f", "needs random or sequential attached"),
        ("-f64", "no stride pattern"),
        ("-BQ", "takes N (no cache)"),
        ("-B", "needs N (no cache)"),
        ("-LX", "takes S (system timer) or P"),
        (
            "-LSi",
            "takes S (system timer) or P (processor timer), not 'Si'",
        ),
        ("-F", "needs a file name"),
        ("-x", "unknown option"),
        ("-?", "unknown option"),
        ("-", "lone dash"),
        ("-i64", "not supported"),
        ("-a0xf", "not supported"),
        ("-U", "not supported"),
        ("--frobnicate", "unknown option"),
        ("--allow-overwrite=yes", "takes no value"),
        ("--engine=spdk", "unknown engine 'spdk': use auto"),
        ("--engine", "needs a value"),
        ("\u{2013}kX", "takes R (read) or W (write)"),
    ] {
        let e = err(&["-kR", arg]);
        let SqlioError::BadFlag { flag, problem: p } = &e else {
            panic!("{arg}: {e:?}");
        };
        assert_eq!(flag, arg);
        assert!(p.contains(problem), "{arg}: {p}");
        assert!(e.to_string().starts_with(&format!("option {arg}: ")), "{e}");
    }
}

#[test]
fn empty_argument_is_refused() {
    assert!(matches!(err(&["-kR", ""]), SqlioError::Usage(_)));
}

#[test]
fn last_flag_wins() {
    let c = parse(&["-b8", "-b64", "-kW", "-kR"]);
    assert_eq!(c.spec.bs_bytes, 64 << 10);
    assert_eq!(c.spec.rw, RwMode::RandRead);
}
