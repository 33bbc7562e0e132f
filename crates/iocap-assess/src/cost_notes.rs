//! The notes under a cost report, judged from the points measured: points without I/O, cache-miss
//! points that ended mostly cached, registered buffers that could not be registered, and time
//! the hypervisor stole. Judgement, so assess's (issue 26 §5), pure.

use iocap_model::{CacheMode, CostPoint, EngineChoice, EngineFeature, System};

/// The notes on `cost_points`, measured on a host of `cpus` CPUs.
pub fn notes(cost_points: &[CostPoint], cpus: u32) -> Vec<String> {
    let mut notes = Vec::new();
    for p in cost_points {
        if p.ios == 0 {
            notes.push(format!(
                "{} {} {} {} qd {}: no I/O completed in its window (is --duration too short?), so it \
                 has no CPU per I/O and is left out of the models",
                p.engine.name_on(System::HOST),
                p.rw,
                iocap_model::format_bytes(p.bs_bytes),
                p.cache,
                p.qd
            ));
        }
        if p.cache == CacheMode::Miss && p.resident_after_pct.is_some_and(|r| r > 50.0) {
            notes.push(format!(
                "{} {} {} qd {}: {:.0} % of the file was cached when it ended, so part of its \
                 reads were hits; a larger --size keeps it a miss",
                p.engine.name_on(System::HOST),
                p.rw,
                iocap_model::format_bytes(p.bs_bytes),
                p.qd,
                p.resident_after_pct.unwrap_or(0.0)
            ));
        }
        if p.engine == EngineChoice::IoUring
            && !p
                .engine_features
                .contains(&EngineFeature::RegisteredBuffers)
        {
            notes.push(format!(
                "io_uring {} {} qd {}: the buffers could not be registered (RLIMIT_MEMLOCK, \
                 ulimit -l): it ran with plain buffers",
                p.rw,
                iocap_model::format_bytes(p.bs_bytes),
                p.qd
            ));
        }
    }
    let stolen: Vec<f64> = cost_points
        .iter()
        .filter(|p| p.duration_s > 0.0)
        .filter_map(|p| Some(100.0 * p.steal_s? / (p.duration_s * f64::from(cpus.max(1)))))
        .filter(|pct| *pct > 2.0)
        .collect();
    if let Some(max) = stolen.iter().copied().reduce(f64::max) {
        notes.push(format!(
            "the hypervisor stole CPU time in {} of {} points (up to {max:.0} % of all CPUs' time in the window): virtual CPUs, so the figures are inflated and noisy",
            stolen.len(),
            cost_points.len()
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::IoDirection;

    fn point(cache: CacheMode, ios: u64, resident: Option<f64>, steal_s: Option<f64>) -> CostPoint {
        CostPoint {
            engine: EngineChoice::Psync,
            rw: IoDirection::Read,
            bs_bytes: 8192,
            cache,
            qd: 1,
            ios,
            duration_s: 2.0,
            resident_after_pct: resident,
            steal_s,
            ..CostPoint::default()
        }
    }

    #[test]
    fn each_doubt_about_a_point_is_said() {
        let n = notes(
            &[
                point(CacheMode::Direct, 0, None, None),
                point(CacheMode::Miss, 100, Some(80.0), None),
                point(CacheMode::Hit, 100, Some(100.0), Some(0.4)),
            ],
            2,
        );
        assert_eq!(n.len(), 3, "{n:?}");
        assert!(
            n[0].contains("psync read 8K direct qd 1: no I/O completed"),
            "{}",
            n[0]
        );
        assert!(n[1].contains("80 % of the file was cached"), "{}", n[1]);
        assert!(
            n[2].contains("stole CPU time in 1 of 3 points (up to 10 %"),
            "{}",
            n[2]
        );
        // a miss that stayed a miss, no steal: nothing to say
        assert!(notes(&[point(CacheMode::Miss, 100, Some(3.0), Some(0.0))], 2).is_empty());
    }
}
