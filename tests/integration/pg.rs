//! A PostgreSQL cluster of a test's own, for the tests that run the real server: `pgcost` (in a
//! new directory under /var/tmp) and `devices::pgloop` (on an ext4 file system on a loop device,
//! so that the device sees only PostgreSQL's I/O). initdb into a new directory, a Unix socket
//! there and no TCP, the server run as `postgres` when the tests run as root (PostgreSQL refuses
//! root), stopped whatever the test did. Debian's layout: /usr/lib/postgresql/N/bin.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The newest Debian PostgreSQL of version 15 or later with the programs the tests run, or,
/// where there is none, `None` after printing `skipping: ...`; under CI (`CI` set), which
/// installs it, a panic naming `test` instead.
pub fn pg_bin_or_skip(test: &str) -> Option<PathBuf> {
    let found = pg_bin();
    if found.is_none() {
        let why = "PostgreSQL 15 or later is not installed (/usr/lib/postgresql/N/bin; \
                   apt-get install postgresql)";
        if std::env::var_os("CI").is_some() {
            panic!("the {test} cannot run under CI: {why}");
        }
        eprintln!("skipping: {why}");
    }
    found
}

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

/// A cluster of the test's own, stopped (and, when it made its directory, removed) when
/// dropped, whatever the test did.
pub struct Cluster {
    bin: PathBuf,
    /// the `postgres` user's uid and gid when we are root (PostgreSQL refuses to run as root)
    owner: Option<(u32, u32)>,
    port: u16,
    running: bool,
    root: PathBuf,
    // last: removed after `drop` stopped the server
    _dir: Option<tempfile::TempDir>,
}

impl Cluster {
    /// A cluster in a new directory under /var/tmp, with `conf` appended to postgresql.conf.
    pub fn in_var_tmp(bin: PathBuf, port: u16, conf: &str) -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("iocap-pg-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let root = dir.path().to_path_buf();
        Cluster::init(bin, root, Some(dir), port, conf)
    }

    /// A cluster in `root` (which must exist, and is given to `postgres`), its data directory
    /// `root/data`, with `conf` appended to postgresql.conf.
    pub fn in_dir(bin: PathBuf, root: &Path, port: u16, conf: &str) -> Cluster {
        Cluster::init(bin, root.to_path_buf(), None, port, conf)
    }

    fn init(
        bin: PathBuf,
        root: PathBuf,
        dir: Option<tempfile::TempDir>,
        port: u16,
        conf: &str,
    ) -> Cluster {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let owner = (unsafe { libc::geteuid() } == 0).then(postgres_user);
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&root, Some(uid), Some(gid)).unwrap();
        }
        let pg = Cluster {
            bin,
            owner,
            port,
            running: false,
            root,
            _dir: dir,
        };
        let data = pg.data();
        let data_s = data.to_str().unwrap();
        pg.run(
            "initdb",
            &["-D", data_s, "-A", "trust", "-U", "postgres", "--no-sync"],
        );
        let conf = format!(
            "listen_addresses = ''\nunix_socket_directories = '{}'\nport = {port}\n{conf}",
            pg.root.display()
        );
        let path = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&conf);
        std::fs::write(&path, text).unwrap();
        pg
    }

    pub fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    /// Runs one of PostgreSQL's programs (as `postgres` when we are root) against this cluster;
    /// its stdout, or a panic with its stderr.
    pub fn run(&self, prog: &str, args: &[&str]) -> String {
        let out = self.command(prog, args).output().unwrap();
        assert!(
            out.status.success(),
            "{prog} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn command(&self, prog: &str, args: &[&str]) -> Command {
        let mut c = Command::new(self.bin.join(prog));
        c.args(args)
            .current_dir(&self.root)
            .env("PGHOST", &self.root)
            .env("PGPORT", self.port.to_string())
            .env("PGUSER", "postgres")
            .env("PGDATABASE", "postgres");
        if let Some((uid, gid)) = self.owner {
            c.uid(uid).gid(gid);
        }
        c
    }

    pub fn start(&mut self) {
        let (data, log) = (self.data(), self.root.join("log"));
        let (data, log) = (data.to_str().unwrap(), log.to_str().unwrap());
        self.run("pg_ctl", &["-D", data, "-l", log, "-w", "start"]);
        self.running = true;
    }

    pub fn stop(&mut self) {
        let data = self.data();
        self.run(
            "pg_ctl",
            &["-D", data.to_str().unwrap(), "-w", "-m", "fast", "stop"],
        );
        self.running = false;
    }

    pub fn connect(&self) -> postgres::Client {
        postgres::Config::new()
            .host_path(&self.root)
            .port(self.port)
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

/// Writes back and drops from the page cache every file under `dir`, its subdirectories too
/// (the server stopped); how many files.
pub fn drop_from_page_cache(dir: &Path) -> usize {
    use std::os::fd::AsRawFd;
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            n += drop_from_page_cache(&path);
            continue;
        }
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
