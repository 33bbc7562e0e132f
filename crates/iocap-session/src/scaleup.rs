//! Scale-up: each volume alone, then 1, 2, 4, 8 ... together, with the aggregate against the
//! sum of the same volumes alone (the seed method's volume scale-up).

use anyhow::{bail, Result};
use iocap_assess::{group_sizes, scaleup as assess_scaleup};
use iocap_model::Payload;
use iocap_model::{format_bytes, JobSpec, TargetSpec};

use crate::session::Session;

/// The volumes' test files (or devices) and the spec every test takes (its targets and name
/// are set per test).
pub struct ScaleupSpec {
    pub paths: Vec<String>,
    pub base: JobSpec,
}

impl ScaleupSpec {
    fn spec(&self, targets: &[String], name: String) -> JobSpec {
        JobSpec {
            name,
            targets: targets.iter().map(TargetSpec::new).collect(),
            ..self.base.clone()
        }
    }

    /// Refuses a volume given twice and a spec that would not run, before anything runs.
    pub fn check(&self) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = self.paths.iter().find(|p| !seen.insert(*p)) {
            bail!("{dup} is given twice: each volume once");
        }
        for p in &self.paths {
            self.spec(std::slice::from_ref(p), String::new())
                .validate()?;
        }
        Ok(())
    }
}

/// Runs one test and returns its index in the run.
fn one(s: &mut Session, spec: JobSpec) -> Result<u32> {
    s.exec.label(&spec.name);
    let r = s.exec.run(std::slice::from_ref(&spec))?;
    s.run.tests.extend(r);
    Ok((s.run.tests.len() - 1) as u32)
}

/// Every volume alone, then the groups, into the session's run; the judgement in
/// `run.scaleup`.
pub fn scaleup(s: &mut Session, sc: &ScaleupSpec) -> Result<()> {
    sc.check()?;
    let what = format!("{} {}", sc.base.rw.name(), format_bytes(sc.base.bs_bytes));
    let mut alone_idx = Vec::new();
    for p in &sc.paths {
        if s.exec.interrupted() {
            break;
        }
        let spec = sc.spec(std::slice::from_ref(p), format!("{what} {p} alone"));
        alone_idx.push((p.clone(), one(s, spec)?));
    }
    let mut together_idx = Vec::new();
    for n in group_sizes(sc.paths.len()).into_iter().filter(|n| *n > 1) {
        if s.exec.interrupted() || s.run.tests.iter().any(|t| t.error.is_some()) {
            break;
        }
        let group = &sc.paths[..n];
        let spec = sc.spec(group, format!("{what} {n} volumes together"));
        together_idx.push((group.to_vec(), one(s, spec)?));
    }
    judge(s, &alone_idx, &together_idx);
    Ok(())
}

/// Scale-up across hosts: each rank alone, then the first 2, 4, ... ranks together, each on
/// the same spec (its targets placed per rank), judged like volumes: the aggregate against the
/// sum of the same hosts alone, the slow host named.
pub fn scaleup_hosts(s: &mut Session, base: &JobSpec) -> Result<()> {
    let hosts = s.exec.ranks();
    if hosts.len() < 2 {
        bail!(
            "scaleup --hosts needs two or more hosts: run it under mpirun or srun with the mpi \
             feature (docs/mpi.md)"
        );
    }
    base.validate()?;
    let what = format!("{} {}", base.rw.name(), format_bytes(base.bs_bytes));
    let names: Vec<String> = hosts
        .iter()
        .enumerate()
        .map(|(r, h)| format!("rank {r} ({h})"))
        .collect();
    let mut alone_idx = Vec::new();
    for (r, name) in names.iter().enumerate() {
        if s.exec.interrupted() || s.stopped() {
            break;
        }
        let spec = JobSpec {
            name: format!("{what} {name} alone"),
            ..base.clone()
        };
        alone_idx.push((name.clone(), on(s, spec, &[r as u32])?));
    }
    let mut together_idx = Vec::new();
    for n in group_sizes(hosts.len()).into_iter().filter(|n| *n > 1) {
        if s.exec.interrupted() || s.stopped() {
            break;
        }
        let spec = JobSpec {
            name: format!("{what} {n} hosts together"),
            ..base.clone()
        };
        let ranks: Vec<u32> = (0..n as u32).collect();
        together_idx.push((names[..n].to_vec(), on(s, spec, &ranks)?));
    }
    judge(s, &alone_idx, &together_idx);
    Ok(())
}

/// Runs one test on `ranks` and returns its index in the run.
fn on(s: &mut Session, spec: JobSpec, ranks: &[u32]) -> Result<u32> {
    s.exec.label(&spec.name);
    let r = s.exec.run_on(std::slice::from_ref(&spec), ranks)?;
    s.run.tests.extend(r);
    Ok((s.run.tests.len() - 1) as u32)
}

/// The judgement of the alone and together tests (by index), in `run.scaleup`.
fn judge(s: &mut Session, alone_idx: &[(String, u32)], together_idx: &[(Vec<String>, u32)]) {
    let tests = &s.run.tests;
    let alone: Vec<_> = alone_idx
        .iter()
        .map(|(p, i)| (p.clone(), &tests[*i as usize], *i))
        .collect();
    let together: Vec<_> = together_idx
        .iter()
        .map(|(g, i)| (g.clone(), &tests[*i as usize], *i))
        .collect();
    s.run
        .set(Payload::Scaleup(assess_scaleup(&alone, &together)));
}
