//! The store's schema and its migrations. The schema version lives in `iocap_meta`; each
//! migration moves a store up by one version inside one transaction, so a store is always at a
//! version some iocap knows. A store at a version newer than this build knows is refused with a
//! clear message rather than misread: an older iocap must never write into a newer layout.
//!
//! Migrations are only ever appended. The statements are written once for both databases; the
//! `{blob}` placeholder becomes BLOB or BYTEA.

use crate::sql::{in_transaction, Dialect, Sql, Value};
use crate::StoreError;

/// Version 1: runs, with their summary, tags, tests, targets, histograms and warnings.
const V1: &str = "
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    saved_at TEXT NOT NULL,
    iocap_version TEXT NOT NULL,
    hostname TEXT NOT NULL,
    kernel TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    cpus BIGINT NOT NULL,
    memory_bytes BIGINT NOT NULL,
    label TEXT,
    note TEXT,
    tags TEXT NOT NULL,
    test_count BIGINT NOT NULL,
    workload TEXT NOT NULL,
    targets TEXT NOT NULL,
    iops DOUBLE PRECISION NOT NULL,
    mb_s DOUBLE PRECISION NOT NULL,
    lat_us_p99 DOUBLE PRECISION,
    result_json TEXT NOT NULL
);
CREATE INDEX runs_by_start ON runs (started_at);
CREATE INDEX runs_by_host ON runs (hostname, started_at);
CREATE TABLE run_tags (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (run_id, tag)
);
CREATE INDEX run_tags_by_tag ON run_tags (tag);
CREATE TABLE tests (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    test_idx BIGINT NOT NULL,
    name TEXT NOT NULL,
    engine TEXT NOT NULL,
    rw TEXT NOT NULL,
    write_pct BIGINT NOT NULL,
    bs_bytes BIGINT NOT NULL,
    qd BIGINT NOT NULL,
    threads BIGINT NOT NULL,
    direct BIGINT NOT NULL,
    duration_s DOUBLE PRECISION NOT NULL,
    ios BIGINT NOT NULL,
    iops DOUBLE PRECISION NOT NULL,
    mb_s DOUBLE PRECISION NOT NULL,
    lat_us_p50 DOUBLE PRECISION,
    lat_us_p99 DOUBLE PRECISION,
    lat_us_max DOUBLE PRECISION,
    cpu_us_per_io DOUBLE PRECISION NOT NULL,
    interrupted BIGINT NOT NULL,
    error TEXT,
    spec_json TEXT NOT NULL,
    PRIMARY KEY (run_id, test_idx)
);
CREATE TABLE test_targets (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    test_idx BIGINT NOT NULL,
    target_idx BIGINT NOT NULL,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    device TEXT,
    fs_type TEXT,
    size_bytes BIGINT NOT NULL,
    ios BIGINT NOT NULL,
    iops DOUBLE PRECISION NOT NULL,
    mb_s DOUBLE PRECISION NOT NULL,
    lat_us_p99 DOUBLE PRECISION,
    PRIMARY KEY (run_id, test_idx, target_idx)
);
CREATE INDEX test_targets_by_path ON test_targets (path);
CREATE TABLE histograms (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    test_idx BIGINT NOT NULL,
    scope TEXT NOT NULL,
    hdr_v2 {blob} NOT NULL,
    PRIMARY KEY (run_id, test_idx, scope)
);
CREATE TABLE warnings (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    test_idx BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (run_id, test_idx, seq)
);
";

/// Version 2: the per-second series as rows, and baselines per host and target.
const V2: &str = "
CREATE TABLE series (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    test_idx BIGINT NOT NULL,
    t_s DOUBLE PRECISION NOT NULL,
    iops DOUBLE PRECISION NOT NULL,
    mb_s DOUBLE PRECISION NOT NULL,
    lat_us_mean DOUBLE PRECISION,
    lat_us_p99 DOUBLE PRECISION,
    PRIMARY KEY (run_id, test_idx, t_s)
);
CREATE TABLE baselines (
    hostname TEXT NOT NULL,
    target TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    set_at TEXT NOT NULL,
    PRIMARY KEY (hostname, target)
);
";

/// Version 3: the hosts of a multi-host run (MPI), one row per rank, so `history --host`
/// finds a run by any host that took part. Runs saved before it list their rank 0 alone.
const V3: &str = "
CREATE TABLE run_hosts (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    rank BIGINT NOT NULL,
    hostname TEXT NOT NULL,
    PRIMARY KEY (run_id, rank)
);
CREATE INDEX run_hosts_by_host ON run_hosts (hostname);
";

/// Every migration, in order: `MIGRATIONS[i]` moves a store from version i to i + 1.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3];

/// The version this build writes.
pub const CURRENT: i64 = MIGRATIONS.len() as i64;

const META: &str =
    "CREATE TABLE IF NOT EXISTS iocap_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";

/// The tables (and views) of the database iocap is connected to, in its default schema.
pub fn tables(db: &mut dyn Sql) -> Result<Vec<String>, StoreError> {
    let q = match db.dialect() {
        Dialect::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') \
             AND name NOT LIKE 'sqlite_%' ORDER BY name"
        }
        Dialect::Postgres => {
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = current_schema() ORDER BY table_name"
        }
    };
    Ok(db
        .query(q, &[])?
        .iter()
        .filter_map(|r| r[0].text().map(str::to_string))
        .collect())
}

/// Whether the database is iocap's (it has `iocap_meta`), empty (`Ok(false)`), or another
/// program's: refused, so iocap never adds its tables to a database it did not make.
pub fn is_ours(db: &mut dyn Sql, shown: &str) -> Result<bool, StoreError> {
    let t = tables(db).map_err(|e| {
        StoreError::Usage(format!(
            "{shown} is not a result store iocap can use ({e}); give a new file or an empty \
             database with --db"
        ))
    })?;
    if t.iter().any(|n| n == "iocap_meta") {
        return Ok(true);
    }
    if t.is_empty() {
        return Ok(false);
    }
    // a short line: the store's own tables when `iocap_meta` alone is gone, else a few names
    if t.iter().any(|n| n == "runs") && t.iter().any(|n| n == "tests") {
        return Err(StoreError::Usage(format!(
            "{shown} is not an iocap store: it has iocap's tables but no iocap_meta (the schema \
             version); iocap left it as it was"
        )));
    }
    let mut names: Vec<&str> = t.iter().take(3).map(String::as_str).collect();
    if t.len() > 3 {
        names.push("...");
    }
    Err(StoreError::Usage(format!(
        "{shown} is another program's database (tables: {}), not an iocap store (no \
         iocap_meta): iocap left it as it was; give a new file or an empty database with --db",
        names.join(", ")
    )))
}

/// The store's schema version; 0 for an empty database.
pub fn version(db: &mut dyn Sql) -> Result<i64, StoreError> {
    // reads only: a read-only store must answer too
    if !tables(db)?.iter().any(|t| t == "iocap_meta") {
        return Ok(0);
    }
    let rows = db.query(
        "SELECT value FROM iocap_meta WHERE key = 'schema_version'",
        &[],
    )?;
    match rows.first().and_then(|r| r[0].text()) {
        None => Ok(0),
        Some(v) => v.parse().map_err(|_| {
            StoreError::Db(format!("the store's schema version '{v}' is not a number"))
        }),
    }
}

/// Brings the store up to `target` (normally [`CURRENT`]); refuses a newer store.
pub fn migrate_to(db: &mut dyn Sql, target: i64) -> Result<(), StoreError> {
    db.batch(META)?;
    in_transaction(db, |db| {
        if db.dialect() == Dialect::Postgres {
            // one migrating process at a time; the lock ends with the transaction
            db.exec("SELECT pg_advisory_xact_lock(4917301)", &[])?;
        }
        let have = version(db)?;
        if have > CURRENT {
            return Err(StoreError::TooNew {
                store: have,
                known: CURRENT,
            });
        }
        for v in have..target {
            let ddl = db.dialect().ddl(MIGRATIONS[v as usize]);
            db.batch(&ddl)?;
        }
        if target > have {
            db.exec("DELETE FROM iocap_meta WHERE key = 'schema_version'", &[])?;
            db.exec(
                "INSERT INTO iocap_meta (key, value) VALUES ('schema_version', ?)",
                &[Value::Text(target.to_string())],
            )?;
        }
        Ok(())
    })
}
