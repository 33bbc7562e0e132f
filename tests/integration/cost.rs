//! `iocap cost`: every point of the quick matrix measures I/O and CPU, the three accountings
//! agree within reason, the models are fitted, and a foreign file is refused before anything
//! runs.

use predicates::prelude::*;

use crate::iocap;

#[test]
fn quick_cost_measures_cpu_per_io_three_ways() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path())
        // a point whose disk stalls (beside the whole suite one had no I/O in 0.6 s) is
        // measured again over a doubled window, so every point has I/O to divide by
        .args(["cost", "--quick", "--duration", "0.6s", "--warmup", "0.2s"])
        .args([
            "--size",
            "64M",
            "--target-iops",
            "200000",
            "--target-mbps",
            "2000",
        ])
        .args(["--output", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "iocap failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["command"], "cost");
    let c = &v["cost"];
    assert_eq!(c["matrix"], "quick");
    let points = c["points"].as_array().unwrap();
    assert_eq!(points.len(), 12);
    assert_eq!(
        v["tests"].as_array().unwrap().len(),
        12,
        "each point's full result"
    );
    let hz = c["clock_ticks_per_s"].as_f64().unwrap();
    let (mut proc_s, mut sys_s) = (0.0, 0.0);
    for p in points {
        let what = format!("{} {} {}", p["engine"], p["rw"], p["bs_bytes"]);
        let test = &v["tests"][p["test_idx"].as_u64().unwrap_or(0) as usize];
        assert!(
            p["ios"].as_u64().unwrap() > 0,
            "{what}: no I/O: {p:#}\nits test: {:#}",
            test["warnings"]
        );
        let pu = p["process"]["us_per_io"].as_f64().unwrap();
        assert!(pu > 0.0, "{what}: no process CPU per I/O");
        assert!(p["process"]["us_per_kb"].as_f64().unwrap() > 0.0);
        let (pc, sc) = (
            p["process"]["cpu_s"].as_f64().unwrap(),
            p["system"]["cpu_s"].as_f64().unwrap(),
        );
        // /proc/stat is sampled by clock ticks (10 ms), the process's time is exact: one point
        // can be off by a few ticks and by the tick sampling, so each point only loosely...
        assert!(
            sc >= 0.5 * pc - 4.0 / hz,
            "{what}: system-wide {sc} s against process {pc} s"
        );
        let e = p["elsewhere"]["cpu_s"].as_f64().unwrap();
        assert!(
            (sc - pc - e).abs() < 1e-9,
            "{what}: elsewhere = system - process"
        );
        proc_s += pc;
        sys_s += sc;
    }
    // ...and all points together closely: the whole machine was at least as busy as iocap
    assert!(
        sys_s >= 0.85 * proc_s - 2.0 * points.len() as f64 / hz,
        "system-wide {sys_s} s against process {proc_s} s over all points"
    );
    let models = c["models"].as_array().unwrap();
    assert_eq!(
        models.len(),
        8,
        "psync and io_uring × read/write × 2 accountings"
    );
    for m in models {
        for k in ["fixed_us", "per_kb_us", "r2"] {
            assert!(m[k].as_f64().unwrap().is_finite(), "{m}: {k}");
        }
        assert_eq!(m["points"].as_array().unwrap().len(), 3);
    }
    let answers = c["answers"].as_array().unwrap();
    for kind in [
        "iops_per_core",
        "cores_for_iops",
        "mb_s_per_core",
        "cores_for_mb_s",
    ] {
        assert!(
            answers.iter().any(|a| a["kind"] == kind),
            "no {kind} answer: {answers:?}"
        );
    }
    // no NaN or infinity printed in any sentence (a number is never NaN in JSON: serde writes
    // null). The histograms are base64, where "NaN" is just three letters: they are left out.
    fn words(v: &serde_json::Value, at: &str, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::String(s) => out.push((at.to_string(), s.clone())),
            serde_json::Value::Array(a) => a.iter().for_each(|x| words(x, at, out)),
            serde_json::Value::Object(o) => o
                .iter()
                .filter(|(k, _)| k.as_str() != "lat_hist_ns")
                .for_each(|(k, x)| words(x, k, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    words(&v, "", &mut all);
    for (key, text) in all {
        assert!(
            !text.contains("NaN") && !text.contains("inf "),
            "{key}: {text}"
        );
    }
}

#[test]
fn a_foreign_file_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("database.mdf");
    let data: Vec<u8> = (0..(4u32 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&p, &data).unwrap();
    iocap(dir.path())
        .args(["cost", "--quick", "--duration", "0.2s", "--no-save"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did not create"))
        .stderr(predicate::str::contains("iocap: [").not());
    assert_eq!(std::fs::read(&p).unwrap(), data, "the file changed");
}

#[test]
fn bad_answers_flags_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [["--bs", "0"], ["--mb-bs", "0"], ["--qd", "0"]] {
        iocap(dir.path())
            .args(["cost", "--quick", "--no-save"])
            .args(bad)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(bad[0]))
            .stderr(predicate::str::contains("iocap: [").not());
    }
    assert!(
        !dir.path().join("iocap.testfile").exists(),
        "nothing was created"
    );
}

#[test]
fn points_without_io_are_said_so_not_shown_as_zero_cost() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path())
        .args(["cost", "--quick", "--duration", "1us", "--warmup", "0s"])
        .args(["--size", "16M", "--no-save"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // a 1 µs window completes no I/O at any point: each one is named, none shows 0.00 µs
    let said = text.matches("no I/O completed in its window").count();
    assert!(said >= 10, "{said} points said so:\n{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("direct") && l.contains("psync") && l.contains('│'))
        .collect();
    assert!(!rows.is_empty(), "{text}");
    for r in rows {
        assert!(!r.contains("0.00"), "a zero shown as a figure: {r}");
    }
}
