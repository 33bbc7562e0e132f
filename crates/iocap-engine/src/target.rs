//! Turning the paths a user typed into open, checked targets.
//!
//! This is where data safety is enforced, before any I/O is issued:
//! - a missing file is created (never truncating anything: O_EXCL) and filled completely with
//!   incompressible data, so reads never hit holes;
//! - iocap writes only to files it created (see [`crate::marker`]) unless the user passed
//!   `allow_overwrite`, and never to a block device that is mounted, part of a device-mapper or
//!   md stack, or used as swap;
//! - a file that is not ours is opened read-only to be checked, and reopened for writing only
//!   after permission was established; writes never follow symlinks;
//! - the test range never exceeds what exists: a user's file is never extended;
//! - a path that is neither a regular file nor a block device (a FIFO, a socket, a character
//!   device such as /dev/null) is refused by its kind, read with stat before anything opens
//!   it: opening a FIFO for reading waits for a writer, and no open may hang a run;
//! - every target is held by the command's claim ([`Held`], `iocap_platform::claim`) from the
//!   descriptor it was checked (or created) through: a file iocap may write is locked for as
//!   long as it is filled and tested (a second run on it refuses, naming the process that
//!   holds it), and the test's own open must find that same file or device again.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use iocap_model::{format_bytes, human_bytes, JobSpec};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::buffers::{fill_random, SlotBuffers};
use crate::error::IoFailure;
pub use crate::error::TargetError;
use crate::marker::{self, Marker};
use crate::safety::{self, Found, Intent};
/// What a target is: the model's, as the result records it.
pub use iocap_model::TargetKind;
use iocap_platform::claim::Held;
use iocap_platform::devinfo;
use iocap_platform::target as plat;

/// A target ready for I/O.
#[derive(Debug)]
pub struct PreparedTarget {
    pub path: PathBuf,
    pub kind: TargetKind,
    pub file: File,
    /// I/O stays in `[base, base + range_bytes)`, `base` being the spec's `base_bytes`.
    pub range_bytes: u64,
    pub logical_block: u64,
    pub direct: bool,
    /// Opened for writes that are durable when they complete (O_DSYNC, FILE_FLAG_WRITE_THROUGH).
    pub write_through: bool,
    pub created: bool,
    pub threads: u32,
    pub cpu_mask: Option<u64>,
    pub warnings: Vec<String>,
    /// The claim's hold on it: the target checked, and the lock on a file iocap may write,
    /// held while this target lives (the whole test). Every later open by path is checked
    /// with it.
    pub claim: Held,
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> TargetError {
    let wrap = IoFailure::with(context);
    move |source| TargetError::Io(wrap(source))
}

/// Refusing a target that is no longer what was checked.
fn changed(shown: &str) -> TargetError {
    TargetError::Refused(crate::safety::changed(shown, "checking"))
}

/// The range to test in an existing regular file of `actual` bytes, and a warning when it is
/// shorter than asked. A file of iocap's own that is unfinished (its fill was cut short: killed,
/// power lost) or too small is filled up to the size asked for; a file iocap did not create is
/// never extended, so the test uses what it holds.
#[allow(clippy::too_many_arguments)]
fn existing_file_range(
    spec: &JobSpec,
    path: &Path,
    shown: &str,
    size: Option<u64>,
    actual: u64,
    mark: Option<Marker>,
    claim: &Held,
    obs: &mut dyn FillObserver,
    stop: &AtomicBool,
) -> Result<(u64, Option<String>), TargetError> {
    // a fill that was cut short is finished to the size it was started with, not taken at the
    // length it reached
    let intended = match mark {
        Some(m) if !m.complete => m.size.max(actual),
        _ => actual,
    };
    let range = size.unwrap_or(intended);
    let (range, warning) = match mark {
        Some(m) if !m.complete || actual < range => {
            let from = if m.complete { actual } else { 0 };
            check_space(&parent_dir(path), range.saturating_sub(from), shown)?;
            fill(path, from, range, spec.seed, claim, obs, stop)?;
            (range, None)
        }
        _ if actual < range => (
            actual,
            Some(format!(
                "{shown} holds {} but {} was asked for; iocap never extends a file it did not \
                 create, so the test uses {}",
                format_bytes(actual),
                format_bytes(range),
                format_bytes(actual)
            )),
        ),
        _ => (range, None),
    };
    if range == 0 {
        return Err(TargetError::Invalid(format!("{shown} is empty")));
    }
    Ok((range, warning))
}

/// Reports the progress of filling new test files.
pub trait FillObserver {
    fn start(&mut self, path: &Path, total_bytes: u64);
    fn advance(&mut self, done_bytes: u64);
    fn finish(&mut self);
}

/// A [`FillObserver`] that shows nothing.
pub struct NoFillProgress;
impl FillObserver for NoFillProgress {
    fn start(&mut self, _: &Path, _: u64) {}
    fn advance(&mut self, _: u64) {}
    fn finish(&mut self) {}
}

/// Opens, creates and checks every target of `spec`.
pub fn prepare_targets(
    spec: &JobSpec,
    obs: &mut dyn FillObserver,
    stop: &AtomicBool,
) -> Result<Vec<PreparedTarget>, TargetError> {
    // a mask naming a CPU that is not there is refused before any target is touched
    for mask in spec.targets.iter().filter_map(|t| t.cpu_mask) {
        crate::affinity::check_mask(mask).map_err(TargetError::Invalid)?;
    }
    spec.targets
        .iter()
        .map(|t| {
            let path = crate::safety::target_path(Path::new(&t.path));
            let mut pt = prepare_one(spec, &path, t.size_bytes, obs, stop)?;
            pt.threads = t.threads.unwrap_or(spec.threads);
            pt.cpu_mask = t.cpu_mask.filter(|m| *m != 0);
            // a random test over an existing file's range is judged once the range is known
            let shown = path.display().to_string();
            spec.check_random_range(pt.range_bytes, &shown)
                .map_err(|e| TargetError::Invalid(e.to_string()))?;
            pt.warnings
                .extend(spec.few_random_offsets(pt.range_bytes, &shown, pt.threads));
            Ok(pt)
        })
        .collect()
}

fn prepare_one(
    spec: &JobSpec,
    path: &Path,
    size: Option<u64>,
    obs: &mut dyn FillObserver,
    stop: &AtomicBool,
) -> Result<PreparedTarget, TargetError> {
    let shown = path.display().to_string();
    let mut warnings = Vec::new();
    let writes = spec.writes();
    // with a base offset the target must hold [base, base + size): `end` is what it must hold
    let base = spec.base_bytes;
    let size = size.map(|s| s.saturating_add(base));
    let intent = if writes { Intent::Write } else { Intent::Read };
    // the facts, read without writing; the decision, docs/safety.md's, made once (`safety`)
    let seen = safety::inspect(path, intent)?;
    safety::decide(&shown, &seen.facts, intent, spec.allow_overwrite)?;
    let device_name = plat::names_device(path);
    let mut created = false;
    let kind;
    let mut range;
    let claim;
    match seen.facts.found {
        Found::Missing => {
            let want = size.unwrap_or(spec.size_bytes);
            let (c, warning) = create_file(path, want, spec.seed, obs, stop)?;
            claim = c;
            warnings.extend(warning);
            created = true;
            kind = TargetKind::File;
            range = want;
        }
        Found::File { ours } => {
            kind = TargetKind::File;
            let f = seen.file.ok_or_else(|| changed(&shown))?;
            let meta = f
                .metadata()
                .map_err(io_err(format!("cannot stat {shown}")))?;
            if !meta.is_file() {
                return Err(changed(&shown));
            }
            // locked before the fill is looked at (a fill under way is another run's) when
            // iocap may write it
            let (c, warning) = Held::take(&f, &shown, TargetKind::File, ours || writes)?;
            claim = c;
            warnings.extend(warning);
            drop(f);
            range = existing_file_range(
                spec,
                path,
                &shown,
                size,
                meta.len(),
                seen.marker,
                &claim,
                obs,
                stop,
            )
            .map(|(r, w)| {
                warnings.extend(w);
                r
            })?;
        }
        Found::Device { .. } => {
            kind = TargetKind::BlockDevice;
            let f = plat::open_read(path).map_err(io_err(format!("cannot open {shown}")))?;
            if !device_name {
                let meta = f
                    .metadata()
                    .map_err(io_err(format!("cannot stat {shown}")))?;
                if !plat::is_block_device(&meta) {
                    return Err(changed(&shown));
                }
            }
            // a device is not locked: O_EXCL keeps writers apart
            claim = Held::take(&f, &shown, TargetKind::BlockDevice, false)?.0;
            let dev_size = devinfo::block_device_size(&f)
                .map_err(io_err(format!("cannot read the size of {shown}")))?;
            range = size.unwrap_or(dev_size);
            if range > dev_size {
                warnings.push(format!(
                    "{shown} holds {}, less than the {} asked for; testing the whole device",
                    format_bytes(dev_size),
                    format_bytes(range)
                ));
                range = dev_size;
            }
        }
        // refused by `decide`
        Found::Other(what) => return Err(safety::not_a_target(&shown, what)),
    }

    let (file, direct) = open_for_test(spec, path, kind, &mut warnings)?;
    // the file or device the test opened must be the one that was checked (or created) above
    claim.holds(&file)?;
    // a file written must still carry iocap's marker, unless the user allowed overwriting it
    let unmarked = || marker::read(&file, path).is_none();
    if kind == TargetKind::File && writes && !spec.allow_overwrite && unmarked() {
        return Err(changed(&shown));
    }
    let logical_block = match kind {
        TargetKind::BlockDevice => devinfo::block_device_logical_block(&file).unwrap_or(512),
        TargetKind::File => devinfo::file_dio_alignment(&file),
    };
    if direct {
        if let Some(why) = direct_alignment_problem(spec, logical_block, &shown) {
            return Err(TargetError::Invalid(why));
        }
    }
    if let Some(w) = memory_backed(&file, &shown) {
        warnings.push(w);
    }
    let range = region(spec, &shown, range, size)?;
    if range < spec.bs_bytes {
        return Err(TargetError::Invalid(format!(
            "{shown} holds {} B, less than one block of {} B",
            range, spec.bs_bytes
        )));
    }
    Ok(PreparedTarget {
        path: path.to_path_buf(),
        kind,
        file,
        range_bytes: range,
        logical_block,
        direct,
        write_through: spec.write_through,
        created,
        threads: spec.threads,
        cpu_mask: None,
        warnings,
        claim,
    })
}

/// The length of the test region of a target that holds `end` bytes for the test (its size,
/// or what it was filled or created to), when `size` (base included) was asked for: from the
/// spec's base offset to `end`. With a base, a target that cannot hold the whole region asked
/// for (a device or a file iocap did not create, which is never extended) is refused rather
/// than tested on less: `-B` places the I/O, so a shorter region would not be the one meant.
fn region(spec: &JobSpec, shown: &str, end: u64, size: Option<u64>) -> Result<u64, TargetError> {
    let base = spec.base_bytes;
    if base == 0 {
        return Ok(end);
    }
    let short = size.is_some_and(|want| end < want);
    if short || end < base.saturating_add(spec.bs_bytes) {
        let asked = match size {
            Some(want) => format!("bytes {base} to {want}"),
            None => format!("a block from byte {base} on"),
        };
        return Err(TargetError::Invalid(format!(
            "{shown} holds {}; the test asks for {asked} (base offset {}), which it does not \
             hold: give a smaller base offset or size",
            format_bytes(end),
            format_bytes(base)
        )));
    }
    Ok(end - base)
}

/// Why `spec` cannot run with O_DIRECT on target `shown`, whose alignment is `logical_block`:
/// the block size, the alignment and every size of a block-size mix must be multiples of it.
pub(crate) fn direct_alignment_problem(
    spec: &JobSpec,
    logical_block: u64,
    shown: &str,
) -> Option<String> {
    let lb = logical_block.max(1);
    let sizes = spec
        .bs_split
        .iter()
        .map(|b| ("block size of the mix", b.bs_bytes));
    // DiskSpd's streams start I/Os at multiples of these
    let streams = spec.streams.iter().flat_map(|s| {
        [
            ("sequential stride", s.stride_bytes),
            ("thread stride", s.thread_stride_bytes),
        ]
    });
    [
        ("block size", spec.bs_bytes),
        ("alignment", spec.align_bytes),
        ("base offset", spec.base_bytes),
    ]
    .into_iter()
    .chain(sizes)
    .chain(streams)
    .find(|(_, v)| v % lb != 0)
    .map(|(what, v)| {
        format!(
            "{what} {v} B is not a multiple of {lb} B, the O_DIRECT alignment of {shown}; \
                 use a multiple of {lb} B or --buffered"
        )
    })
}

/// A warning when `file` lives in memory (tmpfs, ramfs): no block device is under it, so with
/// or without O_DIRECT (tmpfs takes the flag on recent kernels) the figures are memory's.
fn memory_backed(file: &File, shown: &str) -> Option<String> {
    let (_, fs) = devinfo::device_and_fs(file);
    let fs = fs.filter(|f| matches!(f.as_str(), "tmpfs" | "ramfs" | "devtmpfs"))?;
    Some(format!(
        "{shown} is on {fs}: no block device is under it, so the figures measure memory, not \
         storage (O_DIRECT or not)"
    ))
}

fn open_for_test(
    spec: &JobSpec,
    path: &Path,
    kind: TargetKind,
    warnings: &mut Vec<String>,
) -> Result<(File, bool), TargetError> {
    let shown = path.display();
    let open = |direct: bool| plat::open_test(path, spec, kind, direct);
    if !spec.direct {
        let f = open(false).map_err(io_err(format!("cannot open {shown}")))?;
        return Ok((f, false));
    }
    let refuse_direct = std::env::var_os("IOCAP_TEST_REFUSE_DIRECT").is_some();
    match if refuse_direct {
        Err(plat::direct_refused_error())
    } else {
        open(true)
    } {
        Ok(f) => Ok((f, true)),
        Err(e) if plat::is_direct_refused(&e) => {
            warnings.push(format!(
                "{} was refused on {shown} (its file system does not support it); fell \
                 back to buffered I/O, so the figures include the {}",
                plat::DIRECT,
                plat::CACHE
            ));
            let f = open(false).map_err(io_err(format!("cannot open {shown}")))?;
            Ok((f, false))
        }
        Err(e) if plat::is_busy(&e) => Err(TargetError::Refused(format!(
            "refusing to write to {shown}: the device is in use (mounted or held by another \
             driver)"
        ))),
        Err(e) => Err(io_err(format!("cannot open {shown}"))(e)),
    }
}

/// Chunk size for filling new files.
const FILL_CHUNK: usize = 1 << 20;

/// Creates `path` and fills it; claimed (and locked) at creation, before its marker says it is
/// ours, so no other run can take the fill for an abandoned one (and a warning where the file
/// system takes no lock).
fn create_file(
    path: &Path,
    size: u64,
    seed: u64,
    obs: &mut dyn FillObserver,
    stop: &AtomicBool,
) -> Result<(Held, Option<String>), TargetError> {
    let shown = path.display();
    let parent = parent_dir(path);
    if !parent.is_dir() {
        return Err(TargetError::Invalid(format!(
            "cannot create {shown}: directory {} does not exist",
            parent.display()
        )));
    }
    check_space(&parent, size, &shown.to_string())?;
    let f = plat::create_new(path).map_err(io_err(format!("cannot create {shown}")))?;
    let remove = || {
        // ours, and unusable: do not leave a half-written file behind
        let _ = std::fs::remove_file(path);
        marker::remove_sidecar(path);
    };
    let (claim, warning) =
        Held::take(&f, &shown.to_string(), TargetKind::File, true).inspect_err(|_| remove())?;
    let res = marker::write(
        &f,
        path,
        Marker {
            complete: false,
            size,
        },
    )
    .map_err(io_err(format!("cannot mark {shown} as an iocap test file")))
    .and_then(|_| {
        drop(f);
        fill(path, 0, size, seed, &claim, obs, stop)
    });
    if res.is_err() {
        // still locked: no other run takes the half-written file for one to finish
        remove();
    }
    res.map(|_| (claim, warning))
}

/// The directory holding `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn check_space(dir: &Path, need: u64, what: &str) -> Result<(), TargetError> {
    if let Some(free) = devinfo::free_bytes(dir) {
        if free < need {
            return Err(TargetError::Invalid(format!(
                "not enough free space in {} for {what}: it needs {} and {} are free; use a \
                 smaller --size or another directory",
                dir.display(),
                human_bytes(need),
                human_bytes(free)
            )));
        }
    }
    Ok(())
}

/// Writes incompressible data over `[from, to)` of our own file, then marks it complete.
fn fill(
    path: &Path,
    from: u64,
    to: u64,
    seed: u64,
    claim: &Held,
    obs: &mut dyn FillObserver,
    stop: &AtomicBool,
) -> Result<(), TargetError> {
    let shown = path.display().to_string();
    let plain = plat::open_fill(path, false).map_err(io_err(format!("cannot open {shown}")))?;
    claim.holds(&plain)?;
    let direct = plat::open_fill(path, true).ok();
    if let Some(d) = &direct {
        claim.holds(d)?;
    }
    let mut buf =
        SlotBuffers::new(1, FILL_CHUNK, seed).map_err(io_err("cannot allocate the fill buffer"))?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ from ^ to);
    let from = from / 4096 * 4096;
    obs.start(path, to - from);
    let mut off = from;
    while off < to {
        if stop.load(Ordering::Relaxed) {
            obs.finish();
            return Err(TargetError::Interrupted(shown));
        }
        let n = ((to - off) as usize).min(FILL_CHUNK);
        fill_random(&mut buf.slot_mut(0)[..n], &mut rng);
        // whole 4 KiB blocks through O_DIRECT (no page-cache pollution), the tail buffered
        let to = match &direct {
            Some(d) if n % 4096 == 0 => d,
            _ => &plain,
        };
        let rc = match plat::write_at(to, &buf.slot_mut(0)[..n], off) {
            Ok(rc) => rc,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                obs.finish();
                return Err(io_err(format!(
                    "write of {n} bytes at offset {off} to {shown} failed"
                ))(e));
            }
        };
        off += rc as u64;
        obs.advance(off - from);
    }
    obs.finish();
    plain
        .sync_all()
        .map_err(io_err(format!("fsync of {shown} failed")))?;
    marker::write(
        &plain,
        path,
        Marker {
            complete: true,
            size: to,
        },
    )
    .map_err(io_err(format!("cannot mark {shown} as an iocap test file")))
}

/// This worker's own handle on `t` (Windows): the prepared file reopened (ReOpenFile, so the
/// very file that was checked) with FILE_FLAG_OVERLAPPED for the IOCP engine, and with the
/// target's FILE_FLAG_NO_BUFFERING and the spec's FILE_FLAG_WRITE_THROUGH.
#[cfg(windows)]
pub fn worker_handle(t: &PreparedTarget, writes: bool, overlapped: bool) -> io::Result<File> {
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED, FILE_FLAG_WRITE_THROUGH,
    };
    let mut flags = 0;
    if overlapped {
        flags |= FILE_FLAG_OVERLAPPED;
    }
    if t.direct {
        flags |= FILE_FLAG_NO_BUFFERING;
    }
    if t.write_through {
        flags |= FILE_FLAG_WRITE_THROUGH;
    }
    match iocap_platform::win::reopen(&t.file, writes, flags) {
        Ok(f) => Ok(f),
        // a device: its name cannot be swapped for another file, so opening it again is the same
        Err(_) if t.kind == TargetKind::BlockDevice => {
            use std::os::windows::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .write(writes)
                .custom_flags(flags)
                .open(&t.path)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::BsWeight;

    #[test]
    fn every_size_of_a_mix_must_suit_o_direct() {
        let mut spec = JobSpec {
            bs_bytes: 61440,
            align_bytes: 4096,
            bs_split: vec![
                BsWeight {
                    bs_bytes: 512,
                    weight: 10,
                },
                BsWeight {
                    bs_bytes: 61440,
                    weight: 90,
                },
            ],
            ..JobSpec::default()
        };
        assert_eq!(direct_alignment_problem(&spec, 512, "f"), None);
        let why = direct_alignment_problem(&spec, 4096, "f").unwrap();
        assert!(why.contains("block size of the mix 512 B"), "{why}");
        assert!(why.contains("4096 B, the O_DIRECT alignment of f"), "{why}");
        spec.bs_split[0].bs_bytes = 8192;
        assert_eq!(direct_alignment_problem(&spec, 4096, "f"), None);
        // every offset is moved by the base, so it must suit O_DIRECT too
        spec.base_bytes = 512;
        let why = direct_alignment_problem(&spec, 4096, "f").unwrap();
        assert!(
            why.contains("base offset 512 B is not a multiple of 4096 B"),
            "{why}"
        );
    }

    /// The region a target holds from the base: the whole of it, or a refusal naming what was
    /// asked (a device or a file iocap did not create is never tested on less with a base).
    #[test]
    fn the_region_runs_from_the_base_and_must_be_whole() {
        let spec = |base_bytes| JobSpec {
            base_bytes,
            bs_bytes: 4096,
            ..JobSpec::default()
        };
        // no base: what the target holds, as before
        assert_eq!(
            region(&spec(0), "d", 1 << 20, Some(2 << 20)).unwrap(),
            1 << 20
        );
        // a base: the length from it, asked or to the end
        assert_eq!(
            region(&spec(1 << 20), "d", 3 << 20, Some(3 << 20)).unwrap(),
            2 << 20
        );
        assert_eq!(region(&spec(1 << 20), "d", 4 << 20, None).unwrap(), 3 << 20);
        // shorter than asked, or not a block past the base: refused
        let e = region(&spec(1 << 20), "d", 2 << 20, Some(3 << 20))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("bytes 1048576 to 3145728") && e.contains("does not hold"),
            "{e}"
        );
        assert!(region(&spec(1 << 20), "d", (1 << 20) + 512, None).is_err());
        assert!(region(&spec(4 << 20), "d", 1 << 20, None).is_err());
    }
}
