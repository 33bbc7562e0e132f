use iocap_model::{BsWeight, Burst, RwMode};
use iocap_plan::{parse_profile, parse_suite, PlanError, MAX_TESTS};

/// A suite of one test whose body is `body`.
fn one_test(body: &str) -> String {
    format!("name = \"mine\"\n[[test]]\nname = \"t\"\n{body}\n")
}

fn suite_err(text: &str) -> String {
    parse_suite(text).unwrap_err().to_string()
}

const PROFILE: &str = r#"
name = "mine"
family = "postgres"
page = "8K"
[[workload]]
key = "read"
role = "data"
rw = "randread"
"#;

#[test]
fn typo_keys_are_rejected_naming_the_key_and_line() {
    for (text, key, line) in [
        (one_test("qdd = 4"), "qdd", 4),
        (
            "name = \"x\"\ndescripton = \"y\"\n[[test]]\nname = \"t\"\n".to_string(),
            "descripton",
            2,
        ),
        (
            "name = \"x\"\n[defaults]\nduraton = \"5s\"\n[[test]]\nname = \"t\"\n".to_string(),
            "duraton",
            3,
        ),
        (one_test("[test.matrix]\nqds = [1, 2]"), "qds", 5),
        (
            one_test("[[test.workload]]\nrole = \"log\"\nwrite_trough = true"),
            "write_trough",
            6,
        ),
        (one_test("burst = { on = 1, of = 2 }"), "of", 4),
    ] {
        let e = suite_err(&text);
        assert!(e.contains(&format!("unknown field `{key}`")), "{e}");
        assert!(e.contains(&format!("line {line}")), "{e}");
    }
    let e = parse_profile(&format!("{PROFILE}conccurent_with = \"x\"\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown field `conccurent_with`") && e.contains("line 9"),
        "{e}"
    );
}

#[test]
fn valid_toml_with_a_bad_key_or_value_is_told_from_a_file_that_is_no_toml() {
    for text in [one_test("qdd = 4"), one_test("qd = \"deep\"")] {
        match parse_suite(&text).unwrap_err() {
            PlanError::Toml(m) => {
                assert!(m.starts_with("key or value not accepted at line 4"), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }
    let e = parse_suite("root:x:0:0:root:/root:/bin/bash\n").unwrap_err();
    assert!(
        matches!(&e, PlanError::NotToml(m) if m.contains("line 1")),
        "{e:?}"
    );
    let e = parse_profile("[workload\n").unwrap_err();
    assert!(matches!(e, PlanError::NotToml(_)), "{e:?}");
}

#[test]
fn impossible_values_say_what_is_wrong_where() {
    for (body, says) in [
        ("qd = 0", "0 is out of range: use 1 to 4096"),
        ("threads = 0", "0 is out of range: use 1 to 1024"),
        ("bs = 7", "block size 7 B must be a multiple of 512 B"),
        ("bs = \"7\"", "block size 7 B must be a multiple of 512 B"),
        (
            "bs = \"1000\"",
            "block size 1000 B must be a multiple of 512 B",
        ),
        ("bs = \"128M\"", "from 512 B to 64 MiB"),
        ("bs_split = \"8K:70,3:30\"", "block size 3 B"),
        ("bs_split = \"8K\"", "SIZE:SHARE"),
        ("rw = \"sideways\"", "unknown rw 'sideways'"),
        (
            "write_pct = 101\nrw = \"randrw\"",
            "101 is out of range: use 0 to 100",
        ),
        ("size = 0", "size must be greater than zero"),
        ("duration = -5", "duration -5 s must be from 0 to a year"),
        ("duration = \"5 parsecs\"", "unknown unit"),
        ("duration = true", "expected a number or a string"),
        ("rate_iops = 0", "rate 0 must be greater than zero"),
        (
            "role = \"redo\"",
            "unknown role 'redo': use data, log, temp, backup",
        ),
    ] {
        let e = suite_err(&one_test(body));
        assert!(e.contains(says), "{body}: {e}");
        assert!(e.contains("line 4"), "{body}: {e}");
    }
    for (body, says) in [
        (
            "rw = \"read\"\nwrite_pct = 30",
            "test 't': write_pct = 30 needs a mix",
        ),
        (
            "bs = \"8K\"\nbs_split = \"8K:1\"",
            "test 't': give bs or bs_split, not both",
        ),
        (
            "duration = 0",
            "test 't': duration must be greater than zero",
        ),
        (
            "rw = \"read\"\nfsync_every = 4",
            "test 't': --fsync-every needs a workload that writes",
        ),
        (
            "bs = \"1M\"\nsize = \"512K\"",
            "smaller than the block size",
        ),
        (
            "burst = { on = 0, off = 1 }",
            "a burst needs a time on above zero",
        ),
    ] {
        assert!(
            suite_err(&one_test(body)).contains(says),
            "{body}: {}",
            suite_err(&one_test(body))
        );
    }
}

#[test]
fn structure_errors_name_the_test() {
    assert!(suite_err("name = \"x\"\n").contains("it has no [[test]]"));
    assert!(suite_err("name = \"\"\n[[test]]\nname = \"t\"\n").contains("name is empty"));
    assert!(suite_err("[[test]]\nname = \"t\"\n").contains("missing field `name`"));
    assert!(suite_err("name = \"x\"\n[[test]]\nqd = 1\n").contains("test 1: needs a name"));
    let twice = "name = \"x\"\n[[test]]\nname = \"t\"\n[[test]]\nname = \"t\"\n";
    assert!(suite_err(twice).contains("test 't': this name is used twice"));
    let e = suite_err(&one_test(
        "[[test.workload]]\nrole = \"data\"\n[[test.workload]]\nrole = \"data\"",
    ));
    assert!(e.contains("two workloads are named 'data'"), "{e}");
    let e = suite_err(&one_test(
        "[[test.workload]]\nrole = \"data\"\n[[test.workload]]\nrole = \"log\"\nduration = \"10s\"",
    ));
    assert!(e.contains("the same duration, warmup and cooldown"), "{e}");
    let e = suite_err(&one_test(
        "[test.matrix]\nqd = [1, 2]\n[[test.workload]]\nqd = 4",
    ));
    assert!(e.contains("the matrix over qd changes nothing"), "{e}");
    let e = suite_err(&one_test("[[test.workload]]\nrw = \"read\"\nwrite_pct = 5\nname = \"scan\"\n[[test.workload]]\nrole = \"log\""));
    assert!(
        e.starts_with("test 't': workload 'scan': write_pct = 5 needs a mix"),
        "{e}"
    );
}

#[test]
fn matrix_expansion_is_bounded() {
    let big: Vec<String> = (1..=101).map(|n| n.to_string()).collect();
    let text = one_test(&format!(
        "[test.matrix]\nqd = [{}]\nthreads = [{}]",
        big.join(","),
        big[..100].join(",")
    ));
    match parse_suite(&text).unwrap_err() {
        PlanError::TooManyTests { count, .. } => assert_eq!(count, 101 * 100),
        e => panic!("{e}"),
    }
    assert!(suite_err(&text).contains(&format!("at most {MAX_TESTS}")));
    // Exactly at the limit is fine, and it counts across tests.
    let at = one_test(&format!(
        "[test.matrix]\nqd = [{}]\nthreads = [{}]",
        big[..100].join(","),
        big[..100].join(",")
    ));
    assert_eq!(parse_suite(&at).unwrap().tests.len(), MAX_TESTS);
    let over = format!("{at}[[test]]\nname = \"one more\"\n");
    assert!(matches!(
        parse_suite(&over),
        Err(PlanError::TooManyTests { count: 10_001, .. })
    ));
}

#[test]
fn levels_stack_defaults_then_test_then_workload() {
    let s = parse_suite(
        r#"
name = "mine"
description = "layers"
pause = "1m"
[defaults]
duration = 20
warmup = "2s"
cooldown = "1s"
bs = "8K"
qd = 4
size = "4G"
seed = 7
[[test]]
name = "explicit"
rw = "randrw"
write_pct = 25
threads = 2
direct = false
rate_iops = "1.5k"
rate_mbps = 100
align = "4K"
burst = { on = "500ms", off = 2 }
[[test]]
name = "pair"
qd = 16
[test.matrix]
threads = [1, 2]
[[test.workload]]
name = "mix"
rw = "randrw"
[[test.workload]]
role = "log"
rw = "write"
bs_split = "512:1,4K:3"
qd = 1
fsync_every = 8
"#,
    )
    .unwrap();
    assert_eq!(
        (s.name.as_str(), s.description.as_str(), s.pause_s),
        ("mine", "layers", 60.0)
    );
    let names: Vec<&str> = s.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["explicit", "pair t1", "pair t2"]);
    let e = &s.tests[0].workloads[0].spec;
    assert_eq!(
        (e.rw, e.write_pct, e.bs_bytes, e.qd, e.threads),
        (RwMode::RandRw, 25, 8192, 4, 2)
    );
    assert_eq!(
        (e.duration_s, e.warmup_s, e.cooldown_s, e.size_bytes, e.seed),
        (20.0, 2.0, 1.0, 4 << 30, 7)
    );
    assert_eq!(
        (e.direct, e.rate_iops, e.rate_mb_s, e.align_bytes),
        (false, Some(1500.0), Some(100.0), 4096)
    );
    assert_eq!(
        e.burst,
        Some(Burst {
            on_s: 0.5,
            off_s: 2.0
        })
    );
    assert_eq!(s.tests[0].workloads[0].role, "data");

    let pair = &s.tests[2];
    let (mix, log) = (&pair.workloads[0].spec, &pair.workloads[1].spec);
    assert_eq!(
        (mix.qd, mix.threads, mix.write_pct, mix.bs_bytes),
        (16, 2, 50, 8192)
    );
    assert_eq!(mix.name, "pair t2 / mix");
    assert_eq!(log.name, "pair t2 / log");
    assert_eq!(
        (log.qd, log.threads, log.fsync_every, log.bs_bytes),
        (1, 2, 8, 4096)
    );
    assert_eq!(
        log.bs_split,
        [
            BsWeight {
                bs_bytes: 512,
                weight: 1
            },
            BsWeight {
                bs_bytes: 4096,
                weight: 3
            }
        ]
    );
    assert_eq!(pair.workloads[1].role, "log");
    assert_eq!(pair.duration_s(), 23.0);
    assert_eq!(s.estimated_s(), 3.0 * 23.0 + 2.0 * 60.0);
}

#[test]
fn profile_rules() {
    let p = parse_profile(PROFILE).unwrap();
    assert_eq!(
        (p.name.as_str(), p.family.as_str(), p.page_bytes),
        ("mine", "postgres", 8192)
    );
    assert_eq!(
        p.workloads[0].spec.bs_bytes, 8192,
        "the page is the default block size"
    );
    assert_eq!(
        p.workloads[0].title, "read",
        "the key stands in for a missing title"
    );

    let with = |extra: &str| {
        parse_profile(&format!("{PROFILE}{extra}"))
            .unwrap_err()
            .to_string()
    };
    let second = "[[workload]]\nkey = \"w\"\nrw = \"write\"\n";
    assert!(with(&format!("{second}concurrent_with = \"nope\""))
        .contains("workload 'w': concurrent_with names 'nope', which is no workload here"));
    assert!(with(&format!("{second}concurrent_with = \"w\"")).contains("names the workload itself"));
    assert!(
        with(&format!("{second}concurrent_with = \"read\"\nduration = 5"))
            .contains("needs its duration")
    );
    assert!(with(&format!(
        "{second}concurrent_with = \"read\"\n[[workload]]\nkey = \"z\"\nconcurrent_with = \"w\""
    ))
    .contains("itself runs with another"));
    assert!(
        with("[[workload]]\nkey = \"read\"\n").contains("workload 'read': this key is used twice")
    );
    assert!(with("[[workload]]\nrw = \"read\"\n").contains("workload 2: needs a key"));
    assert!(with("[[workload]]\nkey = \"a b\"\n").contains("needs a key without spaces"));
    let e = parse_profile("name = \"x\"\nfamily = \"y\"\npage = \"3000\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 3") && e.contains("multiple of 512"), "{e}");
    let e = parse_profile("name = \"x\"\nfamily = \"y\"\npage = \"8K\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no [[workload]]"), "{e}");
    let e = parse_profile("name = \"x\"\npage = \"8K\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing field `family`"), "{e}");
}

#[test]
fn submit_mode_is_a_workload_key_and_defaults_to_auto() {
    use iocap_model::SubmitMode;
    let s = parse_suite(&one_test("[[test.workload]]\nsubmit = \"each\"")).unwrap();
    assert_eq!(s.tests[0].workloads[0].spec.submit, SubmitMode::Each);
    let s = parse_suite("name = \"x\"\n[defaults]\nsubmit = \"batch\"\n[[test]]\nname = \"t\"\n")
        .unwrap();
    assert_eq!(s.tests[0].workloads[0].spec.submit, SubmitMode::Batch);
    let s = parse_suite(&one_test("qd = 4")).unwrap();
    assert_eq!(s.tests[0].workloads[0].spec.submit, SubmitMode::Auto);
    let e = suite_err(&one_test("submit = \"sometimes\""));
    assert!(e.contains("sometimes") && e.contains("line 4"), "{e}");
}

#[test]
fn compressible_and_dedupe_are_workload_keys() {
    let s = parse_suite(&one_test("compressible = 50\ndedupe = 30")).unwrap();
    let spec = &s.tests[0].workloads[0].spec;
    assert_eq!((spec.compressible_pct, spec.dedupe_pct), (50, 30));
    let s = parse_suite(&one_test("qd = 4")).unwrap();
    assert_eq!(s.tests[0].workloads[0].spec.compressible_pct, 0);
    let e = suite_err(&one_test("dedupe = 101"));
    assert!(e.contains("line 4"), "{e}");
}
