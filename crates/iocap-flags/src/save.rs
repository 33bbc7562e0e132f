//! Keeping every result: the flags every measuring command shares (`--db`, `--no-save`,
//! `--label`, `--tag`, `--note`, `--html`) and what they do once a run has finished. The run is
//! printed first and saved after, so a store that cannot be reached never costs the figures.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use iocap_console::keep;
use iocap_model::RunResult;

/// `--db`, declared once for every command that reads or writes the result store.
#[derive(Args, Debug, Clone, Default)]
pub struct StoreArg {
    /// Result store: a SQLite file, a postgres:// URL or PostgreSQL key=value
    /// conninfo [default: $IOCAP_DB, else
    /// ~/.local/share/iocap/results.db]
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct SaveArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// Do not save the result
    #[arg(long)]
    pub no_save: bool,
    /// A name for this run, shown in the history and reports
    #[arg(long)]
    pub label: Option<String>,
    /// A tag for filtering the history (repeatable)
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// A free-text note kept with the run
    #[arg(long)]
    pub note: Option<String>,
    /// Also write a self-contained HTML report of the run to FILE (never over an existing file)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

impl SaveArgs {
    /// Checks what can be checked before a test runs, so a typo does not cost a long test.
    pub fn check(&self) -> Result<()> {
        // rank 0 keeps the runs of a multi-host run: the store may exist on its host only
        if !iocap_console::is_root() {
            return Ok(());
        }
        if let Some(p) = &self.html {
            iocap_console::files::refuse_existing(p)?;
        }
        keep::check_tags(&self.tags)?;
        if !self.no_save {
            // open it now: a store that cannot be reached should cost seconds, not a whole test
            keep::open_store(self.store.db.as_deref())?;
        }
        Ok(())
    }

    /// Puts the label, tags and note on the run, so every view shows them.
    pub fn stamp(&self, run: &mut RunResult) {
        run.label = self.label.clone();
        run.tags = self.tags.clone();
        run.note = self.note.clone();
    }

    /// Writes the HTML report (if asked) and saves the runs (unless `--no-save`).
    pub fn keep(&self, runs: &[RunResult]) -> Result<()> {
        self.write_html(runs)?;
        for r in runs {
            self.save(r)?;
        }
        Ok(())
    }

    /// Writes the HTML report of `runs`, if `--html` was given.
    pub fn write_html(&self, runs: &[RunResult]) -> Result<()> {
        match &self.html {
            Some(p) => keep::write_html(p, runs),
            None => Ok(()),
        }
    }

    /// Saves one run, unless `--no-save`; says where on stderr.
    pub fn save(&self, run: &RunResult) -> Result<()> {
        self.store_run(run, keep::Saving::Final)
    }

    /// Saves a run that grows test by test (a suite), replacing what was saved of it before.
    pub fn save_progress(&self, run: &RunResult) -> Result<()> {
        self.store_run(run, keep::Saving::Progress)
    }

    fn store_run(&self, run: &RunResult, saving: keep::Saving) -> Result<()> {
        if self.no_save {
            return Ok(());
        }
        keep::save(self.store.db.as_deref(), run, saving)
    }
}
