//! The replay's target, by the rules of every write test: the engine's `prepare_targets` opens,
//! creates (at the trace's span, filled and marked as iocap's) or refuses it; a new file asked
//! smaller than the trace without a mapping is refused before it is made; discards are a hole
//! punched in a file or BLKDISCARD on a device.

use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use iocap_engine::{prepare_targets, NoFillProgress, PreparedTarget, TargetKind};
use iocap_model::{JobSpec, RwMode, TargetSpec};

use crate::map::Mapper;
use crate::survey::Survey;
use crate::{ReplayConfig, ReplayError};

/// A new file asked smaller than the trace with no mapping is refused before it is created.
pub(crate) fn refuse_unfit_new_file(
    cfg: &ReplayConfig,
    path: &Path,
    sv: &Survey,
) -> Result<(), ReplayError> {
    let missing = std::fs::symlink_metadata(path).is_err();
    match cfg.size_bytes {
        Some(size) if missing && cfg.map.is_none() && size < sv.span_bytes => {
            Mapper::new(None, sv.span_bytes, size, 512, &path.display().to_string())
                .map(|_| ())
                .map_err(ReplayError::Refused)
        }
        _ => Ok(()),
    }
}

/// The target, opened and checked by the engine's rules; a new file is created at the trace's
/// span (or `size_bytes`) and filled.
pub(crate) fn open_target(
    cfg: &ReplayConfig,
    path: &Path,
    sv: &Survey,
    stop: &AtomicBool,
) -> Result<PreparedTarget, ReplayError> {
    let writes = sv.writes > 0;
    let new_size = cfg
        .size_bytes
        .unwrap_or(sv.span_bytes)
        .max(1 << 20)
        .div_ceil(1 << 20)
        * (1 << 20);
    let spec = JobSpec {
        name: "replay".into(),
        targets: vec![TargetSpec {
            size_bytes: cfg.size_bytes,
            ..TargetSpec::new(path.display().to_string())
        }],
        rw: if writes { RwMode::Write } else { RwMode::Read },
        write_pct: if writes { 100 } else { 0 },
        // a multiple of every logical block, so the O_DIRECT check passes on 4 KiB devices
        bs_bytes: 4096,
        align_bytes: 4096,
        qd: 1,
        threads: 1,
        size_bytes: new_size,
        seed: cfg.seed,
        direct: cfg.direct,
        allow_overwrite: cfg.allow_overwrite,
        ..JobSpec::default()
    };
    let mut t = prepare_targets(&spec, &mut NoFillProgress, stop)?;
    Ok(t.remove(0))
}

/// Discards `len` bytes at `off`: a hole punched in a file, BLKDISCARD on a device.
pub(crate) fn discard(t: &PreparedTarget, off: u64, len: u64) -> std::io::Result<()> {
    let fd = t.file.as_raw_fd();
    let rc = match t.kind {
        TargetKind::File => {
            let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
            // SAFETY: fallocate on our own descriptor with plain integer arguments.
            unsafe { libc::fallocate(fd, mode, off as libc::off_t, len as libc::off_t) }
        }
        TargetKind::BlockDevice => {
            const BLKDISCARD: libc::c_ulong = 0x1277; // _IO(0x12, 119)
            let range: [u64; 2] = [off, len];
            // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer, which points
            // to `range`, alive for the call.
            unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) }
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
