//! A block device with one bad 4 KiB block: device-mapper's `error` target where the kernel has
//! device-mapper, else a loop device over a file served by a minimal FUSE server that fails reads
//! of that block.

use std::ffi::CString;
use std::fs::{self};
use std::io::Write;
use std::ops::Range;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::rig::*;
use super::*;

// A block device with one bad block

/// A 64 MiB block device whose 4 KiB at [`BAD_OFFSET`] fail every read with EIO while the rest
/// reads fine: device-mapper where the kernel has it, else a loop device over a FUSE-served
/// file. `Err` says why neither could be made.
pub(super) fn device_with_a_bad_block(rig: &mut Rig) -> Result<String, String> {
    match device_mapper_bad_block(rig) {
        Ok(dev) => Ok(dev),
        Err(no_dm) => match fuse_bad_block(rig) {
            Ok(dev) => {
                eprintln!("note: {no_dm}; using a loop device over a FUSE file instead");
                Ok(dev)
            }
            Err(no_fuse) => Err(format!("{no_dm}, and {no_fuse}")),
        },
    }
}

pub(super) fn device_mapper_bad_block(rig: &mut Rig) -> Result<String, String> {
    if tool("dmsetup").is_none() {
        return Err("dmsetup is not installed".into());
    }
    sys("dmsetup", &["version"])
        .map_err(|_| "the kernel has no device-mapper (`dmsetup version` failed)".to_string())?;
    let file = rig.backing_file("dm-backing", 64 * MIB, None);
    let lo = rig.attach(&file);
    let name = format!("iocap-test-{}-bad", std::process::id());
    let (bad, n) = (BAD_OFFSET / 512, BAD_LEN / 512);
    let total = 64 * MIB / 512;
    let table = format!(
        "0 {bad} linear {lo} 0\n{bad} {n} error\n{} {} linear {lo} {}\n",
        bad + n,
        total - bad - n,
        bad + n
    );
    let out = std::process::Command::new(tool("dmsetup").unwrap())
        .args(["create", &name])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(table.as_bytes())?;
            c.wait_with_output()
        })
        .map_err(|e| format!("cannot run dmsetup: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "dmsetup create failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    rig.dms.push(name.clone());
    settle();
    let mapper = format!("/dev/mapper/{name}");
    if Path::new(&mapper).exists() {
        return Ok(mapper);
    }
    // no udev to make the node: use the kernel's name for it
    let kname = must(
        "dmsetup",
        &["info", "-c", "--noheadings", "-o", "blkdevname", &name],
    );
    let dev = format!("/dev/{kname}");
    if Path::new(&dev).exists() {
        Ok(dev)
    } else {
        panic!("dmsetup created {name} but neither {mapper} nor {dev} exists")
    }
}

pub(super) fn fuse_bad_block(rig: &mut Rig) -> Result<String, String> {
    let mnt = rig.path("fuse");
    fs::create_dir(&mnt).unwrap();
    let disk = FuseDisk::mount(&mnt, 64 * MIB, BAD_OFFSET..BAD_OFFSET + BAD_LEN)?;
    rig.fuses.push(disk);
    let file = mnt.join(FuseDisk::FILE);
    let lo = rig.attach(&file);
    // one request per I/O: a request merged from neighbouring reads would fail as a whole
    let name = Path::new(&lo).file_name().unwrap().to_string_lossy();
    fs::write(format!("/sys/block/{name}/queue/nomerges"), "2").unwrap();
    settle();
    Ok(lo)
}

/// A read-only FUSE file system holding one file, [`FuseDisk::FILE`], of zeros, whose reads fail
/// with EIO wherever they touch the bad range. It speaks the FUSE protocol on `/dev/fuse`
/// itself, from a thread of the test process.
pub(super) struct FuseDisk {
    pub(super) mountpoint: PathBuf,
    pub(super) thread: Option<JoinHandle<()>>,
    pub(super) done: Arc<AtomicBool>,
}

mod fuse_abi {
    //! The parts of `<linux/fuse.h>` the server needs.
    pub const LOOKUP: u32 = 1;
    pub const FORGET: u32 = 2;
    pub const GETATTR: u32 = 3;
    pub const OPEN: u32 = 14;
    pub const READ: u32 = 15;
    pub const STATFS: u32 = 17;
    pub const RELEASE: u32 = 18;
    pub const FSYNC: u32 = 20;
    pub const FLUSH: u32 = 25;
    pub const INIT: u32 = 26;
    pub const INTERRUPT: u32 = 36;
    pub const DESTROY: u32 = 38;
    pub const BATCH_FORGET: u32 = 42;
    pub const ROOT_ID: u64 = 1;
    /// `struct fuse_in_header`.
    pub const IN_HEADER: usize = 40;
    /// `struct fuse_out_header`.
    pub const OUT_HEADER: usize = 16;
}

impl FuseDisk {
    const FILE: &'static str = "disk";
    const FILE_ID: u64 = 2;

    pub(super) fn mount(mountpoint: &Path, size: u64, bad: Range<u64>) -> Result<Self, String> {
        if !Path::new("/dev/fuse").exists() {
            return Err("there is no /dev/fuse either".into());
        }
        // SAFETY: opening a device node; the descriptor is owned below.
        let raw = unsafe { libc::open(c"/dev/fuse".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if raw < 0 {
            return Err(format!(
                "/dev/fuse cannot be opened: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let target = CString::new(mountpoint.as_os_str().as_bytes()).unwrap();
        let opts = CString::new(format!("fd={raw},rootmode=40000,user_id=0,group_id=0")).unwrap();
        // SAFETY: NUL-terminated strings that outlive the call.
        let rc = unsafe {
            libc::mount(
                c"iocap-test".as_ptr(),
                target.as_ptr(),
                c"fuse".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_RDONLY,
                opts.as_ptr().cast(),
            )
        };
        if rc != 0 {
            return Err(format!(
                "a FUSE file system cannot be mounted: {}",
                std::io::Error::last_os_error()
            ));
        }
        let done = Arc::new(AtomicBool::new(false));
        let thread = {
            let done = done.clone();
            std::thread::spawn(move || {
                Self::serve(&fd, size, &bad);
                done.store(true, Ordering::Relaxed);
            })
        };
        Ok(Self {
            mountpoint: mountpoint.to_path_buf(),
            thread: Some(thread),
            done,
        })
    }

    /// Unmounts and waits a little for the server to see the connection end; a server that
    /// does not is left behind rather than hang the test.
    pub(super) fn stop(mut self) {
        let target = CString::new(self.mountpoint.as_os_str().as_bytes()).unwrap();
        // SAFETY: NUL-terminated path that outlives the call.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !self.done.load(Ordering::Relaxed) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.done.load(Ordering::Relaxed) {
            let _ = self.thread.take().unwrap().join();
        } else {
            eprintln!("cleanup: the FUSE server did not stop; leaving it behind");
        }
    }

    pub(super) fn attr(out: &mut Vec<u8>, ino: u64, size: u64) {
        let (mode, nlink) = if ino == fuse_abi::ROOT_ID {
            (libc::S_IFDIR | 0o755, 2u32)
        } else {
            (libc::S_IFREG | 0o644, 1u32)
        };
        for v in [ino, size, size.div_ceil(512), 0, 0, 0] {
            out.extend(v.to_le_bytes()); // ino size blocks atime mtime ctime
        }
        for v in [0, 0, 0, mode, nlink, 0, 0, 0, 4096, 0u32] {
            out.extend(v.to_le_bytes()); // [amc]timensec mode nlink uid gid rdev blksize flags
        }
    }

    pub(super) fn serve(fd: &OwnedFd, size: u64, bad: &Range<u64>) {
        use fuse_abi::*;
        let mut buf = vec![0u8; 2 << 20];
        let zeros = vec![0u8; 1 << 20];
        let le32 = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let le64 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        loop {
            // SAFETY: reads into a buffer we own, of its length.
            let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR | libc::EAGAIN | libc::ENOENT) => continue,
                    _ => return, // ENODEV: unmounted
                }
            }
            let req = &buf[..n as usize];
            if req.len() < IN_HEADER {
                return;
            }
            let (opcode, unique, node) = (le32(req, 4), le64(req, 8), le64(req, 16));
            let body = &req[IN_HEADER..];
            let known = |node: u64| node == ROOT_ID || node == Self::FILE_ID;
            let mut out = Vec::new();
            let reply: Result<(), i32> = match opcode {
                INIT => {
                    for v in [7u32, 31, le32(body, 8), 0] {
                        out.extend(v.to_le_bytes()); // major minor max_readahead flags
                    }
                    out.extend(16u16.to_le_bytes()); // max_background
                    out.extend(12u16.to_le_bytes()); // congestion_threshold
                    out.extend((128u32 << 10).to_le_bytes()); // max_write
                    out.extend(1u32.to_le_bytes()); // time_gran
                    out.resize(64, 0);
                    Ok(())
                }
                LOOKUP => {
                    let name = body.split(|b| *b == 0).next().unwrap_or_default();
                    if node == ROOT_ID && name == Self::FILE.as_bytes() {
                        for v in [Self::FILE_ID, 0, 3600, 3600] {
                            out.extend(v.to_le_bytes()); // nodeid generation entry/attr_valid
                        }
                        out.extend([0u8; 8]); // the two _nsec
                        Self::attr(&mut out, Self::FILE_ID, size);
                        Ok(())
                    } else {
                        Err(libc::ENOENT)
                    }
                }
                GETATTR if known(node) => {
                    out.extend(3600u64.to_le_bytes()); // attr_valid
                    out.extend([0u8; 8]); // attr_valid_nsec, dummy
                    let sz = if node == ROOT_ID { 0 } else { size };
                    Self::attr(&mut out, node, sz);
                    Ok(())
                }
                GETATTR => Err(libc::ENOENT),
                OPEN => {
                    out.extend([0u8; 16]); // fh, open_flags, backing_id
                    Ok(())
                }
                READ => {
                    let (off, len) = (le64(body, 8), u64::from(le32(body, 16)));
                    let end = (off + len).min(size);
                    if off < bad.end && end > bad.start {
                        Err(libc::EIO)
                    } else {
                        let n = end.saturating_sub(off) as usize;
                        out.extend(&zeros[..n.min(zeros.len())]);
                        Ok(())
                    }
                }
                STATFS => {
                    out.extend([0u8; 40]); // blocks bfree bavail files ffree
                    for v in [4096u32, 255, 4096, 0] {
                        out.extend(v.to_le_bytes()); // bsize namelen frsize padding
                    }
                    out.resize(80, 0);
                    Ok(())
                }
                RELEASE | FLUSH | FSYNC | DESTROY => Ok(()),
                FORGET | BATCH_FORGET | INTERRUPT => continue, // no reply
                _ => Err(libc::ENOSYS),
            };
            let error = match reply {
                Ok(()) => 0i32,
                Err(e) => {
                    out.clear();
                    -e
                }
            };
            let mut msg = Vec::with_capacity(OUT_HEADER + out.len());
            msg.extend(((OUT_HEADER + out.len()) as u32).to_le_bytes());
            msg.extend(error.to_le_bytes());
            msg.extend(unique.to_le_bytes());
            msg.extend(&out);
            // SAFETY: writes a buffer we own, of its length.
            let rc = unsafe { libc::write(fd.as_raw_fd(), msg.as_ptr().cast(), msg.len()) };
            if opcode == DESTROY
                || (rc < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENODEV))
            {
                return;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
