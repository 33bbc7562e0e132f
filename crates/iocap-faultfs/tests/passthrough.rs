#![cfg(target_os = "linux")]
//! The pass-through itself (what iocap needs from a file system), O_DIRECT through the mount,
//! latency precision, and clean unmounts.

mod common;

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::{Duration, Instant};

use common::{is_mounted, mount, read};
use iocap_faultfs::{Fault, Ops, Outcome, Rule, WriteOp};

const PAGE: usize = 8192;

#[test]
fn handle_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<iocap_faultfs::FaultFs>();
}

#[test]
fn pass_through_basics() {
    let Some(m) = mount("pass_through_basics") else {
        return;
    };
    let mnt = m.fs.mountpoint().to_path_buf();
    let f = m.file("a", 3 * PAGE, b'a');
    assert_eq!(
        std::fs::metadata(mnt.join("a")).unwrap().len(),
        3 * PAGE as u64
    );
    f.set_len(PAGE as u64).unwrap();
    assert_eq!(f.metadata().unwrap().len(), PAGE as u64);
    f.sync_all().unwrap();
    f.sync_data().unwrap();
    drop(f);
    // O_TRUNC through open
    let g = File::options()
        .write(true)
        .truncate(true)
        .open(mnt.join("a"))
        .unwrap();
    assert_eq!(g.metadata().unwrap().len(), 0);
    drop(g);
    // fallocate passes through
    let h = m.file("b", 0, 0);
    // SAFETY: fallocate on an fd we own.
    let rc = unsafe { libc::fallocate(std::os::fd::AsRawFd::as_raw_fd(&h), 0, 0, 1 << 20) };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    assert_eq!(h.metadata().unwrap().len(), 1 << 20);
    // permissions and times
    std::fs::set_permissions(
        mnt.join("b"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(m.fs.backing().join("b"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    let t = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    h.set_modified(t).unwrap();
    assert_eq!(h.metadata().unwrap().modified().unwrap(), t);
    drop(h);
    // readdir, rename, unlink
    let mut names: Vec<_> = std::fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    std::fs::rename(mnt.join("b"), mnt.join("c")).unwrap();
    assert!(m.fs.backing().join("c").exists());
    assert_eq!(std::fs::metadata(mnt.join("c")).unwrap().len(), 1 << 20);
    std::fs::remove_file(mnt.join("a")).unwrap();
    assert!(!m.fs.backing().join("a").exists());
    // statfs comes from the backing file system
    let s = |p: &std::path::Path| {
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: statvfs into a zeroed struct.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is NUL-terminated and `st` a valid out-pointer.
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
        st
    };
    let (a, b) = (s(&mnt), s(m.fs.backing()));
    assert_eq!((a.f_blocks, a.f_bsize), (b.f_blocks, b.f_bsize));
    // the log has the truncates and the fallocate
    let ops: Vec<_> = m.fs.writes().iter().map(|w| w.op).collect();
    assert!(ops.contains(&WriteOp::Truncate));
    assert!(ops.contains(&WriteOp::Fallocate { mode: 0 }));
}

/// An 8 KiB buffer aligned to 4 KiB, for O_DIRECT.
struct Aligned(*mut u8, Layout);
impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = Layout::from_size_align(len, 4096).unwrap();
        // SAFETY: non-zero size layout.
        Aligned(unsafe { alloc_zeroed(layout) }, layout)
    }
    fn buf(&mut self) -> &mut [u8] {
        // SAFETY: the allocation is len bytes and owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.0, self.1.size()) }
    }
}
impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { dealloc(self.0, self.1) }
    }
}

#[test]
fn o_direct_through_the_mount() {
    let Some(m) = mount("o_direct_through_the_mount") else {
        return;
    };
    drop(m.file("data", 4 * PAGE, b'A'));
    let f = File::options()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(m.fs.mountpoint().join("data"))
        .expect("O_DIRECT open through iocap-faultfs");
    let mut buf = Aligned::new(PAGE);
    buf.buf().fill(b'D');
    assert_eq!(f.write_at(buf.buf(), PAGE as u64).unwrap(), PAGE);
    let mut back = Aligned::new(PAGE);
    f.read_exact_at(back.buf(), PAGE as u64).unwrap();
    assert_eq!(back.buf(), &vec![b'D'; PAGE][..]);
    // faults apply to O_DIRECT I/O like any other
    let id = m.fs.add(Rule::new(Fault::Eio).ops(Ops::Read));
    let err = f.read_at(back.buf(), 0).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO));
    assert_eq!(m.fs.fired(id), 1);
}

fn median_pwrite(f: &File, n: usize) -> Duration {
    let page = vec![7u8; PAGE];
    let mut lat: Vec<Duration> = (0..n)
        .map(|i| {
            let t = Instant::now();
            f.write_all_at(&page, (i % 64 * PAGE) as u64).unwrap();
            t.elapsed()
        })
        .collect();
    lat.sort();
    lat[n / 2]
}

#[test]
fn latency_is_added_precisely() {
    let Some(m) = mount("latency_is_added_precisely") else {
        return;
    };
    let f = m.file("data", 64 * PAGE, 0);
    let base = median_pwrite(&f, 200);
    let delay = Duration::from_millis(2);
    let id = m.fs.add(
        Rule::new(Fault::Latency(delay))
            .file("data")
            .ops(Ops::Write),
    );
    let slow = median_pwrite(&f, 200);
    eprintln!("median pwrite: {base:?} without, {slow:?} with a {delay:?} latency rule");
    assert!(slow >= delay, "{slow:?} < {delay:?}");
    // the daemon-side delay is exact; the client also pays the round trip and its own
    // wake-up, ~2 % here (see the crate docs) and 12 % in a CI run beside other tests: what
    // is asserted is that this is the 2 ms rule and not another, under a 3 ms rule's
    assert!(
        slow < base + delay + delay / 2,
        "{slow:?} - {base:?} is too far above {delay:?}"
    );
    assert_eq!(m.fs.fired(id), 200);
    // reads are not delayed by a write rule: it does not fire for them (a timed read once
    // took over 2 ms on a busy host, with no rule on it)
    read(&f, 0, PAGE).unwrap();
    assert_eq!(m.fs.fired(id), 200);
    assert!(m.fs.writes().iter().all(|w| w.outcome == Outcome::Passed));
}

#[test]
fn drop_unmounts_even_with_open_files_and_panics() {
    if !iocap_faultfs::fuse_or_skip("drop_unmounts_even_with_open_files_and_panics") {
        return;
    }
    // explicit unmount
    let m = mount("unmount").unwrap();
    let mnt = m.fs.mountpoint().to_path_buf();
    assert!(is_mounted(&mnt));
    drop(m.file("x", 10, 1));
    m.fs.unmount().unwrap();
    assert!(!is_mounted(&mnt));
    drop(m.dir);

    // a panicking test with a file still open: the drop detaches the mount
    let mut mnt = None;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let m = mount("panic").unwrap();
        mnt = Some(m.fs.mountpoint().to_path_buf());
        let _f = m.file("x", 10, 1);
        let _m = m;
        panic!("test failure inside the mount");
    }));
    assert!(r.is_err());
    assert!(!is_mounted(&mnt.unwrap()));

    // the busy case reports the lazy detach
    let m = mount("busy").unwrap();
    let mnt = m.fs.mountpoint().to_path_buf();
    let f = m.file("x", 10, 1);
    let err = m.fs.unmount().unwrap_err();
    assert!(err.to_string().contains("detached"), "{err}");
    assert!(!is_mounted(&mnt));
    drop(f);
}
