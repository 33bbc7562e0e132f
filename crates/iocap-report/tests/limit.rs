//! The limit a saturate run met (issue 37), in every view: the sweep over block sizes and the
//! verdict in the text (within 80 columns), the `limit` object scripts read in the JSON, and
//! the same sentences in the HTML. On a constructed run.

mod common;

use iocap_model::*;

/// A saturate run whose sweep shows an IOPS cap near 3,000 at 64 outstanding, as blk-throttle
/// grants it: the same count every second, latency spread wide, and the requests 0.4 ms of
/// their 21 ms in the device.
fn capped() -> RunResult {
    capped_timed(iocap_assess::DriverTime::Measured(
        iocap_assess::DeviceTime {
            test_idx: 4,
            requests: 30_000,
            iocap_ios: 30_000,
            device_us_mean: 400.0,
            iocap_us_mean: 21_300.0,
        },
    ))
}

fn capped_timed(driver: iocap_assess::DriverTime) -> RunResult {
    let mut r = common::saturation_run("capped", 1, 1.0, 1.0);
    r.command = Some(RunCommand::Saturate);
    let sat = r.saturation.as_mut().unwrap();
    sat.size_sweep = [(4u64, 3010.0), (8, 2990.0), (16, 3000.0), (64, 2960.0)]
        .iter()
        .enumerate()
        .map(|(i, &(kib, iops))| {
            let p50 = 64.0 / iops * 1e6;
            SizePoint {
                test_idx: i as u32,
                bs_bytes: kib * 1024,
                qd: 64,
                outstanding: 64,
                iops,
                mb_s: iops * (kib * 1024) as f64 / 1e6,
                lat_us_mean: Some(p50),
                lat_us_p50: Some(p50),
                lat_us_p99: Some(p50 * 150.0),
                per_second_iops: vec![iops; 5],
            }
        })
        .collect();
    sat.limit = iocap_assess::judge_limit(&sat.size_sweep, 3010.0, &driver);
    r
}

#[test]
fn the_text_names_the_cap_with_its_sweep_within_80_columns() {
    let text = iocap_report::run_text(&capped());
    assert!(
        text.contains("block sizes at qd 64 (64 outstanding)"),
        "{text}"
    );
    assert!(text.contains("limit:    an IOPS cap near 2,995"), "{text}");
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("steady per second"), "{text}");
    assert!(
        words.contains("IOPS flat, within 1 % of their median"),
        "{text}"
    );
    assert!(words.contains("cannot be told from the device"), "{text}");
    // the device's own time beside iocap's
    assert!(
        words.contains("steady per second, held above the driver (98 % of the time)"),
        "{text}"
    );
    assert!(
        words.contains(
            "requests waited 98 % of their time above the driver (device 400 µs of 21.3 ms, \
             30,000 requests): something holds them before the device, as a throttle does"
        ),
        "{text}"
    );
    for line in text.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
}

#[test]
fn the_json_carries_the_limit_kind_and_rate_for_scripts() {
    let v = serde_json::to_value(capped()).unwrap();
    let l = &v["saturation"]["limit"];
    assert_eq!(l["kind"], "iops_cap");
    assert_eq!(l["rate_unit"], "iops");
    let rate = l["rate"].as_f64().unwrap();
    assert!((rate / 3000.0 - 1.0).abs() < 0.01, "{rate}");
    assert_eq!(v["saturation"]["size_sweep"].as_array().unwrap().len(), 4);
    assert_eq!(l["device_time_test_idx"], 4);
    assert_eq!(l["device_requests"], 30_000);
    assert_eq!(l["device_time_us_mean"], 400.0);
    assert_eq!(l["iocap_lat_us_mean"], 21_300.0);
    let share = l["above_driver_pct"].as_f64().unwrap();
    assert!((share - 98.12).abs() < 0.01, "{share}");
    // not measured: the fields are absent, and a run saved before them reads back
    let why = iocap_assess::DriverTime::NotMeasured("a capture needs root".into());
    let plain = serde_json::to_value(capped_timed(why)).unwrap();
    let pl = plain["saturation"]["limit"].as_object().unwrap();
    assert!(!pl.contains_key("above_driver_pct") && !pl.contains_key("device_time_us_mean"));
    let back: RunResult = serde_json::from_value(plain).unwrap();
    assert_eq!(
        back.saturation.unwrap().limit.unwrap().above_driver_pct,
        None
    );
    // a run saved before the sweep reads back without one
    let mut old = v.clone();
    old["saturation"].as_object_mut().unwrap().remove("limit");
    old["saturation"]
        .as_object_mut()
        .unwrap()
        .remove("size_sweep");
    let back: RunResult = serde_json::from_value(old).unwrap();
    assert!(back.saturation.unwrap().limit.is_none());
}

#[test]
fn the_html_gives_the_verdict_its_evidence_and_the_sweep() {
    let html = iocap_report::html::render(&[capped()]);
    assert!(
        html.contains("Limit (iops_cap): an IOPS cap near 2,995"),
        "no verdict"
    );
    assert!(html.contains("Block sizes at qd 64 (64 outstanding):"));
    assert!(html.contains("cannot be told from the device"));
    assert!(html.contains("held above the driver (98 % of the time)"));
    assert!(html.contains("(device 400 µs of 21.3 ms, 30,000 requests)"));
}

/// Where the device's time could not be measured, the text says why in one line.
#[test]
fn the_text_says_why_the_device_time_was_not_measured() {
    let why = iocap_assess::DriverTime::NotMeasured("a capture needs root".into());
    let text = iocap_report::run_text(&capped_timed(why));
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("- the device's own time was not measured: a capture needs root"),
        "{text}"
    );
    assert!(!words.contains("held above the driver"), "{text}");
}
