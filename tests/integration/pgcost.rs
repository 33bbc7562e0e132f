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

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const SCALE: &str = "10";
const LOOKUPS: i32 = 3000;
const PORT: u16 = 54329;
const PAGE_BYTES: u64 = 8192;

#[test]
fn a_disk_read_costs_postgres_cpu_and_the_warm_run_reads_nothing() {
    let Some(bin) = pg_bin() else {
        let why = "PostgreSQL 15 or later is not installed (/usr/lib/postgresql/N/bin; \
                   apt-get install postgresql)";
        if std::env::var_os("CI").is_some() {
            panic!("the PostgreSQL page-cost test cannot run under CI: {why}");
        }
        eprintln!("skipping: {why}");
        return;
    };
    let mut pg = Cluster::new(bin);
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

/// Writes back and drops from the page cache every file in `dir` (the server stopped); how
/// many files.
fn drop_from_page_cache(dir: &Path) -> usize {
    use std::os::fd::AsRawFd;
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if !path.is_file() {
            continue;
        }
        let f = std::fs::File::open(&path).unwrap();
        // dirty pages are not dropped: write them back first
        f.sync_all().unwrap();
        // SAFETY: the descriptor is open for the call's duration (owned by `f`); fadvise only
        // reads its arguments.
        let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert_eq!(rc, 0, "posix_fadvise {path:?}");
        n += 1;
    }
    n
}

/// The newest Debian PostgreSQL of version 15 or later with the programs the test runs.
fn pg_bin() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            let complete = ["postgres", "initdb", "pg_ctl", "pgbench"]
                .iter()
                .all(|p| bin.join(p).is_file());
            (v >= 15 && complete).then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

/// A cluster of the test's own, stopped and removed when dropped, whatever the test did.
struct Cluster {
    bin: PathBuf,
    /// the `postgres` user's uid and gid when we are root (PostgreSQL refuses to run as root)
    owner: Option<(u32, u32)>,
    running: bool,
    // last: removed after `drop` stopped the server
    dir: tempfile::TempDir,
}

impl Cluster {
    fn new(bin: PathBuf) -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("iocap-pgcost-")
            .tempdir_in("/var/tmp")
            .unwrap();
        // SAFETY: geteuid has no preconditions and cannot fail.
        let owner = (unsafe { libc::geteuid() } == 0).then(postgres_user);
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
        }
        let pg = Cluster {
            bin,
            owner,
            running: false,
            dir,
        };
        let data = pg.data();
        let data_s = data.to_str().unwrap();
        pg.run(
            "initdb",
            &["-D", data_s, "-A", "trust", "-U", "postgres", "--no-sync"],
        );
        let conf = format!(
            "listen_addresses = ''\nunix_socket_directories = '{}'\nport = {PORT}\n\
             shared_buffers = 64MB\nfsync = off\nautovacuum = off\n",
            pg.dir.path().display()
        );
        let path = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&conf);
        std::fs::write(&path, text).unwrap();
        pg
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs one of PostgreSQL's programs (as `postgres` when we are root) against this cluster;
    /// its stdout, or a panic with its stderr.
    fn run(&self, prog: &str, args: &[&str]) -> String {
        let out = self.command(prog, args).output().unwrap();
        assert!(
            out.status.success(),
            "{prog} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn command(&self, prog: &str, args: &[&str]) -> Command {
        let mut c = Command::new(self.bin.join(prog));
        c.args(args)
            .current_dir(self.dir.path())
            .env("PGHOST", self.dir.path())
            .env("PGPORT", PORT.to_string())
            .env("PGUSER", "postgres")
            .env("PGDATABASE", "postgres");
        if let Some((uid, gid)) = self.owner {
            c.uid(uid).gid(gid);
        }
        c
    }

    fn start(&mut self) {
        let (data, log) = (self.data(), self.dir.path().join("log"));
        let (data, log) = (data.to_str().unwrap(), log.to_str().unwrap());
        self.run("pg_ctl", &["-D", data, "-l", log, "-w", "start"]);
        self.running = true;
    }

    fn stop(&mut self) {
        let data = self.data();
        self.run(
            "pg_ctl",
            &["-D", data.to_str().unwrap(), "-w", "-m", "fast", "stop"],
        );
        self.running = false;
    }

    fn connect(&self) -> postgres::Client {
        postgres::Config::new()
            .host_path(self.dir.path())
            .port(PORT)
            .user("postgres")
            .dbname("postgres")
            .connect(postgres::NoTls)
            .unwrap()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.running {
            let data = self.data();
            let _ = self
                .command(
                    "pg_ctl",
                    &[
                        "-D",
                        data.to_str().unwrap(),
                        "-w",
                        "-m",
                        "immediate",
                        "stop",
                    ],
                )
                .output();
        }
    }
}

/// The `postgres` user's uid and gid.
fn postgres_user() -> (u32, u32) {
    let name = std::ffi::CString::new("postgres").unwrap();
    // SAFETY: `name` is a valid C string; getpwnam returns null or a pointer to a static
    // record, read at once, before any other call that could overwrite it.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(
        !pw.is_null(),
        "running as root, but there is no `postgres` user"
    );
    // SAFETY: not null, checked above.
    unsafe { ((*pw).pw_uid, (*pw).pw_gid) }
}
