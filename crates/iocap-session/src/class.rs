//! The device class of a test's target from evidence (issue 18 §3–4): the kernel's flag read
//! through the engine, the measured queue-depth-1 read latency, judged by `iocap-assess`; and
//! the warnings for what no device of that class delivers. Glue only: sysfs here, rules there.

use iocap_assess::{implausible, judge_class, ClassEvidence, ClassJudgement, DeviceClass};
use iocap_model::TestResult;

use crate::executor::HostFacts;

/// The p50 of a test's reads when it is evidence of a device's qd-1 latency: random reads,
/// one I/O in flight on one thread.
pub fn qd1_read_p50(t: &TestResult) -> Option<(f64, u64)> {
    let one = t.spec.qd == 1 && t.targets.iter().all(|x| x.threads <= 1);
    (one && t.spec.rw.is_random() && t.read.ios > 0)
        .then(|| t.read.lat_us.as_ref().map(|l| (l.p50, t.spec.bs_bytes)))
        .flatten()
}

/// The class of the device under `t`'s first target, with `qd1` (p50 µs, bytes) as latency
/// evidence when there is one.
pub fn judge(exec: &dyn HostFacts, t: &TestResult, qd1: Option<(f64, u64)>) -> ClassJudgement {
    let device = t.targets.first().and_then(|x| x.device.clone());
    judge_class(&ClassEvidence {
        kernel_rotational: device.as_deref().and_then(|d| exec.rotational(d)),
        device,
        qd1_read_p50_us: qd1.map(|q| q.0),
        qd1_read_bytes: qd1.map_or(0, |q| q.1),
    })
}

/// Adds to `t`'s warnings the disagreement between the kernel and the measurement, if any,
/// and a warning when its figure is beyond what a device of the judged class delivers.
/// `forced`: the class the user gave.
pub fn check(
    exec: &dyn HostFacts,
    t: &mut TestResult,
    qd1: Option<(f64, u64)>,
    forced: Option<DeviceClass>,
) {
    let j = judge(exec, t, qd1);
    if let (Some(note), None) = (&j.note, forced) {
        push(t, format!("device class: {note}"));
    }
    let devices = {
        let mut d: Vec<&str> = t
            .targets
            .iter()
            .filter_map(|x| x.device.as_deref())
            .collect();
        d.sort_unstable();
        d.dedup();
        d.len()
    };
    if let Some(w) = implausible(t, forced.unwrap_or(j.class), devices) {
        push(t, w);
    }
}

fn push(t: &mut TestResult, w: String) {
    if !t.warnings.contains(&w) {
        t.warnings.push(w);
    }
}
