//! What the command line's shared flags do, where `iocap-flags` only declares them: keeping a
//! finished run (`--db`, `--no-save`, `--label`, `--tag`, `--note`, `--html`), the history's
//! filter (`--host`, `--since`, ...) and the role directories (`--data`, `--log`, ...).
//!
//! Why here: flags are plain data, so that reading the command line opens nothing; the store,
//! the files and the checks of a directory are the console's. Each is a trait on the flag
//! group, so a command says `a.save.keep(&runs)` as before, with the trait in scope.

use anyhow::Result;
use iocap_flags::{RoleDirs, RunFilterArgs, SaveArgs};
use iocap_model::RunResult;
use iocap_session::RolePlaces;
use iocap_store::{parse_when, Filter, StoreError};

use crate::claim::Claim;
use crate::keep;

/// What `SaveArgs` does once a run has finished. The run is printed first and saved after, so
/// a store that cannot be reached never costs the figures.
pub trait Keeping {
    /// Completes the command's claim with the store it saves into (`--db`, unless
    /// `--no-save`) and `--html`, and checks it, before anything is written: no path written
    /// is one read or another written (a target that is the store), no output is refused
    /// later. Then opens the store, so one that cannot be reached costs seconds, not a whole
    /// test, and hands back the claim the command's outputs are opened through.
    fn claim(&self, claim: Claim) -> Result<Claim>;
    /// Puts the label, tags and note on the run, so every view shows them.
    fn stamp(&self, run: &mut RunResult);
    /// Writes the HTML report (if asked) and saves the runs (unless `--no-save`).
    fn keep(&self, runs: &[RunResult]) -> Result<()>;
    /// Writes the HTML report of `runs`, if `--html` was given.
    fn write_html(&self, runs: &[RunResult]) -> Result<()>;
    /// Saves one run, unless `--no-save`; says where on stderr.
    fn save(&self, run: &RunResult) -> Result<()>;
    /// Saves a run that grows test by test (a suite), replacing what was saved of it before.
    fn save_progress(&self, run: &RunResult) -> Result<()>;
}

impl Keeping for SaveArgs {
    fn claim(&self, claim: Claim) -> Result<Claim> {
        // rank 0 keeps the runs of a multi-host run: the store may exist on its host only
        if !crate::is_root() {
            return Ok(claim.check()?);
        }
        keep::check_tags(&self.tags)?;
        let db = self.store.db.as_deref();
        let store = match self.no_save {
            true => None,
            false => keep::store_file(db)?,
        };
        let claim = claim
            .store(store.as_deref())
            .writes_new("--html", self.html.as_deref())
            .check()?;
        if !self.no_save {
            keep::open_store(db)?;
        }
        Ok(claim)
    }

    fn stamp(&self, run: &mut RunResult) {
        run.label = self.label.clone();
        run.tags = self.tags.clone();
        run.note = self.note.clone();
    }

    fn keep(&self, runs: &[RunResult]) -> Result<()> {
        self.write_html(runs)?;
        for r in runs {
            self.save(r)?;
        }
        Ok(())
    }

    fn write_html(&self, runs: &[RunResult]) -> Result<()> {
        match &self.html {
            Some(p) => keep::write_html(p, runs),
            None => Ok(()),
        }
    }

    fn save(&self, run: &RunResult) -> Result<()> {
        store_run(self, run, keep::Saving::Final)
    }

    fn save_progress(&self, run: &RunResult) -> Result<()> {
        store_run(self, run, keep::Saving::Progress)
    }
}

fn store_run(a: &SaveArgs, run: &RunResult, saving: keep::Saving) -> Result<()> {
    if a.no_save {
        return Ok(());
    }
    keep::save(a.store.db.as_deref(), run, saving)
}

/// The store's filter from the history's filter flags.
pub trait Filtering {
    /// The store's filter, at most `limit` runs (0: all); a date that cannot be read names its
    /// flag.
    fn filter(self, limit: u32) -> Result<Filter, StoreError>;
}

impl Filtering for RunFilterArgs {
    fn filter(self, limit: u32) -> Result<Filter, StoreError> {
        let when = |flag, v: Option<String>| v.map(|v| parse_when(flag, &v)).transpose();
        Ok(Filter {
            host: self.host,
            label: self.label,
            tag: self.tag,
            target: self.target,
            since: when("--since", self.since)?,
            until: when("--until", self.until)?,
            limit,
        })
    }
}

/// The places the role directories name.
pub trait Placing {
    /// The places given, each of which must exist (a mistyped directory is an error naming its
    /// flag, never a test file made in its place: [`RolePlaces::check`]).
    fn places(&self) -> Result<RolePlaces>;
}

impl Placing for RoleDirs {
    fn places(&self) -> Result<RolePlaces> {
        let p = RolePlaces {
            data: self.data.clone(),
            log: self.log.clone(),
            temp: self.temp.clone(),
            backup: self.backup.clone(),
        };
        p.check().map_err(anyhow::Error::msg)?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Existing;

    #[test]
    fn an_existing_html_file_is_refused_before_the_test() {
        let d = tempfile::tempdir().unwrap();
        let html = d.path().join("r.html");
        std::fs::write(&html, "mine").unwrap();
        let save = SaveArgs {
            no_save: true,
            html: Some(html.clone()),
            ..SaveArgs::default()
        };
        let e = save.claim(Claim::new(Existing::Refuse)).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("already exists"), "{e}");
        assert_eq!(std::fs::read_to_string(&html).unwrap(), "mine");
    }

    #[test]
    fn a_bad_since_names_the_flag() {
        let f = RunFilterArgs {
            since: Some("yesterday-ish".into()),
            ..RunFilterArgs::default()
        };
        assert!(f.any());
        let e = f.filter(0).unwrap_err().to_string();
        assert!(e.contains("--since"), "{e}");
    }

    #[test]
    fn a_missing_role_directory_names_its_flag() {
        let d = tempfile::tempdir().unwrap();
        let roles = RoleDirs {
            log: Some(d.path().join("no-such-dir")),
            ..RoleDirs::default()
        };
        let e = roles.places().unwrap_err().to_string();
        assert!(e.contains("--log"), "{e}");
    }
}
