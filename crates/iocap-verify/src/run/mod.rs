//! The verify run: fill the file ([`fill`]), then write and read it the way a database does
//! while every read is checked against the generation the page must hold ([`mixed`], its
//! threads in [`slots`]), then check every page once more ([`final_pass`]). This module is the
//! sequence and the result; [`judge`] is what every loop concludes from an I/O, and [`shared`]
//! what the threads share.
//!
//! The mixed phase submits through the engine's backends (`iocap_engine::backend`): io_uring
//! where a ring can be set up, else psync (on Windows IOCP, or sync), chosen as `iocap run`
//! chooses. The fill and the final pass are single-threaded sequential positioned reads and
//! writes ([`crate::file`]).
//!
//! A failed read is recorded (`io_error`) and the run goes on. A failed write is recorded and
//! stops the run cleanly: the page's content is then undefined, so it stays marked in flight and
//! neither readers nor the final pass judge it.
//!
//! Files depend one way: this module on the phases, the phases on `judge` and `shared`, `judge`
//! on `shared`.

mod config;
mod fill;
mod final_pass;
mod judge;
mod mixed;
mod shared;
mod slots;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use iocap_engine::EngineKind;
use iocap_model::{Verify, VerifyMode};

use crate::error::{io_err, VerifyError};
use crate::file;
use crate::journal::{JournalHeader, JournalWriter};
use crate::map::GenMap;
use crate::page::FileIdent;
use crate::report::{default_dump_dir, Sink};
pub use config::VerifyConfig;
use fill::Target;
use shared::Shared;

/// The result of a run.
#[derive(Debug, Clone)]
pub struct VerifyOutcome {
    pub verify: Verify,
}

/// Runs the verification of `cfg` until its duration ends or `stop` is set.
pub fn run(cfg: &VerifyConfig, stop: &AtomicBool) -> Result<VerifyOutcome, VerifyError> {
    cfg.validate()?;
    let started = Instant::now();
    if let Some(j) = cfg
        .journal
        .as_ref()
        .filter(|j| j.symlink_metadata().is_ok())
    {
        return Err(journal_exists(j));
    }
    let mut warnings = Vec::new();
    let engine = choose_engine(cfg, &mut warnings)?;
    let mut target = Target::open(cfg, &mut warnings)?;
    let journal = create_journal(cfg, &target)?;
    let id = FileIdent {
        file_id: file::random_u64(),
        seed: cfg.seed,
        page_bytes: cfg.page_bytes,
    };
    let mut counts = fill::fill(cfg, &mut target, &id, stop, &mut warnings)?;
    if let (Some(w), Some(path)) = (&journal, &cfg.journal) {
        start_journal(cfg, w, path, &id)?;
    }
    let map = GenMap::new(cfg.pages(), 1);
    let dumps = cfg.dump_dir.clone();
    let sink = Sink::new(
        &cfg.target,
        dumps.unwrap_or_else(|| default_dump_dir(&cfg.target)),
    );
    let sh = Shared::new(&target.f, id, &map, &sink, journal.as_ref(), stop);
    mixed::run(&sh, engine, target.direct, cfg, &mut counts)?;
    if let Some(j) = &journal {
        j.sync().map_err(io_err("cannot sync the journal"))?;
    }
    let interrupted = stop.load(Ordering::Relaxed);
    if !interrupted {
        final_pass::run(&sh, &mut counts)?;
    }
    drop(sh);
    let col = sink.finish();
    warnings.extend(col.dump_error);
    let verify = Verify {
        elapsed_s: started.elapsed().as_secs_f64(),
        direct: target.direct,
        counts,
        // an interrupted run checked only some pages: it did not pass (as a check's)
        passed: col.classes.total() == 0 && !interrupted,
        classes: col.classes,
        failures: col.failures,
        dump_dir: col.dump_dir,
        interrupted,
        warnings,
        ..described(cfg, &id, engine)
    };
    Ok(VerifyOutcome { verify })
}

/// The engine of `cfg` on this host: psync, with a warning, where `auto` finds no io_uring.
fn choose_engine(
    cfg: &VerifyConfig,
    warnings: &mut Vec<String>,
) -> Result<EngineKind, VerifyError> {
    let (engine, fallback) = EngineKind::resolve(cfg.engine)
        .map_err(|e| VerifyError::invalid(format!("io_uring cannot be used here: {e}")))?;
    if let Some(e) = fallback {
        warnings.push(format!(
            "io_uring is not available ({e}); ran {} synchronous threads instead",
            cfg.threads * cfg.qd
        ));
    }
    Ok(engine)
}

fn journal_exists(j: &Path) -> VerifyError {
    VerifyError::refused(format!(
        "the journal {} already exists; iocap does not overwrite files (remove it, or give \
         another name)",
        j.display()
    ))
}

/// Creates the journal of `cfg`, if any, empty. Created only after the target: a journal named
/// like the target finds it there and is refused, instead of being claimed as the target; and a
/// refused target leaves no journal behind. A journal that cannot be made removes a target this
/// run created.
fn create_journal(cfg: &VerifyConfig, t: &Target) -> Result<Option<JournalWriter>, VerifyError> {
    let Some(j) = &cfg.journal else {
        return Ok(None);
    };
    JournalWriter::create_empty(j).map(Some).map_err(|e| {
        t.remove_if_created(cfg);
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            journal_exists(j)
        } else {
            io_err(format!("cannot create the journal {}", j.display()))(e)
        }
    })
}

/// Writes the journal's header, once every page is durable at generation 1.
fn start_journal(
    cfg: &VerifyConfig,
    w: &JournalWriter,
    path: &Path,
    id: &FileIdent,
) -> Result<(), VerifyError> {
    let target = std::fs::canonicalize(&cfg.target).unwrap_or_else(|_| cfg.target.clone());
    let header = JournalHeader {
        file_id: id.file_id,
        page_bytes: cfg.page_bytes as u32,
        initial_generation: 1,
        pages: cfg.pages(),
        seed: cfg.seed,
        target: target.display().to_string(),
    };
    let context = format!("cannot write the journal {}", path.display());
    w.start(&header).map_err(io_err(context))
}

/// What the result says of the run before it ran: the request and the file.
fn described(cfg: &VerifyConfig, id: &FileIdent, engine: EngineKind) -> Verify {
    Verify {
        mode: VerifyMode::Run,
        target: cfg.target.display().to_string(),
        page_bytes: cfg.page_bytes as u64,
        size_bytes: cfg.file_bytes(),
        pages: cfg.pages(),
        threads: cfg.threads,
        qd: cfg.qd,
        seed: cfg.seed,
        file_id: id.file_id,
        duration_s: cfg.duration.as_secs_f64(),
        io_engine: engine.engine(),
        journal: cfg.journal.as_ref().map(|j| j.display().to_string()),
        ..Verify::default()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use iocap_model::EngineChoice;

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

    /// This system's engines and the names a result gives them.
    #[cfg(target_os = "linux")]
    const ENGINES: [(EngineChoice, &str); 2] = [
        (EngineChoice::Psync, "psync"),
        (EngineChoice::IoUring, "io_uring"),
    ];
    #[cfg(windows)]
    const ENGINES: [(EngineChoice, &str); 2] =
        [(EngineChoice::Psync, "sync"), (EngineChoice::Auto, "iocp")];

    #[test]
    fn both_engines_run_clean() {
        for (engine, want) in ENGINES {
            #[cfg(target_os = "linux")]
            if EngineKind::resolve(engine).is_err() {
                continue;
            }
            let d = tempfile::tempdir().unwrap();
            let c = VerifyConfig {
                engine,
                ..cfg(d.path())
            };
            let v = run(&c, &AtomicBool::new(false)).unwrap().verify;
            assert!(v.passed, "{engine:?}: {:?}", v.failures);
            assert_eq!(v.io_engine.name(), want);
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
        assert!(run(&c, &AtomicBool::new(false)).is_err_and(|e| e.is_refusal()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_whose_lock_another_holds_is_refused_and_left_alone() {
        use std::os::fd::AsRawFd;
        let d = tempfile::tempdir().unwrap();
        let c = cfg(d.path());
        run(&c, &AtomicBool::new(false)).unwrap();
        let before = std::fs::read(&c.target).unwrap();
        // another open file description holds the lock, as another process's run would
        let other = std::fs::File::open(&c.target).unwrap();
        // SAFETY: flock on a descriptor `other` owns, alive for the call
        let rc = unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(rc, 0);
        let e = run(&c, &AtomicBool::new(false)).unwrap_err();
        assert!(e.is_refusal() && e.to_string().contains("is in use"), "{e}");
        assert_eq!(std::fs::read(&c.target).unwrap(), before, "nothing written");
        drop(other);
        assert!(run(&c, &AtomicBool::new(false)).unwrap().verify.passed);
    }

    #[test]
    fn a_file_iocap_did_not_create_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let c = cfg(d.path());
        std::fs::write(&c.target, b"precious").unwrap();
        assert!(run(&c, &AtomicBool::new(false)).is_err_and(|e| e.is_refusal()));
        assert_eq!(std::fs::read(&c.target).unwrap(), b"precious");
    }
}
