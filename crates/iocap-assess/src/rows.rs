//! The judging of each row kind, in the order of the rules documented in [`crate::verdict`].
//! Every sentence names the figure, what it means for the database, and what to look at.

use iocap_model::{CurvePoint, Verdict};

use crate::causes::{broken, buffered, cache_causes, ok, shortfall_causes, NO_EVIDENCE};
use crate::fmt;
use crate::guidelines::{DeviceClass, Limit};
use crate::preflight_input::{Measured, PreflightInput, RowKind, EXPECTATION_SHARE};
use crate::saturate::best_under;

/// A row being judged, before it becomes a [`CapacityRow`].
pub(crate) struct Judged {
    pub(crate) verdict: Verdict,
    pub(crate) value: Option<f64>,
    pub(crate) against: Option<String>,
    pub(crate) sentence: String,
    pub(crate) test_idx: Vec<u32>,
    pub(crate) causes: Vec<String>,
}

impl Judged {
    fn new(verdict: Verdict, value: Option<f64>, sentence: String, m: Option<Measured>) -> Self {
        Self {
            verdict,
            value,
            against: None,
            sentence,
            test_idx: m.map(|m| vec![m.test_idx]).unwrap_or_default(),
            causes: Vec::new(),
        }
    }
}

fn guideline_words(l: Limit, class: DeviceClass) -> String {
    format!(
        "p99 <= {} pass, <= {} warn ({})",
        fmt::limit_ms(l.pass),
        fmt::limit_ms(l.warn),
        class.name()
    )
}

fn curve_points(i: &PreflightInput) -> Vec<CurvePoint> {
    if let Some(sat) = i.data_read_curve {
        return sat.steps.iter().chain(&sat.throttled).cloned().collect();
    }
    i.data_read
        .map(|m| {
            vec![CurvePoint {
                test_idx: m.test_idx,
                qd: m.test.spec.qd,
                load_pct: None,
                iops: m.test.total.iops,
                mb_s: m.test.total.mb_s,
                lat_us_p50: m
                    .test
                    .read
                    .lat_us
                    .as_ref()
                    .or(m.test.total.lat_us.as_ref())
                    .map(|l| l.p50),
                lat_us_p99: m
                    .test
                    .read
                    .lat_us
                    .as_ref()
                    .or(m.test.total.lat_us.as_ref())
                    .map(|l| l.p99),
                per_second_iops: m.test.per_second.iter().map(|s| s.iops).collect(),
            }]
        })
        .unwrap_or_default()
}

/// The verdict after the latency checks: cache, buffered, expectation.
fn judge_figure(
    i: &PreflightInput,
    kind: RowKind,
    m: Option<Measured>,
    value: f64,
    what: String,
) -> Judged {
    let t = m.map(|m| m.test);
    let cache = t.map(|t| cache_causes(i, kind, t)).unwrap_or_default();
    if !cache.is_empty() {
        let mut j = Judged::new(
            Verdict::Warn,
            Some(value),
            format!("{what}, but a cache likely answered, not the storage; see the likely causes."),
            m,
        );
        j.causes = cache;
        return j;
    }
    if t.is_some_and(|t| buffered(i, t)) && kind.is_random() {
        return Judged::new(
            Verdict::Info,
            Some(value),
            format!(
                "{what} through the page cache, so part of it may be the cache; run with \
                O_DIRECT to judge the storage."
            ),
            m,
        );
    }
    match kind.expectation(i.expectations) {
        Some((exp, against)) => {
            let share = value / exp * 100.0;
            let mut j = if value < EXPECTATION_SHARE * exp {
                let mut j = Judged::new(
                    Verdict::Warn,
                    Some(value),
                    format!(
                        "{what}, only {} of the {against}; see the likely causes.",
                        fmt::pct(share)
                    ),
                    m,
                );
                j.causes = shortfall_causes(i, kind, t);
                if j.causes.is_empty() {
                    j.causes.push(NO_EVIDENCE.into());
                }
                j
            } else {
                Judged::new(
                    Verdict::Pass,
                    Some(value),
                    format!("{what}, {} of the {against}.", fmt::pct(share)),
                    m,
                )
            };
            j.against = Some(against);
            j
        }
        None if kind.is_random() => Judged::new(Verdict::Pass, Some(value), format!("{what}."), m),
        None => Judged::new(
            Verdict::Info,
            Some(value),
            format!("{what}; with no expectation given there is nothing to hold it against."),
            m,
        ),
    }
}

/// A FAIL for a test that erred or moved nothing: no figure of it can be trusted.
fn broken_test(name: &str, m: Measured) -> Option<Judged> {
    let why = broken(m.test)?;
    Some(Judged::new(
        Verdict::Fail,
        None,
        format!("The {name} test {why}: fix that before trusting any figure."),
        Some(m),
    ))
}

fn random_read(i: &PreflightInput) -> Option<Judged> {
    let kind = RowKind::RandomRead;
    let m = i.data_read;
    if i.data_read_curve.is_none() {
        if let Some(j) = broken_test("random read", m?) {
            return Some(j);
        }
    }
    let points = curve_points(i);
    let limit = kind.limit(i)?;
    let class = i.classes.data;
    if !points.iter().any(|p| ok(p.iops)) {
        return Some(Judged::new(
            Verdict::Fail,
            None,
            "No random read step completed any I/O: \
            check the test's errors before trusting any figure."
                .into(),
            m,
        ));
    }
    let pass_point = best_under(&points, limit.pass_us());
    let warn_point = best_under(&points, limit.warn_us());
    let mut j = match (pass_point, warn_point) {
        (Some(p), _) => {
            let what = format!(
                "{} reach {} IOPS with p99 at {}, within the {} {} guideline",
                kind.subject(),
                fmt::count(p.iops),
                fmt::ms(p.lat_us_p99.unwrap_or(f64::NAN)),
                fmt::limit_ms(limit.pass),
                class.name()
            );
            let mut j = judge_figure(i, kind, m, p.iops, what);
            j.test_idx = vec![p.test_idx];
            if j.against.is_none() {
                j.against = Some(guideline_words(limit, class));
            }
            return Some(j);
        }
        (None, Some(p)) => {
            let mut j = Judged::new(
                Verdict::Warn,
                None,
                format!(
                    "No load kept random-read p99 at or under {}, the {} guideline; the most was \
                    {} IOPS at {}: look for queuing in the path \
                    (HBA queue depth, multipath) or a busy array.",
                    fmt::limit_ms(limit.pass),
                    class.name(),
                    fmt::count(p.iops),
                    fmt::ms(p.lat_us_p99.unwrap_or(f64::NAN))
                ),
                m,
            );
            j.test_idx = vec![p.test_idx];
            j
        }
        (None, None) => {
            let lowest = points
                .iter()
                .filter_map(|p| p.lat_us_p99)
                .filter(|v| v.is_finite())
                .fold(f64::INFINITY, f64::min);
            let words = if lowest.is_finite() {
                format!(
                    "Even the lightest load gave random reads a p99 of {}",
                    fmt::ms(lowest)
                )
            } else {
                "No random read latency was recorded".to_string()
            };
            Judged::new(
                Verdict::Fail,
                None,
                format!(
                    "{words}, above the {} limit for {}: every page read from storage waits this \
                    long; check the device's health, the multipath policy \
                    and what else shares the volume.",
                    fmt::limit_ms(limit.warn),
                    class.name()
                ),
                m,
            )
        }
    };
    j.against = Some(guideline_words(limit, class));
    Some(j)
}

fn random_write(i: &PreflightInput, kind: RowKind) -> Option<Judged> {
    let m = kind.test(i)?;
    let t = m.test;
    let subject = kind.subject();
    if let Some(j) = broken_test(&subject.to_lowercase(), m) {
        return Some(j);
    }
    let limit = kind.limit(i)?;
    let class = kind.class(&i.classes);
    let ops = if kind == RowKind::RandomWrite && t.write.lat_us.is_some() {
        &t.write
    } else {
        &t.total
    };
    let Some(p99) = ops.lat_us.as_ref().map(|l| l.p99).filter(|v| v.is_finite()) else {
        return Some(Judged::new(
            Verdict::Info,
            Some(t.total.iops),
            format!(
                "{subject} reach {} IOPS, but no latency was recorded to judge them by.",
                fmt::count(t.total.iops)
            ),
            Some(m),
        ));
    };
    let effect = if kind == RowKind::Temp {
        "sorts, hashes and temporary tables that spill will wait on it"
    } else {
        "checkpoints and page flushes will fall behind"
    };
    let mut j =
        if p99 > limit.warn_us() {
            Judged::new(
                Verdict::Fail,
                Some(t.total.iops),
                format!(
            "{subject} take {} at p99, above the {} limit for {}: {effect}; check the write \
                cache policy (write-back or write-through) and the RAID level.",
            fmt::ms(p99), fmt::limit_ms(limit.warn), class.name()
        ),
                Some(m),
            )
        } else {
            let mut what = format!(
                "{subject} reach {} IOPS with p99 at {}",
                fmt::count(t.total.iops),
                fmt::ms(p99)
            );
            if p99 <= limit.pass_us() {
                what += &format!(
                    ", within the {} {} guideline",
                    fmt::limit_ms(limit.pass),
                    class.name()
                );
            }
            let mut j = judge_figure(i, kind, Some(m), t.total.iops, what.clone());
            if p99 > limit.pass_us() && matches!(j.verdict, Verdict::Pass | Verdict::Info) {
                j = Judged::new(
                    Verdict::Warn,
                    Some(t.total.iops),
                    format!(
                "{what}, above the {} guideline for {}: {effect} under load; check the write \
                    cache policy.",
                fmt::limit_ms(limit.pass), class.name()
            ),
                    Some(m),
                );
            }
            j
        };
    if j.against.is_none() {
        j.against = Some(guideline_words(limit, class));
    }
    Some(j)
}

fn log_latency(i: &PreflightInput, kind: RowKind) -> Option<Judged> {
    let m = i.log_write_qd1?;
    let t = m.test;
    if let Some(j) = broken_test("log write", m) {
        return Some(j);
    }
    let limit = kind.limit(i)?;
    let class = i.classes.log;
    let ops = if t.write.lat_us.is_some() {
        &t.write
    } else {
        &t.total
    };
    let (name, v) = match (kind, ops.lat_us.as_ref()) {
        (RowKind::LogP50, Some(l)) => ("p50", l.p50),
        (_, Some(l)) => ("p99", l.p99),
        (_, None) => ("p99", f64::NAN),
    };
    let against = Some(format!(
        "{name} <= {} pass, <= {} warn ({})",
        fmt::limit_ms(limit.pass),
        fmt::limit_ms(limit.warn),
        class.name()
    ));
    let j = |verdict, sentence| {
        let mut j = Judged::new(
            verdict,
            Some(v).filter(|v| v.is_finite()),
            sentence,
            Some(m),
        );
        j.against = against.clone();
        j
    };
    if !v.is_finite() {
        return Some(j(
            Verdict::Info,
            "No log write latency was recorded.".into(),
        ));
    }
    let took = if kind == RowKind::LogP50 {
        format!("Half of the log writes finish within {}", fmt::ms(v))
    } else {
        format!("Log writes take {} at p99", fmt::ms(v))
    };
    if !t.spec.write_through && t.spec.fsync_every == 0 {
        return Some(j(
            Verdict::Info,
            format!(
                "{took}, but they ran without O_DSYNC or fsync, \
            so a commit would wait longer; test with --write-through."
            ),
        ));
    }
    let who = if kind == RowKind::LogP50 {
        "a typical commit"
    } else {
        "some commits"
    };
    Some(if v <= limit.pass_us() {
        j(
            Verdict::Pass,
            format!("{took}: commits will not wait on the log."),
        )
    } else if v <= limit.warn_us() {
        j(
            Verdict::Warn,
            format!(
                "{took}, above the {} guideline for {}: {who} wait this long; check the write \
                cache mode and whether the log shares a volume with data.",
                fmt::limit_ms(limit.pass),
                class.name()
            ),
        )
    } else {
        j(
            Verdict::Fail,
            format!(
                "{took}, above the {} limit for {}: {who} wait this long; check the write cache \
                mode and whether the log shares a volume with data.",
                fmt::limit_ms(limit.warn),
                class.name()
            ),
        )
    })
}

/// How long a terabyte takes at `mb_s`, in words.
fn per_terabyte(mb_s: f64) -> String {
    let s = 1e6 / mb_s;
    if !s.is_finite() {
        "?".into()
    } else if s < 120.0 {
        format!("{} seconds", fmt::count(s))
    } else if s < 7200.0 {
        format!("{} minutes", fmt::count(s / 60.0))
    } else {
        format!("{:.1} hours", s / 3600.0)
    }
}

fn bandwidth(i: &PreflightInput, kind: RowKind) -> Option<Judged> {
    let m = kind.test(i)?;
    let t = m.test;
    let subject = kind.subject();
    if let Some(j) = broken_test(&subject.to_lowercase(), m) {
        return Some(j);
    }
    let v = t.total.mb_s;
    let what = match kind {
        RowKind::Scan => format!(
            "Scans read {} MB/s, a terabyte in about {}",
            fmt::count(v),
            per_terabyte(v)
        ),
        RowKind::Backup => format!(
            "Backups move {} MB/s, a terabyte in about {}",
            fmt::count(v),
            per_terabyte(v)
        ),
        _ => format!(
            "Log writes reach {} MB/s, the ceiling on how fast a burst of transactions can log",
            fmt::count(v)
        ),
    };
    Some(judge_figure(i, kind, Some(m), v, what))
}

pub(crate) fn judge(i: &PreflightInput, kind: RowKind) -> Option<Judged> {
    match kind {
        RowKind::RandomRead => random_read(i),
        RowKind::RandomWrite | RowKind::Temp => random_write(i, kind),
        RowKind::LogP50 | RowKind::LogP99 => log_latency(i, kind),
        RowKind::LogMbS | RowKind::Scan | RowKind::Backup => bandwidth(i, kind),
    }
}
