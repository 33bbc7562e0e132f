//! The measuring loop: one durable write at a time, on a pre-created, filled test file.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use iocap_engine::clock::now_ns;
use iocap_engine::{prepare_targets, whiten, NoFillProgress, OpRecorder, SlotBuffers, TargetKind};
use iocap_model::{format_bytes, DbFamily, FsyncPoint, FsyncReport, JobSpec, RwMode, TargetSpec};

use crate::analyse::{implausibility_warnings, recommendation, DeviceFlags};
use crate::method::{Method, OpenFlags};
use crate::{FsyncError, Offsets};

/// The file name used when TARGET is a directory.
pub const DEFAULT_FILE: &str = "iocap-fsync.testfile";

/// Size of the test file: a PostgreSQL WAL segment, as pg_test_fsync creates.
pub const FILE_SIZE: u64 = 16 << 20;

/// What to measure.
#[derive(Debug, Clone)]
pub struct Plan {
    /// A file, a directory (DIR/iocap-fsync.testfile) or a block device.
    pub target: PathBuf,
    /// Write sizes in bytes, each a multiple of 512 from 512 to 64 KiB.
    pub sizes: Vec<u64>,
    /// The methods measured, in this order, for each size.
    pub methods: Vec<Method>,
    /// Measured time per (method, size) point.
    pub duration_s: f64,
    pub offsets: Offsets,
    pub profile: DbFamily,
    pub allow_overwrite: bool,
}

/// What a run returns: the report, and whether Ctrl-C cut it short (the points measured until
/// then are in the report).
#[derive(Debug)]
pub struct Outcome {
    pub report: FsyncReport,
    pub interrupted: bool,
}

/// The test file path for `target`: a directory means DIR/iocap-fsync.testfile.
pub fn resolve_target(target: &Path) -> PathBuf {
    if target.is_dir() {
        target.join(DEFAULT_FILE)
    } else {
        target.to_path_buf()
    }
}

/// Creates (or checks) the test file, then measures every (method, size) point in turn.
/// `progress` is told of each point before it starts.
pub fn run(
    plan: &Plan,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Method, u64),
) -> Result<Outcome, FsyncError> {
    let max_size = plan.sizes.iter().copied().max().unwrap_or(8192);
    let path = resolve_target(&plan.target);
    // the engine's target preparation: O_EXCL creation, fill, marker, refusal of foreign files
    let spec = JobSpec {
        name: "fsync".into(),
        targets: vec![TargetSpec {
            size_bytes: Some(FILE_SIZE),
            ..TargetSpec::new(path.display().to_string())
        }],
        rw: RwMode::Write,
        write_pct: 100,
        bs_bytes: max_size,
        qd: 1,
        threads: 1,
        size_bytes: FILE_SIZE,
        align_bytes: 512,
        direct: false,
        allow_overwrite: plan.allow_overwrite,
        ..JobSpec::default()
    };
    let mut prepared = prepare_targets(&spec, &mut NoFillProgress, stop)?;
    let t = prepared.remove(0);
    let (device, fs_type) = iocap_engine::devinfo::device_and_fs(&t.file);
    let checked = t.file.metadata().map_err(|e| FsyncError::Io {
        context: format!("cannot stat {}", t.path.display()),
        source: e,
    })?;
    let logical_block = std::env::var("IOCAP_TEST_DIO_ALIGN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(t.logical_block)
        .max(1);
    let class = device
        .as_deref()
        .map(DeviceFlags::from_sysfs)
        .unwrap_or_default();
    let mut warnings = t.warnings.clone();
    if device.is_none() {
        warnings.push(format!(
            "{} is on a file system without a block device ({}): the figures say what this \
             file system does with a flush, not what a disk does",
            t.path.display(),
            fs_type.as_deref().unwrap_or("unknown")
        ));
    }
    let range = t.range_bytes;
    let kind = t.kind;
    drop(t.file);

    let mut buf =
        SlotBuffers::new(1, max_size as usize, 0x05EE_DF5C).map_err(|e| FsyncError::Io {
            context: "cannot allocate the write buffer".into(),
            source: e,
        })?;
    let mut points = Vec::with_capacity(plan.sizes.len() * plan.methods.len());
    let mut interrupted = false;
    'sizes: for &size in &plan.sizes {
        for &m in &plan.methods {
            if stop.load(Ordering::Relaxed) {
                interrupted = true;
                break 'sizes;
            }
            let mut point = FsyncPoint {
                method: m.id().into(),
                size_bytes: size,
                available: false,
                ..FsyncPoint::default()
            };
            if m.direct() && size % logical_block != 0 {
                point.reason = Some(format!(
                    "{} is not a multiple of {}, the O_DIRECT alignment of {}: a database \
                     writing its log with O_DIRECT rounds its writes up to that",
                    format_bytes(size),
                    format_bytes(logical_block),
                    path.display()
                ));
                points.push(point);
                continue;
            }
            let file = match open_method(&path, m, kind, &checked) {
                Ok(f) => f,
                Err(Unavailable(why)) => {
                    point.reason = Some(why);
                    points.push(point);
                    continue;
                }
                Err(Failed(e)) => return Err(e),
            };
            progress(m, size);
            // allocated here, before the loop; the loop only records into it
            let mut rec = OpRecorder::new();
            let slot = buf.slot_mut(0);
            let looped = measure_point(
                &file,
                m,
                &mut slot[..size as usize],
                range,
                plan.offsets,
                plan.duration_s,
                stop,
                &mut rec,
            );
            match looped {
                Ok(Measured::Done {
                    elapsed_ns,
                    stopped,
                }) => {
                    let secs = elapsed_ns as f64 / 1e9;
                    let st = rec.to_op_stats(secs);
                    point.available = true;
                    point.ops = st.ios;
                    point.duration_s = secs;
                    point.ops_per_s = st.iops;
                    point.lat_us = st.lat_us;
                    points.push(point);
                    if stopped {
                        interrupted = true;
                        break 'sizes;
                    }
                }
                Ok(Measured::Unavailable(why)) => {
                    point.reason = Some(why);
                    points.push(point);
                }
                Err(e) => {
                    return Err(FsyncError::Io {
                        context: format!(
                            "{} of {} to {} failed",
                            m.label(),
                            format_bytes(size),
                            path.display()
                        ),
                        source: e,
                    })
                }
            }
        }
    }
    warnings.extend(implausibility_warnings(&points, &class, device.as_deref()));
    let rec_text = recommendation(plan.profile, &points, class.fua);
    Ok(Outcome {
        report: FsyncReport {
            target: path.display().to_string(),
            device,
            fs_type,
            rotational: class.rotational,
            write_cache: class.write_cache.clone(),
            fua: class.fua,
            logical_block_bytes: logical_block,
            file_size_bytes: range,
            offsets: plan.offsets.name().into(),
            duration_s: plan.duration_s,
            profile: plan.profile.name().into(),
            points,
            warnings,
            recommendation: rec_text,
        },
        interrupted,
    })
}

enum OpenError {
    Unavailable(String),
    Failed(FsyncError),
}
use OpenError::{Failed, Unavailable};

/// Opens the prepared file again with the method's flags, and checks that it is still the
/// inode that was prepared (a file swapped in meanwhile is not written).
fn open_method(
    path: &Path,
    m: Method,
    kind: TargetKind,
    checked: &std::fs::Metadata,
) -> Result<File, OpenError> {
    let mut flags = libc::O_CLOEXEC | libc::O_NOFOLLOW | m.open_flags();
    if kind == TargetKind::BlockDevice {
        flags |= libc::O_EXCL;
    }
    let refuse_direct = std::env::var_os("IOCAP_TEST_REFUSE_DIRECT").is_some() && m.direct();
    let opened = if refuse_direct {
        Err(io::Error::from_raw_os_error(libc::EINVAL))
    } else {
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(path)
    };
    let f = match opened {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            return Err(Unavailable(format!(
                "the file system refused to open {} with {} (EINVAL)",
                path.display(),
                m.label()
            )))
        }
        Err(e) => {
            return Err(Failed(FsyncError::Io {
                context: format!("cannot open {} with {}", path.display(), m.label()),
                source: e,
            }))
        }
    };
    let now = f.metadata().map_err(|e| {
        Failed(FsyncError::Io {
            context: format!("cannot stat {}", path.display()),
            source: e,
        })
    })?;
    let same = match kind {
        TargetKind::File => now.dev() == checked.dev() && now.ino() == checked.ino(),
        TargetKind::BlockDevice => now.rdev() == checked.rdev(),
    };
    if !same {
        return Err(Failed(FsyncError::Refused(format!(
            "{} changed while iocap was testing it; not writing to it",
            path.display()
        ))));
    }
    Ok(f)
}

enum Measured {
    Done { elapsed_ns: u64, stopped: bool },
    Unavailable(String),
}

/// The hot loop: durable writes of `buf` one after another for `duration_s`, each timed from
/// the call to the return of its last system call. Nothing here allocates: the buffer and the
/// recorder were allocated before.
#[allow(clippy::too_many_arguments)]
fn measure_point(
    file: &File,
    m: Method,
    buf: &mut [u8],
    range: u64,
    offsets: Offsets,
    duration_s: f64,
    stop: &AtomicBool,
    rec: &mut OpRecorder,
) -> io::Result<Measured> {
    let fd = file.as_raw_fd();
    let size = buf.len() as u64;
    let iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let start = now_ns();
    let end = start + (duration_s * 1e9) as u64;
    let mut off: u64 = 0;
    let mut t0 = start;
    loop {
        let res = match m {
            Method::Fsync => write_all(fd, buf, off).and_then(|_| {
                // SAFETY: `fd` is an open descriptor owned by `file`, which outlives the call.
                check(unsafe { libc::fsync(fd) })
            }),
            Method::Fdatasync => write_all(fd, buf, off).and_then(|_| {
                // SAFETY: as above.
                check(unsafe { libc::fdatasync(fd) })
            }),
            Method::RwfDsync => {
                // SAFETY: `iov` describes `buf`, which is initialised, outlives the call and is
                // only read by the kernel; `fd` is open; one iovec is passed.
                let rc =
                    unsafe { libc::pwritev2(fd, &iov, 1, off as libc::off_t, libc::RWF_DSYNC) };
                if rc < 0 {
                    Err(io::Error::last_os_error())
                } else if rc as u64 != size {
                    Err(io::Error::other(format!(
                        "short write: {rc} of {size} bytes"
                    )))
                } else {
                    Ok(())
                }
            }
            _ => write_all(fd, buf, off),
        };
        if let Err(e) = res {
            match e.raw_os_error() {
                Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) if rec.ios == 0 => {
                    return Ok(Measured::Unavailable(format!(
                        "{} is not offered here: {e}",
                        m.label()
                    )));
                }
                Some(libc::EINTR) if stop.load(Ordering::Relaxed) => {
                    return Ok(Measured::Done {
                        elapsed_ns: now_ns() - start,
                        stopped: true,
                    });
                }
                Some(libc::EINTR) => {
                    t0 = now_ns();
                    continue;
                }
                _ => return Err(e),
            }
        }
        let t1 = now_ns();
        rec.record(t1 - t0, size);
        // the next write's bytes are new at every sector (as the engine's are), outside the
        // timed interval: a device that compresses or deduplicates gains nothing
        whiten(buf, rec.ios);
        t0 = now_ns();
        if t1 >= end {
            return Ok(Measured::Done {
                elapsed_ns: t1 - start,
                stopped: false,
            });
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(Measured::Done {
                elapsed_ns: t1 - start,
                stopped: true,
            });
        }
        if offsets == Offsets::Cycle {
            off += size;
            if off + size > range {
                off = 0;
            }
        }
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `pwrite` of the whole of `buf` at `off`, finishing a short write.
#[inline]
fn write_all(fd: libc::c_int, buf: &[u8], off: u64) -> io::Result<()> {
    let mut done = 0usize;
    while done < buf.len() {
        let rest = &buf[done..];
        // SAFETY: `rest` is initialised memory that outlives the call and that the kernel only
        // reads; `fd` is an open descriptor. For O_DIRECT, `buf` starts page-aligned (a
        // SlotBuffers slot) and its length is a multiple of the logical block, checked before.
        let rc = unsafe {
            libc::pwrite(
                fd,
                rest.as_ptr().cast(),
                rest.len(),
                (off + done as u64) as libc::off_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        if rc == 0 {
            return Err(io::Error::other("the write made no progress"));
        }
        done += rc as usize;
    }
    Ok(())
}
