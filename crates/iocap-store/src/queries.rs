//! The store's queries, written once for both databases (see [`crate::sql`]).

use base64::Engine as _;
pub use iocap_model::{Baseline, RunSummary};
use iocap_model::{OpStats, RunResult, VerifyMode};
use serde::Serialize;

use crate::sql::{Row, Sql, Value};
use crate::when::now_rfc3339;
use crate::StoreError;

/// What `iocap history` filters on; every field narrows the list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Exact host name.
    pub host: Option<String>,
    /// Part of the label, any case.
    pub label: Option<String>,
    /// One of the run's tags, exactly.
    pub tag: Option<String>,
    /// A target path the run tested, exactly as it was given to the run.
    pub target: Option<String>,
    /// Runs started at or after this RFC 3339 time (or date).
    pub since: Option<String>,
    /// Runs started before this RFC 3339 time (or date).
    pub until: Option<String>,
    /// At most this many runs (newest first); 0 for all.
    pub limit: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PruneOutcome {
    /// Runs deleted (or, in a dry run, that would be).
    pub deleted: Vec<String>,
    /// Old runs kept because a baseline points at them.
    pub kept_baselines: Vec<String>,
}

fn hist_bytes(o: &OpStats) -> Option<Vec<u8>> {
    o.lat_hist_ns
        .as_deref()
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
}

fn p(o: &OpStats, f: impl Fn(&iocap_model::LatencyUs) -> f64) -> Value {
    o.lat_us.as_ref().map(f).into()
}

pub fn insert_run(db: &mut dyn Sql, run: &RunResult) -> Result<(), StoreError> {
    if !db
        .query(
            "SELECT 1 FROM runs WHERE run_id = ?",
            &[run.run_id.as_str().into()],
        )?
        .is_empty()
    {
        return Err(StoreError::Duplicate(run.run_id.clone()));
    }
    let json = serde_json::to_string(run).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let first = run.tests.first();
    let mut targets: Vec<&str> = first
        .map(|t| t.targets.iter().map(|x| x.path.as_str()).collect())
        .unwrap_or_default();
    // a verify run has no tests: its one target and its verdict stand in the history
    let verify_name = run.verify.as_ref().map(|v| {
        targets.push(v.target.as_str());
        format!(
            "verify{} {}",
            if v.mode == VerifyMode::Check {
                " --check"
            } else {
                ""
            },
            v.verdict_word()
        )
    });
    let h = &run.host;
    db.exec(
        "INSERT INTO runs (run_id, started_at, saved_at, iocap_version, hostname, kernel, \
         cpu_model, cpus, memory_bytes, label, note, tags, test_count, workload, targets, iops, \
         mb_s, lat_us_p99, result_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        &[
            run.run_id.as_str().into(),
            run.started_at.as_str().into(),
            now_rfc3339().into(),
            run.iocap_version.as_str().into(),
            h.hostname.as_str().into(),
            h.kernel.as_str().into(),
            h.cpu_model.as_str().into(),
            h.cpus.into(),
            h.memory_bytes.into(),
            run.label.clone().into(),
            run.note.clone().into(),
            run.tags.join("\n").into(),
            run.tests.len().into(),
            first
                .map(|t| t.name.clone())
                .or(verify_name)
                .unwrap_or_default()
                .into(),
            targets.join("\n").into(),
            first.map_or(0.0, |t| t.total.iops).into(),
            first.map_or(0.0, |t| t.total.mb_s).into(),
            first.map_or(Value::Null, |t| p(&t.total, |l| l.p99)),
            json.into(),
        ],
    )?;
    // a multi-host run: every rank's host, from the first test that ran on several
    let scopes = run.tests.iter().find_map(|t| t.ranks.as_ref());
    for r in scopes.map(|s| s.ranks.as_slice()).unwrap_or_default() {
        db.exec(
            "INSERT INTO run_hosts (run_id, rank, hostname) VALUES (?, ?, ?)",
            &[
                run.run_id.as_str().into(),
                r.rank.into(),
                r.host.as_str().into(),
            ],
        )?;
    }
    let mut tags = run.tags.clone();
    tags.sort();
    tags.dedup();
    for tag in &tags {
        db.exec(
            "INSERT INTO run_tags (run_id, tag) VALUES (?, ?)",
            &[run.run_id.as_str().into(), tag.as_str().into()],
        )?;
    }
    for (ti, t) in run.tests.iter().enumerate() {
        let id = || Value::from(run.run_id.as_str());
        let s = &t.spec;
        db.exec(
            "INSERT INTO tests (run_id, test_idx, name, engine, rw, write_pct, bs_bytes, qd, \
             threads, direct, duration_s, ios, iops, mb_s, lat_us_p50, lat_us_p99, lat_us_max, \
             cpu_us_per_io, interrupted, error, spec_json) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                id(),
                ti.into(),
                t.name.as_str().into(),
                t.engine.name().into(),
                s.rw.name().into(),
                u32::from(s.write_pct).into(),
                s.bs_bytes.into(),
                s.qd.into(),
                s.threads.into(),
                t.direct.into(),
                t.duration_s.into(),
                t.total.ios.into(),
                t.total.iops.into(),
                t.total.mb_s.into(),
                p(&t.total, |l| l.p50),
                p(&t.total, |l| l.p99),
                p(&t.total, |l| l.max),
                t.cpu.us_per_io.into(),
                t.interrupted.into(),
                t.error.as_ref().map(|e| e.to_string()).into(),
                serde_json::to_string(s)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?
                    .into(),
            ],
        )?;
        for (xi, x) in t.targets.iter().enumerate() {
            db.exec(
                "INSERT INTO test_targets (run_id, test_idx, target_idx, path, kind, device, \
                 fs_type, size_bytes, ios, iops, mb_s, lat_us_p99) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                &[
                    id(),
                    ti.into(),
                    xi.into(),
                    x.path.as_str().into(),
                    x.kind.name().into(),
                    x.device.clone().into(),
                    x.fs_type.clone().into(),
                    x.size_bytes.into(),
                    x.total.ios.into(),
                    x.total.iops.into(),
                    x.total.mb_s.into(),
                    p(&x.total, |l| l.p99),
                ],
            )?;
        }
        let mut scopes: Vec<(String, &OpStats)> = vec![
            ("total".into(), &t.total),
            ("read".into(), &t.read),
            ("write".into(), &t.write),
            ("sync".into(), &t.sync),
        ];
        for (xi, x) in t.targets.iter().enumerate() {
            scopes.push((format!("target:{xi}"), &x.total));
        }
        for (scope, o) in scopes {
            if let Some(bytes) = hist_bytes(o) {
                db.exec(
                    "INSERT INTO histograms (run_id, test_idx, scope, hdr_v2) VALUES (?, ?, ?, ?)",
                    &[id(), ti.into(), scope.into(), bytes.into()],
                )?;
            }
        }
        for (seq, w) in t.warnings.iter().enumerate() {
            db.exec(
                "INSERT INTO warnings (run_id, test_idx, seq, message) VALUES (?, ?, ?, ?)",
                &[id(), ti.into(), seq.into(), w.as_str().into()],
            )?;
        }
        let mut last_t = f64::NEG_INFINITY;
        for sample in &t.per_second {
            // the key is the time; a repeated instant would only be a duplicate sample
            if sample.t_s <= last_t {
                continue;
            }
            last_t = sample.t_s;
            db.exec(
                "INSERT INTO series (run_id, test_idx, t_s, iops, mb_s, lat_us_mean, lat_us_p99) \
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
                &[
                    id(),
                    ti.into(),
                    sample.t_s.into(),
                    sample.iops.into(),
                    sample.mb_s.into(),
                    sample.lat_us_mean.into(),
                    sample.lat_us_p99.into(),
                ],
            )?;
        }
    }
    Ok(())
}

pub fn replace_run(db: &mut dyn Sql, run: &RunResult) -> Result<(), StoreError> {
    let id = run.run_id.as_str();
    let kept = db.query(
        "SELECT hostname, target, set_at FROM baselines WHERE run_id = ?",
        &[id.into()],
    )?;
    db.exec("DELETE FROM runs WHERE run_id = ?", &[id.into()])?;
    insert_run(db, run)?;
    for b in kept {
        db.exec(
            "INSERT INTO baselines (hostname, target, run_id, set_at) VALUES (?, ?, ?, ?)",
            &[b[0].clone(), b[1].clone(), id.into(), b[2].clone()],
        )?;
    }
    Ok(())
}

fn text(v: &Value) -> String {
    v.text().unwrap_or_default().to_string()
}

fn lines(v: &Value) -> Vec<String> {
    v.text()
        .unwrap_or_default()
        .split('\n')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// A date alone (`2026-11-01`) as the end of a range covers that whole day.
fn until_bound(u: &str) -> String {
    if u.len() == 10 {
        format!("{u}T23:59:59.999Z")
    } else {
        u.to_string()
    }
}

fn like_pattern(s: &str) -> String {
    let escaped = s
        .to_lowercase()
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

pub fn list(db: &mut dyn Sql, f: &Filter) -> Result<Vec<RunSummary>, StoreError> {
    let mut sql = String::from(
        "SELECT run_id, started_at, hostname, label, tags, test_count, workload, targets, iops, \
         mb_s, lat_us_p99, (SELECT COUNT(*) FROM run_hosts h WHERE h.run_id = r.run_id) \
         FROM runs r WHERE 1 = 1",
    );
    let mut params: Vec<Value> = Vec::new();
    if let Some(h) = &f.host {
        // rank 0's host, or any host of a multi-host run
        sql.push_str(
            " AND (hostname = ? OR r.run_id IN (SELECT h.run_id FROM run_hosts h \
             WHERE h.hostname = ?))",
        );
        params.push(h.as_str().into());
        params.push(h.as_str().into());
    }
    if let Some(l) = &f.label {
        sql.push_str(" AND LOWER(label) LIKE ? ESCAPE '\\'");
        params.push(like_pattern(l).into());
    }
    if let Some(t) = &f.tag {
        // IN, not a correlated EXISTS: SQLite would otherwise walk the tag's (or the path's)
        // index once per run, quadratic in the size of the store
        sql.push_str(" AND r.run_id IN (SELECT g.run_id FROM run_tags g WHERE g.tag = ?)");
        params.push(t.as_str().into());
    }
    if let Some(t) = &f.target {
        sql.push_str(" AND r.run_id IN (SELECT x.run_id FROM test_targets x WHERE x.path = ?)");
        params.push(t.as_str().into());
    }
    if let Some(s) = &f.since {
        sql.push_str(" AND started_at >= ?");
        params.push(s.as_str().into());
    }
    if let Some(u) = &f.until {
        sql.push_str(" AND started_at <= ?");
        params.push(until_bound(u).into());
    }
    sql.push_str(" ORDER BY started_at DESC, run_id DESC");
    if f.limit > 0 {
        sql.push_str(&format!(" LIMIT {}", f.limit));
    }
    let rows = db.query(&sql, &params)?;
    Ok(rows
        .iter()
        .map(|r| RunSummary {
            run_id: text(&r[0]),
            started_at: text(&r[1]),
            hostname: text(&r[2]),
            label: r[3].text().map(str::to_string),
            tags: lines(&r[4]),
            tests: r[5].int().unwrap_or(0) as u32,
            workload: text(&r[6]),
            targets: lines(&r[7]),
            iops: r[8].real().unwrap_or(0.0),
            mb_s: r[9].real().unwrap_or(0.0),
            lat_us_p99: r[10].real(),
            ranks: r[11].int().unwrap_or(0) as u32,
        })
        .collect())
}

/// The runs of `host` that tested a target at one of `paths` or on one of `devices` and whose
/// result holds a burst bucket (`saturation.bucket`; the JSON's text is a cheap first sieve,
/// the loaded run decides), newest first, at most `limit`.
pub fn bucket_runs(
    db: &mut dyn Sql,
    host: &str,
    paths: &[String],
    devices: &[String],
    limit: u32,
) -> Result<Vec<String>, StoreError> {
    if paths.is_empty() && devices.is_empty() {
        return Ok(vec![]);
    }
    let mut params: Vec<Value> = vec![host.into()];
    let mut on = Vec::new();
    for (column, values) in [("path", paths), ("device", devices)] {
        for v in values {
            on.push(format!("x.{column} = ?"));
            params.push(v.as_str().into());
        }
    }
    params.push("%\"bucket\":{%".into());
    // the targets first: the JSON is read only for the runs on them
    let sql = format!(
        "SELECT run_id FROM runs r WHERE hostname = ? \
         AND r.run_id IN (SELECT x.run_id FROM test_targets x WHERE {}) \
         AND result_json LIKE ? ORDER BY started_at DESC, run_id DESC LIMIT {}",
        on.join(" OR "),
        limit.max(1)
    );
    Ok(db
        .query(&sql, &params)?
        .iter()
        .map(|r| text(&r[0]))
        .collect())
}

pub fn resolve(db: &mut dyn Sql, what: &str) -> Result<String, StoreError> {
    let w = what.trim();
    if w.is_empty() {
        return Err(StoreError::Usage("a run id is empty".into()));
    }
    let rows: Vec<Row> = if w == "last" || w == "latest" {
        db.query(
            "SELECT run_id FROM runs ORDER BY started_at DESC, run_id DESC LIMIT 1",
            &[],
        )?
    } else {
        let exact = db.query("SELECT run_id FROM runs WHERE run_id = ?", &[w.into()])?;
        if exact.is_empty() {
            // a prefix: compare the leading characters, so no LIKE wildcards apply
            db.query(
                "SELECT run_id FROM runs WHERE SUBSTR(run_id, 1, ?) = ? ORDER BY run_id LIMIT 6",
                &[w.chars().count().into(), w.into()],
            )?
        } else {
            exact
        }
    };
    match rows.len() {
        0 => Err(StoreError::NotFound(w.to_string())),
        1 => Ok(text(&rows[0][0])),
        _ => {
            let ids: Vec<String> = rows.iter().take(5).map(|r| text(&r[0])).collect();
            let more = if rows.len() > 5 { ", ..." } else { "" };
            Err(StoreError::Ambiguous(w.to_string(), ids.join(", ") + more))
        }
    }
}

pub fn load(db: &mut dyn Sql, id: &str) -> Result<RunResult, StoreError> {
    let rows = db.query(
        "SELECT result_json FROM runs WHERE run_id = ?",
        &[id.into()],
    )?;
    let json = rows
        .first()
        .and_then(|r| r[0].text().map(str::to_string))
        .ok_or_else(|| StoreError::NotFound(id.to_string()))?;
    serde_json::from_str(&json).map_err(|e| StoreError::Corrupt(format!("run {id}: {e}")))
}

pub fn histograms(db: &mut dyn Sql, id: &str) -> Result<Vec<(u32, String, Vec<u8>)>, StoreError> {
    let rows = db.query(
        "SELECT test_idx, scope, hdr_v2 FROM histograms WHERE run_id = ? ORDER BY test_idx, scope",
        &[id.into()],
    )?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                r[0].int().unwrap_or(0) as u32,
                text(&r[1]),
                r[2].blob().unwrap_or_default().to_vec(),
            )
        })
        .collect())
}

pub fn delete(db: &mut dyn Sql, ids: &[String]) -> Result<Vec<String>, StoreError> {
    let mut done = Vec::new();
    for id in ids {
        db.exec(
            "DELETE FROM baselines WHERE run_id = ?",
            &[id.as_str().into()],
        )?;
        if db.exec("DELETE FROM runs WHERE run_id = ?", &[id.as_str().into()])? > 0 {
            done.push(id.clone());
        }
    }
    Ok(done)
}

pub fn prune(db: &mut dyn Sql, cutoff: &str, dry_run: bool) -> Result<PruneOutcome, StoreError> {
    let old = db.query(
        "SELECT run_id, EXISTS (SELECT 1 FROM baselines b WHERE b.run_id = r.run_id) \
         FROM runs r WHERE started_at < ? ORDER BY started_at",
        &[cutoff.into()],
    )?;
    let mut out = PruneOutcome {
        deleted: vec![],
        kept_baselines: vec![],
    };
    for r in &old {
        let is_baseline = matches!(r[1], Value::Int(1));
        if is_baseline {
            out.kept_baselines.push(text(&r[0]));
        } else {
            out.deleted.push(text(&r[0]));
        }
    }
    if !dry_run {
        for id in &out.deleted {
            db.exec("DELETE FROM runs WHERE run_id = ?", &[id.as_str().into()])?;
        }
    }
    Ok(out)
}

pub fn baseline_set(
    db: &mut dyn Sql,
    run_id: &str,
    targets: &[String],
    now: &str,
) -> Result<Vec<Baseline>, StoreError> {
    let rows = db.query(
        "SELECT hostname FROM runs WHERE run_id = ?",
        &[run_id.into()],
    )?;
    let host = rows
        .first()
        .map(|r| text(&r[0]))
        .ok_or_else(|| StoreError::NotFound(run_id.to_string()))?;
    let mut out = Vec::new();
    for t in targets {
        db.exec(
            "INSERT INTO baselines (hostname, target, run_id, set_at) VALUES (?, ?, ?, ?) \
             ON CONFLICT (hostname, target) DO UPDATE SET run_id = excluded.run_id, \
             set_at = excluded.set_at",
            &[
                host.as_str().into(),
                t.as_str().into(),
                run_id.into(),
                now.into(),
            ],
        )?;
        out.push(Baseline {
            hostname: host.clone(),
            target: t.clone(),
            run_id: run_id.to_string(),
            set_at: now.to_string(),
        });
    }
    Ok(out)
}

pub fn baselines(db: &mut dyn Sql, host: Option<&str>) -> Result<Vec<Baseline>, StoreError> {
    let rows = match host {
        Some(h) => db.query(
            "SELECT hostname, target, run_id, set_at FROM baselines WHERE hostname = ? \
             ORDER BY hostname, target",
            &[h.into()],
        )?,
        None => db.query(
            "SELECT hostname, target, run_id, set_at FROM baselines ORDER BY hostname, target",
            &[],
        )?,
    };
    Ok(rows
        .iter()
        .map(|r| Baseline {
            hostname: text(&r[0]),
            target: text(&r[1]),
            run_id: text(&r[2]),
            set_at: text(&r[3]),
        })
        .collect())
}

pub fn baseline_clear(
    db: &mut dyn Sql,
    host: &str,
    target: Option<&str>,
) -> Result<u64, StoreError> {
    match target {
        Some(t) => db.exec(
            "DELETE FROM baselines WHERE hostname = ? AND target = ?",
            &[host.into(), t.into()],
        ),
        None => db.exec("DELETE FROM baselines WHERE hostname = ?", &[host.into()]),
    }
}
