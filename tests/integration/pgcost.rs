//! What a disk read costs PostgreSQL in CPU (issue 25, point 4): the method of
//! `bench/pg-page-cost.py` at a small scale, on a real server. A cluster of the test's own
//! (initdb into a new directory under /var/tmp, a Unix socket there, no TCP), pgbench scale 10,
//! 3,000 lookups by primary key run cold (the server restarted, the database's files dropped
//! from the page cache) and then warm (the same keys again, their pages now in shared_buffers);
//! the backend's CPU from /proc/<pid>/schedstat, the pages it read from pg_statio_user_tables.
//!
//! Cold uses `posix_fadvise(POSIX_FADV_DONTNEED)` on the database's files, not drop_caches: the
//! other tests of this binary run beside this one, and some of them (cache scans, cache-hit
//! points) would lose their page cache too. The bench uses drop_caches.
//!
//! Skipped with a message where PostgreSQL 15 or later is not installed (Debian's layout,
//! /usr/lib/postgresql/N/bin); under CI, which installs it, it fails instead.

use crate::pg::{drop_from_page_cache, pg_bin_or_skip, Cluster};

const SCALE: &str = "10";
const LOOKUPS: i32 = 3000;
const PORT: u16 = 54329;
const PAGE_BYTES: u64 = 8192;

#[test]
fn a_disk_read_costs_postgres_cpu_and_the_warm_run_reads_nothing() {
    let Some(bin) = pg_bin_or_skip("PostgreSQL page-cost test") else {
        return;
    };
    let conf = "shared_buffers = 64MB\nfsync = off\nautovacuum = off\n";
    let mut pg = Cluster::in_var_tmp(bin, PORT, conf);
    pg.start();
    pg.run("pgbench", &["-i", "-q", "-I", "dtGvp", "-s", SCALE]);
    let mut c = pg.connect();
    let rel: String = c
        .query_one("SELECT pg_relation_filepath('pgbench_accounts')", &[])
        .unwrap()
        .get(0);
    let db_dir = pg.data().join(rel).parent().unwrap().to_path_buf();
    let rows: i32 = c
        .query_one("SELECT max(aid) FROM pgbench_accounts", &[])
        .unwrap()
        .get(0);
    drop(c);

    // cold: the server restarted, every page of the database out of the page cache
    pg.stop();
    let dropped = drop_from_page_cache(&db_dir);
    pg.start();
    let mut c = pg.connect();
    let stmt = c
        .prepare("SELECT abalance FROM pgbench_accounts WHERE aid = $1")
        .unwrap();
    for _ in 0..6 {
        // catalogs, the plan and the index's root: before the window
        c.query_one(&stmt, &[&1i32]).unwrap();
    }
    // random keys (splitmix64, a fixed seed): random heap and index pages
    let mut seed = 0x1234_5678_9abc_def0u64;
    let keys: Vec<i32> = (0..LOOKUPS)
        .map(|_| 2 + (splitmix64(&mut seed) % (rows as u64 - 1)) as i32)
        .collect();
    let cold = measured(&mut c, &stmt, &keys);
    let warm = measured(&mut c, &stmt, &keys);
    let per_page_us = (cold.cpu_ns as f64 - warm.cpu_ns as f64) / 1e3 / cold.pages as f64;
    eprintln!(
        "{LOOKUPS} lookups, {dropped} files dropped from the page cache: cold {} pages read, \
         {} bytes from the device, {:.1} ms CPU; warm {} pages, {:.1} ms; \
         {per_page_us:.1} µs CPU per page read",
        cold.pages,
        cold.device_bytes,
        cold.cpu_ns as f64 / 1e6,
        warm.pages,
        warm.cpu_ns as f64 / 1e6
    );
    assert!(dropped > 0, "no file of the database in {db_dir:?}");
    // about 2,800 heap and 1,800 index pages at this scale; at least one page per two lookups
    assert!(
        cold.pages >= i64::from(LOOKUPS) / 2,
        "the cold lookups read only {} pages into shared_buffers",
        cold.pages
    );
    assert!(
        cold.device_bytes as f64 >= 0.9 * (cold.pages as u64 * PAGE_BYTES) as f64,
        "the cold run's {} pages came from the page cache: only {} bytes from the device",
        cold.pages,
        cold.device_bytes
    );
    assert!(
        warm.pages <= cold.pages / 100,
        "the warm run read {} pages (cold {}): its pages were not in shared_buffers",
        warm.pages,
        cold.pages
    );
    assert!(
        (1.0..=500.0).contains(&per_page_us),
        "{per_page_us:.1} µs of CPU per page read is outside 1-500 µs"
    );
}

/// The next number of the splitmix64 sequence (Steele, Lea and Flood).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What one batch of lookups cost the backend.
struct Window {
    cpu_ns: u64,
    pages: i64,
    device_bytes: u64,
}

/// Runs the lookups between two readings of the backend's own counters (its CPU and device
/// bytes from /proc, the pages it read from pg_statio_user_tables, flushed on demand).
fn measured(c: &mut postgres::Client, stmt: &postgres::Statement, keys: &[i32]) -> Window {
    let pid: i32 = c.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let pages_read = |c: &mut postgres::Client| -> i64 {
        // the backend's pending counters are flushed when it next goes idle
        c.execute("SELECT pg_stat_force_next_flush()", &[]).unwrap();
        c.query_one(
            "SELECT sum(heap_blks_read + coalesce(idx_blks_read, 0))::int8 \
             FROM pg_statio_user_tables",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let p0 = pages_read(c);
    let (cpu0, dev0) = proc_counters(pid);
    for k in keys {
        c.query_one(stmt, &[k]).unwrap();
    }
    let (cpu1, dev1) = proc_counters(pid);
    Window {
        cpu_ns: cpu1 - cpu0,
        pages: pages_read(c) - p0,
        device_bytes: dev1 - dev0,
    }
}

/// (CPU ns, bytes read from the device) of a process: /proc/PID/schedstat's run time (the
/// exact figure that utime + stime round to clock ticks) and /proc/PID/io's read_bytes.
fn proc_counters(pid: i32) -> (u64, u64) {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/{f}"))
            .unwrap_or_else(|e| panic!("/proc/{pid}/{f}: {e}"))
    };
    let cpu_ns = read("schedstat")
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .expect("/proc/PID/schedstat starts with the run time in ns");
    let io = read("io");
    let device = io
        .lines()
        .find_map(|l| l.strip_prefix("read_bytes: "))
        .and_then(|s| s.trim().parse().ok())
        .expect("/proc/PID/io has read_bytes (task I/O accounting)");
    (cpu_ns, device)
}
