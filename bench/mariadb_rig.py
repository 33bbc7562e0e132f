"""bench/mariadb_rig.py: what the InnoDB benchmarks (bench/innodb-capture.py,
bench/innodb-page-cost.py) share, the recipe of tests/integration/mariadb.rs: an ext4 file
system on a loop device of its own, and a MariaDB server of the script's own on it
(mariadb-install-db into a new data directory, `mariadbd --no-defaults` with a socket in a
short directory and no TCP port, stopped by the script: never a system service, never
/var/lib/mysql), and sysbench against it."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def sh(argv, **kw):
    out = subprocess.run(argv, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{out.stdout[-1000:]}{out.stderr[-2000:]}")
    return out.stdout


def find(*names):
    for d in ("/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/bin"):
        for n in names:
            p = os.path.join(d, n)
            if os.path.isfile(p):
                return p
    return None


def tools():
    """(mariadbd, mariadb-install-db, mariadb, sysbench), or exit 2 naming what is missing."""
    found = (find("mariadbd", "mysqld"), find("mariadb-install-db", "mysql_install_db"),
             find("mariadb", "mysql"), find("sysbench"))
    if None in found[:3]:
        print("MariaDB is not installed (mariadbd, mariadb-install-db, mariadb; "
              "apt-get install mariadb-server)", file=sys.stderr)
        sys.exit(2)
    if found[3] is None:
        print("sysbench is not installed (apt-get install sysbench)", file=sys.stderr)
        sys.exit(2)
    for t in ("losetup", "mkfs.ext4", "mount", "umount", "filefrag"):
        if shutil.which(t) is None:
            print(f"{t} is not installed (util-linux, e2fsprogs)", file=sys.stderr)
            sys.exit(2)
    return found


class LoopFs:
    """An ext4 file system on a loop device over a new file in `parent`; undone by close()."""

    def __init__(self, parent, size, prefix):
        self.dir = tempfile.mkdtemp(prefix=prefix, dir=parent)
        self.dev = self.mnt = None
        os.chmod(self.dir, 0o755)
        self.file = os.path.join(self.dir, "disk")
        try:
            with open(self.file, "wb") as f:
                os.posix_fallocate(f.fileno(), 0, size)
            self.dev = sh(["losetup", "--find", "--show", "--direct-io=on", self.file]).strip()
            self.mnt = os.path.join(self.dir, "mnt")
            os.mkdir(self.mnt)
            sh(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                self.dev])
            sh(["mount", self.dev, self.mnt])
            self.mounted = True
        except BaseException:
            self.close()
            raise

    def diskstats(self):
        """Reads, sectors read, writes, sectors written and flushes completed by the device."""
        name = os.path.basename(self.dev)
        f = [int(x) for x in open(f"/sys/block/{name}/stat").read().split()]
        return [f[0], f[2], f[4], f[6], f[15] if len(f) >= 17 else 0]

    def close(self, keep=False):
        if getattr(self, "mounted", False):
            subprocess.run(["umount", self.mnt])
        if self.dev:
            subprocess.run(["losetup", "-d", self.dev])
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


class Server:
    """A MariaDB server of our own: data directory `datadir` (made here), socket, pid file and
    error log in a new short directory (a socket's path is at most 107 bytes) outside it."""

    def __init__(self, found, datadir, options):
        self.mariadbd, self.install_db, self.client, self.sysbench_bin = found
        self.datadir = datadir
        self.run_dir = tempfile.mkdtemp(prefix="iocap-mdb-", dir="/tmp")
        self.socket = os.path.join(self.run_dir, "mariadb.sock")
        self.options = list(options)
        self.proc = None
        self.database = None  # the client's default database, once set
        try:
            sh([self.install_db, "--no-defaults", f"--datadir={datadir}", "--user=root",
                "--auth-root-authentication-method=normal", "--skip-test-db"])
        except BaseException:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            raise

    def log_text(self):
        try:
            return open(os.path.join(self.run_dir, "mariadb.err")).read()[-3000:]
        except OSError:
            return ""

    def start(self, extra=()):
        """Starts the server with its options and `extra` (later ones win), and returns once its
        socket accepts a connection (once InnoDB has started)."""
        if self.proc:
            raise RuntimeError("the server is running already")
        try:
            os.unlink(self.socket)
        except FileNotFoundError:
            pass
        argv = [self.mariadbd, "--no-defaults", f"--datadir={self.datadir}",
                f"--socket={self.socket}", f"--pid-file={self.run_dir}/mariadb.pid",
                f"--log-error={self.run_dir}/mariadb.err", "--skip-networking",
                "--skip-name-resolve"] + (["--user=root"] if os.geteuid() == 0 else []) \
            + self.options + list(extra)
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while True:
            if self.proc.poll() is not None:
                self.proc = None
                raise RuntimeError(f"mariadbd exited before accepting connections; its error "
                                   f"log:\n{self.log_text()}")
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(self.socket)
                break
            except OSError:
                pass
            if time.time() > deadline:
                self.stop()
                raise RuntimeError("mariadbd did not accept a connection within 120 s")
            time.sleep(0.02)

    def stop(self):
        """SIGTERM (a normal shutdown: dirty pages written, a checkpoint) and wait."""
        if not self.proc:
            return
        p, self.proc = self.proc, None
        p.terminate()
        try:
            rc = p.wait(120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise RuntimeError("mariadbd did not stop within 120 s of SIGTERM")
        if rc != 0:
            raise RuntimeError(f"mariadbd stopped with {rc}; its error log:\n{self.log_text()}")

    @property
    def pid(self):
        return self.proc.pid

    def client_argv(self):
        return [self.client, "--no-defaults", f"--socket={self.socket}", "--user=root",
                "--batch", "--skip-column-names"] \
            + ([f"--database={self.database}"] if self.database else [])

    def query(self, sql):
        """Runs `sql` (one or more statements) in one session; its rows, split on tabs."""
        out = sh(self.client_argv() + ["-e", sql])
        return [line.split("\t") for line in out.splitlines() if line]

    def status(self):
        """SHOW GLOBAL STATUS: every counter whose value is a whole number."""
        out = {}
        for row in self.query("SHOW GLOBAL STATUS"):
            if len(row) == 2 and row[1].strip().isdigit():
                out[row[0]] = int(row[1])
        return out

    def sysbench(self, test, args, command):
        return sh([self.sysbench_bin, test, "--db-driver=mysql", "--mysql-user=root",
                   "--mysql-db=sbtest", f"--mysql-socket={self.socket}"] + list(args)
                  + [command])

    def close(self):
        try:
            self.stop()
        finally:
            shutil.rmtree(self.run_dir, ignore_errors=True)


def drop_os_cache():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def positive_int(name, default):
    """The environment variable `name` as a positive integer, or exit 2."""
    raw = os.environ.get(name, str(default))
    try:
        v = int(raw)
        if v <= 0:
            raise ValueError
        return v
    except ValueError:
        print(f"{name}={raw!r}: give a positive whole number", file=sys.stderr)
        sys.exit(2)


def size_arg(name, default):
    """The environment variable `name` as a MariaDB size (16M, 1G), or exit 2."""
    raw = os.environ.get(name, default)
    if not (raw[:-1].isdigit() and raw[-1] in "KMG" and int(raw[:-1]) > 0):
        print(f"{name}={raw!r}: give a size such as 16M or 1G", file=sys.stderr)
        sys.exit(2)
    return raw


def check_start(script, doc, needs_root_for, iocap):
    """The checks both scripts make before anything runs: one argument, a directory; root;
    an iocap binary. Exits 2 with the reason, as bad input does."""
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(doc, file=sys.stderr)
        sys.exit(2)
    if os.geteuid() != 0:
        print(f"bench/{script} needs root ({needs_root_for})", file=sys.stderr)
        sys.exit(2)
    if not os.path.isdir(sys.argv[1]):
        print(f"{sys.argv[1]}: not a directory", file=sys.stderr)
        sys.exit(2)
    if not os.access(iocap, os.X_OK):
        print(f"no iocap at {iocap}: cargo build --release, or IOCAP=", file=sys.stderr)
        sys.exit(2)
