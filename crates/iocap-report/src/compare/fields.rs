//! Which fields of two runs are compared, and how a difference is recorded. Kept apart from
//! the figures in [`super`] because the lists are long and change whenever the result model
//! grows a field: every field listed here that differs is shown, so a slower run is never
//! blamed on storage when the queue depth, the engine, the kernel or the device changed too.

use iocap_model::{
    human_bytes, EngineFeature, JobSpec, RunResult, TargetResult, TargetSpec, TestResult,
};

use super::Difference;

/// Pushes a difference when the two renderings differ.
fn diff(out: &mut Vec<Difference>, field: impl Into<String>, base: String, run: String) {
    if base != run {
        out.push(Difference {
            field: field.into(),
            base,
            run,
        });
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// A field's name and how to render it.
type Field<T> = (&'static str, fn(&T) -> String);

/// Renders each field of both sides and records those whose renderings differ.
fn fields<T>(out: &mut Vec<Difference>, b: &T, r: &T, list: &[Field<T>]) {
    for (name, f) in list {
        diff(out, *name, f(b), f(r));
    }
}

/// Every spec field but `name`, which merely labels the test.
const SPEC_FIELDS: [Field<JobSpec>; 32] = [
    ("spec.targets", |s| s.targets.len().to_string()),
    ("spec.rw", |s| s.rw.name().into()),
    ("spec.write_pct", |s| s.write_pct.to_string()),
    ("spec.bs_bytes", |s| s.bs_bytes.to_string()),
    ("spec.qd", |s| s.qd.to_string()),
    ("spec.threads", |s| s.threads.to_string()),
    ("spec.size_bytes", |s| s.size_bytes.to_string()),
    ("spec.duration_s", |s| s.duration_s.to_string()),
    ("spec.warmup_s", |s| s.warmup_s.to_string()),
    ("spec.cooldown_s", |s| s.cooldown_s.to_string()),
    ("spec.seed", |s| s.seed.to_string()),
    ("spec.align_bytes", |s| s.align_bytes.to_string()),
    ("spec.rate_iops", |s| opt(s.rate_iops)),
    ("spec.rate_mb_s", |s| opt(s.rate_mb_s)),
    ("spec.rate_process", |s| s.rate_process.name().into()),
    ("spec.direct", |s| s.direct.to_string()),
    ("spec.write_through", |s| s.write_through.to_string()),
    ("spec.fsync_every", |s| s.fsync_every.to_string()),
    ("spec.engine", |s| s.engine.name().into()),
    ("spec.allow_overwrite", |s| s.allow_overwrite.to_string()),
    ("spec.submit", |s| s.submit.name().into()),
    ("spec.until_stable", |s| {
        opt(s
            .until_stable
            .map(|u| format!("{}%:{}s", u.ci_pct, u.max_s)))
    }),
    ("spec.compressible_pct", |s| s.compressible_pct.to_string()),
    ("spec.dedupe_pct", |s| s.dedupe_pct.to_string()),
    ("spec.bs_split", |s| {
        let mix: Vec<String> = s
            .bs_split
            .iter()
            .map(|b| format!("{}:{}", human_bytes(b.bs_bytes), b.weight))
            .collect();
        if mix.is_empty() {
            "none".into()
        } else {
            mix.join(",")
        }
    }),
    ("spec.burst", |s| {
        opt(s.burst.map(|b| format!("{}s on, {}s off", b.on_s, b.off_s)))
    }),
    ("spec.streams", |s| {
        opt(s.streams.map(|w| {
            format!(
                "stride {}, thread stride {}{}",
                human_bytes(w.stride_bytes),
                human_bytes(w.thread_stride_bytes),
                if w.shared { ", shared" } else { "" }
            )
        }))
    }),
    ("spec.base_bytes", |s| human_bytes(s.base_bytes)),
    ("spec.random_pct", |s| opt(s.random_pct)),
    ("spec.parallel", |s| s.parallel.to_string()),
    ("spec.think", |s| {
        opt(s
            .think
            .map(|t| format!("{} I/Os, then {} ms", t.ios, t.think_ms)))
    }),
    ("spec.target_qd", |s| {
        let qd: Vec<String> = s.target_qd.iter().map(u32::to_string).collect();
        if qd.is_empty() {
            "none".into()
        } else {
            qd.join(",")
        }
    }),
];

const TARGET_SPEC_FIELDS: [Field<TargetSpec>; 4] = [
    ("path", |t| t.path.clone()),
    ("size_bytes", |t| opt(t.size_bytes)),
    ("threads", |t| opt(t.threads)),
    ("cpu_mask", |t| opt(t.cpu_mask.map(|m| format!("{m:#x}")))),
];

const TEST_FIELDS: [Field<TestResult>; 3] = [
    ("engine", |t| t.engine.to_string()),
    ("engine_features", |t| {
        EngineFeature::list(&t.engine_features)
    }),
    ("direct", |t| t.direct.to_string()),
];

const TARGET_FIELDS: [Field<TargetResult>; 3] = [
    ("kind", |t| t.kind.to_string()),
    ("device", |t| opt(t.device.as_ref())),
    ("fs_type", |t| opt(t.fs_type.as_ref())),
];

const RUN_FIELDS: [Field<RunResult>; 6] = [
    ("host.hostname", |r| r.host.hostname.clone()),
    ("host.kernel", |r| r.host.kernel.clone()),
    ("host.cpu_model", |r| r.host.cpu_model.clone()),
    ("host.cpus", |r| r.host.cpus.to_string()),
    ("host.memory_bytes", |r| human_bytes(r.host.memory_bytes)),
    ("iocap_version", |r| r.iocap_version.clone()),
];

/// Records the fields of matched list items as `prefix[i].field`, and an item present on one
/// side only as its first field against `none`.
fn indexed<T>(out: &mut Vec<Difference>, prefix: &str, b: &[T], r: &[T], list: &[Field<T>]) {
    for i in 0..b.len().max(r.len()) {
        match (b.get(i), r.get(i)) {
            (Some(bt), Some(rt)) => {
                let mut d = Vec::new();
                fields(&mut d, bt, rt, list);
                out.extend(d.into_iter().map(|x| Difference {
                    field: format!("{prefix}[{i}].{}", x.field),
                    ..x
                }));
            }
            (bt, rt) => {
                let (name, f) = list[0];
                let side = |t: Option<&T>| t.map_or_else(|| "none".to_string(), f);
                diff(out, format!("{prefix}[{i}].{name}"), side(bt), side(rt));
            }
        }
    }
}

pub(super) fn test_differences(b: &TestResult, r: &TestResult) -> Vec<Difference> {
    let mut out = Vec::new();
    fields(&mut out, &b.spec, &r.spec, &SPEC_FIELDS);
    let target_specs = (&b.spec.targets, &r.spec.targets);
    indexed(
        &mut out,
        "spec.targets",
        target_specs.0,
        target_specs.1,
        &TARGET_SPEC_FIELDS,
    );
    fields(&mut out, b, r, &TEST_FIELDS);
    // Targets missing on one side already show in the spec's target paths.
    let n = b.targets.len().min(r.targets.len());
    indexed(
        &mut out,
        "targets",
        &b.targets[..n],
        &r.targets[..n],
        &TARGET_FIELDS,
    );
    out
}

pub(super) fn run_differences(b: &RunResult, r: &RunResult) -> Vec<Difference> {
    let mut out = Vec::new();
    fields(&mut out, b, r, &RUN_FIELDS);
    config_differences(&mut out, b, r);
    out
}

/// Configuration checks whose value is a live reading that changes by nature from run to run
/// (docs/checks.md): free space, and the CPU's current clock. A change in them is not a change of
/// the configuration, so `compare` leaves them out.
pub const LIVE_READINGS: [&str; 2] = ["fs.free_space", "cpu.frequency"];

/// Configuration checks whose reading changed between the runs (a scheduler, a cache mode, a
/// governor), matched by check and subject; runs saved without a snapshot show none, and the
/// [`LIVE_READINGS`] are left out.
fn config_differences(out: &mut Vec<Difference>, b: &RunResult, r: &RunResult) {
    if b.config.is_empty() || r.config.is_empty() {
        return;
    }
    for rc in r
        .config
        .iter()
        .filter(|c| !LIVE_READINGS.contains(&c.id.as_str()))
    {
        let Some(bc) = b
            .config
            .iter()
            .find(|c| c.id == rc.id && c.subject == rc.subject)
        else {
            continue;
        };
        if bc.evidence != rc.evidence || bc.severity != rc.severity {
            out.push(Difference {
                field: format!("config.{} ({})", rc.id, rc.subject),
                base: format!("{}: {}", bc.severity, bc.evidence),
                run: format!("{}: {}", rc.severity, rc.evidence),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of a spec (but its name) is compared, so a new field cannot be missed: a
    /// spec with every optional part set, read as JSON, has no key the list lacks.
    #[test]
    fn every_spec_field_is_compared() {
        let spec = JobSpec {
            streams: Some(iocap_model::SeqStreams {
                stride_bytes: 8192,
                thread_stride_bytes: 0,
                shared: true,
            }),
            base_bytes: 4096,
            random_pct: Some(30),
            parallel: true,
            think: Some(iocap_model::ThinkTime {
                ios: 8,
                think_ms: 5,
            }),
            target_qd: vec![4],
            ..JobSpec::default()
        };
        let json = serde_json::to_value(&spec).unwrap();
        let listed: Vec<&str> = SPEC_FIELDS.iter().map(|(n, _)| &n[5..]).collect();
        for key in json.as_object().unwrap().keys() {
            assert!(
                key == "name" || listed.contains(&key.as_str()),
                "spec.{key} is not compared (SPEC_FIELDS)"
            );
        }
    }
}
