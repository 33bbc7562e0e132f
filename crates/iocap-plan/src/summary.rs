//! What `iocap suite list` and `iocap suite show` print: one row per suite or profile with its
//! size and how long it takes, and one line per test in words a DBA reads at a glance. Kept here
//! rather than in the CLI so that the estimate (tests plus pauses) is computed in one place.

use crate::{builtin_profiles, builtin_suites, Profile, Suite};
use iocap_model::{format_bytes, JobSpec};
use serde::Serialize;
use std::fmt::Write;

/// One row of `iocap suite list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteSummary {
    pub name: String,
    pub description: String,
    pub tests: usize,
    /// Tests plus the pauses between them, in seconds.
    pub estimated_s: f64,
}

/// One row of the profile list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileSummary {
    pub name: String,
    pub family: String,
    pub description: String,
    pub page_bytes: u64,
    pub workloads: usize,
    /// Every workload group run one after another with pauses, in seconds.
    pub estimated_s: f64,
}

/// The built-in suites, in the order `iocap suite list` shows them.
pub fn list_suites() -> Vec<SuiteSummary> {
    builtin_suites().iter().map(Suite::summary).collect()
}

/// What `iocap suite run` takes by name: the built-in suites, then each built-in database
/// profile's workloads as a suite (`profile:NAME`).
pub fn list_runnable() -> Vec<SuiteSummary> {
    let profiles = builtin_profiles().into_iter().map(|p| {
        let s = p.suite();
        SuiteSummary {
            name: format!("profile:{}", p.name),
            description: p.description.clone(),
            tests: s.tests.len(),
            estimated_s: s.estimated_s(),
        }
    });
    list_suites().into_iter().chain(profiles).collect()
}

/// The built-in profiles.
pub fn list_profiles() -> Vec<ProfileSummary> {
    builtin_profiles().iter().map(Profile::summary).collect()
}

impl Suite {
    pub fn summary(&self) -> SuiteSummary {
        SuiteSummary {
            name: self.name.clone(),
            description: self.description.clone(),
            tests: self.tests.len(),
            estimated_s: self.estimated_s(),
        }
    }

    /// `iocap suite show`: a header, then one line per test with its number, name, wall time and
    /// workloads.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}: {}", self.name, self.description);
        let _ = writeln!(
            out,
            "{} tests, about {} with {} pauses between tests",
            self.tests.len(),
            format_secs(self.estimated_s()),
            format_secs(self.pause_s)
        );
        let width = self.tests.iter().map(|t| t.name.len()).max().unwrap_or(0);
        let digits = self.tests.len().to_string().len();
        for (i, t) in self.tests.iter().enumerate() {
            let workloads = t
                .workloads
                .iter()
                .map(|w| format!("{}: {}", w.role, describe_workload(&w.spec)))
                .collect::<Vec<_>>()
                .join(" | ");
            let _ = writeln!(
                out,
                "{:>digits$}  {:<width$}  {:>8}  {}",
                i + 1,
                t.name,
                format_secs(t.duration_s()),
                workloads
            );
        }
        out
    }
}

impl Profile {
    pub fn summary(&self) -> ProfileSummary {
        ProfileSummary {
            name: self.name.clone(),
            family: self.family.clone(),
            description: self.description.clone(),
            page_bytes: self.page_bytes,
            workloads: self.workloads.len(),
            estimated_s: self.suite().estimated_s(),
        }
    }
}

/// A workload in a few words: `randrw 30% writes 8K qd16`, `write 512-60K mix qd1 O_DSYNC`,
/// `randwrite 8K qd32 bursts 10s/20s`.
pub fn describe_workload(s: &JobSpec) -> String {
    let mut words = vec![s.rw.name().to_string()];
    if s.rw.is_mixed() {
        words.push(format!("{}% writes", s.write_pct));
    }
    match (
        s.bs_split.iter().map(|b| b.bs_bytes).min(),
        s.bs_split.len(),
    ) {
        (Some(min), 2..) => words.push(format!(
            "{}-{} mix",
            format_bytes(min),
            format_bytes(s.bs_bytes)
        )),
        _ => words.push(format_bytes(s.bs_bytes)),
    }
    words.push(format!("qd{}", s.qd));
    if s.threads > 1 {
        words.push(format!("x{} threads", s.threads));
    }
    if s.writes() && s.write_through {
        words.push("O_DSYNC".into());
    }
    if s.fsync_every > 0 {
        let sync = if s.datasync { "fdatasync" } else { "fsync" };
        words.push(format!("{sync}/{}", s.fsync_every));
    }
    if !s.direct {
        words.push("buffered".into());
    }
    if let Some(b) = s.burst {
        words.push(format!(
            "bursts {}/{}",
            format_secs(b.on_s),
            format_secs(b.off_s)
        ));
    }
    if s.writes() && s.compressible_pct > 0 {
        words.push(format!("compress {}%", s.compressible_pct));
    }
    if s.writes() && s.dedupe_pct > 0 {
        words.push(format!("dedupe {}%", s.dedupe_pct));
    }
    if let Some(r) = s.rate_iops {
        words.push(format!("<= {r} IOPS"));
    }
    if let Some(r) = s.rate_mb_s {
        words.push(format!("<= {r} MB/s"));
    }
    if s.effective_rate_iops().is_some() && s.rate_process == iocap_model::RateProcess::Poisson {
        words.push("poisson".into());
    }
    words.join(" ")
}

pub use iocap_model::figures::format_secs;

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::{Burst, RwMode};

    #[test]
    fn seconds_for_a_schedule() {
        let cases = [
            (0.0, "0s"),
            (0.5, "0.5s"),
            (35.0, "35s"),
            (119.4, "119s"),
            (120.0, "2m"),
            (170.0, "2m50s"),
            (4310.0, "71m50s"),
            (7200.0, "2h00m"),
            (f64::NAN, "0s"),
        ];
        for (secs, text) in cases {
            assert_eq!(format_secs(secs), text, "{secs}");
        }
    }

    #[test]
    fn workloads_in_a_few_words() {
        let s = JobSpec {
            rw: RwMode::RandWrite,
            write_pct: 100,
            qd: 32,
            threads: 2,
            direct: false,
            burst: Some(Burst {
                on_s: 10.0,
                off_s: 20.0,
            }),
            rate_iops: Some(500.0),
            ..JobSpec::default()
        };
        assert_eq!(
            describe_workload(&s),
            "randwrite 8K qd32 x2 threads buffered bursts 10s/20s <= 500 IOPS"
        );
    }
}
