//! A MariaDB server of a test's own: its own data directory, socket (and no TCP port), pid file
//! and error log, made by `mariadb-install-db`, started as `mariadbd --no-defaults ...` and
//! stopped by the test (never a system service, never /var/lib/mysql), and sysbench run against
//! it. Used by `devices::innodb` (issue 34).

use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The programs a MariaDB test runs.
#[derive(Clone, Debug)]
pub struct Tools {
    pub mariadbd: PathBuf,
    pub install_db: PathBuf,
    pub client: PathBuf,
    pub sysbench: PathBuf,
}

/// MariaDB's server, installer and client and sysbench, or, where one is missing, `None` after
/// printing `skipping: ...`; under CI (`CI` set), which installs them, a panic naming `test`.
pub fn tools_or_skip(test: &str) -> Option<Tools> {
    let find = |names: &[&str]| {
        names.iter().find_map(|n| {
            ["/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/bin"]
                .iter()
                .map(|d| Path::new(d).join(n))
                .find(|p| p.is_file())
        })
    };
    let found = (
        find(&["mariadbd", "mysqld"]),
        find(&["mariadb-install-db", "mysql_install_db"]),
        find(&["mariadb", "mysql"]),
        find(&["sysbench"]),
    );
    match found {
        (Some(mariadbd), Some(install_db), Some(client), Some(sysbench)) => Some(Tools {
            mariadbd,
            install_db,
            client,
            sysbench,
        }),
        (d, i, c, _) => {
            let why = if d.is_none() || i.is_none() || c.is_none() {
                "MariaDB is not installed (mariadbd, mariadb-install-db, mariadb; apt-get install \
                 mariadb-server)"
            } else {
                "sysbench is not installed (apt-get install sysbench)"
            };
            assert!(
                std::env::var_os("CI").is_none(),
                "the {test} cannot run under CI: {why}"
            );
            eprintln!("skipping: {why}");
            None
        }
    }
}

/// A server of the test's own, stopped when dropped, whatever the test did.
pub struct Server {
    tools: Tools,
    datadir: PathBuf,
    /// socket, pid file and error log: outside the data directory, so that a capture's
    /// `--files DATADIR` sees the database's files only
    run_dir: PathBuf,
    options: Vec<String>,
    child: Option<Child>,
}

impl Server {
    /// Makes a new data directory `datadir` (which must not exist yet) with
    /// `mariadb-install-db`; the server, once started, runs with `options` (`--name=value`).
    pub fn install(tools: &Tools, datadir: &Path, run_dir: &Path, options: &[&str]) -> Server {
        assert!(!datadir.exists(), "{} exists already", datadir.display());
        let out = Command::new(&tools.install_db)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", datadir.display()))
            .args([
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ])
            .output()
            .expect("mariadb-install-db runs");
        assert!(
            out.status.success(),
            "{} failed ({}):\n{}{}",
            tools.install_db.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Server {
            tools: tools.clone(),
            datadir: datadir.to_path_buf(),
            run_dir: run_dir.to_path_buf(),
            options: options.iter().map(|s| s.to_string()).collect(),
            child: None,
        }
    }

    pub fn datadir(&self) -> &Path {
        &self.datadir
    }

    pub fn socket(&self) -> PathBuf {
        self.run_dir.join("mariadb.sock")
    }

    fn error_log(&self) -> PathBuf {
        self.run_dir.join("mariadb.err")
    }

    /// The server's error log, for a failure's message.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.error_log()).unwrap_or_default()
    }

    /// Starts the server and returns once its socket accepts a connection (which it does only
    /// once InnoDB has started); a server that exits first fails the test with its error log.
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "the server is running already");
        let socket = self.socket();
        let _ = std::fs::remove_file(&socket);
        let mut cmd = Command::new(&self.tools.mariadbd);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", self.datadir.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!(
                "--pid-file={}",
                self.run_dir.join("mariadb.pid").display()
            ))
            .arg(format!("--log-error={}", self.error_log().display()))
            // the socket only: no TCP port another server (or another run of the test) holds
            .args(["--skip-networking", "--skip-name-resolve"]);
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            cmd.arg("--user=root");
        }
        let mut child = cmd
            .args(&self.options)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("mariadbd starts");
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "mariadbd exited before accepting connections ({status}); its error \
                     log:\n{}",
                    self.log_text()
                );
            }
            if UnixStream::connect(&socket).is_ok() {
                break;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "mariadbd did not accept a connection on {} within 120 s; its error log:\n{}",
                    socket.display(),
                    self.log_text()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.child = Some(child);
    }

    /// Stops the server (SIGTERM: a normal shutdown, which writes its dirty pages and a
    /// checkpoint) and waits for it to exit.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        // SAFETY: kill(2) on the child we started, with a valid signal.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "mariadbd stopped with {status}; its error log:\n{}",
                    self.log_text()
                );
                return;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("mariadbd did not stop within 120 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Runs `sql` with the `mariadb` client; its output (tab-separated, no column names), or a
    /// panic with its stderr.
    pub fn query(&self, sql: &str) -> String {
        let out = Command::new(&self.tools.client)
            .arg("--no-defaults")
            .arg(format!("--socket={}", self.socket().display()))
            .args(["--user=root", "--batch", "--skip-column-names", "-e", sql])
            .output()
            .expect("the mariadb client runs");
        assert!(
            out.status.success(),
            "mariadb -e {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `SHOW GLOBAL STATUS`: every counter whose value is a whole number.
    pub fn status(&self) -> HashMap<String, u64> {
        self.query("SHOW GLOBAL STATUS")
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once('\t')?;
                Some((k.to_string(), v.trim().parse().ok()?))
            })
            .collect()
    }

    /// `sysbench TEST ARGS COMMAND` against this server (database `sbtest`); its stdout, or a
    /// panic with its output.
    pub fn sysbench(&self, test: &str, args: &[&str], command: &str) -> String {
        let out = Command::new(&self.tools.sysbench)
            .arg(test)
            .args([
                "--db-driver=mysql",
                "--mysql-user=root",
                "--mysql-db=sbtest",
            ])
            .arg(format!("--mysql-socket={}", self.socket().display()))
            .args(args)
            .arg(command)
            .output()
            .expect("sysbench runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success(),
            "sysbench {test} {command} failed ({}):\n{text}",
            out.status
        );
        text
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: kill(2) on the child we started, with a valid signal.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(60);
            while child.try_wait().ok().flatten().is_none() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}
