//! The verify file: created by iocap or refused, opened without following symlinks (reparse
//! points on Windows), O_DIRECT (FILE_FLAG_NO_BUFFERING) where the file system takes it, and the
//! positioned reads and writes the fill, the final pass and the check need (the mixed phase
//! submits through the engine's backends). What differs by system is the engine's
//! (`iocap_engine::safety`: `no_follow`, `is_direct_refused`, `DIRECT`).
//!
//! Same rules as `iocap run` (docs/safety.md), decided by the same function
//! (`iocap_engine::safety::decide`, with `Intent::RewriteFile`): a missing file is created with
//! O_EXCL and marked as iocap's own ([`iocap_engine::marker`]); an existing file is written only
//! if iocap created it or the user passed `allow_overwrite`; a symlink is never followed for
//! writes; only regular files are taken (a block device could be mounted, and verify rewrites
//! every byte); the file is held by the claim as a test's target is
//! (`iocap_platform::claim::Held`): locked, so a run and a verify never write one file at once,
//! and every descriptor opened on it later must be the claimed file (on Windows: the same volume serial and file index). The existing
//! file is inspected and claimed through a read-only descriptor.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

use iocap_engine::marker::{self, Marker};
use iocap_engine::safety::{self, Found, Intent};
use iocap_engine::TargetKind;
use iocap_platform::claim::Held;

use crate::error::{io_err, VerifyError};

/// The verify file, created or claimed: open for reading and writing, and locked.
pub struct Claimed {
    pub file: File,
    /// Whether this run created it.
    pub created: bool,
    /// The claim: the lock that keeps a test, a replay or another verify off the file while
    /// this one runs (the one every test takes on a file it may write), and the file every
    /// later descriptor must be.
    pub claim: Held,
}

/// Creates `path` or claims an existing file iocap made (or any file, with `allow_overwrite`),
/// locks it and sizes it to `size`. A file another process holds the lock on (a run filling or
/// testing it, another verify) is refused naming that process, before anything is written.
/// Where the file system takes no lock, the warning says so.
pub fn create_or_claim(
    path: &Path,
    size: u64,
    allow_overwrite: bool,
    warnings: &mut Vec<String>,
) -> Result<Claimed, VerifyError> {
    let shown = path.display().to_string();
    let rw = |create: bool| {
        let mut o = OpenOptions::new();
        safety::no_follow(o.read(true).write(true), false);
        if create {
            o.create_new(true);
        }
        o.open(path)
    };
    // the facts, read without writing; the decision, docs/safety.md's, made once (the engine's)
    let seen = safety::inspect(path, Intent::RewriteFile)?;
    safety::decide(&shown, &seen.facts, Intent::RewriteFile, allow_overwrite)?;
    let claim_on = |f: &std::fs::File, created: bool| {
        Held::take(f, &shown, TargetKind::File, true).inspect_err(|_| {
            if created {
                let _ = std::fs::remove_file(path);
            }
        })
    };
    // claimed (locked) before the first byte is written: a run on the file keeps verify off
    // it, and the other way round (docs/safety.md, rule 9)
    let (file, created, (claim, warning)) = match (seen.facts.found, seen.file) {
        (Found::Missing, _) => {
            let f = rw(true).map_err(io_err(format!("cannot create {shown}")))?;
            let c = claim_on(&f, true)?;
            (f, true, c)
        }
        (Found::File { .. }, Some(ro)) => {
            let c = claim_on(&ro, false)?;
            let f = rw(false).map_err(io_err(format!("cannot open {shown} for writing")))?;
            c.0.holds(&f)?;
            (f, false, c)
        }
        // what `decide` let through is a missing path or a regular file, opened
        _ => return Err(changed(&shown)),
    };
    warnings.extend(warning);
    set_marker(&file, path, MarkAs::Incomplete, size)?;
    file.set_len(size)
        .map_err(io_err(format!("cannot size {shown}")))?;
    Ok(Claimed {
        file,
        created,
        claim,
    })
}

/// How far [`set_marker`] says the file was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkAs {
    /// Claimed, pages still to write.
    Incomplete,
    /// Every page written.
    Complete,
}

/// Marks the file as iocap's own, complete once every page was written.
pub fn set_marker(f: &File, path: &Path, mark: MarkAs, size: u64) -> Result<(), VerifyError> {
    let complete = mark == MarkAs::Complete;
    marker::write(f, path, Marker { complete, size }).map_err(io_err(format!(
        "cannot mark {} as iocap's test file",
        path.display()
    )))
}

fn not_a_file(shown: &str) -> VerifyError {
    safety::not_a_file(shown).into()
}

fn changed(shown: &str) -> VerifyError {
    VerifyError::refused(safety::changed(shown, "checking"))
}

/// How [`open_io`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Open {
    /// For writing too (else read only).
    pub write: bool,
    /// With O_DIRECT, if the file system takes it.
    pub direct: bool,
}

/// Reopens `path` for the I/O as `how` says; the descriptor must be the file `same_as` claimed.
/// Returns the file and whether it is O_DIRECT.
pub fn open_io(
    path: &Path,
    how: Open,
    same_as: Option<&Held>,
    warnings: &mut Vec<String>,
) -> Result<(File, bool), VerifyError> {
    let shown = path.display().to_string();
    // checked before opening (a FIFO would block the open); the descriptor is checked again
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
        return Err(not_a_file(&shown));
    }
    let Open { write, direct } = how;
    let open = |direct: bool| {
        safety::no_follow(OpenOptions::new().read(true).write(write), direct).open(path)
    };
    let refuse = std::env::var_os("IOCAP_TEST_REFUSE_DIRECT").is_some();
    let (f, d) = if !direct {
        (
            open(false).map_err(io_err(format!("cannot open {shown}")))?,
            false,
        )
    } else {
        match if refuse {
            Err(safety::direct_refused_error())
        } else {
            open(true)
        } {
            Ok(f) => (f, true),
            Err(e) if safety::is_direct_refused(&e) => {
                warnings.push(direct_refused(&shown));
                (
                    open(false).map_err(io_err(format!("cannot open {shown}")))?,
                    false,
                )
            }
            Err(e) => return Err(io_err(format!("cannot open {shown}"))(e)),
        }
    };
    if let Some(claim) = same_as {
        claim.holds(&f)?;
    }
    Ok((f, d))
}

pub fn direct_refused(shown: &str) -> String {
    format!(
        "{} was refused on {shown} (its file system does not support it); fell back to \
         buffered I/O, so reads may be answered by the page cache and some faults of the \
         storage below it cannot be seen",
        safety::DIRECT
    )
}

/// Reads exactly `buf.len()` bytes at `off`.
pub fn pread_exact(f: &File, buf: &mut [u8], off: u64) -> io::Result<()> {
    all(
        buf.len(),
        off,
        "the file ended before the page",
        |done, at| read_at(f, &mut buf[done..], at),
    )
}

/// Writes all of `buf` at `off`.
pub fn pwrite_all(f: &File, buf: &[u8], off: u64) -> io::Result<()> {
    all(buf.len(), off, "the write moved no bytes", |done, at| {
        write_at(f, &buf[done..], at)
    })
}

/// One pread (Windows: a ReadFile at the offset, on a synchronous handle).
fn read_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::read_at(f, buf, at);
    #[cfg(windows)]
    return std::os::windows::fs::FileExt::seek_read(f, buf, at);
}

/// One pwrite (Windows: a WriteFile at the offset, on a synchronous handle).
fn write_at(f: &File, buf: &[u8], at: u64) -> io::Result<usize> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::write_at(f, buf, at);
    #[cfg(windows)]
    return std::os::windows::fs::FileExt::seek_write(f, buf, at);
}

/// Moves `len` bytes at file offset `off` with `call(done, offset)` (a read or write of the
/// bytes after the first `done`, at `offset`), resuming after a short transfer or EINTR; a call
/// that moves nothing is an error saying `none`.
fn all(
    len: usize,
    off: u64,
    none: &str,
    mut call: impl FnMut(usize, u64) -> io::Result<usize>,
) -> io::Result<()> {
    let mut done = 0;
    while done < len {
        match call(done, off + done as u64) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    none.to_string(),
                ))
            }
            Ok(n) => done += n,
        }
    }
    Ok(())
}

/// A random 64-bit value (the file id): std's hash keys are drawn from the system's generator
/// (getrandom; ProcessPrng on Windows), and each new `RandomState` takes new ones, so the hash
/// of a constant is as random as they are; mixed with the time and pid besides.
pub fn random_u64() -> u64 {
    use std::hash::BuildHasher;
    let keyed = std::collections::hash_map::RandomState::new().hash_one(0u64);
    keyed ^ now_ns() ^ (u64::from(std::process::id()) << 40)
}

/// Nanoseconds since the epoch.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64
}
