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

/// What every merged test of `n` ranks must state: a scope per rank in rank order, each on its
/// own file (`{prefix}{rank}.dat` in `d`); IOPS and I/Os the ranks' sums; the p99 that of the
/// ranks' histograms added up; the start spread recorded.
fn assert_merged(t: &Value, n: usize, d: &Path, prefix: &str) {
    let rs = ranks(t);
    assert_eq!(rs.len(), n, "{}", t["name"]);
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(r["rank"], i as u64);
        assert!(
            d.join(format!("{prefix}{i}.dat")).exists(),
            "each rank its own file"
        );
    }
    let tot = |r: &Value| r["result"]["total"].clone();
    let sum: f64 = rs.iter().map(|r| tot(r)["iops"].as_f64().unwrap()).sum();
    let iops = t["total"]["iops"].as_f64().unwrap();
    assert!((iops - sum).abs() < 1e-6 * sum, "{iops} vs {sum}");
    let ios: u64 = rs.iter().map(|r| tot(r)["ios"].as_u64().unwrap()).sum();
    assert_eq!(t["total"]["ios"], ios);
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
    let spread = t["ranks"]["start_spread_us"].as_f64().unwrap();
    assert!((0.0..1e6).contains(&spread), "{spread}");
    // every rank's host details, gathered by rank 0
    for r in rs {
        assert_eq!(r["host_info"]["hostname"], r["host"]);
        assert!(r["host_info"]["cpus"].as_u64().unwrap() > 0, "{r}");
    }
}

/// `iocap ARGS` against the store the mpirun runs in `d` saved into.
fn stored(d: &Path, args: &[&str]) -> std::process::Output {
    crate::iocap(d)
        .env("XDG_DATA_HOME", d.join("data"))
        .args(args)
        .output()
        .unwrap()
}

/// The runs saved in `d`'s store, newest first.
fn saved_runs(d: &Path) -> Vec<Value> {
    let out = stored(d, &["history", "--output", "json"]);
    if !out.status.success() {
        return Vec::new(); // no store yet
    }
    let h: Value = serde_json::from_slice(&out.stdout).unwrap();
    h.as_array()
        .or_else(|| h["runs"].as_array())
        .unwrap()
        .clone()
}

/// The run `v` was saved once, whole (no checkpoint's note left), its tests with these many
/// scopes each.
fn assert_saved_once(d: &Path, v: &Value, scopes: &[usize]) {
    assert_eq!(saved_runs(d).len(), 1);
    let id = v["run_id"].as_str().unwrap();
    let saved: Value = serde_json::from_slice(&stored(d, &["show", id, "--output", "json"]).stdout)
        .expect("the run is saved");
    let saved_scopes: Vec<usize> = saved["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| ranks(t).len())
        .collect();
    assert_eq!(saved_scopes, scopes);
    assert!(
        saved["note"].is_null(),
        "the finished run replaced its checkpoint: {}",
        saved["note"]
    );
}

#[test]
fn four_ranks_merge_into_one_saved_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut args = vec!["run", "--output", "json"];
    args.extend(RUN);
    args.push("t{rank}.dat");
    let v = json(&mpirun(d, 4, &args));
    assert_merged(&v["tests"][0], 4, d, "t");
    assert_saved_once(d, &v, &[4]);
    // compare shows the merged figures, then each run's per-host table
    let id = v["run_id"].as_str().unwrap();
    let out = stored(d, &["compare", id, id]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("per host: 4 ranks").count(), 2, "{text}");
    // history lists it once, with the hosts that took part
    let out = stored(d, &["history"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(" +3"), "{text}");
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
    let d = dir.path();
    let out = mpirun(
        d,
        4,
        &[
            "saturate",
            "--sizes",
            "none",
            "--size",
            "32M",
            "--step-duration",
            "1s",
            "--warmup",
            "0s",
            "--max-qd",
            "4",
            "--no-throttled",
            "--output",
            "json",
            "s{rank}.dat",
        ],
    );
    let v = json(&out);
    let steps = v["saturation"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "qd 1, 2, 4");
    // the knee is judged on the aggregate: each step's IOPS are the merged test's
    for (step, t) in steps.iter().zip(v["tests"].as_array().unwrap()) {
        assert_merged(t, 4, d, "s");
        assert_eq!(step["iops"], t["total"]["iops"], "{step}");
    }
    assert_saved_once(d, &v, &[4, 4, 4]);
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
            "--output",
            "json",
            "h{rank}.dat",
        ],
    );
    let v = json(&out);
    let d = dir.path();
    let tests = v["tests"].as_array().unwrap();
    let scopes: Vec<usize> = tests.iter().map(|t| ranks(t).len()).collect();
    assert_eq!(
        scopes,
        vec![1, 1, 1, 1, 2, 4],
        "each rank alone, then 2 and 4 together"
    );
    assert_merged(&tests[5], 4, d, "h");
    // efficiency against linear: the 4 together over the sum of the same 4 alone
    let together = v["scaleup"]["together"].as_array().unwrap();
    let last = together.last().unwrap();
    let alone: f64 = tests[..4]
        .iter()
        .map(|t| t["total"]["iops"].as_f64().unwrap())
        .sum();
    let eff = last["efficiency_pct"].as_f64().unwrap();
    let want = 100.0 * tests[5]["total"]["iops"].as_f64().unwrap() / alone;
    assert!((eff - want).abs() < 1e-6 * want, "{eff} vs {want}");
    assert_eq!(v["scaleup"]["alone"].as_array().unwrap().len(), 4);
    assert_saved_once(d, &v, &scopes);
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
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["tests"][0];
    // named: the rank, its host, the operation and the offset
    let host = ranks(t)[2]["host"].as_str().unwrap();
    assert!(err.contains(&format!("rank 2 on {host}")), "{err}");
    assert!(err.contains("read") && err.contains("offset"), "{err}");
    assert!(t["error"]["path"].as_str().unwrap().contains("rank 2"));
    for (i, r) in ranks(t).iter().enumerate() {
        assert!(
            r["result"]["read"]["ios"].as_u64().unwrap() > 0,
            "figures kept"
        );
        let warned = r["result"]["warnings"].to_string();
        if i != 2 {
            assert!(warned.contains("another rank's test failed"), "{warned}");
        }
    }
    // and saved, with the error and every rank's figures
    let d = m.dir.path();
    let saved = stored(
        d,
        &["show", v["run_id"].as_str().unwrap(), "--output", "json"],
    );
    let saved: Value = serde_json::from_slice(&saved.stdout).expect("the failed run is saved");
    assert!(saved["tests"][0]["error"].is_object());
    assert_eq!(ranks(&saved["tests"][0]).len(), 4);
}

/// A rank that dies outright: mpirun ends the job, and what rank 0 had merged until then (every
/// step finished before the death) stays saved, marked unfinished.
#[test]
fn a_rank_that_dies_leaves_the_steps_finished_before_it_saved() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = Command::new("mpirun")
        .args(["--oversubscribe", "-np", "2"])
        .arg(assert_cmd::cargo::cargo_bin("iocap"))
        .args([
            "saturate",
            "--sizes",
            "none",
            "--size",
            "16M",
            "--step-duration",
            "2s",
            "--warmup",
            "0s",
            "--max-qd",
            "64",
            "--no-throttled",
            "d{rank}.dat",
        ])
        .current_dir(d)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("XDG_DATA_HOME", d.join("data"))
        .env_remove("IOCAP_DB")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // wait for the first checkpoint, then kill rank 1 as a crash would
    let deadline = Instant::now() + Duration::from_secs(60);
    while saved_runs(d).is_empty() {
        assert!(Instant::now() < deadline, "no checkpoint within 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
    let victim = rank_pid(d, 1).expect("rank 1 is running");
    // SAFETY: kill(2) with a pid read from /proc just now and a plain signal number.
    unsafe { libc::kill(victim, libc::SIGKILL) };
    let out = job.wait_with_output().unwrap();
    assert!(!out.status.success(), "mpirun ends the job");
    let runs = saved_runs(d);
    assert_eq!(runs.len(), 1);
    let id = runs[0]["run_id"].as_str().unwrap();
    let saved: Value =
        serde_json::from_slice(&stored(d, &["show", id, "--output", "json"]).stdout).unwrap();
    let n = saved["tests"].as_array().unwrap().len();
    assert!(
        (1..7).contains(&n),
        "the steps before the death, not all 7: {n}"
    );
    assert_eq!(ranks(&saved["tests"][0]).len(), 2);
    assert!(
        saved["note"].as_str().unwrap_or("").contains("unfinished"),
        "{}",
        saved["note"]
    );
}

/// The pid of the iocap process of rank `rank` working in `dir`.
fn rank_pid(dir: &Path, rank: u32) -> Option<i32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cwd = std::fs::read_link(e.path().join("cwd")).ok()?;
        let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
        let env = std::fs::read(e.path().join("environ")).ok()?;
        let mine = comm.trim() == "iocap"
            && cwd == dir.canonicalize().ok()?
            && env.split(|b| *b == 0).any(|v| v == want.as_bytes());
        mine.then_some(pid)
    })
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

/// srun's tasks that MPI cannot join (no PMI or PMIx) are refused, not run as separate tests;
/// a batch script's own `iocap`, outside srun, runs alone.
#[test]
fn srun_without_pmi_is_refused_and_a_batch_script_runs_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::iocap(dir.path())
        .env("SLURM_STEP_NUM_TASKS", "4")
        .args(["run", "--no-save"])
        .args(RUN)
        .arg("t.dat")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("without PMI or PMIx") && err.contains("--mpi=pmix"),
        "{err}"
    );
    assert!(!dir.path().join("t.dat").exists(), "nothing written");
    let out = crate::iocap(dir.path())
        .env("SLURM_NTASKS", "4")
        .args(["run", "--no-save", "--output", "json"])
        .args(RUN)
        .arg("t.dat")
        .output()
        .unwrap();
    assert!(json(&out)["tests"][0].get("ranks").is_none());
}
