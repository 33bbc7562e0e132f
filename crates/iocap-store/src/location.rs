//! Where results go: `--db`, else `IOCAP_DB`, else the user's data directory (XDG). A
//! PostgreSQL connection string in any form libpq takes (a `postgres://` or `postgresql://` URL,
//! the scheme in any case, or key=value conninfo such as `host=db user=iocap dbname=results`)
//! names a PostgreSQL database; anything else is the path of a SQLite file. A password in the
//! string is never shown: `Display` and `Debug` mask it.

use std::fmt;
use std::path::PathBuf;

use crate::sql::Sql;
use crate::{conninfo, pg, sqlite, StoreError};

#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    /// The connection string as given (a URL's scheme in lower case); it may hold a password,
    /// so show the location through `Display`, which masks it.
    Postgres(String),
}

impl Location {
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        let t = s.trim();
        if t.is_empty() {
            return Err(StoreError::Usage(
                "the store location is empty: give a file path or a postgres:// URL".into(),
            ));
        }
        if let Some(url) = conninfo::url(t) {
            conninfo::parse(&url)?;
            return Ok(Location::Postgres(url));
        }
        if conninfo::is_conninfo(t) {
            conninfo::parse(t)?;
            return Ok(Location::Postgres(t.to_string()));
        }
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("postgres:") || lower.starts_with("postgresql:") {
            // a URL with a slash missing: never a file name, and never echoed (a password?)
            return Err(StoreError::Usage(
                "the store location starts like a PostgreSQL URL but is none: write \
                 postgres://USER@HOST/DB (two slashes after the colon)"
                    .into(),
            ));
        }
        if let Some(scheme) = t.find("://").map(|i| &t[..i]) {
            // the rest may hold a password: name the scheme only
            return Err(StoreError::Usage(format!(
                "'{scheme}://...' is not a store iocap knows: give a file path (SQLite), a \
                 postgres:// URL or PostgreSQL key=value conninfo"
            )));
        }
        Ok(Location::Sqlite(PathBuf::from(t)))
    }

    /// The location in force: the flag, then `IOCAP_DB`, then the default file.
    pub fn resolve(flag: Option<&str>) -> Result<Self, StoreError> {
        if let Some(f) = flag {
            return Self::parse(f);
        }
        match std::env::var("IOCAP_DB") {
            Ok(v) if !v.trim().is_empty() => Self::parse(&v),
            _ => Ok(Location::Sqlite(default_path()?)),
        }
    }
}

/// `%LOCALAPPDATA%\iocap\results.db` on Windows.
#[cfg(windows)]
pub fn default_path() -> Result<PathBuf, StoreError> {
    match std::env::var_os("LOCALAPPDATA").filter(|v| !v.is_empty()) {
        Some(d) => Ok(PathBuf::from(d).join("iocap").join("results.db")),
        None => Err(StoreError::Usage(
            "LOCALAPPDATA is not set: give the store with --db or IOCAP_DB".into(),
        )),
    }
}

/// `$XDG_DATA_HOME/iocap/results.db`, else `~/.local/share/iocap/results.db`.
#[cfg(not(windows))]
pub fn default_path() -> Result<PathBuf, StoreError> {
    let base =
        match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
                Some(h) => PathBuf::from(h).join(".local/share"),
                None => return Err(StoreError::Usage(
                    "neither XDG_DATA_HOME nor HOME is set: give the store with --db or IOCAP_DB"
                        .into(),
                )),
            },
        };
    Ok(base.join("iocap").join("results.db"))
}

/// Whether a store may be created where there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    CreateIfMissing,
    Existing,
}

/// A store reached: the database, and whether this process may only read it.
pub(crate) struct Connection {
    pub db: Box<dyn Sql>,
    pub read_only: bool,
}

impl Location {
    /// Connects to the store here, each kind of store its own way: an SQLite file is created
    /// when `reach` allows, else `Ok(None)` says there is none; a file this process cannot write
    /// (a read-only mount, another user's) is opened read-only. A new kind of store is a variant
    /// and its arm here, in `parse` and in the `Display` (which hides secrets).
    pub(crate) fn connect(&self, reach: Reach) -> Result<Option<Connection>, StoreError> {
        Ok(Some(match self {
            Location::Sqlite(p) if reach == Reach::Existing => {
                sqlite::check_kind(p)?;
                if !p.is_file() {
                    return Ok(None);
                }
                let writable = std::fs::OpenOptions::new().write(true).open(p).is_ok();
                Connection {
                    db: if writable {
                        Box::new(sqlite::Sqlite::open(p)?)
                    } else {
                        Box::new(sqlite::Sqlite::open_read_only(p)?)
                    },
                    read_only: !writable,
                }
            }
            Location::Sqlite(p) => Connection {
                db: Box::new(sqlite::Sqlite::open(p)?),
                read_only: false,
            },
            Location::Postgres(url) => Connection {
                db: Box::new(pg::Postgres::connect(url)?),
                read_only: false,
            },
        }))
    }
}

impl fmt::Display for Location {
    /// Shows where results went, with any password hidden.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres(conn) => f.write_str(&conninfo::masked(conn)),
        }
    }
}

impl fmt::Debug for Location {
    /// As `Display`: a password never reaches a log or a panic message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Location({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_told_apart() {
        assert_eq!(
            Location::parse("runs.db").unwrap(),
            Location::Sqlite("runs.db".into())
        );
        assert!(matches!(
            Location::parse("postgresql://u@h/db").unwrap(),
            Location::Postgres(_)
        ));
        assert!(Location::parse("mysql://x").is_err());
        assert!(Location::parse(" ").is_err());
    }

    #[test]
    fn passwords_are_not_shown() {
        let l = Location::parse("postgres://iocap:s3cret@db.example:5432/results").unwrap();
        assert_eq!(
            l.to_string(),
            "postgres://iocap:***@db.example:5432/results"
        );
        let l = Location::parse("postgres://iocap@db/results").unwrap();
        assert_eq!(l.to_string(), "postgres://iocap@db/results");
    }

    #[test]
    fn every_postgres_form_is_a_postgres_location_with_its_password_hidden() {
        for given in [
            "postgres://iocap:S3cret@127.0.0.1:5432/db",
            "POSTGRES://iocap:S3cret@127.0.0.1:5432/db",
            "postgres://iocap@127.0.0.1:5432/db?password=S3cret",
            "host=127.0.0.1 user=iocap password=S3cret dbname=db",
            "host=127.0.0.1 user=iocap password='S3cret and more' dbname=db",
        ] {
            let l = Location::parse(given).unwrap();
            assert!(matches!(l, Location::Postgres(_)), "{given}");
            for shown in [l.to_string(), format!("{l:?}")] {
                assert!(!shown.contains("S3cret"), "{given}: {shown}");
                assert!(shown.contains("***"), "{given}: {shown}");
                assert!(shown.contains("127.0.0.1"), "{given}: {shown}");
            }
        }
        let l = Location::parse("POSTGRES://u@h/db").unwrap();
        assert_eq!(l, Location::Postgres("postgres://u@h/db".into()));
    }

    #[test]
    fn a_conninfo_string_is_never_a_file() {
        // readable or not, it is no SQLite path, and errors show no password
        let e = Location::parse("host=h user=u password='S3cret").unwrap_err();
        assert!(!e.to_string().contains("S3cret"), "{e}");
        let e = Location::parse("mysql://u:S3cret@h/db").unwrap_err();
        assert!(!e.to_string().contains("S3cret"), "{e}");
        assert!(e.to_string().contains("mysql://"), "{e}");
        let e = Location::parse("postgres:/iocap:S3cret@h/db").unwrap_err();
        assert!(e.to_string().contains("two slashes"), "{e}");
        assert!(!e.to_string().contains("S3cret"), "{e}");
        // a file whose name holds '=' is given with a directory
        assert_eq!(
            Location::parse("./a=b.db").unwrap(),
            Location::Sqlite("./a=b.db".into())
        );
    }
}
