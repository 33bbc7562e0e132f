//! Test rig for the device tests: finding tools, running commands and iocap, loop devices and
//! mounts torn down on drop, and page-cache residency of backing files.

use std::fs::{self, File};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

use super::*;

// ---------------------------------------------------------------------------------------------
// Skipping

/// A program by name, looked up in PATH and in the sbin directories a non-login root shell may
/// lack.
pub(super) fn tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Why these tests cannot run here, if they cannot.
pub(super) fn cannot_run(tools: &[&str]) -> Option<String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (the device tests attach loop devices)".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control: the kernel has no loop driver".into());
    }
    tools
        .iter()
        .find(|t| tool(t).is_none())
        .map(|t| format!("{t} is not installed"))
}

/// Returns from the test with a `skipping:` line when root or one of the tools is missing; under
/// CI (`CI` set), where `.ci/run` installs the tools and runs as root, it fails instead, so a
/// broken set-up cannot pass unnoticed.
macro_rules! require {
    ($($tool:expr),* $(,)?) => {
        if let Some(why) = cannot_run(&[$($tool),*]) {
            skip_or_fail(&why);
            return;
        }
    };
}

/// Prints why a test is skipped, or panics under CI.
pub(super) fn skip_or_fail(why: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("device test cannot run under CI: {why}");
    }
    eprintln!("skipping: {why}");
}

// ---------------------------------------------------------------------------------------------
// Running things

/// Runs a system tool; `Err` carries its stderr.
pub(super) fn sys(name: &str, args: &[&str]) -> Result<String, String> {
    let prog = tool(name).ok_or_else(|| format!("{name} is not installed"))?;
    let out = std::process::Command::new(&prog)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {name}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{name} {} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Runs a system tool that must succeed.
pub(super) fn must(name: &str, args: &[&str]) -> String {
    sys(name, args).unwrap_or_else(|e| panic!("{e}"))
}

/// Waits for udev (where it runs) to finish probing new devices, so its reads do not land in a
/// measurement.
pub(super) fn settle() {
    if tool("udevadm").is_some() {
        let _ = sys("udevadm", &["settle", "--timeout=10"]);
    }
}

/// Runs `iocap ARGS TARGET` (`args` split at spaces) in `dir`; never hangs a test for more than
/// a minute.
pub(super) fn iocap(dir: &Path, args: &str, target: &str) -> Output {
    iocap_on(dir, args, &[target])
}

/// Runs `iocap ARGS TARGET...` (`args` split at spaces) in `dir`, for the commands that take
/// several targets (`saturate`, `scaleup`); never hangs a test for more than a minute.
pub(super) fn iocap_on(dir: &Path, args: &str, targets: &[&str]) -> Output {
    Command::cargo_bin("iocap")
        .expect("the iocap binary is built")
        .args(args.split_whitespace())
        .args(targets)
        .current_dir(dir)
        .env("XDG_DATA_HOME", crate::data_home())
        .env_remove("IOCAP_DB")
        .timeout(Duration::from_secs(60))
        .output()
        .expect("iocap runs")
}

pub(super) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(super) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Both streams, for assertion messages.
pub(super) fn shown(out: &Output) -> String {
    format!(
        "exit status {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        stdout(out),
        stderr(out)
    )
}

pub(super) fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", shown(out)))
}

pub(super) fn u64_at(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} is not a number in {v:#}"))
}

/// Sectors read and written by the whole-disk block device `dev` (`/dev/NAME`), from
/// `/sys/block/NAME/stat` (fields 3 and 7, in 512 B units).
pub(super) fn io_sectors(dev: &str) -> (u64, u64) {
    let name = Path::new(dev).file_name().unwrap().to_string_lossy();
    let stat = fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let f: Vec<u64> = stat
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    (f[2], f[6])
}

/// Offsets of every iocap write stamp in `data`. iocap's writes are O_DIRECT and so at least
/// 512 B aligned, and so is every stamp in them; a stamp anywhere else would not be iocap's.
pub(super) fn stamps(data: &[u8]) -> Vec<usize> {
    (0..data.len())
        .step_by(512)
        .filter(|&o| data[o..].starts_with(STAMP))
        .collect()
}

/// The offset a stamp at `pos` says its block was written for (the little-endian u64 after the
/// magic).
pub(super) fn stamped_offset(data: &[u8], pos: usize) -> u64 {
    u64::from_le_bytes(data[pos + 8..pos + 16].try_into().unwrap())
}

// ---------------------------------------------------------------------------------------------
// Set-up and tear-down

/// What a test set up, torn down in reverse dependency order on drop: mounts, device-mapper
/// devices, loop devices, FUSE servers, then the scratch directory with the backing files.
/// Held by the device tests whose figures depend on the machine's load (a database under a
/// benchmark, a queue depth or a cache found from latencies): they run one at a time, so that
/// one's load does not bend another's timing. The other tests still run beside them.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Waits until no other such test runs; held until dropped (a test that panicked while holding
/// it leaves it usable).
pub(super) fn alone() -> std::sync::MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) struct Rig {
    pub(super) mounts: Vec<PathBuf>,
    pub(super) dms: Vec<String>,
    pub(super) loops: Vec<String>,
    pub(super) fuses: Vec<FuseDisk>,
    pub(super) dir: tempfile::TempDir,
}

impl Rig {
    pub(super) fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("iocap-devices-{}-", std::process::id()))
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("a scratch directory");
        Self {
            mounts: Vec::new(),
            dms: Vec::new(),
            loops: Vec::new(),
            fuses: Vec::new(),
            dir,
        }
    }

    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A backing file of `size` bytes: allocated (reads return zeros) or, with `fill`, written
    /// with that byte.
    pub(super) fn backing_file(&self, name: &str, size: u64, fill: Option<u8>) -> PathBuf {
        let p = self.path(name);
        let mut f = File::create(&p).unwrap();
        match fill {
            None => {
                // SAFETY: plain syscall on an open descriptor.
                let rc = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, size as libc::off_t) };
                if rc != 0 {
                    f.set_len(size).unwrap(); // a file system without fallocate: holes read as zeros too
                }
            }
            Some(b) => {
                let chunk = vec![b; MIB as usize];
                for _ in 0..size / MIB {
                    f.write_all(&chunk).unwrap();
                }
            }
        }
        f.sync_all().unwrap();
        p
    }

    /// Runs `losetup --find --show ARGS FILE`; a device it left attached to `file` despite
    /// failing is detached on drop too.
    pub(super) fn losetup(&mut self, args: &[&str], file: &str) -> Result<String, String> {
        let res = sys("losetup", &[&["--find", "--show"], args, &[file]].concat());
        let attached =
            sys("losetup", &["--noheadings", "--output", "NAME", "-j", file]).unwrap_or_default();
        for dev in attached.lines().map(str::trim) {
            if dev.starts_with("/dev/loop") && !self.loops.iter().any(|l| l == dev) {
                self.loops.push(dev.to_string());
            }
        }
        let dev = res?;
        if !dev.starts_with("/dev/loop") {
            return Err(format!("losetup printed {dev:?}, not a loop device"));
        }
        if !self.loops.contains(&dev) {
            self.loops.push(dev.clone());
        }
        Ok(dev)
    }

    /// Attaches `file` to a free loop device, with direct I/O to the backing file where the
    /// kernel allows it.
    pub(super) fn attach(&mut self, file: &Path) -> String {
        let f = file.to_str().unwrap();
        self.losetup(&["--direct-io=on"], f)
            .or_else(|_| self.losetup(&[], f))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Attaches `file` to a free loop device that reads through the backing file's page cache.
    pub(super) fn attach_buffered(&mut self, file: &Path) -> String {
        let f = file.to_str().unwrap();
        self.losetup(&["--direct-io=off"], f)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    pub(super) fn mount(&mut self, dev: &str, dir: &Path) {
        fs::create_dir_all(dir).unwrap();
        must("mount", &[dev, dir.to_str().unwrap()]);
        self.mounts.push(dir.to_path_buf());
    }

    /// A new ext4 file system of `size` bytes on a loop device of its own (a backing file
    /// `name` in the rig's directory, direct I/O where the kernel allows), mounted at `dir`;
    /// its device.
    pub(super) fn ext4(&mut self, name: &str, size: u64, dir: &Path) -> String {
        let file = self.backing_file(name, size, None);
        let dev = self.attach(&file);
        let lazy = "lazy_itable_init=0,lazy_journal_init=0";
        must("mkfs.ext4", &["-q", "-F", "-E", lazy, &dev]);
        self.mount(&dev, dir);
        dev
    }

    pub(super) fn umount(&mut self, dir: &Path) {
        must("umount", &[dir.to_str().unwrap()]);
        self.mounts.retain(|m| m != dir);
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        for m in self.mounts.drain(..).rev() {
            let m = m.to_str().unwrap_or_default().to_string();
            if sys("umount", &[&m]).is_err() {
                let _ = sys("umount", &["-l", &m]);
            }
        }
        settle();
        for d in self.dms.drain(..).rev() {
            if let Err(e) = sys("dmsetup", &["remove", "--retry", &d]) {
                eprintln!("cleanup: {e}");
            }
        }
        for l in self.loops.drain(..).rev() {
            if let Err(e) = sys("losetup", &["-d", &l]) {
                eprintln!("cleanup: {e}");
            }
        }
        for f in self.fuses.drain(..) {
            f.stop();
        }
        // the scratch directory (TempDir) is removed after this, with the backing files
    }
}

// ---------------------------------------------------------------------------------------------
// Page-cache residency, to see where reads through a buffered loop device landed

/// Writes back and drops `file`'s cached pages.
pub(super) fn evict(file: &Path) {
    let f = File::open(file).unwrap();
    f.sync_all().unwrap();
    // SAFETY: plain syscall on an open descriptor.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0, "posix_fadvise(DONTNEED) failed");
}

/// The page size, and the byte offsets of `file`'s pages that are in the page cache.
pub(super) fn resident_pages(file: &Path) -> (u64, Vec<u64>) {
    let f = File::open(file).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: a fresh shared read-only mapping of the whole file, only passed to mincore (never
    // dereferenced, so no page is faulted in) and unmapped before returning; `vec` holds one
    // byte per page of it.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(addr, libc::MAP_FAILED, "mmap of {}", file.display());
        let rc = libc::mincore(addr, len, vec.as_mut_ptr());
        libc::munmap(addr, len);
        assert_eq!(rc, 0, "mincore of {}", file.display());
    }
    let resident = vec
        .iter()
        .enumerate()
        .filter(|(_, v)| *v & 1 != 0)
        .map(|(i, _)| (i * page) as u64)
        .collect();
    (page as u64, resident)
}

/// The most the kernel reads ahead on the device holding `file` (its `read_ahead_kb`), if sysfs
/// says.
pub(super) fn readahead_bytes(file: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let dev = fs::metadata(file).ok()?.dev();
    let (ma, mi) = (libc::major(dev), libc::minor(dev));
    ["queue/read_ahead_kb", "../queue/read_ahead_kb"]
        .iter()
        .find_map(|rel| fs::read_to_string(format!("/sys/dev/block/{ma}:{mi}/{rel}")).ok())
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

// ---------------------------------------------------------------------------------------------
