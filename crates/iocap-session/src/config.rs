//! What every run records besides its figures: the host's configuration under its targets (the
//! audit's checks, through the executor) and warnings where the clock itself distorts the
//! latencies.

use std::path::PathBuf;

use iocap_model::RunResult;

use crate::executor::HostFacts;

/// Records the configuration under the run's targets (and of the host) on the run, once.
pub fn record_config(exec: &dyn HostFacts, run: &mut RunResult) {
    flag_timer(run);
    if !run.config.is_empty() {
        return;
    }
    let mut paths: Vec<PathBuf> = run
        .tests
        .iter()
        .flat_map(|t| t.targets.iter().map(|x| PathBuf::from(&x.path)))
        .collect();
    paths.sort();
    paths.dedup();
    run.config = exec.config(&paths);
}

/// Warns on every test whose latencies the clock itself distorts: the clock went backwards in
/// the run's self-check, it is coarser than a microsecond, or reading it (twice per I/O at
/// most) costs 1 % or more of the test's median latency.
pub fn flag_timer(run: &mut RunResult) {
    let Some(timer) = run.timer.clone() else {
        return;
    };
    for t in &mut run.tests {
        let mut add = |w: String| {
            if !t.warnings.contains(&w) {
                t.warnings.push(w);
            }
        };
        if timer.backwards > 0 {
            add(format!(
                "timer: {} went backwards {} times in {} readings of the self-check \
                 (clocksource {}): latency figures from it cannot be trusted",
                timer.clock,
                timer.backwards,
                timer.readings,
                timer.clocksource.as_deref().unwrap_or("unknown")
            ));
        }
        if timer.resolution_ns > 1000 {
            add(format!(
                "timer: {} resolves only {} ns: latencies are rounded to that",
                timer.clock, timer.resolution_ns
            ));
        }
        if let Some(p50) = t.total.lat_us.as_ref().map(|l| l.p50) {
            let share = timer.share_of(p50 * 1e3);
            if share >= 0.01 {
                add(format!(
                    "timer: reading the clock costs {} ns ({} clocksource); at two readings \
                     per I/O that is {:.1} % of this test's median latency of {:.2} µs, so the \
                     shortest latencies are partly the timer's",
                    timer.median_step_ns,
                    timer.clocksource.as_deref().unwrap_or("unknown"),
                    share * 100.0,
                    p50
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use iocap_model::fixture::{run, FixtureRun};
    use iocap_model::TimerCheck;

    fn timed(p50_us: f64, timer: TimerCheck) -> Vec<String> {
        let mut r = run(&FixtureRun {
            p50_us,
            ..FixtureRun::default()
        });
        r.timer = Some(timer);
        super::flag_timer(&mut r);
        r.tests[0].warnings.clone()
    }

    fn clock(median_step_ns: u64) -> TimerCheck {
        TimerCheck {
            clock: "CLOCK_MONOTONIC".into(),
            median_step_ns,
            resolution_ns: 1,
            readings: 1000,
            ..TimerCheck::default()
        }
    }

    #[test]
    fn a_timer_that_costs_a_share_of_the_latency_is_flagged() {
        // 30 ns against 200 µs: nothing to say
        assert!(timed(200.0, clock(30)).is_empty());
        // 30 ns twice against 2 µs: 3 %
        let w = timed(2.0, clock(30));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("3.0 %") && w[0].contains("30 ns"), "{w:?}");
        // a slow clock source flags even ordinary latencies: 1.5 µs a reading against 100 µs
        assert_eq!(timed(100.0, clock(1500)).len(), 1);
        // a clock that went backwards or is coarse is always reported
        let mut bad = clock(30);
        bad.backwards = 3;
        bad.resolution_ns = 4_000_000;
        let w = timed(200.0, bad);
        assert!(
            w.iter().any(|w| w.contains("went backwards 3 times")),
            "{w:?}"
        );
        assert!(
            w.iter().any(|w| w.contains("resolves only 4000000 ns")),
            "{w:?}"
        );
        // flagging twice adds nothing
        let mut r = run(&FixtureRun {
            p50_us: 2.0,
            ..FixtureRun::default()
        });
        r.timer = Some(clock(30));
        super::flag_timer(&mut r);
        super::flag_timer(&mut r);
        assert_eq!(r.tests[0].warnings.len(), 1);
    }
}
