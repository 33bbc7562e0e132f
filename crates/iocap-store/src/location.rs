//! Where results go: `--db`, else `IOCAP_DB`, else the user's data directory (XDG). A value that
//! starts with `postgres://` or `postgresql://` names a PostgreSQL database; anything else is
//! the path of a SQLite file.

use std::fmt;
use std::path::PathBuf;

use crate::StoreError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
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
        if t.starts_with("postgres://") || t.starts_with("postgresql://") {
            return Ok(Location::Postgres(t.to_string()));
        }
        if t.contains("://") {
            return Err(StoreError::Usage(format!(
                "'{t}' is not a store iocap knows: give a file path (SQLite) or a postgres:// URL"
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

/// `$XDG_DATA_HOME/iocap/results.db`, else `~/.local/share/iocap/results.db`.
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

impl fmt::Display for Location {
    /// Shows where results went, with any password in a URL hidden.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres(url) => {
                let shown = match (url.find("://"), url.rfind('@')) {
                    (Some(s), Some(at)) if at > s => {
                        let creds = &url[s + 3..at];
                        match creds.split_once(':') {
                            Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
                            None => url.clone(),
                        }
                    }
                    _ => url.clone(),
                };
                f.write_str(&shown)
            }
        }
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
}
