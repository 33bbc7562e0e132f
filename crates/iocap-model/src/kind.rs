//! What kind of run a result is, and the one part that makes it so. A run of every command but
//! `run` and `sqlio` carries one part beside its tests (a preflight's verdicts, a cost matrix,
//! a verify's pages ...): a [`Payload`], set with [`RunResult::set`], which refuses (in debug
//! builds) a part that does not belong beside those already set. Only a preflight holds more
//! than one: its saturation ramp and the cache scan that sized its files.
//!
//! In the JSON each part stays the optional key it always was (`preflight`, `cost`, ...), so
//! runs saved before load unchanged; the kind is not stored but read from which part is set
//! ([`RunResult::kind`]).

use crate::replay::Replay;
use crate::workload::Workload;
use crate::{
    CacheScan, CostReport, FsyncReport, Preflight, RunResult, Saturation, ScaleUp, SuiteInfo,
    Verify,
};

/// What kind of run a result is: which command's view shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunKind {
    /// `iocap preflight`: verdicts and a capacity table (with the saturation it measured, and
    /// perhaps the cache scan that sized its files).
    Preflight,
    /// `iocap cachescan`: the caches found by a working-set sweep.
    Cachescan,
    /// `iocap saturate`: the queue-depth ramp and its knee.
    Saturation,
    /// `iocap cost`: CPU per I/O over a matrix.
    Cost,
    /// `iocap fsync`: log-flush methods compared.
    Fsync,
    /// `iocap scaleup`: volumes alone and together.
    Scaleup,
    /// `iocap verify`: integrity and crash consistency.
    Verify,
    /// `iocap suite run`: its tests, one after another.
    Suite,
    /// `iocap capture` or `iocap characterise`: a recorded workload described.
    Workload,
    /// `iocap replay`: a trace replayed on a target, beside the recording.
    Replay,
    /// `iocap run` or `iocap sqlio`, or a run saved before its command was recorded: its tests.
    Test,
}

impl RunKind {
    /// The parts a run of this kind may hold: its own, and for a preflight the saturation and
    /// cache scan it ran on the way.
    pub fn parts(self) -> &'static [RunKind] {
        match self {
            RunKind::Preflight => &[RunKind::Preflight, RunKind::Cachescan, RunKind::Saturation],
            RunKind::Cachescan => &[RunKind::Cachescan],
            RunKind::Saturation => &[RunKind::Saturation],
            RunKind::Cost => &[RunKind::Cost],
            RunKind::Fsync => &[RunKind::Fsync],
            RunKind::Scaleup => &[RunKind::Scaleup],
            RunKind::Verify => &[RunKind::Verify],
            RunKind::Suite => &[RunKind::Suite],
            RunKind::Workload => &[RunKind::Workload],
            RunKind::Replay => &[RunKind::Replay],
            RunKind::Test => &[],
        }
    }
}

/// The part a run carries beside its tests, one variant per kind (see the module's comment).
// Built once per run and moved straight into it, so the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    Preflight(Preflight),
    Cachescan(CacheScan),
    Saturation(Saturation),
    Cost(CostReport),
    Fsync(FsyncReport),
    Scaleup(ScaleUp),
    Verify(Verify),
    Suite(SuiteInfo),
    Workload(Workload),
    Replay(Replay),
}

impl Payload {
    /// The kind of the part.
    pub fn kind(&self) -> RunKind {
        match self {
            Payload::Preflight(_) => RunKind::Preflight,
            Payload::Cachescan(_) => RunKind::Cachescan,
            Payload::Saturation(_) => RunKind::Saturation,
            Payload::Cost(_) => RunKind::Cost,
            Payload::Fsync(_) => RunKind::Fsync,
            Payload::Scaleup(_) => RunKind::Scaleup,
            Payload::Verify(_) => RunKind::Verify,
            Payload::Suite(_) => RunKind::Suite,
            Payload::Workload(_) => RunKind::Workload,
            Payload::Replay(_) => RunKind::Replay,
        }
    }
}

impl RunResult {
    /// The parts that are set, in the order of the variants of [`RunKind`].
    pub fn parts(&self) -> Vec<RunKind> {
        [
            (self.preflight.is_some(), RunKind::Preflight),
            (self.cachescan.is_some(), RunKind::Cachescan),
            (self.saturation.is_some(), RunKind::Saturation),
            (self.cost.is_some(), RunKind::Cost),
            (self.fsync.is_some(), RunKind::Fsync),
            (self.scaleup.is_some(), RunKind::Scaleup),
            (self.verify.is_some(), RunKind::Verify),
            (self.suite.is_some(), RunKind::Suite),
            (self.workload.is_some(), RunKind::Workload),
            (self.replay.is_some(), RunKind::Replay),
        ]
        .into_iter()
        .filter_map(|(set, kind)| set.then_some(kind))
        .collect()
    }

    /// What kind of run this is: the kind of its part ([`RunKind::Test`] without one; a
    /// preflight that holds its saturation and cache scan is a preflight).
    pub fn kind(&self) -> RunKind {
        self.parts().first().copied().unwrap_or(RunKind::Test)
    }

    /// Whether the parts set belong together: none, one, or a preflight's.
    pub fn parts_fit(&self) -> bool {
        let allowed = self.kind().parts();
        self.parts().iter().all(|p| allowed.contains(p))
    }

    /// Sets the run's part (replacing one of the same kind). In debug builds, panics when it
    /// does not belong beside the parts already set: a run has one kind.
    pub fn set(&mut self, part: Payload) {
        let kind = part.kind();
        match part {
            Payload::Preflight(p) => self.preflight = Some(p),
            Payload::Cachescan(c) => self.cachescan = Some(c),
            Payload::Saturation(s) => self.saturation = Some(s),
            Payload::Cost(c) => self.cost = Some(c),
            Payload::Fsync(f) => self.fsync = Some(f),
            Payload::Scaleup(s) => self.scaleup = Some(s),
            Payload::Verify(v) => self.verify = Some(v),
            Payload::Suite(s) => self.suite = Some(s),
            Payload::Workload(w) => self.workload = Some(w),
            Payload::Replay(r) => self.replay = Some(r),
        }
        debug_assert!(
            self.parts_fit(),
            "a {kind:?} part set on a run that holds {:?}",
            self.parts()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{run, FixtureRun};

    fn plain() -> RunResult {
        run(&FixtureRun::default())
    }

    #[test]
    fn a_run_is_the_kind_of_its_one_part() {
        let mut r = plain();
        assert_eq!((r.kind(), r.parts_fit()), (RunKind::Test, true));
        r.set(Payload::Cost(CostReport::default()));
        assert_eq!((r.kind(), r.parts()), (RunKind::Cost, vec![RunKind::Cost]));
        let mut r = plain();
        r.set(Payload::Verify(Verify::default()));
        assert_eq!(r.kind(), RunKind::Verify);
    }

    #[test]
    fn a_preflight_holds_its_scan_and_its_ramp() {
        let mut r = plain();
        r.set(Payload::Cachescan(CacheScan::default()));
        assert_eq!(r.kind(), RunKind::Cachescan);
        r.set(Payload::Preflight(Preflight::default()));
        r.set(Payload::Saturation(Saturation::default()));
        assert_eq!((r.kind(), r.parts_fit()), (RunKind::Preflight, true));
    }

    #[test]
    fn two_kinds_on_one_run_do_not_fit() {
        let mut r = plain();
        r.cost = Some(CostReport::default());
        r.fsync = Some(FsyncReport::default());
        assert!(!r.parts_fit());
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a Fsync part set on a run that holds [Cost, Fsync]")]
    fn setting_a_second_kind_panics_in_debug_builds() {
        let mut r = plain();
        r.set(Payload::Cost(CostReport::default()));
        r.set(Payload::Fsync(FsyncReport::default()));
    }
}
