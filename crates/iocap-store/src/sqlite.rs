//! The embedded store: one SQLite file, no set-up. WAL lets readers work beside a writer, a busy
//! timeout makes concurrent iocap processes wait their turn instead of failing, and every run is
//! saved in one transaction, so a process killed mid-save leaves the file as it was before.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags};

use crate::sql::{Dialect, Row, Sql, Value};
use crate::StoreError;

pub struct Sqlite {
    conn: Connection,
    path: std::path::PathBuf,
}

fn err(e: rusqlite::Error) -> StoreError {
    StoreError::Db(e.to_string())
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

/// Refuses a store path that is neither a regular file nor missing (SQLite creates a missing
/// one), by its kind, before SQLite opens anything: given `/dev/null` SQLite said only "disk
/// I/O error" and left `/dev/null-journal` in /dev, a FIFO would block its open, and a
/// directory gave "unable to open database file". A link to a regular file is followed.
pub(crate) fn check_kind(path: &Path) -> Result<(), StoreError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) => Err(StoreError::Usage(format!(
            "{} is a {}, not a SQLite file: give the store as a file path (a new one is \
             created) or a PostgreSQL connection string",
            path.display(),
            iocap_model::file_kind(&m.file_type())
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StoreError::Usage(format!(
            "cannot use {} as the store: {e}",
            path.display()
        ))),
    }
}

impl Sqlite {
    /// Opens or creates the store file; its directory is created if missing. Nothing is written
    /// to an existing file here: the caller checks that it is iocap's (or empty) first, then
    /// calls [`Sql::ready`].
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        check_kind(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::Db(format!(
                    "cannot create the directory {}: {e}",
                    dir.display()
                ))
            })?;
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::Db(format!("cannot open {}: {e}", path.display())))?;
        conn.busy_timeout(Duration::from_secs(30)).map_err(err)?;
        Ok(Self {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens an existing store that this process may not write (a read-only mount, another
    /// user's file): read-only and immutable, so SQLite needs no `-shm` file beside it.
    pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        check_kind(path)?;
        let uri = format!("file:{}?immutable=1", path.display());
        let conn = Connection::open_with_flags(
            uri,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::Db(format!("cannot open {}: {e}", path.display())))?;
        Ok(Self {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// WAL (readers never block the writer) and synchronous=NORMAL (durable across a process
    /// crash, the case that matters here, and cheap).
    fn enable_wal(&mut self) -> Result<(), StoreError> {
        // Switching a new file to WAL takes an exclusive lock for which SQLite does not call
        // the busy handler: two iocap processes creating the store at once would see
        // "database is locked" at once. Retry for as long as the busy timeout.
        let give_up = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            match self
                .conn
                .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if f.code == rusqlite::ErrorCode::DatabaseBusy
                        && std::time::Instant::now() < give_up =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => {
                    return Err(StoreError::Db(format!(
                        "{} is not a usable SQLite store: {e}",
                        self.path.display()
                    )))
                }
            }
        }
        self.conn
            .execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(err)
    }
}

fn to_value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl Sql for Sqlite {
    fn ready(&mut self) -> Result<(), StoreError> {
        self.enable_wal()
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.conn.execute_batch(sql).map_err(err)
    }

    fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        let mut st = self.conn.prepare_cached(sql).map_err(err)?;
        st.execute(rusqlite::params_from_iter(params))
            .map(|n| n as u64)
            .map_err(err)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        let mut st = self.conn.prepare_cached(sql).map_err(err)?;
        let n = st.column_count();
        let rows = st
            .query_map(rusqlite::params_from_iter(params), |r| {
                (0..n).map(|i| r.get_ref(i).map(to_value)).collect()
            })
            .map_err(err)?;
        rows.collect::<Result<Vec<Row>, _>>().map_err(err)
    }

    fn begin_write(&mut self) -> Result<(), StoreError> {
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(err)
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.conn.execute_batch("COMMIT").map_err(err)
    }

    fn rollback(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }
}
