//! The store on both databases: every test runs on a fresh SQLite file and, where a server is
//! reachable, on a fresh PostgreSQL schema (required under CI, where .ci/run starts one).

use iocap_model::fixture::{run, FixtureRun};
use iocap_model::hist::{decode_hist, quantile_us};
use iocap_model::{RunResult, RwMode};
use iocap_store::{Filter, Location, Store, StoreError};

mod pg {
    use iocap_store::Location;
    use std::sync::atomic::{AtomicU32, Ordering};

    pub fn url() -> String {
        std::env::var("IOCAP_TEST_PG")
            .unwrap_or_else(|_| "postgres://iocap:iocap@127.0.0.1:5432/iocap_test".into())
    }

    /// A fresh, empty schema in the test database, or `None` (with a message) without a server.
    pub fn location() -> Option<Location> {
        static N: AtomicU32 = AtomicU32::new(0);
        let url = url();
        let mut client = match postgres::Client::connect(&url, postgres::NoTls) {
            Ok(c) => c,
            Err(e) => {
                if std::env::var_os("CI").is_some() {
                    panic!("PostgreSQL at {url} is required under CI (.ci/run starts it): {e}");
                }
                eprintln!(
                    "skipping the PostgreSQL half of this test: no server at {url} ({e}); \
                     run .ci/postgres.sh as root to start one"
                );
                return None;
            }
        };
        let schema = format!(
            "t{}_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
            ))
            .unwrap();
        let sep = if url.contains('?') { '&' } else { '?' };
        Some(Location::Postgres(format!(
            "{url}{sep}options=-csearch_path%3D{schema}"
        )))
    }
}

/// Runs `body` on a fresh SQLite store, then on a fresh PostgreSQL one where reachable.
fn on_both(body: impl Fn(&Location)) {
    let dir = tempfile::tempdir().unwrap();
    body(&Location::Sqlite(dir.path().join("results.db")));
    if let Some(l) = pg::location() {
        body(&l);
    }
}

fn at(day: u64, f: FixtureRun) -> RunResult {
    run(&FixtureRun {
        started_unix_s: 1_795_312_800 + day * 86_400,
        salt: day,
        ..f
    })
}

fn sample() -> RunResult {
    let mut r = run(&FixtureRun {
        rw: RwMode::RandRw,
        targets: vec!["/data/a.dat".into(), "/log/b.dat".into()],
        label: Some("san-a raid10, 'before' firmware".into()),
        tags: vec!["raid10".into(), "san-a".into()],
        note: Some("controller cache: write-back\nsecond line".into()),
        ..FixtureRun::default()
    });
    r.tests[0].warnings = vec!["served from cache?".into(), "another".into()];
    r
}

#[test]
fn what_was_saved_is_what_comes_back_percentiles_included() {
    on_both(|loc| {
        let mut s = Store::open(loc).unwrap();
        let mut r = sample();
        // an interrupted run stays one: show, report and history say it is partial
        r.interrupted_by = Some("SIGTERM".into());
        s.save(&r).unwrap();
        let back = s.load(&r.run_id).unwrap();
        assert!(back == r, "the stored result differs from the saved one");
        assert_eq!(back.interrupted_by.as_deref(), Some("SIGTERM"));
        // the histograms were stored as rows too, and give back the same percentiles
        let hists = s.histograms(&r.run_id).unwrap();
        let scopes: Vec<&str> = hists.iter().map(|h| h.1.as_str()).collect();
        assert_eq!(scopes, ["read", "target:0", "target:1", "total", "write"]);
        let total = &hists.iter().find(|h| h.1 == "total").unwrap().2;
        let h = hdrhistogram::serialization::Deserializer::new()
            .deserialize::<u64, _>(&mut total.as_slice())
            .unwrap();
        let l = r.tests[0].total.lat_us.as_ref().unwrap();
        assert_eq!(h.len(), r.tests[0].total.ios);
        for (q, want) in [(0.5, l.p50), (0.99, l.p99), (0.999, l.p99_9)] {
            assert_eq!(quantile_us(&h, q), want, "quantile {q}");
        }
    });
}

#[test]
fn merged_histograms_of_two_runs_give_the_combined_distribution() {
    on_both(|loc| {
        let mut s = Store::open(loc).unwrap();
        let fast = at(
            1,
            FixtureRun {
                p50_us: 100.0,
                ..Default::default()
            },
        );
        let slow = at(
            2,
            FixtureRun {
                p50_us: 1000.0,
                ..Default::default()
            },
        );
        s.save(&fast).unwrap();
        s.save(&slow).unwrap();
        let mut merged = decode_hist(
            s.load(&fast.run_id).unwrap().tests[0]
                .total
                .lat_hist_ns
                .as_ref()
                .unwrap(),
        )
        .unwrap();
        merged
            .add(
                decode_hist(
                    s.load(&slow.run_id).unwrap().tests[0]
                        .total
                        .lat_hist_ns
                        .as_ref()
                        .unwrap(),
                )
                .unwrap(),
            )
            .unwrap();
        assert_eq!(
            merged.len(),
            fast.tests[0].total.ios + slow.tests[0].total.ios
        );
        let p50 = quantile_us(&merged, 0.5);
        // half the I/Os are fast ones, so the merged median lies between the two medians
        assert!(p50 > 100.0 && p50 < 1000.0, "{p50}");
    });
}

#[test]
fn history_filters_and_orders() {
    on_both(|loc| {
        let mut s = Store::open(loc).unwrap();
        let runs = [
            at(
                0,
                FixtureRun {
                    hostname: "db01".into(),
                    label: Some("Before".into()),
                    tags: vec!["raid5".into()],
                    ..Default::default()
                },
            ),
            at(
                1,
                FixtureRun {
                    hostname: "db01".into(),
                    label: Some("after 100% tuning".into()),
                    tags: vec!["raid10".into()],
                    ..Default::default()
                },
            ),
            at(
                2,
                FixtureRun {
                    hostname: "db02".into(),
                    targets: vec!["/log/x".into()],
                    tags: vec!["raid10".into(), "log".into()],
                    ..Default::default()
                },
            ),
        ];
        for r in &runs {
            s.save(r).unwrap();
        }
        let ids = |f: Filter, s: &mut Store| -> Vec<String> {
            s.list(&f).unwrap().into_iter().map(|r| r.run_id).collect()
        };
        let all = ids(Filter::default(), &mut s);
        assert_eq!(
            all,
            [
                runs[2].run_id.clone(),
                runs[1].run_id.clone(),
                runs[0].run_id.clone()
            ],
            "newest first"
        );
        assert_eq!(
            ids(
                Filter {
                    host: Some("db02".into()),
                    ..Default::default()
                },
                &mut s
            ),
            [runs[2].run_id.clone()]
        );
        assert_eq!(
            ids(
                Filter {
                    label: Some("before".into()),
                    ..Default::default()
                },
                &mut s
            ),
            [runs[0].run_id.clone()]
        );
        // % in a filter is a character, not a wildcard
        assert_eq!(
            ids(
                Filter {
                    label: Some("100%".into()),
                    ..Default::default()
                },
                &mut s
            ),
            [runs[1].run_id.clone()]
        );
        assert_eq!(
            ids(
                Filter {
                    tag: Some("raid10".into()),
                    ..Default::default()
                },
                &mut s
            )
            .len(),
            2
        );
        assert_eq!(
            ids(
                Filter {
                    target: Some("/log/x".into()),
                    ..Default::default()
                },
                &mut s
            ),
            [runs[2].run_id.clone()]
        );
        assert_eq!(
            ids(
                Filter {
                    since: Some("2026-11-23".into()),
                    ..Default::default()
                },
                &mut s
            )
            .len(),
            2
        );
        assert_eq!(
            ids(
                Filter {
                    until: Some("2026-11-23".into()),
                    ..Default::default()
                },
                &mut s
            )
            .len(),
            2
        );
        assert_eq!(
            ids(
                Filter {
                    limit: 1,
                    ..Default::default()
                },
                &mut s
            ),
            [runs[2].run_id.clone()]
        );
        let line = &s
            .list(&Filter {
                host: Some("db02".into()),
                ..Default::default()
            })
            .unwrap()[0];
        assert_eq!(line.tags, ["raid10", "log"], "in the order given");
        assert_eq!(line.targets, ["/log/x"]);
        assert_eq!(line.workload, "randread 8K");
        assert!((line.iops - runs[2].tests[0].total.iops).abs() < 1e-6);
    });
}

/// A run of several hosts (MPI ranks): found by any host that took part, listed with its count.
#[test]
fn a_multi_host_run_is_found_by_each_of_its_hosts() {
    on_both(|loc| {
        let mut s = Store::open(loc).unwrap();
        let mut many = at(1, FixtureRun::default());
        let scope = |rank: u32, host: &str| iocap_model::RankScope {
            rank,
            host: host.into(),
            start_offset_us: 0.0,
            below_median: false,
            result: many.tests[0].clone(),
            host_info: None,
        };
        let ranks = vec![scope(0, "db01"), scope(1, "db02"), scope(2, "db03")];
        many.host.hostname = "db01".into();
        many.tests[0].ranks = Some(iocap_model::Ranks {
            start_spread_us: 3.0,
            merge_us: 100.0,
            ranks,
        });
        s.save(&many).unwrap();
        let mut alone = at(2, FixtureRun::default());
        alone.host.hostname = "db02".into();
        s.save(&alone).unwrap();
        let by = |host: &str| Filter {
            host: Some(host.into()),
            ..Filter::default()
        };
        let ids = |f: &Filter| -> Vec<String> {
            let mut s = Store::open(loc).unwrap();
            s.list(f).unwrap().into_iter().map(|r| r.run_id).collect()
        };
        assert_eq!(ids(&by("db03")), [many.run_id.clone()]);
        assert_eq!(
            ids(&by("db02")),
            [alone.run_id.clone(), many.run_id.clone()]
        );
        assert!(ids(&by("db0")).is_empty(), "exact names only");
        let listed = s.list(&Filter::default()).unwrap();
        assert_eq!(listed[1].ranks, 3);
        assert_eq!(listed[1].hosts_label(), "db01 +2");
        assert_eq!(listed[0].hosts_label(), "db02");
        // saved again (a checkpoint replaced by the finished run): the hosts once each
        s.save_or_replace(&many).unwrap();
        assert_eq!(ids(&by("db03")), [many.run_id.clone()]);
        s.delete(&[many.run_id.clone()]).unwrap();
        assert!(ids(&by("db03")).is_empty());
    });
}

#[test]
fn run_ids_resolve_by_prefix_and_last() {
    on_both(|loc| {
        let mut s = Store::open(loc).unwrap();
        let a = at(0, FixtureRun::default());
        let b = at(1, FixtureRun::default());
        s.save(&a).unwrap();
        s.save(&b).unwrap();
        assert_eq!(s.resolve("last").unwrap(), b.run_id);
        assert_eq!(s.resolve(&a.run_id[..12]).unwrap(), a.run_id);
        assert!(matches!(s.resolve("2026"), Err(StoreError::Ambiguous(..))));
        assert!(matches!(s.resolve("1999"), Err(StoreError::NotFound(_))));
        assert!(matches!(s.resolve("%"), Err(StoreError::NotFound(_))));
        assert!(matches!(s.save(&a), Err(StoreError::Duplicate(_))));
    });
}

#[test]
fn delete_prune_and_baselines() {
    on_both(|loc| {
        let mut s = Store::open(loc).unwrap();
        let old_base = at(0, FixtureRun::default());
        let old = at(1, FixtureRun::default());
        let new = at(40, FixtureRun::default());
        for r in [&old_base, &old, &new] {
            s.save(r).unwrap();
        }
        let t = vec!["/data/iocap.testfile".to_string()];
        s.baseline_set(&old_base.run_id, &t, "2026-12-01T00:00:00Z")
            .unwrap();
        let b = s.baselines(Some("db01")).unwrap();
        assert_eq!(
            (b.len(), b[0].run_id.as_str()),
            (1, old_base.run_id.as_str())
        );
        // pruning keeps the baseline's run
        let cutoff = "2026-12-15T00:00:00Z";
        let dry = s.prune(cutoff, true).unwrap();
        assert_eq!(dry.deleted, vec![old.run_id.clone()]);
        assert_eq!(
            s.list(&Filter::default()).unwrap().len(),
            3,
            "a dry run deletes nothing"
        );
        let done = s.prune(cutoff, false).unwrap();
        assert_eq!(done.deleted, vec![old.run_id.clone()]);
        assert_eq!(done.kept_baselines, vec![old_base.run_id.clone()]);
        assert!(matches!(s.load(&old.run_id), Err(StoreError::NotFound(_))));
        assert!(
            s.histograms(&old.run_id).unwrap().is_empty(),
            "rows go with the run"
        );
        // setting again replaces; deleting the run removes its baseline
        s.baseline_set(&new.run_id, &t, "2026-12-02T00:00:00Z")
            .unwrap();
        assert_eq!(s.baselines(None).unwrap()[0].run_id, new.run_id);
        assert_eq!(
            s.delete(&[new.run_id.clone(), "nope".into()]).unwrap(),
            vec![new.run_id.clone()]
        );
        assert!(s.baselines(None).unwrap().is_empty());
        s.baseline_set(&old_base.run_id, &t, "2026-12-03T00:00:00Z")
            .unwrap();
        assert_eq!(s.baseline_clear("db01", Some("/other")).unwrap(), 0);
        assert_eq!(s.baseline_clear("db01", None).unwrap(), 1);
    });
}

#[test]
fn a_run_saved_again_is_replaced_whole_and_keeps_its_baseline() {
    on_both(|loc| {
        let mut s = Store::open(loc).unwrap();
        let mut r = at(0, FixtureRun::default());
        s.save_or_replace(&r).unwrap();
        s.baseline_set(
            &r.run_id,
            &["/data/iocap.testfile".into()],
            "2026-12-01T00:00:00Z",
        )
        .unwrap();
        // a suite's second test finishes: the run is saved again with both
        let mut second = r.tests[0].clone();
        second.name = "second".into();
        r.tests.push(second);
        s.save_or_replace(&r).unwrap();
        let back = s.load(&r.run_id).unwrap();
        assert_eq!(back.tests.len(), 2);
        assert_eq!(s.list(&Filter::default()).unwrap()[0].tests, 2);
        assert_eq!(
            s.histograms(&r.run_id)
                .unwrap()
                .iter()
                .filter(|h| h.1 == "total")
                .count(),
            2
        );
        assert_eq!(s.baselines(None).unwrap().len(), 1, "the baseline stays");
        assert!(
            matches!(s.save(&r), Err(StoreError::Duplicate(_))),
            "save alone never replaces"
        );
    });
}

#[test]
fn concurrent_writers_lose_nothing() {
    on_both(|loc| {
        Store::open(loc).unwrap();
        let threads: Vec<_> = (0..4u64)
            .map(|w| {
                let loc = loc.clone();
                std::thread::spawn(move || {
                    let mut s = Store::open(&loc).unwrap();
                    for i in 0..15u64 {
                        s.save(&run(&FixtureRun {
                            started_unix_s: 1_795_312_800 + w * 1000 + i,
                            salt: w * 1000 + i,
                            duration_s: 2,
                            iops: 2000.0,
                            ..Default::default()
                        }))
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut s = Store::open(loc).unwrap();
        assert_eq!(s.list(&Filter::default()).unwrap().len(), 60);
    });
}

#[test]
fn an_empty_store_is_created_at_the_current_version() {
    on_both(|loc| {
        let mut s = Store::open(loc).unwrap();
        assert_eq!(s.schema_version().unwrap(), iocap_store::schema::CURRENT);
        assert!(s.list(&Filter::default()).unwrap().is_empty());
        // opening again is a no-op
        drop(s);
        let mut s = Store::open(loc).unwrap();
        assert_eq!(s.schema_version().unwrap(), iocap_store::schema::CURRENT);
    });
}

#[test]
fn a_store_at_the_previous_version_is_migrated_with_its_runs() {
    on_both(|loc| {
        let r = sample();
        {
            // what an iocap of schema version 1 wrote
            let mut db = Store::open_raw(loc).unwrap();
            iocap_store::schema::migrate_to(db.as_mut(), 1).unwrap();
            db.exec(
                "INSERT INTO runs (run_id, started_at, saved_at, iocap_version, hostname, kernel, \
                 cpu_model, cpus, memory_bytes, label, note, tags, test_count, workload, targets, \
                 iops, mb_s, lat_us_p99, result_json) VALUES \
                 (?, ?, ?, '0.1.0', 'db01', 'k', 'c', 2, 1, NULL, NULL, '', 1, 'randrw 8K', \
                 '/data/a.dat', 1.0, 1.0, NULL, ?)",
                &[
                    r.run_id.as_str().into(),
                    r.started_at.as_str().into(),
                    r.started_at.as_str().into(),
                    serde_json::to_string(&r).unwrap().into(),
                ],
            )
            .unwrap();
            assert_eq!(iocap_store::schema::version(db.as_mut()).unwrap(), 1);
        }
        let mut s = Store::open(loc).unwrap();
        assert_eq!(s.schema_version().unwrap(), iocap_store::schema::CURRENT);
        assert!(s.load(&r.run_id).unwrap() == r, "the migrated run differs");
        // what versions 2 and 3 added works on the migrated store
        s.baseline_set(&r.run_id, &["/data/a.dat".into()], "2026-12-01T00:00:00Z")
            .unwrap();
        s.save(&at(5, FixtureRun::default())).unwrap();
        assert_eq!(s.list(&Filter::default()).unwrap().len(), 2);
    });
}

#[test]
fn a_store_from_a_newer_iocap_is_refused_not_misread() {
    on_both(|loc| {
        Store::open(loc).unwrap();
        let mut db = Store::open_raw(loc).unwrap();
        db.exec(
            "UPDATE iocap_meta SET value = '99' WHERE key = 'schema_version'",
            &[],
        )
        .unwrap();
        drop(db);
        let e = Store::open(loc)
            .err()
            .expect("a newer store must be refused");
        assert!(matches!(e, StoreError::TooNew { store: 99, .. }), "{e}");
        assert!(e.to_string().contains("newer iocap"), "{e}");
    });
}

#[test]
fn a_file_that_is_not_a_store_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("not.db");
    std::fs::write(
        &p,
        b"this is not a database, it is a text file of some length....",
    )
    .unwrap();
    let e = Store::open(&Location::Sqlite(p)).err().expect("must fail");
    assert!(e.to_string().contains("not"), "{e}");
}

/// The runs a finished run is held against for a stored burst bucket: those of its host that
/// measured a bucket (`saturation.bucket`) on one of its paths or devices, newest first.
#[test]
fn the_runs_that_measured_a_bucket_on_a_target_are_found_newest_first() {
    on_both(|loc| {
        let mut s = Store::open(loc).unwrap();
        let with_bucket = |day, target: &str| {
            let mut r = at(
                day,
                FixtureRun {
                    targets: vec![target.into()],
                    ..FixtureRun::default()
                },
            );
            r.saturation = Some(iocap_model::Saturation {
                bucket: Some(iocap_model::BurstBucket::default()),
                ..Default::default()
            });
            r
        };
        let (old, new) = (with_bucket(1, "/data/a.dat"), with_bucket(2, "/data/a.dat"));
        let other = with_bucket(3, "/log/b.dat");
        let mut elsewhere = with_bucket(4, "/data/a.dat");
        elsewhere.host.hostname = "db02".into();
        let plain = at(5, FixtureRun::default());
        for r in [&old, &new, &other, &elsewhere, &plain] {
            s.save(r).unwrap();
        }
        let paths = ["/data/a.dat".to_string()];
        let ids = s.bucket_runs("db01", &paths, &[], 50).unwrap();
        assert_eq!(ids, [new.run_id.clone(), old.run_id.clone()]);
        // by the device: every fixture target is on nvme0n1p2
        let ids = s
            .bucket_runs("db01", &[], &["nvme0n1p2".into()], 1)
            .unwrap();
        assert_eq!(ids, std::slice::from_ref(&other.run_id));
        assert!(s.bucket_runs("db01", &[], &[], 50).unwrap().is_empty());
    });
}
