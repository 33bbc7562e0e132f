//! The measuring loop: one durable write at a time, on a pre-created, filled test file. The
//! loop, its timing and the report are the same on every system; how a method opens the target
//! and makes a write durable is the system's (`iocap_platform::durable`, opened through `site`).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use iocap_engine::{prepare_targets, whiten, NoFillProgress, OpRecorder, SlotBuffers};
use iocap_model::{format_bytes, DbFamily, FsyncPoint, FsyncReport, JobSpec, RwMode, TargetSpec};
use iocap_platform::clock::now_ns;

use crate::analyse::{implausibility_warnings, recommendation};
use crate::durable::{DurableWrite, OnError, OpenError};
use crate::method::{self, Method};
use crate::site::{needs_alignment, on_error, Site, DIRECT};
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
    let logical_block = std::env::var("IOCAP_TEST_DIO_ALIGN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(t.logical_block)
        .max(1);
    let (range, kind, mut warnings) = (t.range_bytes, t.kind, t.warnings);
    // the engine's claim on the target (its lock), held until every point is measured; each
    // method's open is checked against the same id (`iocap_platform::target::file_id`)
    let _claim = t.claim;
    let site = Site::new(t.file, &t.path, kind)?;
    warnings.extend(site.warnings.iter().cloned());
    let class = &site.flags;

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
                method: m.into(),
                size_bytes: size,
                available: false,
                ..FsyncPoint::default()
            };
            if !method::native().contains(&m) {
                point.reason = Some(format!(
                    "{} is a {} method; it is not measured on {}",
                    m.label(),
                    m.system(),
                    method::native_system()
                ));
                points.push(point);
                continue;
            }
            if needs_alignment(m, kind) && size % logical_block != 0 {
                point.reason = Some(format!(
                    "{} is not a multiple of {}, the {dio} alignment of {}: a database \
                     writing its log with {dio} rounds its writes up to that",
                    format_bytes(size),
                    format_bytes(logical_block),
                    path.display(),
                    dio = DIRECT,
                ));
                points.push(point);
                continue;
            }
            let mut file = match site.open(m) {
                Ok(f) => f,
                Err(OpenError::Unavailable(why)) => {
                    point.reason = Some(why);
                    points.push(point);
                    continue;
                }
                Err(OpenError::Failed(e)) => return Err(e),
            };
            progress(m, size);
            // allocated here, before the loop; the loop only records into it
            let mut rec = OpRecorder::new();
            let slot = buf.slot_mut(0);
            let looped = measure_point(
                &mut file,
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
    warnings.extend(implausibility_warnings(
        &points,
        class,
        site.device.as_deref(),
    ));
    let rec_text = recommendation(plan.profile, &points, class.fua);
    Ok(Outcome {
        report: FsyncReport {
            target: path.display().to_string(),
            device: site.device.clone(),
            fs_type: site.fs_type.clone(),
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

enum Measured {
    Done { elapsed_ns: u64, stopped: bool },
    Unavailable(String),
}

/// The fewest durable writes a point takes, however long they last: fewer give no median or
/// p99 worth printing, and a slow device must not end a point after one or two writes.
pub const MIN_WRITES: u64 = 16;

/// The hot loop: durable writes of `buf` one after another for `duration_s` and at least
/// [`MIN_WRITES`] of them (unless stopped), each timed from the call to the return of its last
/// system call. Nothing here allocates: the buffer and the
/// recorder were allocated before.
#[allow(clippy::too_many_arguments)]
fn measure_point(
    file: &mut impl DurableWrite,
    m: Method,
    buf: &mut [u8],
    range: u64,
    offsets: Offsets,
    duration_s: f64,
    stop: &AtomicBool,
    rec: &mut OpRecorder,
) -> io::Result<Measured> {
    let size = buf.len() as u64;
    let start = now_ns();
    let end = start + (duration_s * 1e9) as u64;
    let mut off: u64 = 0;
    let mut t0 = start;
    loop {
        if let Err(e) = file.write_durably(buf, off) {
            match on_error(&e, rec.ios == 0, stop) {
                OnError::Unavailable => {
                    return Ok(Measured::Unavailable(format!(
                        "{} is not offered here: {e}",
                        m.label()
                    )));
                }
                OnError::Stopped => {
                    return Ok(Measured::Done {
                        elapsed_ns: now_ns() - start,
                        stopped: true,
                    });
                }
                OnError::Retry => {
                    t0 = now_ns();
                    continue;
                }
                OnError::Fail => return Err(e),
            }
        }
        let t1 = now_ns();
        rec.record(t1 - t0, size);
        // the next write's bytes are new at every sector (as the engine's are), outside the
        // timed interval: a device that compresses or deduplicates gains nothing
        whiten(buf, rec.ios);
        t0 = now_ns();
        if t1 >= end && rec.ios >= MIN_WRITES {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A method of another system (a plan made by a library caller, not `--methods`, which
    /// refuses it) is skipped with the reason; this system's run as usual.
    #[test]
    fn another_systems_method_is_skipped_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let other = Method::ALL
            .into_iter()
            .find(|m| !method::native().contains(m))
            .unwrap();
        let own = method::native()[0];
        let plan = Plan {
            target: dir.path().into(),
            sizes: vec![4096],
            methods: vec![other, own],
            duration_s: 0.05,
            offsets: Offsets::Same,
            profile: DbFamily::Postgres,
            allow_overwrite: false,
        };
        let out = run(&plan, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
        let p = &out.report.points;
        assert_eq!(p.len(), 2);
        assert!(!p[0].available && p[0].ops == 0, "{:?}", p[0]);
        let why = p[0].reason.as_deref().unwrap();
        assert!(
            why.contains(&format!("is a {} method", other.system()))
                && why.contains(method::native_system()),
            "{why}"
        );
        assert!(p[1].available && p[1].ops > 0, "{:?}", p[1]);
    }

    /// A point whose time is up after its first write (a slow device, a busy machine) still
    /// takes MIN_WRITES writes, and no more: its percentiles rest on that many.
    #[test]
    fn a_point_takes_at_least_min_writes_however_short_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan {
            target: dir.path().into(),
            sizes: vec![4096],
            methods: vec![method::native()[0]],
            duration_s: 0.0,
            offsets: Offsets::Cycle,
            profile: DbFamily::Postgres,
            allow_overwrite: false,
        };
        let out = run(&plan, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
        assert_eq!(out.report.points[0].ops, MIN_WRITES);
    }
}
