//! A FUSE pass-through file system that injects storage faults, for iocap's own tests.
//!
//! # Why
//!
//! `iocap verify` claims to detect and classify lost writes, stale reads, misdirected writes,
//! torn pages and I/O errors, and `iocap run` claims to report `EIO` and `ENOSPC` cleanly. Such
//! claims are only worth something if a test can make a real file misbehave in exactly one of
//! those ways, at a chosen place, while the real binary runs against it. Device-mapper can fail
//! sectors but cannot lose, misdirect or tear writes; a FUSE layer can do all of it in-process,
//! with no kernel module beyond `fuse`, and it lets the test change the fault while the workload
//! runs and read back what each write turned into.
//!
//! # How it works
//!
//! [`FaultFs::mount`] mounts a pass-through of a backing directory (via the pure-Rust `fuser`
//! crate; no libfuse) and serves it on a background thread of the calling process. The test then
//! starts `iocap` as a child process on files under the mount point. Every open is answered with
//! `FOPEN_DIRECT_IO`, so each client read and write reaches the fault layer; nothing is answered
//! from the FUSE mount's page cache. Faults are [`Rule`]s (a file, a byte range, reads/writes, a
//! [`Fault`]) that can be added and cleared while mounted; each counts how often it fired. Every
//! write, fallocate and truncate is recorded in a [`WriteRecord`] log with its outcome.
//!
//! # The faults
//!
//! Each rule carries one [`Fault`]:
//!
//! * [`Fault::Eio`], [`Fault::Enospc`], [`Fault::SizeLimit`]: requests fail with `EIO` or
//!   `ENOSPC`.
//! * [`Fault::DropWrites`], [`Fault::Misdirect`], [`Fault::TearWrites`]: writes are lost, land
//!   elsewhere, or land in part, and are acknowledged in full.
//! * [`Fault::StaleReads`]: reads return the version of a block before its last write.
//! * [`Fault::Latency`]: each request is delayed by a fixed time.
//! * [`Fault::Cache`]: a read cache of a given size below the file; misses are delayed.
//! * [`Fault::TokenBucket`]: a cloud volume's burst bucket, counted in I/Os: up to a peak rate
//!   while the bucket has tokens, the fill rate once it is empty, the bucket refilling while
//!   idle.
//!
//! When several rules match one request, the delays of the delaying ones (`Latency`, `Cache`
//! misses, `TokenBucket`) add up, and of the rules that decide the outcome the oldest with an
//! effect wins (the module docs of `src/rules.rs` give the details).
//!
//! # Usage
//!
//! ```no_run
//! use iocap_faultfs::{Fault, FaultFs, Ops, Rule};
//! use std::os::unix::fs::FileExt;
//!
//! # fn main() -> std::io::Result<()> {
//! if !iocap_faultfs::fuse_or_skip("my_test") {
//!     return Ok(()); // prints why; panics instead when $CI is set
//! }
//! let dir = tempfile::tempdir()?;
//! let (backing, mnt) = (dir.path().join("backing"), dir.path().join("mnt"));
//! std::fs::create_dir(&backing)?;
//! std::fs::create_dir(&mnt)?;
//! let fs = FaultFs::mount(&backing, &mnt)?;
//! let f = std::fs::File::options()
//!     .read(true).write(true).create(true)
//!     .open(fs.mountpoint().join("data"))?;
//! let id = fs.add(Rule::new(Fault::Eio).file("data").range(8192..16384).ops(Ops::Write));
//! let err = f.write_at(&[0u8; 8192], 8192).unwrap_err();
//! assert_eq!(err.raw_os_error(), Some(libc::EIO));
//! assert_eq!(fs.fired(id), 1);
//! drop(f);
//! fs.unmount()?; // or just drop `fs`
//! # Ok(()) }
//! ```
//!
//! # What a caller must know
//!
//! * **Root and fuse.** Mounting needs `/dev/fuse` and, because the mount is made with
//!   `auto_unmount` (the mount disappears even if the test process is killed), `fusermount3`
//!   (Debian package `fuse3`). [`available`] says which is missing; [`fuse_or_skip`] turns that
//!   into a skip, or a failure when `$CI` is set.
//! * **One serving thread.** fuser dispatches requests one at a time. With a latency rule, a
//!   client issuing several requests at once sees queueing on top of the delay; keep queue depth
//!   1 when measuring injected latency.
//! * **Token buckets wait on that thread too.** A [`Fault::TokenBucket`] request waiting for
//!   its token holds up every request behind it, matched or not. At queue depth 1 a client
//!   sees the bucket's rates as long as one FUSE round trip (13-18 µs, below) is shorter than
//!   `1 / peak_per_s`; a peak above about 50,000/s is not reached.
//! * **Latency precision.** The daemon-side delay is exact to well under 1 µs (the serving
//!   thread runs with 1 ns timer slack, sleeps until 100 µs before the deadline and spins the
//!   rest, then does the I/O). What a client measures is the delay plus the FUSE round trip,
//!   and that round trip grows when the client has been blocked for a while: on the 2-core
//!   Linux 6.18 VM this was written on, median 8 KiB `pwrite` latency was 13-18 µs without a
//!   rule and 2.046-2.062 ms with a 2 ms rule (1 ms: 1.043 ms; 5 ms: 5.15 ms). So the
//!   client-side median is at least the delay and about 2-3 % above it at 2 ms; a test that
//!   wants 1 % must compare the injected delay with (median with rule - median without rule)
//!   and still allow for ~2 % of wake-up cost, or check only "median >= delay".
//! * **Request granularity.** Faults apply per FUSE request. The kernel splits a client I/O into
//!   requests of at most 1 MiB (`max_pages` 256), cut at the page boundaries of the client's
//!   buffer (a 4 MiB write from a buffer 16 bytes into a page arrives as 1 MiB - 16, 3 x 1 MiB
//!   and 16 bytes). So `TearWrites` on a 4 MiB write tears each piece and a latency rule delays
//!   each piece; an 8 KiB page write is always one request.
//! * **O_DIRECT.** Client opens with `O_DIRECT` work through the mount on Linux 6.18 (the
//!   `o_direct_through_the_mount` test checks it); the flag is not passed to the backing file,
//!   whose page cache sits below the fault layer and cannot hide a fault. Without `O_DIRECT`
//!   nothing changes either: every open is `FOPEN_DIRECT_IO`, so buffered client I/O is not
//!   cached on the mount and reaches the daemon just the same.
//! * **ENOSPC is all-or-nothing.** A failing write writes nothing (no short write).
//! * **Unmounting.** Dropping the handle unmounts (also while a panicking test unwinds); if a
//!   client still has files open the mount is detached lazily (it vanishes from the namespace at
//!   once and the serving thread ends when the last file is closed). If the test process dies
//!   without unwinding (abort, SIGKILL), the `fusermount3` helper kept alive by `auto_unmount`
//!   unmounts it within milliseconds. Each mount leaves that helper as a zombie child of the test
//!   process until the process exits (fuser does not reap it); harmless. Use a fresh mount
//!   point per test.
//! * **Processes.** The mount has `allow_other`; requests from any process of the mounting user
//!   (root for iocap's tests), such as a child `iocap`, are served.
//! * **Logged, not faulted: truncate.** `set_len`, `ftruncate` and `O_TRUNC` pass through (and
//!   are logged) under every rule; only writes and fallocate can fail with `ENOSPC`.
//! * **Names.** Rules match the path relative to the backing directory (`"data"` for
//!   `<mnt>/data`).

#![warn(missing_docs)]
#![cfg(target_os = "linux")]

mod bucket;
mod cache;
mod fs;
mod inject;
mod log;
mod rules;

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fuser::MountOption;

use crate::fs::FaultFsImpl;
use crate::inject::{lock, Shared};
pub use crate::log::{Outcome, WriteOp, WriteRecord};
pub use crate::rules::{Fault, Ops, Rule, RuleId};

/// A mounted fault-injecting file system. Unmounts when dropped.
pub struct FaultFs {
    mountpoint: PathBuf,
    backing: PathBuf,
    shared: Arc<Shared>,
    session: Option<fuser::BackgroundSession>,
}

impl std::fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultFs")
            .field("mountpoint", &self.mountpoint)
            .field("backing", &self.backing)
            .field("mounted", &self.session.is_some())
            .finish()
    }
}

impl FaultFs {
    /// Mount a fault-injecting pass-through of `backing` (a directory) on `mountpoint` (an
    /// existing, preferably empty directory) and serve it on a background thread. No rules are
    /// armed.
    pub fn mount(backing: &Path, mountpoint: &Path) -> io::Result<FaultFs> {
        let backing = backing.canonicalize()?;
        let mountpoint = mountpoint.canonicalize()?;
        if !backing.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a directory", backing.display()),
            ));
        }
        let shared = Arc::new(Shared::default());
        let base = [
            MountOption::FSName("iocap-faultfs".into()),
            MountOption::Subtype("iocap-faultfs".into()),
            MountOption::RW,
            MountOption::NoAtime,
        ];
        let mut with_auto = base.to_vec();
        with_auto.push(MountOption::AutoUnmount);
        let fs = FaultFsImpl::new(backing.clone(), shared.clone());
        let session = match fuser::spawn_mount2(fs, &mountpoint, &with_auto) {
            Ok(s) => s,
            // auto_unmount needs fusermount3; without it a plain mount still works for root,
            // it just is not cleaned up if the process is killed.
            Err(_) => {
                let fs = FaultFsImpl::new(backing.clone(), shared.clone());
                fuser::spawn_mount2(fs, &mountpoint, &base)?
            }
        };
        Ok(FaultFs {
            mountpoint,
            backing,
            shared,
            session: Some(session),
        })
    }

    /// The mount point (canonical path).
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// The backing directory (canonical path): read it to see what really reached "the disk".
    pub fn backing(&self) -> &Path {
        &self.backing
    }

    /// Arm a rule; it applies to requests that arrive from now on.
    ///
    /// # Panics
    ///
    /// If the rule's parameters make no sense (a [`Fault::TokenBucket`] with a bucket of 0, a
    /// rate that is not finite and above 0, or a peak below the fill rate), with the reason;
    /// [`Fault::token_bucket`] returns it as an error instead.
    pub fn add(&self, rule: Rule) -> RuleId {
        if let Err(why) = rule.fault.check() {
            panic!("iocap-faultfs: {why}: {rule:?}");
        }
        lock(&self.shared.rules).add(rule)
    }

    /// Disarm one rule; its firing count stays readable. Returns the rule if it was armed.
    pub fn remove(&self, id: RuleId) -> Option<Rule> {
        let rule = lock(&self.shared.rules).remove(id);
        lock(&self.shared.caches).remove(&id);
        lock(&self.shared.buckets).remove(&id);
        rule
    }

    /// Disarm every rule and forget the block versions kept for [`Fault::StaleReads`], the
    /// blocks held by [`Fault::Cache`] rules and the state of [`Fault::TokenBucket`] rules.
    /// Firing counts and the write log are kept.
    pub fn clear(&self) {
        lock(&self.shared.rules).clear();
        lock(&self.shared.stale).clear();
        lock(&self.shared.caches).clear();
        lock(&self.shared.buckets).clear();
    }

    /// The armed rules, oldest first.
    pub fn rules(&self) -> Vec<(RuleId, Rule)> {
        lock(&self.shared.rules).list()
    }

    /// How many requests the rule has changed (for latency: delayed; for stale reads: reads that
    /// returned at least one old block; for a cache: misses; for a token bucket: every request
    /// that took a token, whether it had to wait or not).
    pub fn fired(&self, id: RuleId) -> u64 {
        lock(&self.shared.rules).fired(id)
    }

    /// Every write, fallocate and truncate so far, in arrival order.
    pub fn writes(&self) -> Vec<WriteRecord> {
        lock(&self.shared.log).clone()
    }

    /// Empty the write log (e.g. after the test's setup phase).
    pub fn clear_writes(&self) {
        lock(&self.shared.log).clear();
    }

    /// Unmount now and report failure. If files are still open the mount is detached lazily and
    /// an error saying so is returned.
    pub fn unmount(mut self) -> io::Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> io::Result<()> {
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        let path = CString::new(self.mountpoint.as_os_str().as_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: umount2 with a valid NUL-terminated path.
        let result = if unsafe { libc::umount2(path.as_ptr(), 0) } == 0 {
            Ok(())
        } else {
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                // Someone (auto_unmount, a test) already unmounted it.
                Some(libc::EINVAL) => Ok(()),
                _ => {
                    // Busy or not ours to unmount: detach, falling back to fusermount3.
                    // SAFETY: as above.
                    if unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) } != 0 {
                        let _ = std::process::Command::new("fusermount3")
                            .args(["-u", "-z", "--"])
                            .arg(&self.mountpoint)
                            .output();
                    }
                    Err(io::Error::new(
                        err.kind(),
                        format!(
                            "unmounting {}: {err}; detached lazily instead",
                            self.mountpoint.display()
                        ),
                    ))
                }
            }
        };
        // Dropping the rest of the session closes fuser's own mount handle (a no-op now).
        let fuser::BackgroundSession { guard, .. } = session;
        if result.is_ok() {
            // The serving loop ends as soon as the kernel reports the unmount.
            let deadline = Instant::now() + Duration::from_secs(5);
            while !guard.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            if guard.is_finished() {
                let _ = guard.join();
            }
        }
        result
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Whether a [`FaultFs`] can be mounted here; the error says why not.
pub fn available() -> Result<(), String> {
    if !Path::new("/dev/fuse").exists() {
        return Err("no /dev/fuse (modprobe fuse, or pass the device into the container)".into());
    }
    if let Err(e) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
    {
        return Err(format!("cannot open /dev/fuse: {e}"));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root: iocap-faultfs mounts with mount(2)/auto_unmount as root".into());
    }
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(["/bin".into(), "/usr/bin".into()])
        .any(|d| d.join("fusermount3").is_file());
    if !found {
        return Err("no fusermount3 (Debian package fuse3)".into());
    }
    Ok(())
}

/// For tests: true if FUSE can be mounted. Otherwise prints a skip note naming `test` and
/// returns false, or panics with the reason when the environment variable `CI` is set (CI must
/// not silently skip the fault tests).
pub fn fuse_or_skip(test: &str) -> bool {
    match available() {
        Ok(()) => true,
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("{test}: iocap-faultfs cannot mount here and CI is set: {why}")
        }
        Err(why) => {
            eprintln!("skipping {test}: iocap-faultfs cannot mount here: {why}");
            false
        }
    }
}
