//! Every result iocap produces is kept: practitioners are told to save each baseline and share
//! it with the storage vendor, and iocap does it for them. A run goes to an embedded SQLite file
//! with no set-up, or to PostgreSQL where a team's hosts share one history; both hold the same
//! schema ([`schema`]), written through one set of queries ([`sql`]).
//!
//! The full [`RunResult`] is kept as its JSON document (what `iocap show` reads back, so a past
//! run looks exactly as it did), beside normalised rows for querying from SQL: tests, targets,
//! tags, warnings, the per-second series and the latency histograms in HdrHistogram's V2 form.
//! A run is written in one transaction: a process killed while saving leaves no half run.

mod conninfo;
mod location;
mod pg;
mod pgpass;
mod queries;
mod runs;
pub mod schema;
pub mod sql;
mod sqlite;
mod when;

pub use location::{default_path, Location};
use location::{Connection, Reach};
pub use queries::{Baseline, Filter, PruneOutcome, RunSummary};
pub use when::{ago, now_rfc3339, parse_when};

use iocap_model::RunResult;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("{0}")]
    Db(String),
    #[error("{0}")]
    Usage(String),
    #[error("no run '{0}' in the store (see iocap history)")]
    NotFound(String),
    #[error("'{0}' matches several runs: {1}; give more of the run id")]
    Ambiguous(String, String),
    #[error("run {0} is already in the store")]
    Duplicate(String),
    #[error(
        "the store was written by a newer iocap (schema version {store}; this iocap knows up to \
         {known}): upgrade iocap to read it"
    )]
    TooNew { store: i64, known: i64 },
    #[error("a stored result cannot be read: {0}")]
    Corrupt(String),
}

/// An open store, migrated to the current schema.
pub struct Store {
    db: Box<dyn sql::Sql>,
    location: Location,
}

/// The store at `location`, created if there is none.
fn created(location: &Location) -> Result<Box<dyn sql::Sql>, StoreError> {
    location
        .connect(Reach::CreateIfMissing)?
        .map(|c| c.db)
        .ok_or_else(|| StoreError::Usage(format!("cannot create a result store at {location}")))
}

impl Store {
    /// Opens (creating if needed) the store at `location` and brings its schema up to date.
    /// A database that holds other tables but not iocap's is refused and left untouched.
    pub fn open(location: &Location) -> Result<Self, StoreError> {
        let mut db = created(location)?;
        schema::is_ours(db.as_mut(), &location.to_string())?;
        db.ready()?;
        schema::migrate_to(db.as_mut(), schema::CURRENT)?;
        Ok(Self {
            db,
            location: location.clone(),
        })
    }

    /// Opens a store that must already exist (for commands that read or change saved runs):
    /// a missing file, or a database without iocap's tables, is an error and nothing is
    /// created. A store this process cannot write (a read-only mount, another user's file) is
    /// opened read-only, if its schema is the current one.
    pub fn open_existing(location: &Location) -> Result<Self, StoreError> {
        let missing = |what: String| {
            StoreError::Usage(format!(
                "there is no result store at {what}: no run was saved there (check --db or \
                 IOCAP_DB)"
            ))
        };
        let Some(Connection { mut db, read_only }) = location.connect(Reach::Existing)? else {
            return Err(missing(location.to_string()));
        };
        if !schema::is_ours(db.as_mut(), &location.to_string())? {
            return Err(missing(location.to_string()));
        }
        if read_only {
            let v = schema::version(db.as_mut())?;
            if v != schema::CURRENT {
                return Err(StoreError::Usage(format!(
                    "{location} is read-only and holds schema version {v}; this iocap reads \
                     version {}: open it once where it can be written, to migrate it",
                    schema::CURRENT
                )));
            }
        } else {
            db.ready()?;
            schema::migrate_to(db.as_mut(), schema::CURRENT)?;
        }
        Ok(Self {
            db,
            location: location.clone(),
        })
    }

    /// Opens a store without migrating it, for tests of the migrations themselves.
    #[doc(hidden)]
    pub fn open_raw(location: &Location) -> Result<Box<dyn sql::Sql>, StoreError> {
        created(location)
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Saves a whole run, atomically.
    pub fn save(&mut self, run: &RunResult) -> Result<(), StoreError> {
        sql::in_transaction(self.db.as_mut(), |db| queries::insert_run(db, run))
    }

    /// Saves a run that may already be stored, replacing it whole (a suite saves its run again
    /// after each test, so a killed suite keeps every test it finished). Baselines that point
    /// at the run stay.
    pub fn save_or_replace(&mut self, run: &RunResult) -> Result<(), StoreError> {
        sql::in_transaction(self.db.as_mut(), |db| queries::replace_run(db, run))
    }

    /// Runs matching `f`, newest first.
    pub fn list(&mut self, f: &Filter) -> Result<Vec<RunSummary>, StoreError> {
        queries::list(self.db.as_mut(), f)
    }

    /// The runs of `host` that tested a target at one of `paths` or on one of `devices` and
    /// measured a burst bucket (`saturate --bucket`), newest first, at most `limit`.
    pub fn bucket_runs(
        &mut self,
        host: &str,
        paths: &[String],
        devices: &[String],
        limit: u32,
    ) -> Result<Vec<String>, StoreError> {
        queries::bucket_runs(self.db.as_mut(), host, paths, devices, limit)
    }

    /// The run id meant by `what`: a whole id, a unique prefix, or `last`/`latest`.
    pub fn resolve(&mut self, what: &str) -> Result<String, StoreError> {
        queries::resolve(self.db.as_mut(), what)
    }

    /// The stored result of a run (`what` as for [`Store::resolve`]).
    pub fn load(&mut self, what: &str) -> Result<RunResult, StoreError> {
        let id = self.resolve(what)?;
        queries::load(self.db.as_mut(), &id)
    }

    /// The stored latency histograms of a run: (test index, scope, HdrHistogram V2 bytes), the
    /// scope being `total`, `read`, `write`, `sync` or `target:N`.
    pub fn histograms(&mut self, run_id: &str) -> Result<Vec<(u32, String, Vec<u8>)>, StoreError> {
        queries::histograms(self.db.as_mut(), run_id)
    }

    /// Deletes runs (and the baselines that point at them); returns the ids deleted.
    pub fn delete(&mut self, ids: &[String]) -> Result<Vec<String>, StoreError> {
        sql::in_transaction(self.db.as_mut(), |db| queries::delete(db, ids))
    }

    /// Deletes runs started before `cutoff` (RFC 3339), keeping the runs baselines point at.
    pub fn prune(&mut self, cutoff: &str, dry_run: bool) -> Result<PruneOutcome, StoreError> {
        sql::in_transaction(self.db.as_mut(), |db| queries::prune(db, cutoff, dry_run))
    }

    /// Makes `run_id` the baseline of its host for each of `targets`.
    pub fn baseline_set(
        &mut self,
        run_id: &str,
        targets: &[String],
        now: &str,
    ) -> Result<Vec<Baseline>, StoreError> {
        sql::in_transaction(self.db.as_mut(), |db| {
            queries::baseline_set(db, run_id, targets, now)
        })
    }

    /// Baselines, of one host or of all.
    pub fn baselines(&mut self, host: Option<&str>) -> Result<Vec<Baseline>, StoreError> {
        queries::baselines(self.db.as_mut(), host)
    }

    /// Removes the baselines of `host` (for one target, or all); returns how many.
    pub fn baseline_clear(&mut self, host: &str, target: Option<&str>) -> Result<u64, StoreError> {
        queries::baseline_clear(self.db.as_mut(), host, target)
    }

    /// The schema version of the open store.
    pub fn schema_version(&mut self) -> Result<i64, StoreError> {
        schema::version(self.db.as_mut())
    }
}
