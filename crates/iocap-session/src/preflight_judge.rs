//! Preflight's judgement once everything ran: the device class of each role (the kernel's flag,
//! overruled by the qd-1 page reads' latency where they disagree), the read curve at the data
//! volume's own guideline, and the capacity table with a verdict per line.

use std::collections::HashMap;

use iocap_assess::{
    capacity_table, summarize, DeviceClass, Measured, PreflightInput, RoleClasses, SaturateConfig,
};
use iocap_model::Payload;
use iocap_model::{CurvePoint, TestResult};

use crate::preflight_config::{PreflightConfig, Sizing};
use crate::session::Session;

/// The class of each role's device, and the notes where kernel and measurement disagree.
fn classes(
    s: &Session,
    c: &PreflightConfig,
    steps: &[CurvePoint],
    idx: &HashMap<&'static str, u32>,
) -> (RoleClasses, Vec<String>) {
    let tests = &s.run.tests;
    let first_read = steps.first().map(|p| p.test_idx);
    let qd1 = first_read.and_then(|i| crate::class::qd1_read_p50(&tests[i as usize]));
    let data_device = first_read
        .and_then(|i| tests[i as usize].targets.first())
        .and_then(|t| t.device.clone());
    let mut notes = Vec::new();
    let mut class_of = |i: Option<&u32>| {
        c.forced_class.unwrap_or_else(|| {
            let Some(t) = i.and_then(|i| tests.get(*i as usize)) else {
                return DeviceClass::Flash;
            };
            let same = t.targets.first().and_then(|x| x.device.clone()) == data_device;
            let j = crate::class::judge(s.exec.facts(), t, qd1.filter(|_| same));
            if let Some(n) = j.note {
                let n = format!("Device class: {n}.");
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
            j.class
        })
    };
    let classes = RoleClasses {
        data: class_of(first_read.as_ref()),
        log: class_of(idx.get("log")),
        temp: class_of(idx.get("temp").or(first_read.as_ref())),
        backup: class_of(idx.get("backup")),
    };
    (classes, notes)
}

fn measured<'a>(tests: &'a [TestResult], i: u32) -> Measured<'a> {
    Measured {
        test: &tests[i as usize],
        test_idx: i,
    }
}

/// Puts the capacity table, the read curve and the spread across repeats on the run.
pub(crate) fn judge(
    s: &mut Session,
    c: &PreflightConfig,
    steps: &[CurvePoint],
    idx: &HashMap<&'static str, u32>,
    cfg: SaturateConfig,
    sizing: Sizing,
) {
    let (classes, class_notes) = classes(s, c, steps, idx);
    // the capacity figure is read at the data volume's own guideline
    let data_target = c.guidelines.for_class(classes.data).data_read_p99.pass_us();
    let saturation = summarize(
        steps,
        &[],
        &SaturateConfig {
            latency_target_us: Some(data_target),
            ..cfg
        },
    );
    let tests = &s.run.tests;
    let m = |k: &str| idx.get(k).map(|i| measured(tests, *i));
    let best = steps
        .iter()
        .max_by(|x, y| x.iops.total_cmp(&y.iops))
        .map(|p| measured(tests, p.test_idx));
    let mut input = PreflightInput::new(&c.profile.family, &c.guidelines);
    input.quick = c.quick;
    input.classes = classes;
    input.page_bytes = c.profile.page_bytes;
    input.data_read = best;
    input.data_read_curve = Some(&saturation);
    input.data_write = m("write");
    input.temp = m("temp");
    input.log_write_qd1 = m("log");
    input.scan = m("scan");
    input.backup = m("backup");
    input.expectations = c.expectations.as_ref();
    input.ram_bytes = s.run.host.memory_bytes;
    input.cpus = s.run.host.cpus;
    input.cache_size_bytes = c.cache_size_bytes;
    input.class_notes = class_notes;
    let mut preflight = capacity_table(&input);
    if let Some(z) = sizing {
        preflight.file_bytes = Some(z.bytes);
        preflight.cache_included = z.cache_included;
        if z.cache_included {
            preflight.warnings.push(z.sentence);
        }
    }
    let mut saturation = saturation;
    saturation.drops = iocap_assess::burst::drops(&s.run.tests);
    for d in &saturation.drops {
        preflight.warnings.push(burst_warning(&s.run.tests, d));
    }
    s.run.set(Payload::Preflight(preflight));
    s.run.set(Payload::Saturation(saturation));
}

/// A test's drop in words, for preflight's warnings.
fn burst_warning(tests: &[iocap_model::TestResult], d: &iocap_model::LevelDrop) -> String {
    let name = tests
        .get(d.test_idx as usize)
        .map_or("a test", |t| t.name.as_str());
    iocap_assess::burst::sentence(name, d)
}
