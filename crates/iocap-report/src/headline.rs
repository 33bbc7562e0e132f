//! Each saved run's key figure in one short line, for `iocap history`: a preflight is headlined
//! by its capacity, a saturate run by its maximum and knee, a scale-up by the aggregate of all
//! its volumes, and so on; a plain run by its first test's IOPS. The kind is the run's own
//! ([`RunResult::kind`]: a preflight that sized its files by a cache scan is a preflight).

use iocap_model::request::Op;
use iocap_model::{format_bytes, human_bytes, AnswerKind, RunKind, RunResult};

use crate::fmt;

/// What kind of run, and its key figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Headline {
    /// `preflight`, `saturate`, `scaleup`, `cost`, `fsync`, `verify`, `cachescan`, or the
    /// command of a plain run (`run`, `sqlio`, `suite`; `run` when not recorded).
    pub kind: String,
    /// The key figure, e.g. `41,000 8K random read IOPS at p99 <= 2 ms`.
    pub text: String,
}

impl std::fmt::Display for Headline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.text)
    }
}

fn h(kind: &str, text: String) -> Option<Headline> {
    Some(Headline {
        kind: kind.into(),
        text,
    })
}

fn preflight(r: &RunResult) -> Option<Headline> {
    let p = r.preflight.as_ref()?;
    let text = match p
        .rows
        .iter()
        .find(|row| row.metric.contains("random read IOPS at p99"))
    {
        Some(row) => match row.value {
            Some(v) => format!("{} {}", fmt::count(v), row.metric),
            None => format!("{}: not reached", row.metric),
        },
        None => format!("{} capacity rows, none of random reads", p.rows.len()),
    };
    h("preflight", text)
}

fn saturate(r: &RunResult) -> Option<Headline> {
    let s = r.saturation.as_ref()?;
    let knee = match s.knee_qd {
        Some(q) => format!("knee at qd {q}"),
        None => "no knee".into(),
    };
    h(
        "saturate",
        format!("max {} IOPS, {knee}", fmt::count(s.max_iops.max(0.0))),
    )
}

fn scaleup(r: &RunResult) -> Option<Headline> {
    let s = r.scaleup.as_ref()?;
    let text = match s.together.iter().max_by_key(|t| t.paths.len()) {
        Some(all) => format!(
            "{} IOPS on {} volumes together ({:.0} % of linear)",
            fmt::count(all.iops),
            all.paths.len(),
            all.efficiency_pct
        ),
        None => format!("{} volumes alone, none together", s.alone.len()),
    };
    h("scaleup", text)
}

fn cost(r: &RunResult) -> Option<Headline> {
    let c = r.cost.as_ref()?;
    let text = match c.answers.iter().find(|a| a.kind == AnswerKind::IopsPerCore) {
        Some(a) => format!(
            "{} IOPS per core ({} {} qd {})",
            fmt::count(a.value),
            a.engine,
            a.rw,
            a.qd
        ),
        None => format!("{} points, no IOPS per core", c.points.len()),
    };
    h("cost", text)
}

fn fsync(r: &RunResult) -> Option<Headline> {
    let f = r.fsync.as_ref()?;
    let best = f
        .points
        .iter()
        .filter(|p| p.available && p.ops_per_s.is_finite())
        .max_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s));
    let text = match best {
        Some(p) => format!(
            "best {} {} ops/s at {}",
            p.method,
            fmt::count(p.ops_per_s),
            format_bytes(p.size_bytes)
        ),
        None => "no method could run".into(),
    };
    h("fsync", text)
}

fn verify(r: &RunResult) -> Option<Headline> {
    let v = r.verify.as_ref()?;
    let failures = v.classes.total();
    h(
        "verify",
        format!(
            "{}, {} pages checked, {} {}",
            v.verdict_word(),
            fmt::count(v.counts.pages_checked as f64),
            fmt::count(failures as f64),
            if failures == 1 { "failure" } else { "failures" }
        ),
    )
}

fn cachescan(r: &RunResult) -> Option<Headline> {
    let c = r.cachescan.as_ref()?;
    let upto = human_bytes(c.tried_up_to_bytes);
    let text = match (c.levels.len(), c.largest_cache_bytes()) {
        (0, _) | (_, None) => format!("no cache up to {upto}"),
        (1, Some(b)) => format!("1 cache level, up to {}", human_bytes(b)),
        (n, Some(b)) => format!("{n} cache levels, largest up to {}", human_bytes(b)),
    };
    h("cachescan", text)
}

fn plain(r: &RunResult) -> Headline {
    let kind = r.command.as_ref().map_or("run", |c| c.name()).to_string();
    let Some(t) = r.tests.first() else {
        return Headline {
            kind,
            text: "no tests".into(),
        };
    };
    let mut text = format!("{} IOPS", fmt::count(t.total.iops));
    if let Some(l) = &t.total.lat_us {
        text.push_str(&format!(", p99 {}", fmt::lat_us(l.p99)));
    }
    text.push_str(&format!(" ({}", t.name));
    if r.tests.len() > 1 {
        text.push_str(&format!(", +{} tests", r.tests.len() - 1));
    }
    text.push(')');
    Headline { kind, text }
}

fn workload(r: &RunResult) -> Option<Headline> {
    let w = r.workload.as_ref()?;
    let reads = w
        .mix
        .iter()
        .find(|m| m.op == Op::Read)
        .map_or(0.0, |m| m.count_pct);
    let size = w
        .sizes
        .iter()
        .filter(|s| s.size_bytes > 0)
        .max_by_key(|s| s.count)
        .map_or("-".into(), |s| format_bytes(s.size_bytes));
    h(
        r.command.as_ref().map_or("characterise", |c| c.name()),
        format!(
            "{} IOPS mean, {} peak, {reads:.0} % reads, mostly {size}",
            fmt::count(w.rate.iops_mean),
            fmt::count(w.rate.iops_peak)
        ),
    )
}

fn replay(r: &RunResult) -> Option<Headline> {
    let p = r.replay.as_ref()?;
    let read_p99 = p
        .replayed
        .latency
        .iter()
        .find(|l| l.op == Op::Read)
        .map_or(String::new(), |l| {
            format!(", read p99 {}", fmt::lat_us(l.latency.p99_us))
        });
    let kept = if p.verdict.kept_up {
        "kept up".to_string()
    } else {
        format!("fell behind (lag p99 {})", fmt::lat_us(p.lag.p99_us))
    };
    h(
        "replay",
        format!(
            "{} IOPS ({} recorded){read_p99}, {kept}",
            fmt::count(p.replayed.iops),
            fmt::count(p.recorded.iops)
        ),
    )
}

/// The run's kind and key figure.
pub fn headline(r: &RunResult) -> Headline {
    let figure = match r.kind() {
        RunKind::Preflight => preflight(r),
        RunKind::Saturation => saturate(r),
        RunKind::Scaleup => scaleup(r),
        RunKind::Cost => cost(r),
        RunKind::Fsync => fsync(r),
        RunKind::Verify => verify(r),
        RunKind::Cachescan => cachescan(r),
        RunKind::Workload => workload(r),
        RunKind::Replay => replay(r),
        RunKind::Suite | RunKind::Test => None,
    };
    figure.unwrap_or_else(|| plain(r))
}
