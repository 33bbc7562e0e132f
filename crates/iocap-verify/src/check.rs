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

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use iocap_model::{Verify, VerifyCheck, VerifyCounts};

use crate::classify::{classify, Expect};
use crate::file::{self, pread_exact};
use crate::journal;
use crate::page::{self, FileIdent};
use crate::report::{default_dump_dir, First, Sink};
use crate::VerifyError;
use iocap_engine::buffers::AlignedBuf;

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
        return Err(VerifyError::Invalid(format!(
            "atomic unit {au} B: use a power of two from 512 B to 64K"
        )));
    }
    let j = journal::read(&cfg.journal).map_err(|e| VerifyError::Io {
        context: format!("cannot read the journal {}", cfg.journal.display()),
        source: e,
    })?;
    let h = &j.header;
    let pb = h.page_bytes as usize;
    // the same bound a run accepts (VerifyConfig::validate): a header past it is not one iocap
    // wrote, and must not size an allocation
    if !page::valid_page_bytes(pb as u64)
        || h.pages == 0
        || h.pages >= 1 << 40
        || h.initial_generation == 0
    {
        return Err(VerifyError::Invalid(format!(
            "the journal {} has an impossible header",
            cfg.journal.display()
        )));
    }
    let target = cfg
        .target
        .clone()
        .unwrap_or_else(|| PathBuf::from(&h.target));
    let shown = target.display().to_string();
    let mut warnings = Vec::new();
    let (f, direct) = file::open_io(&target, false, cfg.direct, None, &mut warnings)?;
    let len = f
        .metadata()
        .map_err(|e| VerifyError::Io {
            context: format!("cannot stat {shown}"),
            source: e,
        })?
        .len();
    let size = h.pages * pb as u64;
    if size > len {
        return Err(VerifyError::Invalid(format!(
            "{shown} holds {len} bytes, fewer than the {size} the journal {} describes: not the \
             file that run wrote",
            cfg.journal.display()
        )));
    }
    let mut expected = vec![h.initial_generation; h.pages as usize];
    let mut journaled = 0u64;
    for r in &j.records {
        if let Some(e) = expected.get_mut(r.page as usize) {
            if *e == h.initial_generation {
                journaled += 1;
            }
            *e = (*e).max(r.generation);
        }
    }
    let id = FileIdent {
        file_id: h.file_id,
        seed: h.seed,
        page_bytes: pb,
    };
    let sink = Sink::new(
        &target,
        cfg.dump_dir
            .clone()
            .unwrap_or_else(|| default_dump_dir(&target)),
    );
    let mut counts = VerifyCounts {
        journal_records: j.records.len() as u64,
        ..Default::default()
    };
    let mut chk = VerifyCheck {
        journal: cfg.journal.display().to_string(),
        records: j.records.len() as u64,
        torn_tail_bytes: j.torn_tail_bytes,
        pages_journaled: journaled,
        ..Default::default()
    };
    let batch = 64usize;
    let alloc = |n| {
        AlignedBuf::new(n).map_err(|e| VerifyError::Io {
            context: "cannot allocate buffers".into(),
            source: e,
        })
    };
    let mut rbuf = alloc(batch * pb)?;
    let mut scratch = alloc(pb)?;
    let mut interrupted = false;
    let mut p = 0u64;
    let readable_pages = (len / pb as u64).min(h.pages);
    while p < h.pages {
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let n = batch.min((h.pages - p) as usize);
        let lost = |page: u64, chk: &mut VerifyCheck| {
            if chk.lost_pages.last() != Some(&page) {
                chk.lost_pages.push(page);
            }
        };
        let buf = &mut rbuf.as_mut_slice()[..n * pb];
        let read = if p + n as u64 <= readable_pages {
            pread_exact(&f, buf, p * pb as u64)
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{shown} is {len} B, shorter than the {size} B the journal describes"),
            ))
        };
        if read.is_err() {
            // page by page, so one bad sector does not hide its neighbours
            for i in 0..n as u64 {
                let q = p + i;
                let ex = Expect::AtLeast {
                    generation: u64::from(expected[q as usize]),
                    atomic_unit: au,
                };
                let one = &mut rbuf.as_mut_slice()[..pb];
                match pread_exact(&f, one, q * pb as u64) {
                    Ok(()) => {
                        counts.pages_read += 1;
                        counts.pages_checked += 1;
                        let fd = classify(one, &id, q, ex);
                        tally(&fd, &mut chk);
                        if !fd.ok() {
                            lost(q, &mut chk);
                            sink.failed(
                                &f,
                                &id,
                                None,
                                q,
                                "check",
                                ex,
                                First::Bad(one, fd),
                                scratch.as_mut_slice(),
                            );
                        }
                    }
                    Err(e2) => {
                        lost(q, &mut chk);
                        sink.failed(
                            &f,
                            &id,
                            None,
                            q,
                            "check",
                            ex,
                            First::Io(e2),
                            scratch.as_mut_slice(),
                        );
                    }
                }
            }
            p += n as u64;
            continue;
        }
        counts.pages_read += n as u64;
        counts.bytes_read += (n * pb) as u64;
        for i in 0..n {
            let q = p + i as u64;
            let ex = Expect::AtLeast {
                generation: u64::from(expected[q as usize]),
                atomic_unit: au,
            };
            let data = &rbuf.as_slice()[i * pb..(i + 1) * pb];
            counts.pages_checked += 1;
            let fd = classify(data, &id, q, ex);
            tally(&fd, &mut chk);
            if !fd.ok() {
                lost(q, &mut chk);
                sink.failed(
                    &f,
                    &id,
                    None,
                    q,
                    "check",
                    ex,
                    First::Bad(data, fd),
                    scratch.as_mut_slice(),
                );
            }
        }
        p += n as u64;
    }
    let col = sink.finish();
    if let Some(e) = col.dump_error {
        warnings.push(e);
    }
    if j.torn_tail_bytes > 0 {
        warnings.push(format!(
            "the journal ends with {} B that are not a whole record (a write cut by the crash); \
             ignored",
            j.torn_tail_bytes
        ));
    }
    let passed = col.classes.total() == 0 && chk.lost_pages.is_empty() && !interrupted;
    Ok(CheckOutcome {
        verify: Verify {
            mode: "check".into(),
            target: shown,
            page_bytes: pb as u64,
            size_bytes: size,
            pages: h.pages,
            threads: 1,
            qd: 1,
            seed: h.seed,
            file_id: h.file_id,
            duration_s: 0.0,
            elapsed_s: started.elapsed().as_secs_f64(),
            direct,
            io_engine: "psync".into(),
            journal: Some(cfg.journal.display().to_string()),
            atomic_unit_bytes: au as u64,
            counts,
            classes: col.classes,
            failures: col.failures,
            check: Some(chk),
            dump_dir: col.dump_dir,
            interrupted,
            warnings,
            passed,
        },
    })
}

fn tally(fd: &crate::classify::Finding, chk: &mut VerifyCheck) {
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
