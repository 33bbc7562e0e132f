//! Keeping every result: the flags every measuring command shares (`--db`, `--no-save`,
//! `--label`, `--tag`, `--note`, `--html`) and what they do once a run has finished. The run is
//! printed first and saved after, so a store that cannot be reached never costs the figures.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use iocap_model::RunResult;
use iocap_store::{Location, Store};

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
        if !super::ranks::is_root() {
            return Ok(());
        }
        if let Some(p) = &self.html {
            refuse_existing(p)?;
        }
        for t in &self.tags {
            if t.trim().is_empty() || t.contains('\n') {
                bail!("--tag '{t}' is empty or holds a line break");
            }
        }
        if !self.no_save {
            // open it now: a store that cannot be reached should cost seconds, not a whole test
            open_store(self.store.db.as_deref())?;
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
        if !super::ranks::is_root() {
            return Ok(());
        }
        if let Some(p) = &self.html {
            write_new_file(p, &iocap_report::html::render(runs), false)?;
            eprintln!("iocap: report written to {}", p.display());
        }
        Ok(())
    }

    /// Saves one run, unless `--no-save`; says where on stderr.
    pub fn save(&self, run: &RunResult) -> Result<()> {
        self.store_run(run, false)
    }

    /// Saves a run that grows test by test (a suite), replacing what was saved of it before.
    pub fn save_progress(&self, run: &RunResult) -> Result<()> {
        self.store_run(run, true)
    }

    fn store_run(&self, run: &RunResult, growing: bool) -> Result<()> {
        if self.no_save || !super::ranks::is_root() {
            return Ok(());
        }
        let mut store = open_store(self.store.db.as_deref())?;
        let saved = if growing {
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
            eprintln!("iocap: saved run {} in {}", run.run_id, store.location());
        }
        Ok(())
    }
}

/// Opens the store named by `--db`, `IOCAP_DB` or the default, creating it if needed: for
/// commands that save runs.
pub fn open_store(db: Option<&str>) -> Result<Store> {
    let loc = Location::resolve(db)?;
    Store::open(&loc).with_context(|| format!("cannot use the result store {loc}"))
}

/// Opens a store that must already exist: for commands that read or change saved runs, which
/// never create one (a mistyped `--db` is an error, not a new empty store).
pub fn open_existing_store(db: Option<&str>) -> Result<Store> {
    let loc = Location::resolve(db)?;
    Store::open_existing(&loc).with_context(|| format!("cannot use the result store {loc}"))
}

/// Refuses a path that already exists: iocap never writes over a file the user has.
pub fn refuse_existing(p: &Path) -> Result<()> {
    if p.exists() {
        bail!(
            "{} already exists; iocap does not overwrite files (remove it, or give another name)",
            p.display()
        );
    }
    Ok(())
}

/// Writes `text` to a new file (or over an existing one only with `force`).
pub fn write_new_file(p: &Path, text: &str, force: bool) -> Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    if force {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    let mut f = opts.open(p).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!(
                "{} already exists; iocap does not overwrite files (remove it, give another \
                 name, or add --force)",
                p.display()
            )
        } else {
            anyhow::anyhow!("cannot create {}: {e}", p.display())
        }
    })?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", p.display()))
}
