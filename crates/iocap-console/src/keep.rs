//! Keeping every result: the store named by `--db` (or `IOCAP_DB`, or the default) opened for
//! saving or for reading, a finished run saved with a line on stderr saying where, and its HTML
//! report written. In a multi-host run only rank 0 keeps anything ([`crate::is_root`]).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use iocap_model::text::printable;
use iocap_model::{RunResult, TestResult};
use iocap_store::{Location, Store};

/// The store's file named by `--db`, `IOCAP_DB` or the default, where it is a file (SQLite):
/// what a command's claim holds as its store.
pub fn store_file(db: Option<&str>) -> Result<Option<PathBuf>> {
    Ok(match Location::resolve(db)? {
        Location::Sqlite(p) => Some(p),
        Location::Postgres(_) => None,
    })
}

/// Opens the store named by `--db`, `IOCAP_DB` or the default, creating it if needed: for
/// commands that save runs. A dangling symbolic link there is refused, as the claim refuses it
/// (`iocap_platform::claim::output::refuse_dangling`): SQLite would make the store where it
/// points.
pub fn open_store(db: Option<&str>) -> Result<Store> {
    let loc = Location::resolve(db)?;
    if let Location::Sqlite(p) = &loc {
        iocap_platform::claim::output::refuse_dangling(p)?;
    }
    Store::open(&loc).with_context(|| format!("cannot use the result store {loc}"))
}

/// Opens a store that must already exist: for commands that read or change saved runs, which
/// never create one (a mistyped `--db` is an error, not a new empty store).
pub fn open_existing_store(db: Option<&str>) -> Result<Store> {
    let loc = Location::resolve(db)?;
    Store::open_existing(&loc).with_context(|| format!("cannot use the result store {loc}"))
}

/// Refuses a tag that would not survive a listing: empty, or holding a line break.
pub fn check_tags(tags: &[String]) -> Result<()> {
    for t in tags {
        if t.trim().is_empty() || t.contains('\n') {
            bail!("--tag '{t}' is empty or holds a line break");
        }
    }
    Ok(())
}

/// Which save of a run [`save`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saving {
    /// The finished run, once (a second save of it is refused), said on stderr.
    Final,
    /// A run saved test by test (a suite, a multi-host run's checkpoints): replaces what was
    /// saved of it before and says nothing.
    Progress,
}

/// Saves `run` in the store `db`. A multi-host run's final save replaces its checkpoint. Off
/// rank 0, nothing.
pub fn save(db: Option<&str>, run: &RunResult, saving: Saving) -> Result<()> {
    if !crate::is_root() {
        return Ok(());
    }
    let mut store = open_store(db)?;
    let growing = saving == Saving::Progress;
    let saved = if growing || crate::many_ranks() {
        store.save_or_replace(run)
    } else {
        store.save(run)
    };
    let what = if growing { "run" } else { "the result of run" };
    saved.with_context(|| {
        format!(
            "{what} {} could not be saved in {} (the figures above are not stored)",
            run.run_id,
            store.location()
        )
    })?;
    if !growing {
        let at = store.location().to_string();
        eprintln!("iocap: saved run {} in {}", run.run_id, printable(&at));
    }
    Ok(())
}

/// What rank 0 of a multi-host run does as each test's merged results come in: saves the run
/// with every test finished so far in the store `db`, marked unfinished in its note (the
/// finished run replaces it). A job that mpirun ends (a rank died) thus leaves what it had.
pub fn checkpoint(run: &RunResult, db: Option<String>) -> impl FnMut(&[TestResult]) {
    let mut so_far = run.clone();
    let note = run.note.clone();
    move |tests| {
        so_far.tests.extend_from_slice(tests);
        let n = so_far.tests.len();
        let mark = format!(
            "unfinished: saved after test {n} of a multi-host run that had not ended; the \
             finished run replaces this (if this note stays, the job ended first)"
        );
        so_far.note = Some(
            note.as_ref()
                .map_or(mark.clone(), |n| format!("{n}\n{mark}")),
        );
        if let Err(e) = save(db.as_deref(), &so_far, Saving::Progress) {
            let e = printable(&format!("{e:#}")).into_owned();
            eprintln!("iocap: the run so far could not be saved: {e}");
        }
    }
}

/// Writes the HTML report of `runs` to the new file `p`. Off rank 0, nothing.
pub fn write_html(p: &Path, runs: &[RunResult]) -> Result<()> {
    if !crate::is_root() {
        return Ok(());
    }
    let html = iocap_report::html::render(runs);
    crate::files::write_new_file(p, &html, crate::files::Existing::Refuse)?;
    let p = p.display().to_string();
    eprintln!("iocap: report written to {}", printable(&p));
    Ok(())
}

/// The caches below the OS found by this host's newest cache scan (a `cachescan` run, or a
/// preflight that sized its files by one) among its last 50 saved runs; `None` when the store
/// does not exist or holds none. For placing a recorded workload's working set.
pub fn newest_cachescan(db: Option<&str>) -> Option<iocap_model::cachescan::CacheScan> {
    let mut store = open_existing_store(db).ok()?;
    let host = iocap_platform::host::host_info().hostname;
    let filter = iocap_store::Filter {
        host: Some(host),
        limit: 50,
        ..Default::default()
    };
    let runs = store.list(&filter).ok()?;
    runs.iter()
        .filter_map(|s| store.load(&s.run_id).ok())
        .find_map(|r| r.cachescan)
}

/// How many of the newest stored runs that measured a bucket on a run's targets are looked
/// at for the one that decides ([`held_against_bucket`]).
const BUCKET_RUNS: u32 = 50;

/// A finished `run` held against the burst bucket that the newest stored `saturate --bucket`
/// on its host and targets measured (`iocap_assess::stored_bucket`: the tests shorter than
/// its burst at their rate are warned, with the baseline to plan on); the run as it was when
/// the command is not one it applies to, or the store `db` does not exist, cannot be read or
/// holds no bucket for its targets. Reading never creates a store. Off rank 0, nothing.
pub fn held_against_bucket(mut run: RunResult, db: Option<&str>) -> RunResult {
    use iocap_assess::stored_bucket::{applies_to, decides, hold};
    if !crate::is_root() || !applies_to(&run) {
        return run;
    }
    let Ok(mut store) = open_existing_store(db) else {
        return run;
    };
    let targets = || run.tests.iter().flat_map(|t| &t.targets);
    let mut paths: Vec<String> = targets().map(|t| t.path.clone()).collect();
    let mut devices: Vec<String> = targets().filter_map(|t| t.device.clone()).collect();
    for v in [&mut paths, &mut devices] {
        v.sort();
        v.dedup();
    }
    let ids = store
        .bucket_runs(&run.host.hostname, &paths, &devices, BUCKET_RUNS)
        .unwrap_or_default();
    let newest = ids
        .iter()
        .filter_map(|id| store.load(id).ok())
        .find(|s| decides(s, &run));
    if let Some(stored) = newest {
        hold(&mut run, &stored);
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_saved_once_and_a_growing_one_replaced() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("r.db");
        let db = db.to_str();
        let mut run = iocap_session::new_run(iocap_model::RunCommand::Run);
        save(db, &run, Saving::Progress).unwrap();
        run.label = Some("grown".into());
        save(db, &run, Saving::Progress).unwrap();
        let mut store = open_existing_store(db).unwrap();
        assert_eq!(
            store.load(&run.run_id).unwrap().label.as_deref(),
            Some("grown")
        );
        let e = save(db, &run, Saving::Final).unwrap_err();
        assert!(format!("{e:#}").contains("could not be saved"), "{e:#}");
    }

    #[test]
    fn a_checkpoint_holds_the_tests_so_far_and_says_it_is_unfinished() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("r.db").to_str().unwrap().to_string();
        let mut run = iocap_session::new_run(iocap_model::RunCommand::Saturate);
        run.note = Some("before the firmware".into());
        let mut keep = checkpoint(&run, Some(db.clone()));
        let t = iocap_model::TestResult::default();
        keep(std::slice::from_ref(&t));
        keep(&[t.clone(), t]);
        let saved = open_existing_store(Some(&db))
            .unwrap()
            .load(&run.run_id)
            .unwrap();
        assert_eq!(saved.tests.len(), 3);
        let note = saved.note.unwrap();
        assert!(
            note.starts_with("before the firmware\nunfinished: saved after test 3"),
            "{note}"
        );
    }

    /// The glue from the store to the judgement: the newest run that measured a bucket on the
    /// run's target is found and decides; a missing store changes nothing and is not made.
    #[test]
    fn a_finished_run_is_held_against_the_newest_stored_bucket_of_its_target() {
        use iocap_model::fixture::{run, FixtureRun};
        use iocap_model::{BurstBucket, RunCommand, Saturation};
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("r.db");
        let db = db.to_str();
        let short = || {
            let mut r = run(&FixtureRun {
                iops: 900.0,
                duration_s: 2,
                started_unix_s: 1_795_400_000,
                ..FixtureRun::default()
            });
            r.command = Some(RunCommand::Run);
            r.tests[0].spec.warmup_s = 0.0;
            r
        };
        let missing = held_against_bucket(short(), db);
        assert!(missing.stored_bucket.is_none());
        assert!(std::fs::metadata(d.path().join("r.db")).is_err());
        let bucket = |day: u64, credit: Option<f64>| {
            let mut r = run(&FixtureRun {
                started_unix_s: 1_795_312_800 + day * 3600,
                salt: day,
                ..FixtureRun::default()
            });
            r.command = Some(RunCommand::Saturate);
            r.saturation = Some(Saturation {
                bucket: Some(BurstBucket {
                    bs_bytes: 8192,
                    baseline_iops: Some(200.0),
                    credit_ios: credit,
                    ..BurstBucket::default()
                }),
                ..Saturation::default()
            });
            r
        };
        let (old, new) = (bucket(1, Some(3200.0)), bucket(2, Some(6400.0)));
        save(db, &old, Saving::Final).unwrap();
        save(db, &new, Saving::Final).unwrap();
        let held = held_against_bucket(short(), db);
        let b = held.stored_bucket.expect("the newest bucket");
        assert_eq!((b.run_id, b.credit_ios), (new.run_id, 6400.0));
        assert_eq!(held.tests[0].warnings.len(), 1);
        // a newer drain that found no burst decides: nothing to warn
        save(db, &bucket(3, None), Saving::Final).unwrap();
        assert!(held_against_bucket(short(), db).stored_bucket.is_none());
    }

    #[test]
    fn reading_never_creates_a_store() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("typo.db");
        assert!(open_existing_store(db.to_str()).is_err());
        assert!(!db.exists());
    }

    #[test]
    fn an_empty_tag_is_refused() {
        assert!(check_tags(&["a".into(), " ".into()]).is_err());
        assert!(check_tags(&["a".into()]).is_ok());
    }
}
