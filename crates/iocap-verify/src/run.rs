//! The verify run: fill the file, then write and read it the way a database does while every
//! read is checked against the generation the page must hold, then check every page once more.
//!
//! I/O engine: io_uring where a ring can be set up (`threads` threads, each with `qd` page
//! operations in flight; [`crate::uring`]), else synchronous pread/pwrite with one thread per
//! in-flight slot (`threads × qd` threads): either way a queue depth above 1 is real concurrency. The mix per operation is fixed: 30 % random page
//! updates, 10 % durable log appends (RWF_DSYNC, in order, wrapping around the last 1/16 of the
//! file), 10 % read-ahead scans (8 to 64 pages in one read, each page checked), 50 % random page
//! reads. Buffers are allocated before the loop; the loop takes no lock (the failure path does).
//!
//! A failed read is recorded (`io_error`) and the run goes on. A failed write is recorded and
//! stops the run cleanly: the page's content is then undefined, so it stays marked in flight and
//! neither readers nor the final pass judge it.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use iocap_model::{EngineChoice, FailureClass, Verify, VerifyCounts, VerifyFailure};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::classify::{classify, Expect};
use crate::file::{self, now_ns, pread_exact, pwrite_all};
use crate::journal::{JournalHeader, JournalWriter, Record};
use crate::map::{GenMap, Snapshot};
use crate::page::{self, FileIdent};
use crate::report::{default_dump_dir, First, Sink};
use crate::VerifyError;
use iocap_engine::buffers::AlignedBuf;

/// Longest read-ahead scan, in pages.
pub const MAX_SCAN_PAGES: usize = 64;
/// Bytes per write of the initial fill and per read of the final pass.
const BATCH_BYTES: usize = 1 << 20;
/// The mix, in percent of operations: updates, log appends, scans; the rest are random reads.
pub const MIX_UPDATE_PCT: u64 = 30;
pub const MIX_LOG_PCT: u64 = 10;
pub const MIX_SCAN_PCT: u64 = 10;

/// What to verify and how.
#[derive(Debug, Clone)]
pub struct VerifyConfig {
    pub target: PathBuf,
    pub size_bytes: u64,
    pub page_bytes: usize,
    pub threads: u32,
    pub qd: u32,
    pub seed: u64,
    pub duration: Duration,
    /// Try O_DIRECT (falls back to buffered I/O with a warning where refused).
    pub direct: bool,
    /// Record acknowledged writes here (a new file) for a later [`crate::check`].
    pub journal: Option<PathBuf>,
    /// Where dumps go [default: `<target>.dumps`].
    pub dump_dir: Option<PathBuf>,
    pub allow_overwrite: bool,
    /// `Auto`: io_uring (`threads` rings of `qd` I/Os) where a ring can be set up, else psync
    /// (`threads × qd` threads).
    pub engine: EngineChoice,
}

impl VerifyConfig {
    pub fn new(target: impl Into<PathBuf>) -> Self {
        Self {
            target: target.into(),
            size_bytes: 256 << 20,
            page_bytes: page::DEFAULT_PAGE_BYTES,
            threads: 2,
            qd: 4,
            seed: 0x10CAFE,
            duration: Duration::from_secs(10),
            direct: true,
            journal: None,
            dump_dir: None,
            allow_overwrite: false,
            engine: EngineChoice::Auto,
        }
    }

    /// Pages in the file.
    pub fn pages(&self) -> u64 {
        self.size_bytes / self.page_bytes as u64
    }

    pub fn validate(&self) -> Result<(), VerifyError> {
        let bad = |m: String| Err(VerifyError::Invalid(m));
        if !page::valid_page_bytes(self.page_bytes as u64) {
            return bad(format!(
                "page size {} B: use a power of two from 4K to 64K",
                self.page_bytes
            ));
        }
        if self.pages() < 16 {
            return bad(format!(
                "size {} B holds fewer than 16 pages of {} B",
                self.size_bytes, self.page_bytes
            ));
        }
        if self.pages() >= 1 << 40 {
            return bad("size too large".into());
        }
        if self.threads == 0 || self.qd == 0 || u64::from(self.threads) * u64::from(self.qd) > 1024
        {
            return bad("threads and qd must be at least 1, and threads × qd at most 1024".into());
        }
        Ok(())
    }
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct VerifyOutcome {
    pub verify: Verify,
}

pub(crate) struct Shared<'a> {
    pub f: &'a File,
    pub id: FileIdent,
    pub map: &'a GenMap,
    pub sink: &'a Sink,
    pub journal: Option<&'a JournalWriter>,
    pub pages: u64,
    pub data_pages: u64,
    pub log_pages: u64,
    pub log_cursor: AtomicU64,
    pub dsync_all: bool,
    pub stop: &'a AtomicBool,
    pub halt: AtomicBool,
    pub fatal: Mutex<Option<VerifyError>>,
}

impl Shared<'_> {
    pub fn halted(&self) -> bool {
        self.halt.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }
}

/// Runs the verification of `cfg` until its duration ends or `stop` is set.
pub fn run(cfg: &VerifyConfig, stop: &AtomicBool) -> Result<VerifyOutcome, VerifyError> {
    cfg.validate()?;
    let started = Instant::now();
    let shown = cfg.target.display().to_string();
    let journal_exists = |j: &PathBuf| {
        VerifyError::Refused(format!(
            "the journal {} already exists; iocap does not overwrite files (remove it, or give \
             another name)",
            j.display()
        ))
    };
    if let Some(j) = cfg
        .journal
        .as_ref()
        .filter(|j| std::fs::symlink_metadata(j).is_ok())
    {
        return Err(journal_exists(j));
    }
    let pb = cfg.page_bytes;
    let pages = cfg.pages();
    let size = pages * pb as u64;
    let mut warnings = Vec::new();
    let uring = match cfg.engine {
        EngineChoice::Psync => false,
        EngineChoice::IoUring | EngineChoice::IoUringUnregistered => {
            crate::uring::probe()
                .map_err(|e| VerifyError::Invalid(format!("io_uring cannot be used here: {e}")))?;
            true
        }
        EngineChoice::Auto => match crate::uring::probe() {
            Ok(()) => true,
            Err(e) => {
                warnings.push(format!(
                    "io_uring is not available ({e}); ran {} synchronous threads instead",
                    cfg.threads * cfg.qd
                ));
                false
            }
        },
    };
    let (claim, created) = file::create_or_claim(&cfg.target, size, cfg.allow_overwrite)?;
    let (mut f, mut direct) =
        file::open_io(&cfg.target, true, cfg.direct, Some(&claim), &mut warnings)?;
    // created only now, after the target: a journal named like the target finds it there and
    // is refused, instead of being claimed as the target; and a refused target leaves no
    // journal behind
    let journal = match &cfg.journal {
        Some(j) => match JournalWriter::create_empty(j) {
            Ok(w) => Some(w),
            Err(e) => {
                if created {
                    let _ = std::fs::remove_file(&cfg.target);
                    iocap_engine::marker::remove_sidecar(&cfg.target);
                }
                return Err(if e.kind() == std::io::ErrorKind::AlreadyExists {
                    journal_exists(j)
                } else {
                    io_ctx(&format!("cannot create the journal {}", j.display()))(e)
                });
            }
        },
        None => None,
    };
    let id = FileIdent {
        file_id: file::random_u64(),
        seed: cfg.seed,
        page_bytes: pb,
    };
    let mut counts = VerifyCounts::default();

    // initial fill: every page at generation 1, in large sequential writes
    let batch = (BATCH_BYTES / pb).max(1);
    let mut fill = AlignedBuf::new(batch * pb).map_err(io_ctx("cannot allocate buffers"))?;
    let mut p = 0u64;
    while p < pages {
        if stop.load(Ordering::Relaxed) {
            if created {
                // half-made and ours: removed, as `iocap run` does (docs/safety.md)
                let _ = std::fs::remove_file(&cfg.target);
                iocap_engine::marker::remove_sidecar(&cfg.target);
            }
            return Err(VerifyError::Interrupted(shown));
        }
        let n = batch.min((pages - p) as usize);
        let buf = &mut fill.as_mut_slice()[..n * pb];
        for (i, chunk) in buf.chunks_exact_mut(pb).enumerate() {
            page::encode(chunk, &id, p + i as u64, 1, now_ns());
        }
        match pwrite_all(&f, buf, p * pb as u64, false) {
            Ok(()) => {}
            Err(e) if direct && p == 0 && e.raw_os_error() == Some(libc::EINVAL) => {
                warnings.push(file::direct_refused(&shown));
                (f, direct) = file::open_io(&cfg.target, true, false, Some(&claim), &mut warnings)?;
                continue;
            }
            Err(e) => {
                return Err(VerifyError::Io {
                    context: format!(
                        "the initial fill of {shown} failed at offset {}",
                        p * pb as u64
                    ),
                    source: e,
                })
            }
        }
        counts.pages_written += n as u64;
        counts.bytes_written += (n * pb) as u64;
        p += n as u64;
    }
    f.sync_data()
        .map_err(io_ctx(&format!("cannot make {shown} durable")))?;
    file::set_marker(&claim, &cfg.target, true, size)?;
    drop(fill);

    if let (Some(w), Some(j)) = (&journal, &cfg.journal) {
        w.start(&JournalHeader {
            file_id: id.file_id,
            page_bytes: pb as u32,
            initial_generation: 1,
            pages,
            seed: cfg.seed,
            target: std::fs::canonicalize(&cfg.target)
                .unwrap_or_else(|_| cfg.target.clone())
                .display()
                .to_string(),
        })
        .map_err(io_ctx(&format!("cannot write the journal {}", j.display())))?;
    }

    let map = GenMap::new(pages, 1);
    let sink = Sink::new(
        &cfg.target,
        cfg.dump_dir
            .clone()
            .unwrap_or_else(|| default_dump_dir(&cfg.target)),
    );
    let log_pages = (pages / 16).max(1);
    let sh = Shared {
        f: &f,
        id,
        map: &map,
        sink: &sink,
        journal: journal.as_ref(),
        pages,
        data_pages: pages - log_pages,
        log_pages,
        log_cursor: AtomicU64::new(0),
        dsync_all: journal.is_some(),
        stop,
        halt: AtomicBool::new(false),
        fatal: Mutex::new(None),
    };
    let slots = if uring {
        u64::from(cfg.threads)
    } else {
        u64::from(cfg.threads * cfg.qd)
    };
    let qd = cfg.qd as usize;
    let deadline = Instant::now() + cfg.duration;
    let results: Vec<Result<VerifyCounts, VerifyError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..slots)
            .map(|slot| {
                let sh = &sh;
                s.spawn(move || {
                    if uring {
                        crate::uring::worker(sh, slot, qd)
                    } else {
                        worker(sh, slot)
                    }
                })
            })
            .collect();
        while Instant::now() < deadline && !sh.halted() {
            std::thread::sleep(
                Duration::from_millis(100).min(deadline - Instant::now().min(deadline)),
            );
            if let Some(j) = sh.journal {
                // the power-cut durability point of the journal: every 100 ms
                if let Err(e) = j.sync() {
                    sh.fatal.lock().unwrap().get_or_insert(VerifyError::Io {
                        context: "cannot sync the journal".into(),
                        source: e,
                    });
                    break;
                }
            }
        }
        sh.halt.store(true, Ordering::SeqCst);
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(VerifyError::Invalid("a verify thread panicked".into()))
                })
            })
            .collect()
    });
    for r in results {
        let c = r?;
        add_counts(&mut counts, &c);
    }
    if let Some(e) = sh.fatal.lock().unwrap().take() {
        return Err(e);
    }
    if let Some(j) = &journal {
        j.sync().map_err(io_ctx("cannot sync the journal"))?;
    }
    let interrupted = stop.load(Ordering::Relaxed);
    if !interrupted {
        final_pass(&sh, &mut counts)?;
    }
    drop(sh);
    let col = sink.finish();
    if let Some(e) = col.dump_error {
        warnings.push(e);
    }
    let passed = col.classes.total() == 0;
    Ok(VerifyOutcome {
        verify: Verify {
            mode: "run".into(),
            target: shown,
            page_bytes: pb as u64,
            size_bytes: size,
            pages,
            threads: cfg.threads,
            qd: cfg.qd,
            seed: cfg.seed,
            file_id: id.file_id,
            duration_s: cfg.duration.as_secs_f64(),
            elapsed_s: started.elapsed().as_secs_f64(),
            direct,
            io_engine: if uring { "io_uring" } else { "psync" }.into(),
            journal: cfg.journal.as_ref().map(|j| j.display().to_string()),
            atomic_unit_bytes: 0,
            counts,
            classes: col.classes,
            failures: col.failures,
            check: None,
            dump_dir: col.dump_dir,
            interrupted,
            warnings,
            passed,
        },
    })
}

fn io_ctx(context: &str) -> impl FnOnce(std::io::Error) -> VerifyError + '_ {
    move |source| VerifyError::Io {
        context: context.to_string(),
        source,
    }
}

fn add_counts(a: &mut VerifyCounts, b: &VerifyCounts) {
    a.pages_written += b.pages_written;
    a.pages_read += b.pages_read;
    a.pages_checked += b.pages_checked;
    a.reads_skipped += b.reads_skipped;
    a.random_updates += b.random_updates;
    a.log_appends += b.log_appends;
    a.scans += b.scans;
    a.random_reads += b.random_reads;
    a.bytes_written += b.bytes_written;
    a.bytes_read += b.bytes_read;
    a.journal_records += b.journal_records;
}

/// One in-flight slot: its own buffers and random stream, no lock on the way.
fn worker(sh: &Shared, slot: u64) -> Result<VerifyCounts, VerifyError> {
    let pb = sh.id.page_bytes;
    let alloc = |n| AlignedBuf::new(n).map_err(io_ctx("cannot allocate buffers"));
    let mut wbuf = alloc(pb)?;
    let mut rbuf = alloc(pb * MAX_SCAN_PAGES)?;
    let mut snaps = [Snapshot::default(); MAX_SCAN_PAGES];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(
        sh.id.seed ^ (slot + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    let mut c = VerifyCounts::default();
    while !sh.halted() {
        let op = rng.next_u64() % 100;
        if op < MIX_UPDATE_PCT {
            // a random page update; a page another writer holds is passed over
            let claimed = (0..8).find_map(|_| {
                let p = rng.next_u64() % sh.data_pages;
                sh.map.try_begin_write(p).map(|g| (p, g))
            });
            if let Some((p, g)) = claimed {
                c.random_updates += 1;
                write_page(sh, p, g, sh.dsync_all, "write", wbuf.as_mut_slice(), &mut c);
            }
        } else if op < MIX_UPDATE_PCT + MIX_LOG_PCT {
            // the log: in order, wrapping around, each write durable before the next
            let p = sh.data_pages + sh.log_cursor.fetch_add(1, Ordering::Relaxed) % sh.log_pages;
            if let Some(g) = sh.map.try_begin_write(p) {
                c.log_appends += 1;
                write_page(sh, p, g, true, "log_append", wbuf.as_mut_slice(), &mut c);
            }
        } else if op < MIX_UPDATE_PCT + MIX_LOG_PCT + MIX_SCAN_PCT {
            let len = (8 + rng.next_u64() % 57).min(sh.pages) as usize;
            let start = rng.next_u64() % (sh.pages - len as u64 + 1);
            c.scans += 1;
            read_pages(
                sh, start, len, "scan", &mut rbuf, &mut wbuf, &mut snaps, &mut c,
            );
        } else {
            let p = rng.next_u64() % sh.pages;
            c.random_reads += 1;
            read_pages(sh, p, 1, "read", &mut rbuf, &mut wbuf, &mut snaps, &mut c);
        }
    }
    Ok(c)
}

/// Writes generation `g + 1` of claimed page `p` and publishes it.
fn write_page(
    sh: &Shared,
    p: u64,
    g: u32,
    dsync: bool,
    op: &str,
    buf: &mut [u8],
    c: &mut VerifyCounts,
) {
    let pb = sh.id.page_bytes;
    let buf = &mut buf[..pb];
    page::encode(buf, &sh.id, p, u64::from(g) + 1, now_ns());
    let off = p * pb as u64;
    match pwrite_all(sh.f, buf, off, dsync) {
        Ok(()) => {
            c.pages_written += 1;
            c.bytes_written += pb as u64;
            acknowledge(sh, p, g, c);
        }
        Err(e) => record_write_error(sh, p, g, op, e),
    }
}

/// After a write of generation `g + 1` of page `p` completed: journal it (it was durable) and
/// publish it in the map.
pub(crate) fn acknowledge(sh: &Shared, p: u64, g: u32, c: &mut VerifyCounts) {
    if let Some(j) = sh.journal {
        // only now is the write acknowledged as durable
        if let Err(e) = j.append(Record {
            page: p,
            generation: g + 1,
        }) {
            sh.fatal.lock().unwrap().get_or_insert(VerifyError::Io {
                context: "cannot append to the journal".into(),
                source: e,
            });
            sh.halt.store(true, Ordering::SeqCst);
        } else {
            c.journal_records += 1;
        }
    }
    sh.map.end_write(p, g + 1);
}

/// A write of page `p` failed: record it and stop the run. The page is left claimed: its
/// content is undefined now, nobody judges it.
pub(crate) fn record_write_error(sh: &Shared, p: u64, g: u32, op: &str, e: std::io::Error) {
    let pb = sh.id.page_bytes;
    let off = p * pb as u64;
    sh.sink.io_failure(VerifyFailure {
        class: FailureClass::IoError,
        path: sh.sink.path(),
        page: p,
        offset_bytes: off,
        len_bytes: pb as u64,
        op: op.to_string(),
        expected_generation: u64::from(g) + 1,
        found_generation: None,
        found_page: None,
        found_file_id: None,
        sectors_512_differing: vec![],
        sectors_4k_differing: vec![],
        transient: false,
        rereads: 0,
        dump: None,
        errno: e.raw_os_error(),
        message: format!("{op} of page {p} at offset {off} failed: {e}; the run stopped"),
    });
    sh.halt.store(true, Ordering::SeqCst);
}

/// Reads `len` pages from `start` in one call and checks each one no write overlapped.
#[allow(clippy::too_many_arguments)]
fn read_pages(
    sh: &Shared,
    start: u64,
    len: usize,
    op: &str,
    rbuf: &mut AlignedBuf,
    scratch: &mut AlignedBuf,
    snaps: &mut [Snapshot],
    c: &mut VerifyCounts,
) {
    let pb = sh.id.page_bytes;
    for (i, s) in snaps.iter_mut().enumerate().take(len) {
        *s = sh.map.before_read(start + i as u64);
    }
    if len == 1 && snaps[0].busy() {
        c.reads_skipped += 1;
        return;
    }
    let buf = &mut rbuf.as_mut_slice()[..len * pb];
    if let Err(e) = pread_exact(sh.f, buf, start * pb as u64) {
        read_failed(sh, start, &snaps[..len], op, e, scratch.as_mut_slice(), c);
        return;
    }
    c.pages_read += len as u64;
    c.bytes_read += (len * pb) as u64;
    check_read(
        sh,
        start,
        &snaps[..len],
        rbuf.as_slice(),
        op,
        scratch.as_mut_slice(),
        c,
    );
}

/// Checks the pages of a completed read: `data` holds `snaps.len()` pages from `start`, and
/// `snaps` are the map's states taken before the read. A page a write overlapped is not judged;
/// every other one is classified, and a bad one recorded (after its re-reads).
pub(crate) fn check_read(
    sh: &Shared,
    start: u64,
    snaps: &[Snapshot],
    data: &[u8],
    op: &str,
    scratch: &mut [u8],
    c: &mut VerifyCounts,
) {
    let pb = sh.id.page_bytes;
    for (i, snap) in snaps.iter().enumerate() {
        let p = start + i as u64;
        if !sh.map.read_was_stable(p, *snap) {
            c.reads_skipped += 1;
            continue;
        }
        c.pages_checked += 1;
        let page = &data[i * pb..(i + 1) * pb];
        let expect = Expect::Exact(u64::from(snap.generation()));
        let fd = classify(page, &sh.id, p, expect);
        if !fd.ok() {
            sh.sink.failed(
                sh.f,
                &sh.id,
                Some(sh.map),
                p,
                op,
                expect,
                First::Bad(page, fd),
                scratch,
            );
        }
    }
}

/// A read of the pages from `start` (one per entry of `snaps`: the map's states taken before
/// it) failed with `e`. One bad page fails a whole scan, so a scan is read again page by page:
/// the error is pinned on the pages that fail alone and the others are still checked; when every page reads correctly alone, the scan's error is
/// recorded as transient. This is the error path: it may allocate a page buffer.
pub(crate) fn read_failed(
    sh: &Shared,
    start: u64,
    snaps: &[Snapshot],
    op: &str,
    e: std::io::Error,
    scratch: &mut [u8],
    c: &mut VerifyCounts,
) {
    let (len, first_generation) = (snaps.len(), snaps[0].generation());
    let whole = |e: std::io::Error, scratch: &mut [u8]| {
        sh.sink.failed(
            sh.f,
            &sh.id,
            Some(sh.map),
            start,
            op,
            Expect::Exact(u64::from(first_generation)),
            First::Io(e),
            scratch,
        )
    };
    let pb = sh.id.page_bytes;
    let mut one = match (len > 1).then(|| AlignedBuf::new(pb)) {
        Some(Ok(b)) => b,
        _ => return whole(e, scratch),
    };
    let before = sh.sink.count();
    for p in start..start + len as u64 {
        let snap = sh.map.before_read(p);
        if snap.busy() {
            continue;
        }
        match pread_exact(sh.f, one.as_mut_slice(), p * pb as u64) {
            Err(e) => sh.sink.failed(
                sh.f,
                &sh.id,
                Some(sh.map),
                p,
                op,
                Expect::Exact(u64::from(snap.generation())),
                First::Io(e),
                scratch,
            ),
            Ok(()) => {
                c.pages_read += 1;
                c.bytes_read += pb as u64;
                check_read(sh, p, &[snap], one.as_slice(), op, scratch, c);
            }
        }
    }
    if sh.sink.count() == before {
        let off = start * pb as u64;
        sh.sink.io_failure(VerifyFailure {
            class: FailureClass::IoError,
            path: sh.sink.path(),
            page: start,
            offset_bytes: off,
            len_bytes: (len * pb) as u64,
            op: op.to_string(),
            expected_generation: u64::from(first_generation),
            found_generation: None,
            found_page: None,
            found_file_id: None,
            sectors_512_differing: vec![],
            sectors_4k_differing: vec![],
            transient: true,
            rereads: len as u32,
            dump: None,
            errno: e.raw_os_error(),
            message: format!(
                "{op} of {len} pages at offset {off} failed ({e}); each page then read \
                 correctly on its own"
            ),
        });
    }
}

/// Every page once more, sequentially, after the writers stopped.
fn final_pass(sh: &Shared, c: &mut VerifyCounts) -> Result<(), VerifyError> {
    let pb = sh.id.page_bytes;
    let batch = (BATCH_BYTES / pb).clamp(1, MAX_SCAN_PAGES);
    let mut rbuf = AlignedBuf::new(batch * pb).map_err(io_ctx("cannot allocate buffers"))?;
    let mut scratch = AlignedBuf::new(pb).map_err(io_ctx("cannot allocate buffers"))?;
    let mut snaps = [Snapshot::default(); MAX_SCAN_PAGES];
    let mut p = 0;
    while p < sh.pages {
        if sh.stop.load(Ordering::Relaxed) {
            break;
        }
        let n = batch.min((sh.pages - p) as usize);
        read_pages(
            sh,
            p,
            n,
            "final_pass",
            &mut rbuf,
            &mut scratch,
            &mut snaps,
            c,
        );
        p += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(dir: &std::path::Path) -> VerifyConfig {
        VerifyConfig {
            size_bytes: 4 << 20,
            duration: Duration::from_millis(300),
            threads: 2,
            qd: 2,
            ..VerifyConfig::new(dir.join("v"))
        }
    }

    #[test]
    fn both_engines_run_clean() {
        for engine in [EngineChoice::Psync, EngineChoice::IoUring] {
            if engine == EngineChoice::IoUring && crate::uring::probe().is_err() {
                continue;
            }
            let d = tempfile::tempdir().unwrap();
            let c = VerifyConfig {
                engine,
                ..cfg(d.path())
            };
            let v = run(&c, &AtomicBool::new(false)).unwrap().verify;
            assert!(v.passed, "{engine:?}: {:?}", v.failures);
            let want = if engine == EngineChoice::Psync {
                "psync"
            } else {
                "io_uring"
            };
            assert_eq!(v.io_engine, want);
            assert!(v.counts.random_updates > 0 && v.counts.random_reads > 0);
        }
    }

    #[test]
    fn a_clean_run_checks_pages_and_passes() {
        let d = tempfile::tempdir().unwrap();
        let v = run(&cfg(d.path()), &AtomicBool::new(false)).unwrap().verify;
        assert!(v.passed, "{:?}", v.failures);
        assert!(
            v.counts.pages_checked >= v.pages,
            "the final pass checks every page"
        );
        assert!(v.counts.random_updates > 0 && v.counts.log_appends > 0 && v.counts.scans > 0);
        // the file is iocap's now: a second run may rewrite it
        let v = run(&cfg(d.path()), &AtomicBool::new(false)).unwrap().verify;
        assert!(v.passed);
    }

    #[test]
    fn a_journaled_run_then_check_passes() {
        let d = tempfile::tempdir().unwrap();
        let c = VerifyConfig {
            journal: Some(d.path().join("j")),
            ..cfg(d.path())
        };
        let v = run(&c, &AtomicBool::new(false)).unwrap().verify;
        assert!(v.passed && v.counts.journal_records > 0);
        let ck = crate::check(
            &crate::CheckConfig::new(d.path().join("j")),
            &AtomicBool::new(false),
        )
        .unwrap()
        .verify;
        assert!(ck.passed, "{:?}", ck.failures);
        assert!(ck.check.unwrap().pages_journaled > 0);
        // an existing journal is never overwritten
        assert!(matches!(
            run(&c, &AtomicBool::new(false)),
            Err(VerifyError::Refused(_))
        ));
    }

    #[test]
    fn a_file_iocap_did_not_create_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let c = cfg(d.path());
        std::fs::write(&c.target, b"precious").unwrap();
        assert!(matches!(
            run(&c, &AtomicBool::new(false)),
            Err(VerifyError::Refused(_))
        ));
        assert_eq!(std::fs::read(&c.target).unwrap(), b"precious");
    }
}
