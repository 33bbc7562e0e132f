//! What the commands over saved runs ask of a store beyond one query: several runs loaded, a
//! run's baseline, a run made the baseline of its targets, the runs an export names. Here, not
//! in the command line, because each is a rule about stored runs (which target a baseline is
//! for, which runs a filter exports and in which order) that any front end must keep alike.

use iocap_model::RunResult;

use crate::when::now_rfc3339;
use crate::{Baseline, Filter, Store, StoreError};

impl Store {
    /// The stored results of `whats` (each as for [`Store::resolve`]), in that order.
    pub fn load_all(&mut self, whats: &[String]) -> Result<Vec<RunResult>, StoreError> {
        whats.iter().map(|w| self.load(w)).collect()
    }

    /// The runs an export names: its `ids`, or (`filtered`: `--all` or a filter given) every
    /// run `filter` matches, oldest first; never both, never neither.
    pub fn select(
        &mut self,
        ids: &[String],
        filtered: bool,
        filter: impl FnOnce() -> Result<Filter, StoreError>,
    ) -> Result<Vec<RunResult>, StoreError> {
        let usage = |m: &str| Err(StoreError::Usage(m.into()));
        match (ids.is_empty(), filtered) {
            (false, true) => {
                usage("give either RUN ids or --all / filters (--host --label --tag ...), not both")
            }
            (false, false) => self.load_all(ids),
            (true, false) => usage(
                "name the runs to export: RUN ids, --all, or filters such as --host or --since",
            ),
            (true, true) => {
                let mut list = self.list(&filter()?)?;
                if list.is_empty() {
                    return usage(&format!("no runs in {} match", self.location()));
                }
                list.reverse();
                list.iter().map(|r| self.load(&r.run_id)).collect()
            }
        }
    }

    /// The baseline run of `run`'s host and first target.
    pub fn baseline_of(&mut self, run: &RunResult) -> Result<RunResult, StoreError> {
        let host = &run.host.hostname;
        let Some(target) = run
            .tests
            .iter()
            .flat_map(|t| t.targets.first())
            .map(|t| t.path.clone())
            .next()
        else {
            return Err(StoreError::Usage(format!(
                "run {} has no targets, so it has no baseline",
                run.run_id
            )));
        };
        let found = self
            .baselines(Some(host))?
            .into_iter()
            .find(|b| b.target == target);
        match found {
            Some(b) => self.load(&b.run_id),
            None => Err(StoreError::Usage(format!(
                "no baseline for host {host} and target {target}; set one with: iocap baseline \
                 set RUN"
            ))),
        }
    }

    /// Makes the run `what` the baseline of its host for every target it tested, or only for
    /// `target` (which it must have tested).
    pub fn make_baseline(
        &mut self,
        what: &str,
        target: Option<String>,
    ) -> Result<Vec<Baseline>, StoreError> {
        let id = self.resolve(what)?;
        let r = self.load(&id)?;
        let mut targets: Vec<String> = r
            .tests
            .iter()
            .flat_map(|t| t.targets.iter().map(|x| x.path.clone()))
            .collect();
        targets.sort();
        targets.dedup();
        if let Some(t) = target {
            if !targets.contains(&t) {
                return Err(StoreError::Usage(format!(
                    "run {id} did not test {t}; its targets: {}",
                    targets.join(", ")
                )));
            }
            targets = vec![t];
        }
        if targets.is_empty() {
            return Err(StoreError::Usage(format!(
                "run {id} has no targets to be a baseline for"
            )));
        }
        self.baseline_set(&id, &targets, &now_rfc3339())
    }
}
