//! The shared store: the same schema in PostgreSQL, so a team's hosts keep one history.
//! `?` placeholders become `$n`; values are bound by a small adapter that lets a SQL NULL go to a
//! column of any type (the postgres crate types its nulls otherwise).

use postgres::types::{IsNull, ToSql, Type};
use postgres::{Client, NoTls};

use crate::conninfo;
use crate::sql::{Dialect, Row, Sql, Value};
use crate::StoreError;

pub struct Postgres {
    client: Client,
}

fn err(e: postgres::Error) -> StoreError {
    // the server's own message (with its detail) says far more than the client's summary
    let msg = match e.as_db_error() {
        Some(db) => db.to_string(),
        None => e.to_string(),
    };
    StoreError::Db(msg)
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                _ => i.to_sql(ty, out),
            },
            Value::Real(f) => f.to_sql(ty, out),
            Value::Text(s) => s.to_sql(ty, out),
            Value::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// `?` to `$1, $2, ...`; the store's SQL holds no `?` inside string literals.
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

impl Postgres {
    /// Connects with a connection string in any form libpq takes (see [`conninfo`]), the
    /// password coming from the string, `PGPASSWORD` or the password file.
    pub fn connect(conn: &str) -> Result<Self, StoreError> {
        let cfg = conninfo::config(conn, &|k| std::env::var(k).ok())?;
        let client = cfg.connect(NoTls).map_err(|e| {
            // the client's own text ("error connecting to server") hides the reason
            let mut msg = format!("cannot connect to PostgreSQL: {e}");
            let mut src = std::error::Error::source(&e);
            while let Some(s) = src {
                msg.push_str(&format!(": {s}"));
                src = s.source();
            }
            // no message may carry the password, whatever the crate puts in it
            StoreError::Db(conninfo::scrub(&msg, conn, Some(&cfg)))
        })?;
        Ok(Self { client })
    }
}

fn cell(row: &postgres::Row, i: usize) -> Result<Value, StoreError> {
    let ty = row.columns()[i].type_().clone();
    let v = match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i).map(|v| v.map(Value::Int)),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)
            .map(|v| v.map(|x| Value::Int(x.into()))),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)
            .map(|v| v.map(|x| Value::Int(x.into()))),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i).map(|v| v.map(Value::Real)),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)
            .map(|v| v.map(|x| Value::Real(x.into()))),
        Type::BYTEA => row
            .try_get::<_, Option<Vec<u8>>>(i)
            .map(|v| v.map(Value::Blob)),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)
            .map(|v| v.map(|x| Value::Int(x.into()))),
        _ => row
            .try_get::<_, Option<String>>(i)
            .map(|v| v.map(Value::Text)),
    };
    Ok(v.map_err(err)?.unwrap_or(Value::Null))
}

impl Sql for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.client.batch_execute(sql).map_err(err)
    }

    fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        let p: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        self.client.execute(numbered(sql).as_str(), &p).map_err(err)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        let p: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        let rows = self.client.query(numbered(sql).as_str(), &p).map_err(err)?;
        rows.iter()
            .map(|r| (0..r.len()).map(|i| cell(r, i)).collect())
            .collect()
    }

    fn begin_write(&mut self) -> Result<(), StoreError> {
        self.client.batch_execute("BEGIN").map_err(err)
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.client.batch_execute("COMMIT").map_err(err)
    }

    fn rollback(&mut self) {
        let _ = self.client.batch_execute("ROLLBACK");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_are_numbered() {
        assert_eq!(
            super::numbered("SELECT a FROM t WHERE b = ? AND c IN (?, ?)"),
            "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)"
        );
    }
}
