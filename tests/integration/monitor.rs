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
        eprintln!("skipping: no block device in /proc/diskstats");
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
