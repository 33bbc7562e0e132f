//! Scale-up: each volume alone, then 1, 2, 4, 8 ... together, with the aggregate against the
//! sum of the same volumes alone (the seed method's volume scale-up).

use anyhow::{bail, Result};
use iocap_assess::{group_sizes, scaleup as assess_scaleup};
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
    let tests = &s.run.tests;
    let alone: Vec<_> = alone_idx
        .iter()
        .map(|(p, i)| (p.clone(), &tests[*i as usize], *i))
        .collect();
    let together: Vec<_> = together_idx
        .iter()
        .map(|(g, i)| (g.clone(), &tests[*i as usize], *i))
        .collect();
    s.run.scaleup = Some(assess_scaleup(&alone, &together));
    Ok(())
}
