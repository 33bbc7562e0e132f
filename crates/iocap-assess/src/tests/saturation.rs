use crate::saturate::*;
use crate::tests::pt;
use iocap_model::CurvePoint;

fn decide_all(steps: &[CurvePoint], cfg: &SaturateConfig) -> Vec<StepDecision> {
    (1..=steps.len())
        .map(|k| next_step(&steps[..k], cfg))
        .collect()
}

#[test]
fn clean_knee_at_qd_8() {
    let steps = [
        pt(1, 10_000.0, 200.0),
        pt(2, 19_000.0, 220.0),
        pt(4, 36_000.0, 260.0),
        pt(8, 60_000.0, 350.0),
        pt(16, 61_500.0, 700.0),
        pt(32, 62_000.0, 1400.0),
    ];
    let cfg = SaturateConfig::default();
    assert_eq!(next_step(&[], &cfg), StepDecision::Continue { qd: 1 });
    let d = decide_all(&steps, &cfg);
    assert_eq!(d[3], StepDecision::Continue { qd: 16 });
    // one flat step is not enough: confirm with the next
    assert_eq!(d[4], StepDecision::Continue { qd: 32 });
    assert_eq!(
        d[5],
        StepDecision::Stop {
            reason: StopReason::Knee,
            knee_qd: Some(8)
        }
    );
    let s = summarize(&steps, &[], &cfg);
    assert_eq!(s.knee_qd, Some(8));
    assert_eq!(s.max_iops, 62_000.0);
    assert!(
        s.stop_reason.contains("past qd 8 (60,000 IOPS)"),
        "{}",
        s.stop_reason
    );
    // without confirmation the first flat step decides
    let quick = SaturateConfig {
        confirm_flat: false,
        ..cfg
    };
    assert_eq!(
        next_step(&steps[..5], &quick),
        StepDecision::Stop {
            reason: StopReason::Knee,
            knee_qd: Some(8)
        }
    );
}

#[test]
fn never_flattens_stops_at_max_qd() {
    let steps: Vec<CurvePoint> = (0..9)
        .map(|i| pt(1 << i, 1000.0 * f64::from(1u32 << i), 100.0 + f64::from(i)))
        .collect();
    let cfg = SaturateConfig::default();
    let d = decide_all(&steps, &cfg);
    assert!(d[..8]
        .iter()
        .all(|x| matches!(x, StepDecision::Continue { .. })));
    assert_eq!(
        d[8],
        StepDecision::Stop {
            reason: StopReason::MaxQd,
            knee_qd: None
        }
    );
    let s = summarize(&steps, &[], &cfg);
    assert_eq!(s.knee_qd, None);
    assert!(s
        .stop_reason
        .contains("largest queue depth, 256, with throughput still gaining"));
    assert_eq!(crate::saturate::last_gain_pct(&steps), Some(100.0));
}

#[test]
fn latency_ceiling_stops_the_steps() {
    let steps = [
        pt(1, 200.0, 3000.0),
        pt(2, 390.0, 4000.0),
        pt(4, 700.0, 6000.0),
    ];
    let cfg = SaturateConfig {
        lat_ceiling_us: Some(5000.0),
        ..SaturateConfig::default()
    };
    assert_eq!(
        next_step(&steps, &cfg),
        StepDecision::Stop {
            reason: StopReason::LatencyCeiling,
            knee_qd: None
        }
    );
    let s = summarize(&steps, &[], &cfg);
    assert!(
        s.stop_reason
            .contains("6 ms at qd 4, at or above the 5 ms ceiling"),
        "{}",
        s.stop_reason
    );
    // a flat step at the ceiling stands as the knee, unconfirmed
    let flat = [
        pt(1, 200.0, 3000.0),
        pt(2, 390.0, 4000.0),
        pt(4, 395.0, 8000.0),
    ];
    assert_eq!(
        next_step(&flat, &cfg),
        StepDecision::Stop {
            reason: StopReason::LatencyCeiling,
            knee_qd: Some(2)
        }
    );
}

#[test]
fn noisy_curve_ignores_a_single_dip() {
    let steps = [
        pt(1, 10_000.0, 100.0),
        pt(2, 19_000.0, 110.0),
        pt(4, 36_000.0, 120.0),
        pt(8, 33_000.0, 180.0), // noise: a dip with a latency blip
        pt(16, 62_000.0, 200.0),
        pt(32, 80_000.0, 300.0),
        pt(64, 82_000.0, 600.0),
        pt(128, 83_000.0, 1200.0),
    ];
    let cfg = SaturateConfig::default();
    let d = decide_all(&steps, &cfg);
    assert_eq!(d[3], StepDecision::Continue { qd: 16 });
    assert_eq!(d[6], StepDecision::Continue { qd: 128 });
    assert_eq!(
        d[7],
        StepDecision::Stop {
            reason: StopReason::Knee,
            knee_qd: Some(32)
        }
    );
    // flat throughput with flat latency is not a knee (e.g. a throttle), keep going
    let no_rise = [
        pt(1, 1000.0, 500.0),
        pt(2, 1010.0, 500.0),
        pt(4, 1005.0, 490.0),
    ];
    assert_eq!(next_step(&no_rise, &cfg), StepDecision::Continue { qd: 8 });
}

#[test]
fn capacity_at_target_picks_the_best_point_under_it() {
    let steps = [
        pt(1, 10_000.0, 300.0),
        pt(2, 19_000.0, 500.0),
        pt(4, 36_000.0, 800.0),
        pt(8, 60_000.0, 1100.0),
        pt(16, 61_000.0, 2500.0),
        pt(32, 61_500.0, 5000.0),
    ];
    let mut throttled: Vec<CurvePoint> = throttle_points(61_500.0)
        .into_iter()
        .map(|(pct, rate)| CurvePoint {
            load_pct: Some(pct),
            test_idx: 100 + pct as u32,
            ..pt(64, rate, if pct <= 80.0 { 900.0 } else { 2000.0 })
        })
        .collect();
    throttled[0].lat_us_p99 = None; // no latency: never counts
    let cfg = SaturateConfig {
        latency_target_us: Some(1000.0),
        ..SaturateConfig::default()
    };
    let s = summarize(&steps, &throttled, &cfg);
    assert_eq!(s.capacity_iops_at_target, Some(61_500.0 * 0.8));
    assert_eq!(s.capacity_qd_at_target, Some(64));
    assert_eq!(s.knee_qd, Some(8));
    let tight = SaturateConfig {
        latency_target_us: Some(400.0),
        ..cfg.clone()
    };
    let s = summarize(&steps, &[], &tight);
    assert_eq!(
        (s.capacity_iops_at_target, s.capacity_qd_at_target),
        (Some(10_000.0), Some(1))
    );
    let none = SaturateConfig {
        latency_target_us: Some(10.0),
        ..cfg
    };
    assert_eq!(summarize(&steps, &[], &none).capacity_iops_at_target, None);
}

#[test]
fn odd_input_does_not_panic() {
    let cfg = SaturateConfig::default();
    let s = summarize(&[], &[], &cfg);
    assert_eq!((s.max_iops, s.knee_qd), (0.0, None));
    assert_eq!(s.stop_reason, "no steps were measured");
    let zero = [pt(1, 0.0, 100.0)];
    assert_eq!(
        next_step(&zero, &cfg),
        StepDecision::Stop {
            reason: StopReason::NoIo,
            knee_qd: None
        }
    );
    assert!(summarize(&zero, &[], &cfg)
        .stop_reason
        .contains("measured no I/O"));
    let mut nan = pt(2, f64::NAN, f64::NAN);
    nan.lat_us_p50 = None;
    let steps = [pt(1, 100.0, 100.0), nan];
    assert!(matches!(
        next_step(&steps, &cfg),
        StepDecision::Stop {
            reason: StopReason::NoIo,
            ..
        }
    ));
    assert_eq!(summarize(&steps, &[], &cfg).max_iops, 100.0);
    let unfinished = summarize(&[pt(1, 100.0, 100.0)], &[], &cfg);
    assert!(unfinished.stop_reason.contains("ended at qd 1"));
    assert!(throttle_points(f64::NAN).is_empty());
    assert!(throttle_points(0.0).is_empty());
    let t = throttle_points(1000.0);
    assert_eq!(t.len(), 6);
    assert_eq!(t[0], (10.0, 100.0));
    assert_eq!(t[5], (100.0, 1000.0));
    // a max qd that is not a power of two still ends
    let odd = SaturateConfig {
        max_qd: 3,
        ..SaturateConfig::default()
    };
    assert!(matches!(
        next_step(&[pt(1, 10.0, 1.0), pt(2, 20.0, 2.0)], &odd),
        StepDecision::Stop {
            reason: StopReason::MaxQd,
            ..
        }
    ));
}

/// A step at `iops` whose ten seconds swing by ±`spread` (a fraction) in a fixed pattern.
fn noisy_pt(qd: u32, iops: f64, p99_us: f64, spread: f64) -> CurvePoint {
    let pattern = [0.9, -0.4, 0.7, -1.0, 0.2, -0.6, 1.0, -0.2, 0.5, -0.9];
    let mean = pattern.iter().sum::<f64>() / pattern.len() as f64;
    CurvePoint {
        per_second_iops: pattern
            .iter()
            .map(|u| iops * (1.0 + spread * (u - mean)))
            .collect(),
        ..pt(qd, iops, p99_us)
    }
}

#[test]
fn a_gain_inside_the_noise_is_flat_and_a_steady_one_is_not() {
    let cfg = SaturateConfig::default();
    // +8 % per doubling while p99 rises: a gain by the 5 % rule
    let curve = |spread: f64| {
        [
            noisy_pt(1, 10_000.0, 200.0, spread),
            noisy_pt(2, 10_800.0, 300.0, spread),
            noisy_pt(4, 11_664.0, 450.0, spread),
        ]
    };
    // ±20 % seconds: 8 % is noise, two flat steps make a knee at qd 1
    let d = decide_all(&curve(0.2), &cfg);
    assert_eq!(
        d[2],
        StepDecision::Stop {
            reason: StopReason::Knee,
            knee_qd: Some(1)
        }
    );
    // ±1 % seconds: 8 % is real, keep raising
    let d = decide_all(&curve(0.01), &cfg);
    assert_eq!(d[2], StepDecision::Continue { qd: 8 });
    // without series the 5 % rule alone decides, as before
    let plain: Vec<CurvePoint> = curve(0.2)
        .into_iter()
        .map(|p| CurvePoint {
            per_second_iops: vec![],
            ..p
        })
        .collect();
    assert_eq!(
        decide_all(&plain, &cfg)[2],
        StepDecision::Continue { qd: 8 }
    );
}

/// The shared queue-depth ramp, driven by a mock step: it asks for 1, 2, 4, ... until the
/// curve flattens, stops at once when a step says so, and passes a step's error on.
#[test]
fn the_ramp_asks_for_doublings_until_the_knee_or_a_stop() {
    let cfg = crate::SaturateConfig::default();
    // IOPS double up to qd 8, then stay flat while p99 keeps rising
    let curve = |qd: u32| pt(qd, 1000.0 * f64::from(qd.min(8)), 100.0 * f64::from(qd));
    let mut asked = Vec::new();
    let steps = crate::ramp::<()>(&cfg, |qd| {
        asked.push(qd);
        Ok((curve(qd), false))
    })
    .unwrap();
    assert_eq!(asked[..4], [1, 2, 4, 8]);
    assert!(asked.len() < 9 && *asked.last().unwrap() <= 64, "{asked:?}");
    assert_eq!(steps.len(), asked.len());
    // a step that must stop (Ctrl-C, an error in the test) ends the ramp after it
    let steps = crate::ramp::<()>(&cfg, |qd| Ok((curve(qd), qd == 2))).unwrap();
    assert_eq!(steps.iter().map(|p| p.qd).collect::<Vec<_>>(), [1, 2]);
    // an error is passed on
    assert_eq!(
        crate::ramp(&cfg, |_| Err::<(_, bool), _>("no target")),
        Err("no target")
    );
}
