//! The cache-level rule on sweeps made from a model of an LRU cache, with and without noise;
//! the sizing of preflight's files.

use iocap_model::{CacheScan, CacheStep};

use crate::cachescan::{levels, size_files, working_sets, SizeLimits};

const MIB: u64 = 1 << 20;

/// Mean latency of random reads over `ws` bytes through LRU caches `(size, miss delay µs)`,
/// stacked, on a device answering in `base_us`: a read misses a level with probability
/// `1 - size/ws`.
fn model(ws: u64, base_us: f64, caches: &[(u64, f64)]) -> f64 {
    base_us
        + caches
            .iter()
            .map(|&(c, d)| d * (1.0 - (c as f64 / ws as f64).min(1.0)))
            .sum::<f64>()
}

fn sweep(max: u64, noise: &[f64], lat: impl Fn(u64) -> f64) -> Vec<CacheStep> {
    working_sets(max)
        .into_iter()
        .enumerate()
        .map(|(i, ws)| {
            let m = lat(ws) * noise.get(i % noise.len().max(1)).copied().unwrap_or(1.0);
            CacheStep {
                working_set_bytes: ws,
                warm_s: 0.1,
                qd32_test_idx: 2 * i as u32,
                qd1_test_idx: 2 * i as u32 + 1,
                lat_us_trim_mean: m,
                lat_us_p50: m,
                lat_us_p99: m * 2.0,
                iops_qd32: 1e6 / m,
            }
        })
        .collect()
}

#[test]
fn working_sets_double_from_16_mib_and_end_at_the_maximum() {
    assert_eq!(
        working_sets(1 << 30),
        (4..=10).map(|k| MIB << k).collect::<Vec<_>>()
    );
    assert_eq!(
        working_sets(100 * MIB),
        vec![16 * MIB, 32 * MIB, 64 * MIB, 100 * MIB]
    );
    assert_eq!(working_sets(70 * MIB), vec![16 * MIB, 32 * MIB, 64 * MIB]);
    assert_eq!(working_sets(8 * MIB), vec![8 * MIB]);
    assert!(working_sets(0).is_empty());
}

#[test]
fn one_cache_is_found_within_one_doubling() {
    for cache in [40 * MIB, 64 * MIB, 100 * MIB, 300 * MIB] {
        let steps = sweep(2 << 30, &[1.0], |ws| model(ws, 20.0, &[(cache, 1000.0)]));
        let l = levels(&steps);
        assert_eq!(l.len(), 1, "cache {cache}: {l:?}");
        assert!(
            l[0].fits_bytes <= cache && cache <= l[0].exceeds_bytes,
            "{l:?}"
        );
        assert_eq!(l[0].exceeds_bytes, 2 * l[0].fits_bytes);
        // the estimate from the hit share is near the real size
        let est = l[0].estimated_bytes as f64;
        assert!((est / cache as f64 - 1.0).abs() < 0.2, "{cache} -> {est}");
        assert!(l[0].miss_lat_us > 10.0 * l[0].hit_lat_us);
    }
}

#[test]
fn two_stacked_caches_are_two_levels() {
    let caches = [(32 * MIB, 300.0), (256 * MIB, 2000.0)];
    let steps = sweep(4 << 30, &[1.0, 1.1, 0.92], |ws| model(ws, 20.0, &caches));
    let l = levels(&steps);
    assert_eq!(l.len(), 2, "{l:?}");
    assert_eq!((l[0].fits_bytes, l[0].exceeds_bytes), (32 * MIB, 64 * MIB));
    assert_eq!(
        (l[1].fits_bytes, l[1].exceeds_bytes),
        (256 * MIB, 512 * MIB)
    );
    // the first level's misses are the second level's hits
    assert!(l[0].miss_lat_us < l[1].hit_lat_us * 1.3, "{l:?}");
}

#[test]
fn noise_and_a_lone_spike_are_not_caches() {
    let flat = sweep(8 << 30, &[1.0, 1.3, 0.8, 1.25, 0.85], |_| 500.0);
    assert!(levels(&flat).is_empty());
    // latency jumps once while the IOPS do not fall: one slow reading, not a cache
    let mut spike = sweep(1 << 30, &[1.0], |_| 100.0);
    spike[3].lat_us_trim_mean = 400.0;
    assert!(levels(&spike).is_empty());
    // one slow step, latency up and IOPS down, then back to the plateau: a stall, not a cache
    let mut stall = sweep(1 << 30, &[1.0], |_| 100.0);
    stall[2].lat_us_trim_mean = 400.0;
    stall[2].iops_qd32 /= 4.0;
    assert!(levels(&stall).is_empty());
    // a modest rise at the very last step: nothing confirms it, so no level, but a note
    let mut end = sweep(1 << 30, &[1.0], |_| 50.0);
    let n = end.len();
    end[n - 1].lat_us_trim_mean = 85.0;
    end[n - 1].iops_qd32 *= 0.8;
    assert!(levels(&end).is_empty());
    assert!(crate::cachescan::unconfirmed_last_rise(&end, &[]).is_some_and(|r| r > 1.6));
    // a steep one is a level
    end[n - 1].lat_us_trim_mean = 500.0;
    end[n - 1].iops_qd32 /= 4.0;
    assert_eq!(levels(&end).len(), 1);
    // no steps, one step, NaN: no level and no panic
    assert!(levels(&[]).is_empty());
    assert!(levels(&spike[..1]).is_empty());
    spike[4].lat_us_trim_mean = f64::NAN;
    spike[5].iops_qd32 = f64::NAN;
    assert!(levels(&spike).is_empty());
}

fn scan(levels_found: Vec<iocap_model::CacheLevel>, upto: u64) -> CacheScan {
    CacheScan {
        target: "t".into(),
        block_bytes: 8192,
        steps: vec![],
        levels: levels_found,
        tried_up_to_bytes: upto,
        stop_reason: String::new(),
        read_after_write: None,
        rechecks: Vec::new(),
        notes: vec![],
    }
}

#[test]
fn files_are_four_times_the_largest_cache_or_say_cache_included() {
    let found = levels(&sweep(2 << 30, &[1.0], |ws| {
        model(ws, 20.0, &[(300 * MIB, 1000.0)])
    }));
    let s = scan(found, 2 << 30);
    let roomy = SizeLimits {
        default_bytes: 1 << 30,
        space_bytes: 100 << 30,
        time_bytes: 100 << 30,
    };
    let f = size_files(&s, roomy);
    assert_eq!(f.bytes, 2 << 30, "4 x 512 MiB");
    assert!(!f.cache_included, "{}", f.sentence);
    let tight = SizeLimits {
        space_bytes: 1536 * MIB,
        ..roomy
    };
    let f = size_files(&s, tight);
    assert_eq!(f.bytes, 1536 * MIB);
    assert!(
        f.cache_included && f.sentence.contains("free space"),
        "{}",
        f.sentence
    );
    let slow = SizeLimits {
        time_bytes: 1 << 30,
        ..roomy
    };
    let f = size_files(&s, slow);
    assert_eq!(f.bytes, 1 << 30);
    assert!(
        f.cache_included && f.sentence.contains("time budget"),
        "{}",
        f.sentence
    );
    // nothing found: the default, and the sentence says what was not ruled out
    let none = size_files(&scan(vec![], 512 * MIB), roomy);
    assert_eq!(none.bytes, 1 << 30);
    assert!(
        none.sentence.contains("could not rule out"),
        "{}",
        none.sentence
    );
    let covered = size_files(&scan(vec![], 256 * MIB), roomy);
    assert!(
        !covered.sentence.contains("rule out"),
        "{}",
        covered.sentence
    );
}

#[test]
fn read_after_write_verdict() {
    use crate::cachescan::holds_recent_writes;
    assert!(holds_recent_writes(20.0, 900.0));
    assert!(!holds_recent_writes(700.0, 900.0));
    assert!(!holds_recent_writes(f64::NAN, 900.0));
    assert!(!holds_recent_writes(10.0, 0.0));
}

/// A memory-backed device whose reads vary from 5 to 25 µs between steps (the sweep CI saw on a
/// loop device over tmpfs while other tests ran): one lucky fast step is not a cache's end.
#[test]
fn a_lucky_fast_step_does_not_end_a_cache() {
    let lat = [21.2, 21.96, 7.45, 25.73, 26.56];
    let iops = [295_906.0, 231_366.0, 262_710.0, 217_313.0, 235_090.0];
    let steps = measured(&lat, &iops);
    assert!(levels(&steps).is_empty(), "{:?}", levels(&steps));
    // the same sweep with the fast step where its neighbours are: a real edge is still found
    let mut real = steps.clone();
    for s in &mut real[..3] {
        s.lat_us_trim_mean = 7.45;
        s.iops_qd32 = 295_000.0;
    }
    assert_eq!(levels(&real).len(), 1);
}

/// A slow first step (the host busy as the sweep began), then a fast one that fits a 40 MiB
/// cache and a last one past it: the rise past every earlier step is the cache's end, the
/// fast step no lucky reading (CI's figures, the preflight test beside other tests).
#[test]
fn a_slow_first_step_does_not_hide_the_cache_after_it() {
    let lat = [459.0, 274.0, 1230.0];
    let iops = [2773.0, 3413.0, 640.0];
    let steps = measured(&lat, &iops);
    let found = levels(&steps);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].fits_bytes, found[0].exceeds_bytes),
        (32 * MIB, 64 * MIB)
    );
}

/// The same with a smaller rise past the cache, from a quiet run of the two-level test: the
/// next step is past the slow first one by its IOPS (1,493 against 2,773).
#[test]
fn a_slow_first_step_is_the_host_s_when_the_iops_fall_past_it() {
    let lat = [455.0, 258.0, 606.0, 930.0];
    let iops = [2773.0, 3627.0, 1493.0, 960.0];
    let steps = measured(&lat, &iops);
    let found = levels(&steps);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].fits_bytes, 32 * MIB);
}

/// A sweep as measured: from 16 MiB doubling, one step per (mean qd-1 latency, qd-32 IOPS).
fn measured(lat: &[f64], iops: &[f64]) -> Vec<CacheStep> {
    lat.iter()
        .zip(iops)
        .enumerate()
        .map(|(i, (&lat, &iops))| CacheStep {
            working_set_bytes: (16 * MIB) << i,
            warm_s: 0.01,
            qd32_test_idx: 2 * i as u32,
            qd1_test_idx: 2 * i as u32 + 1,
            lat_us_trim_mean: lat,
            lat_us_p50: lat,
            lat_us_p99: lat * 5.0,
            iops_qd32: iops,
        })
        .collect()
}
