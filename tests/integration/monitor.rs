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

/// A buffered random-read test on a file already in the page cache is flagged
/// `served_from_cache`: its device completed fewer than half as many reads as iocap made. The
/// device counts every process's reads, though (docs/run.md), and another process reading the
/// same disk at more than half iocap's rate (fio beside the test suite, in
/// bench/busy-suite.sh) leaves the rule nothing to see: what the test then asserts is what the
/// rule says then, no flag, after checking, from the kernel's I/O accounting of the iocap
/// process, that the page cache did answer iocap's reads, so that the device's reads were
/// others'.
#[test]
fn a_test_the_page_cache_answers_is_flagged() {
    let Some((dir, _dev)) = dir_on_a_block_device() else {
        return;
    };
    let args = |extra: &[&str]| -> Vec<String> {
        [
            "run",
            "--duration",
            "1.2s",
            "--warmup",
            "0.3s",
            "--size",
            "16M",
        ]
        .iter()
        .chain(&["--buffered"])
        .chain(extra)
        .map(|a| a.to_string())
        .collect()
    };
    // first make the file and read it into the page cache
    let out = iocap(dir.path())
        .args(args(&["--rw", "read", "--no-save"]))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // the test, saved, so that its terminal view can be shown after
    let (ok, from_storage) = run_counting_storage_reads(
        dir.path(),
        &args(&["--rw", "randread", "--db", "r.db", "--output", "json"]),
    );
    let stdout = std::fs::read(dir.path().join("stdout")).unwrap();
    let stderr = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    let t = &v["tests"][0];
    let read_bytes = t["read"]["bytes"].as_f64().unwrap();
    assert!(
        (from_storage as f64) < 0.01 * read_bytes,
        "the page cache did not answer: iocap read {from_storage} B from storage for its \
         {read_bytes} B"
    );
    let d = t["os_counters"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["role"] == "target")
        .expect("the target's device is sampled");
    // the rule's figures: the device's reads/s over the window, iocap's on that device
    let device = d["summary"]["r_s"].as_f64().unwrap();
    let mine: f64 = t["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["read"]["iops"].as_f64().unwrap())
        .sum();
    let flagged = findings(t).contains(&"served_from_cache".to_string());
    let warned = t["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("served from a cache"));
    let shown = iocap(dir.path())
        .args(["show", "last", "--db", "r.db"])
        .output()
        .unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let text = String::from_utf8_lossy(&shown.stdout);
    // the terminal view puts the device's counters beside iocap's
    assert!(text.contains("OS counters over the same window"), "{text}");
    if device < 0.5 * mine {
        assert!(flagged, "{}", t["os_counters"]);
        assert!(warned, "{}", t["warnings"]);
        // and says so beside the side-by-side table
        assert!(text.contains("served from a cache"), "{text}");
    } else {
        // others' reads, at least half iocap's rate: the rule cannot tell, and does not flag
        assert!(
            !flagged && !warned,
            "{}\n{}",
            t["os_counters"],
            t["warnings"]
        );
        eprintln!(
            "note: {} completed {device:.0} reads/s of other processes' beside iocap's \
             {mine:.0} from the page cache: the flag cannot be seen on this busy disk",
            d["device"].as_str().unwrap_or("?")
        );
    }
}

/// `iocap ARGS` in `dir` to its end, its stdout and stderr in `dir`'s files `stdout` and
/// `stderr`: whether it succeeded, and the bytes it read from storage, as the kernel's I/O
/// accounting counts them for the process and its threads (`ru_inblock` of wait4(2), in 512 B
/// units; a read the page cache answers is not among them, whatever else reads the disk).
#[allow(
    clippy::zombie_processes,
    reason = "wait4(2) reaps the child: Child::wait would not give its rusage"
)]
fn run_counting_storage_reads(dir: &std::path::Path, args: &[String]) -> (bool, u64) {
    let file = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iocap"))
        .args(args)
        .current_dir(dir)
        .env_remove("IOCAP_TEST_NO_IO_URING")
        .env_remove("IOCAP_TEST_REFUSE_DIRECT")
        .env_remove("IOCAP_DB")
        .env("XDG_DATA_HOME", crate::data_home())
        .stdout(file("stdout"))
        .stderr(file("stderr"))
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4(2) on the child started above, not yet waited for, with pointers to
    // live locals
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    (ok, usage.ru_inblock as u64 * 512)
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
