//! Many hosts, one test (the `mpi` feature): `mpirun --oversubscribe -np N iocap ...` on this
//! machine, each rank on its own file. The merged figures are the ranks' sums and the
//! percentiles those of the added histograms; the run is saved once with a scope per rank; a
//! failing or refused rank stops every rank and is named. Run by CI with
//! `cargo test --features mpi --test integration mpi`; needs OpenMPI's mpirun.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use iocap_model::hist::{decode_hist, quantile_us};
use serde_json::Value;

/// `mpirun -np n iocap args..` in `dir`, with a private store there.
fn mpirun(dir: &Path, n: u32, args: &[&str]) -> std::process::Output {
    Command::new("mpirun")
        .args(["--oversubscribe", "-np", &n.to_string()])
        .arg(assert_cmd::cargo::cargo_bin("iocap"))
        .args(args)
        .current_dir(dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("IOCAP_DB")
        .output()
        .expect("mpirun (OpenMPI) is installed")
}

fn json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON alone on stdout, from rank 0 alone")
}

fn ranks(t: &Value) -> &Vec<Value> {
    t["ranks"]["ranks"].as_array().expect("a scope per rank")
}

const RUN: &[&str] = &["--size", "32M", "--duration", "2s", "--warmup", "0.5s"];

#[test]
fn four_ranks_merge_into_one_saved_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut args = vec!["run", "--output", "json"];
    args.extend(RUN);
    args.push("t{rank}.dat");
    let v = json(&mpirun(d, 4, &args));
    let t = &v["tests"][0];
    let rs = ranks(t);
    assert_eq!(rs.len(), 4);
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(r["rank"], i as u64);
        assert!(
            d.join(format!("t{i}.dat")).exists(),
            "each rank its own file"
        );
    }
    // the merged IOPS are the sum of the ranks'
    let sum: f64 = rs
        .iter()
        .map(|r| r["result"]["total"]["iops"].as_f64().unwrap())
        .sum();
    let iops = t["total"]["iops"].as_f64().unwrap();
    assert!((iops - sum).abs() < 1e-6 * sum, "{iops} vs {sum}");
    let ios: u64 = rs
        .iter()
        .map(|r| r["result"]["total"]["ios"].as_u64().unwrap())
        .sum();
    assert_eq!(t["total"]["ios"], ios);
    // the merged p99 is the p99 of the ranks' histograms added up
    let tot = |r: &Value| r["result"]["total"].clone();
    let hists: Vec<_> = rs
        .iter()
        .map(|r| decode_hist(tot(r)["lat_hist_ns"].as_str().unwrap()).unwrap())
        .collect();
    let mut h = hists[0].clone();
    for x in &hists[1..] {
        h.add(x).unwrap();
    }
    let lat = |r: &Value, k: &str| tot(r)["lat_us"][k].as_f64().unwrap();
    let lo = rs
        .iter()
        .map(|r| lat(r, "min"))
        .fold(f64::INFINITY, f64::min);
    let hi = rs.iter().map(|r| lat(r, "max")).fold(0.0, f64::max);
    let p99 = quantile_us(&h, 0.99).clamp(lo, hi);
    assert_eq!(t["total"]["lat_us"]["p99"].as_f64().unwrap(), p99);
    // the start spread is recorded
    let spread = t["ranks"]["start_spread_us"].as_f64().unwrap();
    assert!((0.0..1e6).contains(&spread), "{spread}");
    // saved once, with its four scopes
    let out = crate::iocap(d)
        .env("XDG_DATA_HOME", d.join("data"))
        .args(["history", "--output", "json"])
        .output()
        .unwrap();
    let h: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = h.as_array().or_else(|| h["runs"].as_array()).unwrap();
    assert_eq!(runs.len(), 1, "{h}");
    let id = v["run_id"].as_str().unwrap();
    let out = crate::iocap(d)
        .env("XDG_DATA_HOME", d.join("data"))
        .args(["show", id, "--output", "json"])
        .output()
        .unwrap();
    let saved: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ranks(&saved["tests"][0]).len(), 4);
    // compare shows the merged figures, then each run's per-host table
    let out = crate::iocap(d)
        .env("XDG_DATA_HOME", d.join("data"))
        .args(["compare", id, id])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("per host: 4 ranks").count(), 2, "{text}");
}

#[test]
fn the_text_view_has_a_row_per_host() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["run", "--no-save"];
    args.extend(RUN);
    args.push("t{rank}.dat");
    let out = mpirun(dir.path(), 2, &args);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("rank") && text.contains("start spread"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

#[test]
fn saturate_takes_every_rank_through_every_step() {
    let dir = tempfile::tempdir().unwrap();
    let out = mpirun(
        dir.path(),
        2,
        &[
            "saturate",
            "--size",
            "32M",
            "--step-duration",
            "1s",
            "--warmup",
            "0s",
            "--max-qd",
            "4",
            "--no-throttled",
            "--no-save",
            "--output",
            "json",
            "s{rank}.dat",
        ],
    );
    let v = json(&out);
    let steps = v["saturation"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "qd 1, 2, 4");
    for t in v["tests"].as_array().unwrap() {
        assert_eq!(ranks(t).len(), 2, "{}", t["name"]);
    }
}

#[test]
fn scaleup_over_hosts_runs_each_alone_then_together() {
    let dir = tempfile::tempdir().unwrap();
    let out = mpirun(
        dir.path(),
        4,
        &[
            "scaleup",
            "--hosts",
            "--size",
            "16M",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "--no-save",
            "--output",
            "json",
            "h{rank}.dat",
        ],
    );
    let v = json(&out);
    let tests = v["tests"].as_array().unwrap();
    let scopes: Vec<usize> = tests.iter().map(|t| ranks(t).len()).collect();
    assert_eq!(
        scopes,
        vec![1, 1, 1, 1, 2, 4],
        "each rank alone, then 2 and 4 together"
    );
    assert!(v["scaleup"].is_object());
}

#[test]
fn an_io_error_on_one_rank_stops_every_rank_and_names_it() {
    let Some(m) = crate::faults::mount("an_io_error_on_one_rank_stops_every_rank_and_names_it")
    else {
        return;
    };
    let mnt = m.fs.mountpoint().to_path_buf();
    m.fs.add(
        iocap_faultfs::Rule::new(iocap_faultfs::Fault::Eio)
            .file("t2.dat")
            .range(4 << 20..5 << 20)
            .ops(iocap_faultfs::Ops::Read),
    );
    let target = format!("{}/t{{rank}}.dat", mnt.display());
    let started = Instant::now();
    let out = mpirun(
        m.dir.path(),
        4,
        &[
            "run",
            "--rw",
            "read",
            "--size",
            "8M",
            "--duration",
            "10s",
            "--warmup",
            "0s",
            "--output",
            "json",
            &target,
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "every rank stopped early"
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rank 2 on") && err.contains("offset"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["tests"][0];
    assert!(t["error"]["path"].as_str().unwrap().contains("rank 2"));
    for r in ranks(t) {
        assert!(
            r["result"]["read"]["ios"].as_u64().unwrap() > 0,
            "figures kept"
        );
    }
}

#[test]
fn a_foreign_file_on_one_rank_is_refused_before_any_rank_writes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let precious = b"the user's data, not iocap's".repeat(100_000);
    std::fs::write(d.join("f1.dat"), &precious).unwrap();
    let out = mpirun(
        d,
        4,
        &[
            "run",
            "--rw",
            "randwrite",
            "--size",
            "8M",
            "--duration",
            "1s",
            "--no-save",
            "f{rank}.dat",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rank 1 on") && err.contains("did not create"),
        "{err}"
    );
    assert_eq!(err.matches("iocap: error").count(), 1, "said once: {err}");
    assert_eq!(std::fs::read(d.join("f1.dat")).unwrap(), precious);
    for r in [0, 2, 3] {
        assert!(
            !d.join(format!("f{r}.dat")).exists(),
            "rank {r} wrote nothing"
        );
    }
}

#[test]
fn without_mpirun_the_binary_runs_as_one_host() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::iocap(dir.path())
        .args(["run", "--no-save", "--output", "json"])
        .args(RUN)
        .arg("t{rank}.dat")
        .output()
        .unwrap();
    let v = json(&out);
    assert!(v["tests"][0].get("ranks").is_none());
    // no MPI: the braces are part of the file's name
    assert!(dir.path().join("t{rank}.dat").exists());
}
