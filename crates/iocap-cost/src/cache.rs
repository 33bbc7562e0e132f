//! The page cache around a point: drop one file's pages (after making them clean), read it
//! into the cache, and measure how much of it is resident. Only the test file is touched: no
//! global `drop_caches`. What writes or flushes takes the test file as the engine opened it
//! (`PreparedTarget::file`, after its safety checks and under its lock), never a path opened
//! again; only the warming read opens by path, read-only.

use std::fs::File;
use std::io::{self, Read};
#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
use std::path::Path;

#[cfg(not(target_os = "linux"))]
fn linux_only(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{what} is Linux's (iocap cost runs only there)"),
    )
}

/// Dropping one file's pages is Linux's `posix_fadvise`.
#[cfg(not(target_os = "linux"))]
pub fn drop_pages(_: &File) -> io::Result<()> {
    Err(linux_only("dropping a file's cached pages"))
}

/// Residency is Linux's `mincore`.
#[cfg(not(target_os = "linux"))]
pub fn resident_pct(_: &File, _: u64) -> io::Result<f64> {
    Err(linux_only("measuring a file's cached pages"))
}

/// Makes the file's dirty pages clean (`fsync`), then asks the kernel to drop its pages
/// (`posix_fadvise(POSIX_FADV_DONTNEED)`). Pages still mapped or under write-back may stay.
#[cfg(target_os = "linux")]
pub fn drop_pages(f: &File) -> io::Result<()> {
    f.sync_all()?;
    // SAFETY: a valid fd; offset 0 and len 0 mean the whole file.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Writes the file's dirty pages back (`fsync`; FlushFileBuffers on Windows, on the writing
/// handle the engine opened), so write-back from one point does not land in the next point's
/// window.
pub fn flush(f: &File) -> io::Result<()> {
    f.sync_all()
}

/// Reads the first `len` bytes of the file through the page cache, so later buffered reads of
/// them are hits.
pub fn warm(path: &Path, len: u64) -> io::Result<()> {
    let mut f = File::open(path)?.take(len);
    let mut buf = vec![0u8; 1 << 20];
    while f.read(&mut buf)? > 0 {}
    Ok(())
}

/// The share of the first `len` bytes of the file that sits in the page cache, in percent
/// (`mincore` on a read-only shared mapping; mapping does not fault pages in).
#[cfg(target_os = "linux")]
pub fn resident_pct(f: &File, len: u64) -> io::Result<f64> {
    let len = len.min(f.metadata()?.len());
    if len == 0 {
        return Ok(0.0);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let pages = (len as usize).div_ceil(page);
    // SAFETY: a fresh read-only shared mapping of `len` bytes of an open file; it is only passed
    // to mincore (never read through) and unmapped before returning.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut vec = vec![0u8; pages];
        let rc = libc::mincore(addr, len as usize, vec.as_mut_ptr());
        let err = io::Error::last_os_error();
        libc::munmap(addr, len as usize);
        if rc != 0 {
            return Err(err);
        }
        let resident = vec.iter().filter(|b| **b & 1 != 0).count();
        Ok(100.0 * resident as f64 / pages as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_then_drop() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 4 << 20]).unwrap();
        warm(&p, 4 << 20).unwrap();
        let f = File::open(&p).unwrap();
        let hot = resident_pct(&f, 4 << 20).unwrap();
        drop_pages(&f).unwrap();
        let cold = resident_pct(&f, 4 << 20).unwrap();
        // tmpfs keeps its pages whatever we ask; a real file system drops them
        assert!((0.0..=100.0).contains(&hot) && (0.0..=100.0).contains(&cold));
        assert!(cold <= hot, "{cold} > {hot}");
        assert_eq!(resident_pct(&f, 0).unwrap(), 0.0);
        flush(&f).unwrap();
    }
}
