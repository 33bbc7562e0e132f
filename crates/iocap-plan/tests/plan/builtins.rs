use crate::validate_with_target;
use iocap_model::{BsWeight, Burst, RwMode};
use iocap_plan::*;

#[test]
fn builtin_names_in_order() {
    let profiles: Vec<String> = builtin_profiles().into_iter().map(|p| p.name).collect();
    assert_eq!(profiles, ["sqlserver", "postgres", "mysql", "oracle"]);
    let suites: Vec<String> = builtin_suites().into_iter().map(|s| s.name).collect();
    assert_eq!(
        suites,
        ["quick", "sqlio-classic", "oltp", "dss", "edge-matrix"]
    );
}

#[test]
fn every_builtin_spec_validates_once_a_target_is_filled_in() {
    for p in builtin_profiles() {
        for w in &p.workloads {
            assert!(ROLES.contains(&w.role), "{}/{}", p.name, w.key);
            assert_eq!(w.spec.name, w.key);
            validate_with_target(&w.spec);
        }
    }
    for s in builtin_suites() {
        assert!(!s.tests.is_empty(), "{}", s.name);
        for t in &s.tests {
            for w in &t.workloads {
                assert!(ROLES.contains(&w.role), "{}/{}", s.name, t.name);
                validate_with_target(&w.spec);
            }
        }
    }
}

#[test]
fn every_profile_has_every_kind_of_workload() {
    let keys = [
        "data-random-read",
        "data-checkpoint-write",
        "oltp-mix",
        "log-write",
        "log-read",
        "read-ahead-64k",
        "read-ahead-256k",
        "read-ahead-512k",
        "read-ahead-1m",
        "bulk-load",
        "backup-read",
        "backup-write",
        "temp",
    ];
    for p in builtin_profiles() {
        let got: Vec<&str> = p.workloads.iter().map(|w| w.key.as_str()).collect();
        assert_eq!(got, keys, "{}", p.name);
        let w = |k: &str| p.workload(k).unwrap();
        let page = p.page_bytes;

        let s = &w("data-random-read").spec;
        assert_eq!(
            (s.rw, s.bs_bytes, w("data-random-read").role.name()),
            (RwMode::RandRead, page, "data")
        );
        let s = &w("data-checkpoint-write").spec;
        assert_eq!((s.rw, s.bs_bytes), (RwMode::RandWrite, page));
        assert!(s.burst.is_some(), "{}: checkpoints come in bursts", p.name);
        let s = &w("oltp-mix").spec;
        assert_eq!((s.rw, s.write_pct, s.bs_bytes), (RwMode::RandRw, 30, page));

        let log = w("log-write");
        assert_eq!(log.role, "log");
        assert_eq!((log.spec.rw, log.spec.qd), (RwMode::Write, 1));
        assert!(
            log.spec.write_through && log.spec.direct,
            "{}: log writes are durable",
            p.name
        );
        let read = w("log-read");
        assert_eq!((read.role.name(), read.spec.rw), ("log", RwMode::Read));

        for (key, kb) in [
            ("read-ahead-64k", 64),
            ("read-ahead-256k", 256),
            ("read-ahead-512k", 512),
            ("read-ahead-1m", 1024),
        ] {
            let s = &w(key).spec;
            assert_eq!(
                (s.rw, s.bs_bytes),
                (RwMode::Read, kb << 10),
                "{}/{key}",
                p.name
            );
        }
        let s = &w("bulk-load").spec;
        assert_eq!((s.rw, s.bs_bytes), (RwMode::Write, 128 << 10));

        let (r, wr) = (w("backup-read"), w("backup-write"));
        assert_eq!(
            (r.role.name(), r.spec.rw, r.spec.bs_bytes),
            ("data", RwMode::Read, 1 << 20)
        );
        assert_eq!(
            (wr.role.name(), wr.spec.rw, wr.spec.bs_bytes),
            ("backup", RwMode::Write, 1 << 20)
        );
        assert_eq!(wr.concurrent_with.as_deref(), Some("backup-read"));

        let t = w("temp");
        assert_eq!(
            (t.role.name(), t.spec.rw, t.spec.write_pct, t.spec.bs_bytes),
            ("temp", RwMode::RandRw, 50, 64 << 10)
        );
    }
}

#[test]
fn page_sizes_and_log_shapes_per_family() {
    let page = |n: &str| profile(n).unwrap().page_bytes;
    assert_eq!(
        [
            page("sqlserver"),
            page("postgres"),
            page("mysql"),
            page("oracle")
        ],
        [8192, 8192, 16384, 8192]
    );

    let sql = profile("sqlserver").unwrap();
    let log = &sql.workload("log-write").unwrap().spec;
    let mix: Vec<(u64, u32)> = log
        .bs_split
        .iter()
        .map(|b| (b.bs_bytes, b.weight))
        .collect();
    assert_eq!(
        mix,
        [
            (512, 10),
            (4096, 30),
            (8192, 20),
            (16384, 15),
            (32768, 15),
            (61440, 10)
        ]
    );
    assert_eq!(log.bs_bytes, 60 << 10, "bs is the largest size of the mix");

    let pg = profile("postgres").unwrap();
    let wal = &pg.workload("log-write").unwrap().spec;
    assert_eq!((wal.bs_bytes, wal.bs_split.is_empty()), (8192, true));

    for name in ["mysql", "oracle"] {
        let p = profile(name).unwrap();
        let redo = &p.workload("log-write").unwrap().spec;
        assert_eq!(
            redo.bs_split.first(),
            Some(&BsWeight {
                bs_bytes: 512,
                weight: 10
            }),
            "{name}"
        );
    }
    for p in builtin_profiles() {
        let read = &p.workload("log-read").unwrap().spec;
        assert!(read.bs_bytes >= 64 << 10, "{}", p.name);
    }
}

#[test]
fn profile_as_suite_runs_the_backup_pair_together() {
    let p = profile("sqlserver").unwrap();
    let groups = p.groups();
    assert_eq!(groups.len(), p.workloads.len() - 1);
    let s = p.suite();
    let backup = s
        .tests
        .iter()
        .find(|t| t.name == "backup-read + backup-write")
        .unwrap();
    let roles: Vec<&str> = backup.workloads.iter().map(|w| w.role.name()).collect();
    assert_eq!(roles, ["data", "backup"]);
    let ck = &p.workload("data-checkpoint-write").unwrap().spec;
    assert_eq!(
        ck.burst,
        Some(Burst {
            on_s: 10.0,
            off_s: 20.0
        })
    );
}

#[test]
fn quick_is_a_few_minutes_of_database_shapes() {
    let s = suite("quick").unwrap();
    let shapes: Vec<(RwMode, u64, u32, bool, &str)> = s
        .tests
        .iter()
        .map(|t| {
            let w = &t.workloads[0];
            (
                w.spec.rw,
                w.spec.bs_bytes,
                w.spec.qd,
                w.spec.write_through,
                w.role.name(),
            )
        })
        .collect();
    assert_eq!(
        shapes,
        [
            (RwMode::RandRead, 8192, 32, false, "data"),
            (RwMode::RandWrite, 8192, 32, false, "data"),
            (RwMode::Write, 8192, 1, true, "log"),
            (RwMode::Read, 1 << 20, 8, false, "data"),
        ]
    );
    assert!(s.estimated_s() <= 300.0, "{}", s.estimated_s());
    assert_eq!(s.estimated_s(), 4.0 * 35.0 + 3.0 * 10.0);
}

#[test]
fn edge_matrix_expands_96_tests_rw_then_bs_then_qd() {
    let s = suite("edge-matrix").unwrap();
    assert_eq!(s.tests.len(), 4 * 3 * 8);
    let rws = [
        RwMode::Read,
        RwMode::Write,
        RwMode::RandRead,
        RwMode::RandWrite,
    ];
    let sizes = [8 << 10, 64 << 10, 256 << 10];
    let qds = [1, 2, 4, 8, 16, 32, 64, 128];
    let mut i = 0;
    for rw in rws {
        for bs in sizes {
            for qd in qds {
                let t = &s.tests[i];
                let spec = &t.workloads[0].spec;
                assert_eq!(
                    (spec.rw, spec.bs_bytes, spec.qd),
                    (rw, bs, qd),
                    "test {i}: {}",
                    t.name
                );
                assert_eq!(spec.name, t.name);
                i += 1;
            }
        }
    }
    assert_eq!(s.tests[0].name, "edge read 8K qd1");
    assert_eq!(s.tests[95].name, "edge randwrite 256K qd128");
}

#[test]
fn oltp_steps_queue_depth_with_the_log_at_qd1_beside_the_mix() {
    let s = suite("oltp").unwrap();
    assert_eq!(s.tests.len(), 3 * 7);
    let mixes: Vec<_> = s.tests.iter().filter(|t| t.workloads.len() == 2).collect();
    assert_eq!(mixes.len(), 7);
    for (t, qd) in mixes.iter().zip([1, 2, 4, 8, 16, 32, 64]) {
        let (mix, log) = (&t.workloads[0], &t.workloads[1]);
        assert_eq!(
            (
                mix.role.name(),
                mix.spec.rw,
                mix.spec.write_pct,
                mix.spec.qd
            ),
            ("data", RwMode::RandRw, 30, qd)
        );
        assert_eq!(
            (
                log.role.name(),
                log.spec.rw,
                log.spec.qd,
                log.spec.write_through
            ),
            ("log", RwMode::Write, 1, true)
        );
        assert_eq!(mix.spec.name, format!("{} / mix", t.name));
    }
}

#[test]
fn dss_reads_large_blocks_and_scans_while_loading() {
    let s = suite("dss").unwrap();
    assert_eq!(s.tests.len(), 5 * 3 + 1);
    assert!(s.tests[..15]
        .iter()
        .all(|t| t.workloads[0].spec.rw == RwMode::Read));
    let last = s.tests.last().unwrap();
    let shapes: Vec<(RwMode, u64)> = last
        .workloads
        .iter()
        .map(|w| (w.spec.rw, w.spec.bs_bytes))
        .collect();
    assert_eq!(
        shapes,
        [(RwMode::Read, 512 << 10), (RwMode::Write, 128 << 10)]
    );
}

#[test]
fn lists_and_rendering() {
    let list = list_suites();
    assert_eq!(list.len(), 5);
    for (row, s) in list.iter().zip(builtin_suites()) {
        assert_eq!(
            (row.tests, row.estimated_s),
            (s.tests.len(), s.estimated_s())
        );
        assert!(!row.description.is_empty(), "{}", row.name);
        let text = s.render();
        assert_eq!(text.lines().count(), 2 + s.tests.len(), "{}", s.name);
        assert!(text.lines().nth(2).unwrap().contains(&s.tests[0].name));
    }
    let edge = list.iter().find(|r| r.name == "edge-matrix").unwrap();
    assert_eq!(edge.estimated_s, 96.0 * 35.0 + 95.0 * 10.0);
    let profiles = list_profiles();
    assert_eq!(profiles.len(), 4);
    assert!(profiles
        .iter()
        .all(|p| p.workloads == 13 && p.estimated_s > 0.0));
    let oltp = suite("oltp").unwrap().render();
    assert!(
        oltp.contains("data: randrw 30% writes 8K qd64 | log: write 8K qd1 O_DSYNC"),
        "{oltp}"
    );
}

#[test]
fn unknown_names_list_the_builtins() {
    let e = suite("olpt").unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown suite 'olpt'; the built-in ones are: quick, sqlio-classic, oltp, dss, edge-matrix"
    );
    let e = profile("db2").unwrap_err().to_string();
    assert!(e.contains("sqlserver, postgres, mysql, oracle"), "{e}");
}
