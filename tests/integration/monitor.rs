//! `iocap monitor`: the kernel's disk counters, one report per interval.

use crate::iocap;

#[test]
fn monitor_prints_one_report_per_interval() {
    let dir = tempfile::tempdir().unwrap();
    let dev = std::fs::read_to_string("/proc/diskstats")
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .find(|d| !d.starts_with("loop") && !d.starts_with("ram"));
    let Some(dev) = dev else {
        crate::skip("no block device in /proc/diskstats");
        return;
    };
    let out = iocap(dir.path())
        .args([
            "monitor",
            &dev,
            "--count",
            "2",
            "--interval",
            "0.2s",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let reports: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 2);
    for r in &reports {
        assert_eq!(
            r[0]["device"],
            dev.as_str(),
            "a named device is always reported"
        );
        assert!(r[0]["util_pct"].as_f64().unwrap() <= 100.0);
    }
    let out = iocap(dir.path())
        .args(["monitor", &dev, "--count", "1", "--interval", "0.1s"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("r_await") && text.lines().any(|l| l.starts_with(&dev)),
        "{text}"
    );
    let out = iocap(dir.path())
        .args(["monitor", "no-such-disk", "--count", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-disk"));
}

/// A file on a real block device: `(dir, device)`, or `None` (with a note) where the
/// temporary directory is not on one.
fn dir_on_a_block_device() -> Option<(tempfile::TempDir, String)> {
    let dir = tempfile::tempdir().unwrap();
    match iocap_monitor::device_of_path(dir.path()) {
        Some(dev) => Some((dir, dev)),
        None => {
            crate::skip("the temporary directory is not on a block device");
            None
        }
    }
}

fn findings(t: &serde_json::Value) -> Vec<String> {
    t["os_counters"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["findings"].as_array().unwrap().clone())
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_test_carries_the_devices_counters_beside_its_own() {
    let Some((dir, dev)) = dir_on_a_block_device() else {
        return;
    };
    let out = iocap(dir.path())
        .args([
            "run",
            "--duration",
            "2.2s",
            "--warmup",
            "0.2s",
            "--size",
            "64M",
        ])
        .args(["--rw", "randread", "--output", "json", "--no-save"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["tests"][0];
    let os = &t["os_counters"];
    assert_eq!(os["source"], "/proc/diskstats");
    let d = os["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["role"] == "target")
        .expect("the target's device is sampled");
    assert_eq!(d["device"].as_str(), Some(dev.as_str()));
    assert_eq!(d["targets"][0], "iocap.testfile");
    // the same seconds as iocap's own series
    let edges = |a: &serde_json::Value| -> Vec<f64> {
        a.as_array()
            .unwrap()
            .iter()
            .map(|s| s["t_s"].as_f64().unwrap())
            .collect()
    };
    assert_eq!(edges(&d["series"]), edges(&t["per_second"]));
    // O_DIRECT reads all reach the device: it completed at least as many (others may add some)
    let (mine, devs) = (
        t["read"]["iops"].as_f64().unwrap(),
        d["summary"]["r_s"].as_f64().unwrap(),
    );
    assert!(devs >= 0.97 * mine, "device {devs} reads/s, iocap {mine}");
    assert!(!findings(t).contains(&"served_from_cache".to_string()));
    let rq = d["summary"]["rareq_sz_kb"].as_f64().unwrap();
    assert!(
        (rq - 8.0).abs() < 0.5,
        "8 KiB reads stay 8 KiB on the device: {rq}"
    );
}

#[test]
fn a_test_the_page_cache_answers_is_flagged() {
    let Some((dir, _dev)) = dir_on_a_block_device() else {
        return;
    };
    let run = |extra: &[&str]| {
        iocap(dir.path())
            .args([
                "run",
                "--duration",
                "1.2s",
                "--warmup",
                "0.3s",
                "--size",
                "16M",
            ])
            .args(["--no-save", "--buffered"])
            .args(extra)
            .output()
            .unwrap()
    };
    // first make the file and read it into the page cache
    assert!(run(&["--rw", "read"]).status.success());
    let out = run(&["--rw", "randread", "--output", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["tests"][0];
    assert!(
        findings(t).contains(&"served_from_cache".to_string()),
        "{}",
        t["os_counters"]
    );
    let warned = t["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("served from a cache"));
    assert!(warned, "{}", t["warnings"]);
    // and the terminal view says so beside the side-by-side table
    let out = run(&["--rw", "randread"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("OS counters over the same window"), "{text}");
    assert!(text.contains("served from a cache"), "{text}");
}

#[test]
fn a_target_without_a_block_device_says_why_it_has_no_counters() {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        crate::skip("no /dev/shm");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let out = iocap(dir.path())
        .args([
            "run",
            "--duration",
            "0.3s",
            "--warmup",
            "0s",
            "--size",
            "8M",
        ])
        .args(["--output", "json", "--no-save"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let os = &v["tests"][0]["os_counters"];
    assert!(os["devices"].as_array().unwrap().is_empty());
    let why = os["unavailable"][0].as_str().unwrap();
    assert!(
        why.contains("tmpfs") && why.contains("no block device"),
        "{why}"
    );
}
