//! Suites: an ordered list of tests, each one or more workloads that run at the same time, with
//! a pause between tests so that write caches drain.
//!
//! A test may carry a matrix over `rw`, `bs`, `qd` and `threads`; it expands to the cross product
//! in a fixed order (rw outermost, then bs, then qd, then threads, each in the order written), so
//! that test numbers, resumes and comparisons between runs line up. A matrix value stands where
//! the test's own key would: workloads that set the key themselves keep theirs (a log writer
//! stays at qd 1 while the OLTP mix beside it steps through queue depths).

use crate::fields::{job_table, Block, JobFields};
use crate::values::{BlockSize, Qd, Rw, Secs, Threads};
use crate::PlanError;
use iocap_model::{format_bytes, JobSpec, Role};
use serde::{Deserialize, Serialize};

/// Pause between tests when a suite gives none. Ten seconds drains a disk's or an SSD's write
/// cache; large arrays with gigabytes of cache may need a minute (`pause = "1m"`).
pub const DEFAULT_PAUSE_S: f64 = 10.0;
/// Most tests one suite may expand to.
pub const MAX_TESTS: usize = 10_000;

/// An expanded suite, ready to run once targets are filled in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suite {
    pub name: String,
    pub description: String,
    /// Idle time between two tests.
    pub pause_s: f64,
    pub tests: Vec<PlannedTest>,
}

/// One test: its workloads run together and share duration, warmup and cooldown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedTest {
    /// Unique within the suite.
    pub name: String,
    pub workloads: Vec<PlannedWorkload>,
}

/// One workload of a test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedWorkload {
    /// `data`, `log`, `temp` or `backup`.
    pub role: Role,
    /// Targets empty; the CLI fills them. Named after the test, and for a test of several
    /// workloads `test / workload`.
    pub spec: JobSpec,
}

impl PlannedTest {
    /// Wall time of the test: warmup, measured time and cooldown of its longest workload.
    pub fn duration_s(&self) -> f64 {
        self.workloads
            .iter()
            .map(|w| w.spec.warmup_s + w.spec.duration_s + w.spec.cooldown_s)
            .fold(0.0, f64::max)
    }
}

impl Suite {
    /// Wall time of the whole suite: every test plus the pauses between them.
    pub fn estimated_s(&self) -> f64 {
        let tests: f64 = self.tests.iter().map(PlannedTest::duration_s).sum();
        tests + self.pause_s * self.tests.len().saturating_sub(1) as f64
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    pause: Option<Secs>,
    #[serde(default)]
    defaults: SuiteDefaults,
    #[serde(default)]
    test: Vec<RawTest>,
}

job_table!(
    /// `[defaults]` of a suite.
    SuiteDefaults {}
);

job_table!(
    /// One `[[test]]`.
    RawTest {
        name: String,
        matrix: Option<Matrix>,
        workload: Vec<RawWorkload>,
    }
);

job_table!(
    /// One `[[test.workload]]`.
    RawWorkload {
        name: Option<String>,
    }
);

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Matrix {
    #[serde(default)]
    rw: Vec<Rw>,
    #[serde(default)]
    bs: Vec<BlockSize>,
    #[serde(default)]
    qd: Vec<Qd>,
    #[serde(default)]
    threads: Vec<Threads>,
}

const BUILTIN: [&str; 4] = [
    include_str!("../suites/quick.toml"),
    include_str!("../suites/oltp.toml"),
    include_str!("../suites/dss.toml"),
    include_str!("../suites/edge-matrix.toml"),
];

/// The built-in suites: `quick`, `sqlio-classic`, `oltp`, `dss`, `edge-matrix`.
pub fn builtin_suites() -> Vec<Suite> {
    let mut out: Vec<Suite> = BUILTIN
        .iter()
        .map(|text| parse_suite(text).expect("built-in suites parse (tested)"))
        .collect();
    out.insert(
        1,
        crate::sqlio_suite().expect("the sqlio-classic batch parses (tested)"),
    );
    out
}

/// A built-in suite by name.
pub fn suite(name: &str) -> Result<Suite, PlanError> {
    let all = builtin_suites();
    let known = all
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    all.into_iter()
        .find(|s| s.name == name)
        .ok_or(PlanError::Unknown {
            kind: "suite",
            name: name.to_string(),
            known,
        })
}

/// Parses a suite file's text and expands its matrices. docs/profiles-and-suites.md describes every key; in
/// short:
///
/// ```toml
/// name = "mine"
/// description = "What it is for"
/// pause = "10s"                 # between tests; arrays with large write caches may need "1m"
///
/// [defaults]                    # any workload key: rw, bs, bs_split, qd, threads, write_pct,
/// duration = "60s"              # size, duration, warmup, cooldown, align, direct,
/// bs = "8K"                     # write_through, fsync_every, rate_iops, rate_mbps,
///                               # rate_process ("linear", "poisson"), burst,
///                               # seed, role, submit ("auto", "batch", "each"),
///                               # compressible, dedupe (percent)
/// [[test]]
/// name = "random read"
/// rw = "randread"
/// [test.matrix]                 # cross product: rw, then bs, then qd, then threads
/// qd = [1, 2, 4, 8]
///
/// [[test]]
/// name = "mix + log"            # workloads of one test run together
/// [[test.workload]]
/// rw = "randrw"
/// write_pct = 30
/// [[test.workload]]
/// role = "log"
/// rw = "write"
/// qd = 1
/// write_through = true
/// ```
///
/// Errors name the line for bad keys and values (`toml`'s message), and the test for rules
/// across keys; nothing panics.
pub fn parse_suite(toml_text: &str) -> Result<Suite, PlanError> {
    let raw: RawSuite = crate::from_toml(toml_text)?;
    if raw.name.trim().is_empty() {
        return Err(PlanError::invalid("suite", "name is empty"));
    }
    if raw.test.is_empty() {
        return Err(PlanError::invalid("suite", "it has no [[test]]"));
    }
    let defaults = raw
        .defaults
        .job()
        .map_err(|e| PlanError::invalid("[defaults]", e))?;
    let mut total: u128 = 0;
    for t in &raw.test {
        total += matrix_size(t.matrix.as_ref());
    }
    if total > MAX_TESTS as u128 {
        return Err(PlanError::TooManyTests {
            context: format!("suite '{}'", raw.name),
            count: total,
        });
    }
    let mut tests: Vec<PlannedTest> = Vec::new();
    for (i, t) in raw.test.iter().enumerate() {
        for test in expand(&defaults, t, i)? {
            if tests.iter().any(|o| o.name == test.name) {
                return Err(PlanError::invalid(
                    format!("test '{}'", test.name),
                    "this name is used twice; test names must be unique",
                ));
            }
            tests.push(test);
        }
    }
    Ok(Suite {
        name: raw.name,
        description: raw.description,
        pause_s: raw.pause.map_or(DEFAULT_PAUSE_S, |p| p.0),
        tests,
    })
}

fn matrix_size(m: Option<&Matrix>) -> u128 {
    m.map_or(1, |m| {
        [m.rw.len(), m.bs.len(), m.qd.len(), m.threads.len()]
            .iter()
            .map(|&n| n.max(1) as u128)
            .product()
    })
}

/// One matrix point: the values it sets and the words it adds to the test name.
type Point = (JobFields, Vec<String>);

fn points(m: Option<&Matrix>) -> Vec<Point> {
    let Some(m) = m else {
        return vec![(JobFields::default(), Vec::new())];
    };
    fn axis<T: Copy>(v: &[T]) -> Vec<Option<T>> {
        if v.is_empty() {
            vec![None]
        } else {
            v.iter().copied().map(Some).collect()
        }
    }
    let mut out = Vec::new();
    for rw in axis(&m.rw) {
        for bs in axis(&m.bs) {
            for qd in axis(&m.qd) {
                for threads in axis(&m.threads) {
                    let mut words = Vec::new();
                    words.extend(rw.map(|r| r.0.name().to_string()));
                    words.extend(bs.map(|b| format_bytes(b.0)));
                    words.extend(qd.map(|q| format!("qd{}", q.0)));
                    words.extend(threads.map(|t| format!("t{}", t.0)));
                    let fields = JobFields {
                        rw: rw.map(|r| r.0),
                        block: bs.map(|b| Block::Fixed(b.0)),
                        qd: qd.map(|q| q.0),
                        threads: threads.map(|t| t.0),
                        ..JobFields::default()
                    };
                    out.push((fields, words));
                }
            }
        }
    }
    out
}

fn expand(defaults: &JobFields, t: &RawTest, index: usize) -> Result<Vec<PlannedTest>, PlanError> {
    let context = if t.name.trim().is_empty() {
        format!("test {}", index + 1)
    } else {
        format!("test '{}'", t.name)
    };
    let bad = |p: String| PlanError::invalid(context.clone(), p);
    if t.name.trim().is_empty() {
        return Err(bad("needs a name".into()));
    }
    let test_fields = defaults.under(&t.job().map_err(&bad)?);
    let workloads: Vec<(String, JobFields)> = if t.workload.is_empty() {
        vec![(String::new(), JobFields::default())]
    } else {
        let mut named = Vec::new();
        for w in &t.workload {
            let fields = w.job().map_err(&bad)?;
            let name = w
                .name
                .clone()
                .unwrap_or_else(|| test_fields.under(&fields).role().name().to_string());
            if named.iter().any(|(n, _)| n == &name) {
                return Err(bad(format!(
                    "two workloads are named '{name}'; give them different names (name = \"...\")"
                )));
            }
            named.push((name, fields));
        }
        named
    };
    if let Some(m) = &t.matrix {
        let used = |set: fn(&JobFields) -> bool| workloads.iter().any(|(_, w)| !set(w));
        for (axis, len, set) in [
            (
                "rw",
                m.rw.len(),
                (|w: &JobFields| w.rw.is_some()) as fn(&JobFields) -> bool,
            ),
            ("bs", m.bs.len(), |w| w.block.is_some()),
            ("qd", m.qd.len(), |w| w.qd.is_some()),
            ("threads", m.threads.len(), |w| w.threads.is_some()),
        ] {
            if len > 0 && !used(set) {
                return Err(bad(format!(
                    "the matrix over {axis} changes nothing: every workload sets {axis} itself"
                )));
            }
        }
    }
    let mut out = Vec::new();
    for (point, words) in points(t.matrix.as_ref()) {
        let name = std::iter::once(t.name.trim().to_string())
            .chain(words)
            .collect::<Vec<_>>()
            .join(" ");
        let at_point = test_fields.under(&point);
        let bad = |p: String| PlanError::invalid(format!("test '{name}'"), p);
        let mut planned = Vec::new();
        for (wname, w) in &workloads {
            let fields = at_point.under(w);
            let spec_name = if workloads.len() == 1 {
                name.clone()
            } else {
                format!("{name} / {wname}")
            };
            let spec = fields.spec(&spec_name).map_err(|e| {
                if workloads.len() == 1 {
                    bad(e)
                } else {
                    bad(format!("workload '{wname}': {e}"))
                }
            })?;
            planned.push(PlannedWorkload {
                role: fields.role(),
                spec,
            });
        }
        if planned
            .windows(2)
            .any(|p| !same_timing(&p[0].spec, &p[1].spec))
        {
            return Err(bad(
                "its workloads run together, so they need the same duration, warmup and cooldown"
                    .into(),
            ));
        }
        out.push(PlannedTest {
            name,
            workloads: planned,
        });
    }
    Ok(out)
}

/// Whether two workloads run for the same time (duration, warm-up, cool-down): those that run
/// together must.
pub(crate) fn same_timing(a: &JobSpec, b: &JobSpec) -> bool {
    (a.duration_s, a.warmup_s, a.cooldown_s) == (b.duration_s, b.warmup_s, b.cooldown_s)
}
