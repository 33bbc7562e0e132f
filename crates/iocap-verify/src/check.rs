//! After a crash: did the storage keep every write it acknowledged?
//!
//! The journal holds, for each page, the writes that were durable before the crash. Every page
//! of the file is read once (O_DIRECT where possible, so the answer is the storage's) and held
//! to its highest acknowledged generation: a newer generation is fine (a write that landed but
//! was not acknowledged in time), and so is a page torn between acknowledged-or-newer writes at
//! `atomic_unit` boundaries (the storage only promised that unit). A page older than
//! acknowledged, torn inside a unit, or damaged is a lost acknowledged write. The journal can
//! only err towards holding a page to an older generation (records lost in a power cut), so it
//! can make the check weaker but never fail a healthy file.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use iocap_model::{Verify, VerifyCheck, VerifyCounts, VerifyMode, VerifyOp};

use crate::classify::{classify, Expect, Finding};
use crate::error::{buffer, io_err, VerifyError};
use crate::file::{self, pread_exact, Open};
use crate::journal::{self, Journal};
use crate::page::{self, FileIdent};
use crate::report::{default_dump_dir, First, Sink};
use iocap_engine::AlignedBuf;

/// Pages per read.
const BATCH_PAGES: usize = 64;

#[derive(Debug, Clone)]
pub struct CheckConfig {
    pub journal: PathBuf,
    /// The file to check [default: the path the journal names].
    pub target: Option<PathBuf>,
    /// Bytes the storage writes atomically (4096 by default; 512 for a stricter check).
    pub atomic_unit: usize,
    pub dump_dir: Option<PathBuf>,
    pub direct: bool,
}

impl CheckConfig {
    pub fn new(journal: impl Into<PathBuf>) -> Self {
        Self {
            journal: journal.into(),
            target: None,
            atomic_unit: 4096,
            dump_dir: None,
            direct: true,
        }
    }
}

#[derive(Debug, Clone)]
pub struct CheckOutcome {
    pub verify: Verify,
}

/// Checks the file against the journal's acknowledged writes.
pub fn check(cfg: &CheckConfig, stop: &AtomicBool) -> Result<CheckOutcome, VerifyError> {
    let started = Instant::now();
    let au = cfg.atomic_unit;
    if !(au.is_power_of_two() && (512..=65536).contains(&au)) {
        return Err(VerifyError::invalid(format!(
            "atomic unit {au} B: use a power of two from 512 B to 64K"
        )));
    }
    let j = read_journal(&cfg.journal)?;
    let target = cfg
        .target
        .clone()
        .unwrap_or_else(|| PathBuf::from(&j.header.target));
    let mut warnings = Vec::new();
    let (f, direct) = file::open_io(
        &target,
        Open {
            write: false,
            direct: cfg.direct,
        },
        None,
        &mut warnings,
    )?;
    let mut ck = Checker::new(cfg, &j, &target, &f)?;
    let interrupted = ck.read_all(stop)?;
    let col = ck.sink.finish();
    warnings.extend(col.dump_error);
    if j.torn_tail_bytes > 0 {
        warnings.push(format!(
            "the journal ends with {} B that are not a whole record (a write cut by the crash); \
             ignored",
            j.torn_tail_bytes
        ));
    }
    let passed = col.classes.total() == 0 && ck.chk.lost_pages.is_empty() && !interrupted;
    let verify = Verify {
        elapsed_s: started.elapsed().as_secs_f64(),
        direct,
        counts: ck.counts,
        classes: col.classes,
        failures: col.failures,
        check: Some(ck.chk),
        dump_dir: col.dump_dir,
        interrupted,
        warnings,
        passed,
        ..described(cfg, &j, &target)
    };
    Ok(CheckOutcome { verify })
}

/// The journal at `path`, refused if its header is not one a run writes.
fn read_journal(path: &Path) -> Result<Journal, VerifyError> {
    let shown = path.display();
    let j = journal::read(path).map_err(io_err(format!("cannot read the journal {shown}")))?;
    let h = &j.header;
    // the same bound a run accepts (VerifyConfig::validate): a header past it is not one iocap
    // wrote, and must not size an allocation
    if !page::valid_page_bytes(u64::from(h.page_bytes))
        || h.pages == 0
        || h.pages >= 1 << 40
        || h.initial_generation == 0
    {
        return Err(VerifyError::invalid(format!(
            "the journal {shown} has an impossible header"
        )));
    }
    Ok(j)
}

/// What the result says of the check before it ran: the journal and the file.
fn described(cfg: &CheckConfig, j: &Journal, target: &Path) -> Verify {
    let h = &j.header;
    Verify {
        mode: VerifyMode::Check,
        target: target.display().to_string(),
        page_bytes: u64::from(h.page_bytes),
        size_bytes: h.pages * u64::from(h.page_bytes),
        pages: h.pages,
        threads: 1,
        qd: 1,
        seed: h.seed,
        file_id: h.file_id,
        io_engine: iocap_model::Engine::Psync,
        journal: Some(cfg.journal.display().to_string()),
        atomic_unit_bytes: cfg.atomic_unit as u64,
        ..Verify::default()
    }
}

/// The highest acknowledged generation of every page, and how many pages have a record.
fn expected_generations(j: &Journal) -> (Vec<u32>, u64) {
    let initial = j.header.initial_generation;
    let mut expected = vec![initial; j.header.pages as usize];
    let mut journaled = 0u64;
    for r in &j.records {
        if let Some(e) = expected.get_mut(r.page as usize) {
            if *e == initial {
                journaled += 1;
            }
            *e = (*e).max(r.generation);
        }
    }
    (expected, journaled)
}

/// The reads of a check and what they found.
struct Checker<'a> {
    f: &'a File,
    id: FileIdent,
    sink: Sink,
    atomic_unit: usize,
    expected: Vec<u32>,
    shown: String,
    /// Bytes of the file.
    len: u64,
    counts: VerifyCounts,
    chk: VerifyCheck,
    scratch: AlignedBuf,
}

impl<'a> Checker<'a> {
    /// A check of `f` (at `target`) against `j`; refused if the file is smaller than the journal
    /// says.
    fn new(
        cfg: &CheckConfig,
        j: &Journal,
        target: &Path,
        f: &'a File,
    ) -> Result<Self, VerifyError> {
        let (h, shown) = (&j.header, target.display().to_string());
        let len = f
            .metadata()
            .map_err(io_err(format!("cannot stat {shown}")))?
            .len();
        let size = h.pages * u64::from(h.page_bytes);
        if size > len {
            return Err(VerifyError::invalid(format!(
                "{shown} holds {len} bytes, fewer than the {size} the journal {} describes: not \
                 the file that run wrote",
                cfg.journal.display()
            )));
        }
        let (expected, journaled) = expected_generations(j);
        let dumps = cfg.dump_dir.clone();
        Ok(Self {
            f,
            id: FileIdent {
                file_id: h.file_id,
                seed: h.seed,
                page_bytes: h.page_bytes as usize,
            },
            sink: Sink::new(target, dumps.unwrap_or_else(|| default_dump_dir(target))),
            atomic_unit: cfg.atomic_unit,
            expected,
            shown,
            len,
            counts: VerifyCounts {
                journal_records: j.records.len() as u64,
                ..Default::default()
            },
            chk: VerifyCheck {
                journal: cfg.journal.display().to_string(),
                records: j.records.len() as u64,
                torn_tail_bytes: j.torn_tail_bytes,
                pages_journaled: journaled,
                ..Default::default()
            },
            scratch: buffer(h.page_bytes as usize)?,
        })
    }

    fn pages(&self) -> u64 {
        self.expected.len() as u64
    }

    /// Reads and judges every page; returns whether `stop` cut it short.
    fn read_all(&mut self, stop: &AtomicBool) -> Result<bool, VerifyError> {
        let pb = self.id.page_bytes;
        let mut rbuf = buffer(BATCH_PAGES * pb)?;
        let mut p = 0u64;
        while p < self.pages() {
            if stop.load(Ordering::Relaxed) {
                return Ok(true);
            }
            let n = BATCH_PAGES.min((self.pages() - p) as usize);
            let buf = &mut rbuf.as_mut_slice()[..n * pb];
            if self.read_batch(p, buf).is_ok() {
                self.counts.pages_read += n as u64;
                self.counts.bytes_read += (n * pb) as u64;
                for (i, data) in buf.chunks_exact(pb).enumerate() {
                    self.judge(p + i as u64, data);
                }
            } else {
                // page by page, so one bad sector does not hide its neighbours
                for q in p..p + n as u64 {
                    self.read_one(q, &mut buf[..pb]);
                }
            }
            p += n as u64;
        }
        Ok(false)
    }

    /// Reads the pages from `p` that `buf` holds in one call; pages past the end of the file
    /// fail it.
    fn read_batch(&self, p: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let pb = self.id.page_bytes as u64;
        let readable_pages = (self.len / pb).min(self.pages());
        if p + buf.len() as u64 / pb <= readable_pages {
            return pread_exact(self.f, buf, p * pb);
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!(
                "{} is {} B, shorter than the {} B the journal describes",
                self.shown,
                self.len,
                self.pages() * pb
            ),
        ))
    }

    /// Reads page `q` alone into `one` and judges it.
    fn read_one(&mut self, q: u64, one: &mut [u8]) {
        match pread_exact(self.f, one, q * self.id.page_bytes as u64) {
            Ok(()) => {
                self.counts.pages_read += 1;
                self.judge(q, one);
            }
            Err(e) => self.lost(q, First::Io(e)),
        }
    }

    /// Holds page `q`, read as `data`, to its highest acknowledged generation.
    fn judge(&mut self, q: u64, data: &[u8]) {
        self.counts.pages_checked += 1;
        let fd = classify(data, &self.id, q, self.expect(q));
        tally(&fd, &mut self.chk);
        if !fd.ok() {
            self.lost(q, First::Bad(data, fd));
        }
    }

    fn expect(&self, q: u64) -> Expect {
        Expect::AtLeast {
            generation: u64::from(self.expected[q as usize]),
            atomic_unit: self.atomic_unit,
        }
    }

    /// Page `q` lost an acknowledged write: named once in the list, recorded in the sink.
    fn lost(&mut self, q: u64, first: First) {
        if self.chk.lost_pages.last() != Some(&q) {
            self.chk.lost_pages.push(q);
        }
        let (expect, scratch) = (self.expect(q), self.scratch.as_mut_slice());
        self.sink.failed(
            self.f,
            &self.id,
            None,
            q,
            VerifyOp::Check,
            expect,
            first,
            scratch,
        );
    }
}

fn tally(fd: &Finding, chk: &mut VerifyCheck) {
    if fd.ok() {
        if fd.torn_allowed {
            chk.pages_torn_allowed += 1;
        } else if fd.newer {
            chk.pages_newer += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{JournalHeader, JournalWriter, Record};
    use std::path::Path;

    const PAGES: u64 = 16;

    fn ident() -> FileIdent {
        FileIdent {
            file_id: 77,
            seed: 3,
            page_bytes: 8192,
        }
    }

    fn pg(p: u64, g: u64) -> Vec<u8> {
        let mut b = vec![0u8; 8192];
        page::encode(&mut b, &ident(), p, g, 5);
        b
    }

    /// A file of 16 pages at generation 1 except `pages`, and a journal of `records`.
    fn setup(dir: &Path, pages: &[(u64, Vec<u8>)], records: &[(u64, u32)]) -> CheckConfig {
        let t = dir.join("t");
        let mut all = Vec::new();
        for p in 0..PAGES {
            match pages.iter().find(|(q, _)| *q == p) {
                Some((_, b)) => all.extend_from_slice(b),
                None => all.extend_from_slice(&pg(p, 1)),
            }
        }
        std::fs::write(&t, all).unwrap();
        let j = dir.join("j");
        let w = JournalWriter::create(
            &j,
            &JournalHeader {
                file_id: 77,
                page_bytes: 8192,
                initial_generation: 1,
                pages: PAGES,
                seed: 3,
                target: t.display().to_string(),
            },
        )
        .unwrap();
        for (page, generation) in records {
            w.append(Record {
                page: *page,
                generation: *generation,
            })
            .unwrap();
        }
        CheckConfig {
            dump_dir: Some(dir.join("dumps")),
            ..CheckConfig::new(j)
        }
    }

    fn run_check(cfg: &CheckConfig) -> Verify {
        check(cfg, &AtomicBool::new(false)).unwrap().verify
    }

    fn torn(p: u64, new: u64, old: u64, at: usize) -> Vec<u8> {
        let mut b = pg(p, new);
        b[at..].copy_from_slice(&pg(p, old)[at..]);
        b
    }

    #[test]
    fn a_lost_acknowledged_write_fails_and_names_the_page() {
        let d = tempfile::tempdir().unwrap();
        let v = run_check(&setup(d.path(), &[(3, pg(3, 1))], &[(3, 2), (5, 2)]));
        assert!(!v.passed);
        let c = v.check.unwrap();
        // page 5 is also still at generation 1: lost too
        assert_eq!(c.lost_pages, vec![3, 5]);
        assert_eq!(v.classes.stale, 2);
        let f = &v.failures[0];
        assert_eq!(
            (f.page, f.expected_generation, f.found_generation),
            (3, 2, Some(1))
        );
        assert!(Path::new(f.dump.as_ref().unwrap()).exists());
    }

    #[test]
    fn newer_and_unit_torn_pages_pass() {
        let d = tempfile::tempdir().unwrap();
        let v = run_check(&setup(
            d.path(),
            &[(3, pg(3, 3)), (4, torn(4, 3, 2, 4096))],
            &[(3, 2), (4, 2)],
        ));
        assert!(v.passed, "{:?}", v.failures);
        let c = v.check.unwrap();
        assert_eq!((c.pages_newer, c.pages_torn_allowed), (1, 1));
        assert_eq!(c.pages_journaled, 2);
        assert_eq!(v.counts.pages_checked, PAGES);
    }

    #[test]
    fn torn_inside_an_atomic_unit_fails() {
        let d = tempfile::tempdir().unwrap();
        let mut cfg = setup(d.path(), &[(4, torn(4, 3, 2, 1024))], &[(4, 2)]);
        let v = run_check(&cfg);
        assert!(!v.passed);
        assert_eq!(v.classes.torn, 1);
        assert_eq!(v.check.unwrap().lost_pages, vec![4]);
        cfg.atomic_unit = 512;
        assert!(run_check(&cfg).passed, "512 B atomicity accepts it");
    }

    #[test]
    fn a_torn_journal_tail_is_ignored() {
        let d = tempfile::tempdir().unwrap();
        let cfg = setup(d.path(), &[(3, pg(3, 2))], &[(3, 2)]);
        let mut j = std::fs::OpenOptions::new()
            .append(true)
            .open(&cfg.journal)
            .unwrap();
        std::io::Write::write_all(&mut j, &[1, 2, 3, 4, 5]).unwrap();
        let v = run_check(&cfg);
        assert!(v.passed);
        assert_eq!(v.check.unwrap().torn_tail_bytes, 5);
    }
}
