//! The FUSE pass-through file system and the place where faults are applied.
//!
//! Every request is served from the backing directory with plain positioned I/O on backing file
//! descriptors. Opens are answered with `FOPEN_DIRECT_IO`, so the kernel page cache of the FUSE
//! mount never answers a read or absorbs a write: each client `pread`/`pwrite` becomes a request
//! here (split into pieces of at most 1 MiB, the kernel's request limit), and a fault applied
//! here is exactly what the client sees. The backing file system's own cache is irrelevant
//! because faults are applied above it.
//!
//! fuser serves requests on one thread, so the handlers run one at a time: latency injection
//! serialises the client's requests (queue depth above 1 turns into queueing delay), and the
//! handlers can keep their state in plain fields. The state a test changes at runtime (rules,
//! log, saved block versions, caches, token buckets) lives in [`Shared`] behind mutexes that are never held across I/O
//! or a sleep.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fuser::consts::FOPEN_DIRECT_IO;
use fuser::{
    FileAttr, FileType, Filesystem, KernelConfig, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
};
use libc::c_int;

use crate::inject::{lock, read_full_at, sleep_until, Action, Decision, Shared, Via};
use crate::log::{Outcome, WriteOp, WriteRecord};
use crate::rules::{Kind, RuleId};

/// Attributes and entries are never cached: the backing file may change behind the kernel.
const TTL: Duration = Duration::ZERO;

fn errno(e: &io::Error) -> c_int {
    e.raw_os_error().unwrap_or(libc::EIO)
}

struct Handle {
    file: File,
    ino: u64,
    /// Name at open time, used if the inode has since been unlinked.
    name: String,
}

pub(crate) struct FaultFsImpl {
    backing: PathBuf,
    shared: Arc<Shared>,
    paths: HashMap<u64, PathBuf>,
    inos: HashMap<PathBuf, u64>,
    next_ino: u64,
    handles: HashMap<u64, Handle>,
    next_fh: u64,
}

impl FaultFsImpl {
    pub(crate) fn new(backing: PathBuf, shared: Arc<Shared>) -> FaultFsImpl {
        let mut fs = FaultFsImpl {
            backing,
            shared,
            paths: HashMap::new(),
            inos: HashMap::new(),
            next_ino: fuser::FUSE_ROOT_ID + 1,
            handles: HashMap::new(),
            next_fh: 1,
        };
        fs.paths.insert(fuser::FUSE_ROOT_ID, PathBuf::new());
        fs.inos.insert(PathBuf::new(), fuser::FUSE_ROOT_ID);
        fs
    }

    fn ino_for(&mut self, rel: &Path) -> u64 {
        if let Some(&ino) = self.inos.get(rel) {
            return ino;
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        self.inos.insert(rel.to_path_buf(), ino);
        self.paths.insert(ino, rel.to_path_buf());
        ino
    }

    fn forget_path(&mut self, rel: &Path) {
        if let Some(ino) = self.inos.remove(rel) {
            self.paths.remove(&ino);
        }
        lock(&self.shared.stale).remove(&name_of(rel));
    }

    fn real(&self, rel: &Path) -> PathBuf {
        self.backing.join(rel)
    }

    fn child(&self, parent: u64, name: &OsStr) -> Option<PathBuf> {
        self.paths.get(&parent).map(|p| p.join(name))
    }

    fn attr(&self, ino: u64, m: &std::fs::Metadata) -> FileAttr {
        let t = |s: i64, ns: i64| {
            if s >= 0 {
                UNIX_EPOCH + Duration::new(s as u64, ns as u32)
            } else {
                UNIX_EPOCH
            }
        };
        let ft = m.file_type();
        let kind = if ft.is_dir() {
            FileType::Directory
        } else if ft.is_symlink() {
            FileType::Symlink
        } else {
            FileType::RegularFile
        };
        FileAttr {
            ino,
            size: m.size(),
            blocks: m.blocks(),
            atime: t(m.atime(), m.atime_nsec()),
            mtime: t(m.mtime(), m.mtime_nsec()),
            ctime: t(m.ctime(), m.ctime_nsec()),
            crtime: t(m.ctime(), m.ctime_nsec()),
            kind,
            perm: (m.mode() & 0o7777) as u16,
            nlink: m.nlink() as u32,
            uid: m.uid(),
            gid: m.gid(),
            rdev: m.rdev() as u32,
            blksize: m.blksize() as u32,
            flags: 0,
        }
    }

    /// The name rules match against for a handle: the inode's current path, else the name it
    /// was opened under.
    fn handle_name(&self, h: &Handle) -> String {
        self.paths
            .get(&h.ino)
            .map(|p| name_of(p))
            .unwrap_or_else(|| h.name.clone())
    }

    fn new_handle(&mut self, file: File, ino: u64, rel: &Path) -> u64 {
        let fh = self.next_fh;
        self.next_fh += 1;
        let name = name_of(rel);
        self.handles.insert(fh, Handle { file, ino, name });
        fh
    }

    fn record(&self, file: String, op: WriteOp, offset: u64, len: u64, outcome: Outcome) {
        self.record_rule(file, op, offset, len, outcome, None);
    }

    fn record_rule(
        &self,
        file: String,
        op: WriteOp,
        offset: u64,
        len: u64,
        outcome: Outcome,
        rule: Option<RuleId>,
    ) {
        lock(&self.shared.log).push(WriteRecord {
            file,
            op,
            offset,
            len,
            outcome,
            rule,
        });
    }
}

/// The rule-matching name of a path relative to the backing directory.
fn name_of(rel: &Path) -> String {
    rel.to_string_lossy().into_owned()
}

fn system_time(t: TimeOrNow) -> SystemTime {
    match t {
        TimeOrNow::SpecificTime(t) => t,
        TimeOrNow::Now => SystemTime::now(),
    }
}

impl Filesystem for FaultFsImpl {
    fn init(&mut self, _req: &Request<'_>, _config: &mut KernelConfig) -> Result<(), c_int> {
        // The default 50 µs timer slack would show in injected latencies.
        // SAFETY: prctl with PR_SET_TIMERSLACK takes one integer argument and touches no memory.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        // A device keeps its time whatever the host's load; this thread stands for one, so it
        // runs before ordinary threads where it may (root): with two CPU hogs beside a test,
        // 200 µs reads through it otherwise averaged 280 to 890 µs, and a cache scan found
        // caches where there were none. The kernel's real-time throttling still leaves the
        // others 5 % of each second; elsewhere the thread keeps the normal policy.
        let param = libc::sched_param { sched_priority: 1 };
        // SAFETY: sched_setscheduler(0, ...) changes the calling thread's policy; it reads the
        // sched_param it is given, which lives until the call returns.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
        Ok(())
    }

    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        let Some(rel) = self.child(parent, name) else {
            return reply.error(libc::ENOENT);
        };
        match std::fs::symlink_metadata(self.real(&rel)) {
            Ok(m) => {
                let ino = self.ino_for(&rel);
                reply.entry(&TTL, &self.attr(ino, &m), 0)
            }
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, fh: Option<u64>, reply: ReplyAttr) {
        let meta = match (
            fh.and_then(|fh| self.handles.get(&fh)),
            self.paths.get(&ino),
        ) {
            (Some(h), _) => h.file.metadata(),
            (None, Some(rel)) => std::fs::symlink_metadata(self.real(rel)),
            (None, None) => return reply.error(libc::ENOENT),
        };
        match meta {
            Ok(m) => reply.attr(&TTL, &self.attr(ino, &m)),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        let Some(rel) = self.paths.get(&ino).cloned() else {
            return reply.error(libc::ENOENT);
        };
        let real = self.real(&rel);
        let result = (|| -> io::Result<()> {
            if let Some(mode) = mode {
                std::fs::set_permissions(&real, std::fs::Permissions::from_mode(mode & 0o7777))?;
            }
            if uid.is_some() || gid.is_some() {
                std::os::unix::fs::chown(&real, uid, gid)?;
            }
            let opened;
            let file = match fh.and_then(|fh| self.handles.get(&fh)) {
                Some(h) => &h.file,
                None if size.is_some() || atime.is_some() || mtime.is_some() => {
                    opened = OpenOptions::new().write(true).open(&real)?;
                    &opened
                }
                None => return Ok(()),
            };
            if let Some(size) = size {
                let r = file.set_len(size);
                let outcome = match &r {
                    Ok(()) => Outcome::Passed,
                    Err(e) => Outcome::Failed(errno(e)),
                };
                self.record(name_of(&rel), WriteOp::Truncate, size, 0, outcome);
                r?;
            }
            if atime.is_some() || mtime.is_some() {
                let mut times = std::fs::FileTimes::new();
                if let Some(a) = atime {
                    times = times.set_accessed(system_time(a));
                }
                if let Some(m) = mtime {
                    times = times.set_modified(system_time(m));
                }
                file.set_times(times)?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            return reply.error(errno(&e));
        }
        match std::fs::symlink_metadata(&real) {
            Ok(m) => reply.attr(&TTL, &self.attr(ino, &m)),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn unlink(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        let Some(rel) = self.child(parent, name) else {
            return reply.error(libc::ENOENT);
        };
        match std::fs::remove_file(self.real(&rel)) {
            Ok(()) => {
                self.forget_path(&rel);
                reply.ok()
            }
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn rename(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        flags: u32,
        reply: ReplyEmpty,
    ) {
        if flags != 0 {
            return reply.error(libc::EINVAL);
        }
        let (Some(from), Some(to)) = (self.child(parent, name), self.child(newparent, newname))
        else {
            return reply.error(libc::ENOENT);
        };
        if let Err(e) = std::fs::rename(self.real(&from), self.real(&to)) {
            return reply.error(errno(&e));
        }
        self.forget_path(&to);
        lock(&self.shared.stale).remove(&name_of(&from));
        // Move the renamed entry and, for a directory, everything under it.
        let moved: Vec<(PathBuf, u64)> = self
            .inos
            .iter()
            .filter(|(p, _)| p.starts_with(&from))
            .map(|(p, i)| (p.clone(), *i))
            .collect();
        for (old, ino) in moved {
            // (joining an empty suffix would add a trailing slash)
            let new = match old.strip_prefix(&from) {
                Ok(rest) if !rest.as_os_str().is_empty() => to.join(rest),
                _ => to.clone(),
            };
            self.inos.remove(&old);
            self.inos.insert(new.clone(), ino);
            self.paths.insert(ino, new);
        }
        reply.ok()
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, flags: i32, reply: ReplyOpen) {
        let Some(rel) = self.paths.get(&ino).cloned() else {
            return reply.error(libc::ENOENT);
        };
        // Writers also get read access: StaleReads saves the old blocks through the same fd.
        let writes = flags & libc::O_ACCMODE != libc::O_RDONLY;
        match OpenOptions::new()
            .read(true)
            .write(writes)
            .open(self.real(&rel))
        {
            Ok(file) => {
                let fh = self.new_handle(file, ino, &rel);
                reply.opened(fh, FOPEN_DIRECT_IO)
            }
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn create(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let Some(rel) = self.child(parent, name) else {
            return reply.error(libc::ENOENT);
        };
        let mut opts = OpenOptions::new();
        opts.read(true).write(true).mode(mode & !umask & 0o7777);
        if flags & libc::O_EXCL != 0 {
            opts.create_new(true);
        } else {
            opts.create(true);
        }
        let file = match opts.open(self.real(&rel)) {
            Ok(f) => f,
            Err(e) => return reply.error(errno(&e)),
        };
        let meta = match file.metadata() {
            Ok(m) => m,
            Err(e) => return reply.error(errno(&e)),
        };
        lock(&self.shared.stale).remove(&name_of(&rel));
        let ino = self.ino_for(&rel);
        let attr = self.attr(ino, &meta);
        let fh = self.new_handle(file, ino, &rel);
        reply.created(&TTL, &attr, 0, fh, FOPEN_DIRECT_IO)
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyData,
    ) {
        let start = Instant::now();
        let Some(h) = self.handles.get(&fh) else {
            return reply.error(libc::EBADF);
        };
        let name = self.handle_name(h);
        let offset = offset as u64;
        let Decision {
            delay,
            decisive,
            stale,
        } = self
            .shared
            .decide(&name, Kind::Read, offset, size as u64, Via::Data, start);
        sleep_until(start + delay);
        if let Some((_, Action::Fail(e))) = decisive {
            return reply.error(e);
        }
        let mut buf = vec![0u8; size as usize];
        let n = match read_full_at(&h.file, &mut buf, offset) {
            Ok(n) => n,
            Err(e) => return reply.error(errno(&e)),
        };
        buf.truncate(n);
        for (id, rule) in &stale {
            if self.shared.serve_stale(&name, rule, offset, &mut buf) {
                lock(&self.shared.rules).fire(*id);
            }
        }
        reply.data(&buf)
    }

    fn write(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyWrite,
    ) {
        let start = Instant::now();
        let Some(h) = self.handles.get(&fh) else {
            return reply.error(libc::EBADF);
        };
        let name = self.handle_name(h);
        let (offset, len) = (offset as u64, data.len() as u64);
        let Decision {
            delay,
            decisive,
            stale,
        } = self
            .shared
            .decide(&name, Kind::Write, offset, len, Via::Data, start);
        sleep_until(start + delay);
        let (rule, action) = match decisive {
            Some((id, a)) => (Some(id), a),
            None => (None, Action::Pass),
        };
        let (at, bytes, outcome) = match action {
            Action::Fail(e) => {
                self.record_rule(name, WriteOp::Write, offset, len, Outcome::Failed(e), rule);
                return reply.error(e);
            }
            Action::Drop => (offset, &data[..0], Outcome::Dropped),
            Action::Pass => (offset, data, Outcome::Passed),
            Action::Misdirect(at) => (at, data, Outcome::MisdirectedTo(at)),
            Action::Tear(keep) => (
                offset,
                &data[..keep as usize],
                Outcome::Torn { written: keep },
            ),
        };
        if !stale.is_empty() {
            self.shared
                .save_versions(&name, &h.file, at, bytes.len() as u64);
        }
        let outcome = match h.file.write_all_at(bytes, at) {
            Ok(()) => outcome,
            Err(e) => Outcome::Failed(errno(&e)),
        };
        self.record_rule(name, WriteOp::Write, offset, len, outcome, rule);
        match outcome {
            Outcome::Failed(e) => reply.error(e),
            _ => reply.written(data.len() as u32),
        }
    }

    fn flush(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _lo: u64, reply: ReplyEmpty) {
        reply.ok()
    }

    fn release(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        _flags: i32,
        _lock_owner: Option<u64>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.handles.remove(&fh);
        reply.ok()
    }

    fn fsync(&mut self, _req: &Request<'_>, _ino: u64, fh: u64, datasync: bool, reply: ReplyEmpty) {
        let Some(h) = self.handles.get(&fh) else {
            return reply.error(libc::EBADF);
        };
        let r = if datasync {
            h.file.sync_data()
        } else {
            h.file.sync_all()
        };
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn readdir(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        mut reply: ReplyDirectory,
    ) {
        let Some(rel) = self.paths.get(&ino).cloned() else {
            return reply.error(libc::ENOENT);
        };
        let parent_ino = rel
            .parent()
            .and_then(|p| self.inos.get(p).copied())
            .unwrap_or(fuser::FUSE_ROOT_ID);
        let mut entries = vec![
            (ino, FileType::Directory, ".".into()),
            (parent_ino, FileType::Directory, "..".into()),
        ];
        let dir = match std::fs::read_dir(self.real(&rel)) {
            Ok(d) => d,
            Err(e) => return reply.error(errno(&e)),
        };
        let mut names: Vec<(std::ffi::OsString, FileType)> = dir
            .filter_map(|e| e.ok())
            .map(|e| {
                let kind = match e.file_type() {
                    Ok(t) if t.is_dir() => FileType::Directory,
                    Ok(t) if t.is_symlink() => FileType::Symlink,
                    _ => FileType::RegularFile,
                };
                (e.file_name(), kind)
            })
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, kind) in names {
            let child = self.ino_for(&rel.join(&name));
            entries.push((child, kind, name));
        }
        for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(ino, (i + 1) as i64, kind, name) {
                break;
            }
        }
        reply.ok()
    }

    fn fsyncdir(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _ds: bool, reply: ReplyEmpty) {
        reply.ok()
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        let path = match std::ffi::CString::new(self.backing.as_os_str().as_encoded_bytes()) {
            Ok(p) => p,
            Err(_) => return reply.error(libc::EINVAL),
        };
        // SAFETY: statvfs writes one struct statvfs through the valid pointer we pass.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: `path` is NUL-terminated and `st` a valid out-pointer.
        if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
            return reply.error(errno(&io::Error::last_os_error()));
        }
        reply.statfs(
            st.f_blocks,
            st.f_bfree,
            st.f_bavail,
            st.f_files,
            st.f_ffree,
            st.f_bsize as u32,
            st.f_namemax as u32,
            st.f_frsize as u32,
        )
    }

    fn fallocate(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        offset: i64,
        length: i64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let start = Instant::now();
        let Some(h) = self.handles.get(&fh) else {
            return reply.error(libc::EBADF);
        };
        let name = self.handle_name(h);
        let (off, len) = (offset as u64, length as u64);
        let Decision {
            delay, decisive, ..
        } = self
            .shared
            .decide(&name, Kind::Write, off, len, Via::Fallocate, start);
        sleep_until(start + delay);
        let op = WriteOp::Fallocate { mode };
        if let Some((id, Action::Fail(e))) = decisive {
            self.record_rule(name, op, off, len, Outcome::Failed(e), Some(id));
            return reply.error(e);
        }
        // SAFETY: fallocate on a file descriptor we own; no memory is passed.
        let r = unsafe { libc::fallocate(h.file.as_raw_fd(), mode, offset, length) };
        if r != 0 {
            let e = errno(&io::Error::last_os_error());
            self.record(name, op, off, len, Outcome::Failed(e));
            return reply.error(e);
        }
        self.record(name, op, off, len, Outcome::Passed);
        reply.ok()
    }
}
