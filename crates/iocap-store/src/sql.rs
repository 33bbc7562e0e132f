//! The few SQL operations the store needs, over either database. All of the store's logic is
//! written once against [`Sql`] with `?` placeholders; each backend adapts the placeholders, the
//! value types and its transaction syntax. That keeps SQLite and PostgreSQL on one schema and one
//! set of queries, so a history is the same whichever database holds it.

use crate::StoreError;

/// A value bound to, or read from, a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Real(f) => Some(*f as i64),
            _ => None,
        }
    }
    pub fn real(&self) -> Option<f64> {
        match self {
            Value::Real(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    pub fn blob(&self) -> Option<&[u8]> {
        match self {
            Value::Blob(b) => Some(b),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s)
    }
}
impl From<Option<String>> for Value {
    fn from(s: Option<String>) -> Self {
        s.map_or(Value::Null, Value::Text)
    }
}
impl From<Option<f64>> for Value {
    fn from(v: Option<f64>) -> Self {
        v.map_or(Value::Null, Value::Real)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Int(v as i64)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        if v.is_finite() {
            Value::Real(v)
        } else {
            Value::Null
        }
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}

pub type Row = Vec<Value>;

/// What differs between the databases' SQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// Fills the type placeholders of a schema statement.
    pub fn ddl(self, sql: &str) -> String {
        match self {
            Dialect::Sqlite => sql.replace("{blob}", "BLOB"),
            Dialect::Postgres => sql.replace("{blob}", "BYTEA"),
        }
    }
}

/// One connection to a store database.
pub trait Sql {
    fn dialect(&self) -> Dialect;
    /// Makes the connection ready for iocap's use once the database is known to be iocap's or
    /// empty (SQLite: WAL). Nothing before this may write.
    fn ready(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Runs statements without parameters (schema changes).
    fn batch(&mut self, sql: &str) -> Result<(), StoreError>;
    /// Runs one statement; returns the number of rows changed.
    fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError>;
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError>;
    /// Starts a transaction that takes the write lock at once, so two writers queue instead of
    /// failing half-way.
    fn begin_write(&mut self) -> Result<(), StoreError>;
    fn commit(&mut self) -> Result<(), StoreError>;
    fn rollback(&mut self);
}

/// Runs `f` in a write transaction: all of it is stored, or none of it.
pub fn in_transaction<T>(
    db: &mut dyn Sql,
    f: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    db.begin_write()?;
    match f(db) {
        Ok(v) => {
            db.commit()?;
            Ok(v)
        }
        Err(e) => {
            db.rollback();
            Err(e)
        }
    }
}
