//! The Windows binary under Wine: what `.ci/windows.sh` runs after cross-building
//! `iocap.exe` (`IOCAP_WINE_EXE`, with the ProcessPrng shim beside it) and setting
//! `IOCAP_WINE_TESTS=1`. Without that variable every test here returns at once, so the default
//! `cargo test` on Linux is unchanged.
//!
//! Wine is the harness, not the product: it runs the IOCP and synchronous engines and their
//! names, files, the marker (through its sidecar: Wine's drives have no named streams), SQLIO's
//! and DiskSpd's front ends with Windows paths, verify, the store and the report. Where Wine
//! does not implement a call (the disk ioctls on volumes, for one), the test prints that it could
//! not be checked here.
//!
//! This is the Linux side, which starts `wine64`: it is not built for Windows.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The exe to run, when the Wine tests are on.
fn exe() -> Option<PathBuf> {
    if std::env::var_os("IOCAP_WINE_TESTS").is_none_or(|v| v != "1") {
        eprintln!(
            "skipped: the Windows tests run under Wine with IOCAP_WINE_TESTS=1 (.ci/windows.sh)"
        );
        return None;
    }
    let exe = PathBuf::from(std::env::var_os("IOCAP_WINE_EXE").expect("IOCAP_WINE_EXE"));
    assert!(exe.exists(), "{} is missing", exe.display());
    Some(exe)
}

/// `p` as Wine's Windows sees it: Z: is the Unix root.
fn win(p: &Path) -> String {
    format!("Z:{}", p.display()).replace('/', "\\")
}

fn wine(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new("wine64");
    c.arg(exe)
        .args(args)
        .env("WINEDEBUG", "-all")
        .env("WINEDLLOVERRIDES", "bcryptprimitives=n,b")
        // narrow tables: the text checks below do not depend on the terminal
        .env("COLUMNS", "100");
    for (k, v) in env {
        c.env(k, v);
    }
    let mut out = c.output().expect("wine64 runs");
    // iocap never exits 1 in silence (a failed check prints its verdict on stdout): that is
    // Wine failing to start the program (CI saw it once in a run of ten), so it is tried again,
    // once, and said
    if out.status.code() == Some(1) && out.stdout.is_empty() && out.stderr.is_empty() {
        eprintln!(
            "$ iocap {}\n-> 1 and no output: Wine did not start it; again",
            args.join(" ")
        );
        out = c.output().expect("wine64 runs");
    }
    eprintln!(
        "$ iocap {}\n-> {:?}\n{}\n{}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout[..out.stdout.len().min(2000)])
    );
    out
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "iocap failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Every 4 KiB block of `data` stamped by a write: (its place, the offset its stamp names).
fn stamps(data: &[u8]) -> Vec<(u64, u64)> {
    data.chunks_exact(4096)
        .enumerate()
        .filter(|(_, b)| &b[..8] == b"IOCAPWR1")
        .map(|(i, b)| {
            (
                i as u64 * 4096,
                u64::from_le_bytes(b[8..16].try_into().unwrap()),
            )
        })
        .collect()
}

#[test]
fn iocp_and_sync_read_write_and_mix_with_bytes_and_offsets_checked() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = win(&dir.path().join("r.db"));
    for (engine, name) in [("auto", "iocp"), ("sync", "sync")] {
        let file = dir.path().join(format!("{name}.dat"));
        for rw in ["randread", "randwrite", "randrw", "write"] {
            let mut args = vec![
                "run",
                "--rw",
                rw,
                "--bs",
                "4K",
                "--qd",
                "8",
                "--duration",
                "1s",
                "--warmup",
                "0",
                "--size",
                "16M",
                "--engine",
                engine,
                "--output",
                "json",
                "--db",
                &db,
            ];
            if rw == "randrw" {
                args.extend(["--write-pct", "30"]);
            }
            let path = win(&file);
            args.push(&path);
            let out = wine(&exe, &args, &[]);
            let r = json(&out);
            let t = &r["tests"][0];
            assert_eq!(t["engine"], name, "{rw}");
            assert!(t["error"].is_null(), "{rw}: {}", t["error"]);
            assert_eq!(t["direct"], true, "unbuffered by default");
            let (reads, writes) = (u(&t["read"]["ios"]), u(&t["write"]["ios"]));
            assert_eq!(
                u(&t["read"]["bytes"]),
                reads * 4096,
                "{name} {rw}: read bytes"
            );
            assert_eq!(
                u(&t["write"]["bytes"]),
                writes * 4096,
                "{name} {rw}: write bytes"
            );
            match rw {
                "randread" => assert!(reads > 0 && writes == 0, "{rw}: {reads} {writes}"),
                "randwrite" | "write" => {
                    assert!(writes > 0 && reads == 0, "{rw}: {reads} {writes}")
                }
                _ => {
                    assert!(reads > 0 && writes > 0, "{rw}: {reads} {writes}");
                    let pct = writes as f64 * 100.0 / (reads + writes) as f64;
                    assert!((20.0..40.0).contains(&pct), "{rw}: {pct:.1} % writes");
                }
            }
            let cpu = t["cpu"]["user_s"].as_f64().unwrap() + t["cpu"]["sys_s"].as_f64().unwrap();
            assert!(cpu > 0.0, "GetProcessTimes: {}", t["cpu"]);
            assert_eq!(r["timer"]["clock"], "QueryPerformanceCounter");
            eprintln!(
                "Wine, functional only: {name} {rw} 4K qd 8: {:.0} IOPS",
                t["total"]["iops"].as_f64().unwrap_or(0.0)
            );
        }
        // every write landed where it was meant to: each stamped block names its own offset
        let data = std::fs::read(&file).unwrap();
        assert_eq!(data.len(), 16 << 20, "the file keeps its size");
        let s = stamps(&data);
        assert!(s.len() > 100, "{name}: only {} stamped blocks", s.len());
        for (at, named) in &s {
            assert_eq!(
                at, named,
                "{name}: a write meant for {named} landed at {at}"
            );
        }
    }
}

#[test]
fn a_foreign_file_is_refused_and_left_byte_identical() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = win(&dir.path().join("r.db"));
    let foreign = dir.path().join("foreign.dat");
    let content: Vec<u8> = (0..(4u32 << 20)).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&foreign, &content).unwrap();
    for engine in ["auto", "sync"] {
        let out = wine(
            &exe,
            &[
                "run",
                "--rw",
                "randwrite",
                "--duration",
                "1s",
                "--warmup",
                "0",
                "--engine",
                engine,
                "--db",
                &db,
                &win(&foreign),
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("iocap did not create it"), "{err}");
    }
    // reading it is fine
    let out = wine(
        &exe,
        &[
            "run",
            "--rw",
            "randread",
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--db",
            &db,
            &win(&foreign),
        ],
        &[],
    );
    assert!(out.status.success());
    assert!(
        std::fs::read(&foreign).unwrap() == content,
        "the foreign file changed"
    );

    // a file iocap makes carries its marker: in the NTFS stream `file:iocap` where the volume
    // has named streams, else in the sidecar; Wine's drives have none
    let ours = dir.path().join("ours.dat");
    let out = wine(
        &exe,
        &[
            "run",
            "--rw",
            "randwrite",
            "--size",
            "4M",
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--db",
            &db,
            &win(&ours),
        ],
        &[],
    );
    assert!(out.status.success());
    let sidecar = dir.path().join("ours.dat.iocap");
    match std::fs::read_to_string(&sidecar) {
        Ok(text) => {
            assert!(
                text.starts_with("iocap-testfile v1 state=complete size=4194304 dev="),
                "{text}"
            );
            eprintln!(
                "Wine: no named streams on its drives; the marker went to the sidecar, as on FAT"
            );
        }
        Err(_) => eprintln!("the marker went to an NTFS stream (not what Wine 8 does)"),
    }
    // the sidecar is bound to the file it was written for: copied beside a foreign file it
    // does not make that file ours
    if sidecar.exists() {
        std::fs::copy(&sidecar, dir.path().join("foreign.dat.iocap")).unwrap();
        let out = wine(
            &exe,
            &[
                "run",
                "--rw",
                "randwrite",
                "--duration",
                "1s",
                "--warmup",
                "0",
                "--db",
                &db,
                &win(&foreign),
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(
            std::fs::read(&foreign).unwrap() == content,
            "the foreign file changed"
        );
    }
}

/// The prefix's drive letters are symlinks in `dosdevices`; E: is pointed at a temporary
/// directory so a param file can name `E:\sqltest.dat` as SQLIO's users write it.
fn map_drive_e(to: &Path) -> PathBuf {
    let prefix = std::env::var_os("WINEPREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".wine"));
    let link = prefix.join("dosdevices").join("e:");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(to, &link).unwrap();
    link
}

#[test]
fn sqlio_runs_a_param_file_with_windows_paths() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let link = map_drive_e(dir.path());
    std::fs::write(
        dir.path().join("param.txt"),
        "# SQL Server data file\r\nE:\\sqltest.dat 2 0x0 16\r\n",
    )
    .unwrap();
    let db = win(&dir.path().join("r.db"));
    let out = wine(
        &exe,
        &[
            "sqlio",
            "-kW",
            "-s1",
            "-frandom",
            "-o4",
            "-b8",
            "-LS",
            "-FE:\\param.txt",
            "--db",
            &db,
        ],
        &[],
    );
    let _ = std::fs::remove_file(&link);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("file E:\\sqltest.dat with 2 threads"),
        "{text}"
    );
    assert!(text.contains("IOs/sec:"), "{text}");
    let made = std::fs::metadata(dir.path().join("sqltest.dat")).unwrap();
    assert_eq!(made.len(), 16 << 20);
}

#[test]
fn the_store_history_and_report() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = win(&dir.path().join("t.dat"));
    // the default store: %LOCALAPPDATA%\iocap\results.db (Wine sets the variable to the
    // prefix's own C:\users\<user>\AppData\Local)
    let env = [];
    let mut ids = Vec::new();
    for label in ["before", "after"] {
        let out = wine(
            &exe,
            &[
                "run",
                "--rw",
                "randread",
                "--size",
                "8M",
                "--duration",
                "1s",
                "--warmup",
                "0",
                "--label",
                label,
                "--output",
                "json",
                &file,
            ],
            &env,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("\\AppData\\Local\\iocap\\results.db"), "{err}");
        let r = json(&out);
        ids.push(r["run_id"].as_str().unwrap().to_string());
    }
    let out = wine(&exe, &["history"], &env);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for (id, label) in ids.iter().zip(["before", "after"]) {
        assert!(text.contains(id.as_str()) && text.contains(label), "{text}");
    }
    let out = wine(&exe, &["compare", &ids[0], &ids[1]], &env);
    assert!(out.status.code().is_some_and(|c| c <= 1));
    let html = dir.path().join("r.html");
    let out = wine(&exe, &["report", &ids[0], &ids[1], "-o", &win(&html)], &env);
    assert!(out.status.success());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<svg") && page.contains(&ids[1]),
        "a report with charts"
    );
}

/// `cost --quick` on Windows: sync and IOCP (by those names), every point with CPU per I/O,
/// the model and the answers; nothing named after Linux's engines.
#[test]
fn cost_compares_sync_with_iocp() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let t = win(&dir.path().join("cost.dat"));
    let args = [
        "cost",
        "--quick",
        "--size",
        "16M",
        "--duration",
        "0.3s",
        "--warmup",
        "0",
        "--output",
        "json",
        "--no-save",
        &t,
    ];
    let out = wine(&exe, &args, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v = json(&out);
    let c = &v["cost"];
    assert_eq!(c["windows"], true);
    let points = c["points"].as_array().unwrap();
    assert_eq!(points.len(), 12, "{c}");
    for p in points {
        assert!(p["ios"].as_u64().unwrap() > 0, "{p}");
        assert!(p["process"]["us_per_io"].as_f64().unwrap() > 0.0, "{p}");
    }
    assert!(!c["answers"].as_array().unwrap().is_empty());
    assert!(
        err.contains("sync read 4K direct qd 16") && err.contains("iocp"),
        "{err}"
    );
    assert!(!err.contains("psync") && !err.contains("io_uring"), "{err}");
    let engines: Vec<&str> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["engine"].as_str().unwrap())
        .collect();
    assert!(
        engines.contains(&"sync") && engines.contains(&"iocp"),
        "{engines:?}"
    );
}

/// perfmon's counters (IOCTL_DISK_PERFORMANCE): Wine has no physical disks to read them from,
/// so `monitor` refuses with the reason and a run says in its `unavailable` why there are none;
/// where they can be read (a later Wine, Windows), they are perfmon's figures. Never a crash,
/// never figures made up.
#[test]
fn perfmon_counters_are_read_or_said_to_be_unreadable() {
    let Some(exe) = exe() else { return };
    let out = wine(
        &exe,
        &["monitor", "--count", "1", "--interval", "0.2s"],
        &[],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    match out.status.code() {
        Some(0) => assert!(stdout.starts_with("PhysicalDisk"), "{stdout}"),
        Some(2) => assert!(stderr.contains("cannot be read here"), "{stderr}"),
        c => panic!("monitor: exit {c:?}: {stderr}"),
    }
    let out = wine(&exe, &["monitor", "PhysicalDrive7", "--count", "1"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("PhysicalDrive7: the disk's performance counters cannot be read here"),
        "{err}"
    );
    let out = wine(&exe, &["monitor", "sda", "--count", "1"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'sda' is not a physical disk"));

    let dir = tempfile::tempdir().unwrap();
    let r = json(&run_with_engine(&exe, dir.path(), "iocp"));
    let os = &r["tests"][0]["os_counters"];
    assert_eq!(os["source"], "IOCTL_DISK_PERFORMANCE", "{os}");
    let devices = os["devices"].as_array().unwrap();
    let unavailable = os["unavailable"].as_array().unwrap();
    if devices.is_empty() {
        assert!(
            unavailable
                .iter()
                .any(|u| u.as_str().unwrap().contains("cannot be read here")),
            "no counters and no reason: {os}"
        );
        eprintln!("Wine: no disk counters: {}", unavailable[0]);
    } else {
        for d in devices {
            assert!(
                d["device"].as_str().unwrap().starts_with("PhysicalDrive"),
                "{d}"
            );
        }
    }
    let text = wine(
        &exe,
        &["show", "last", "--db", &win(&dir.path().join("r.db"))],
        &[],
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("IOCTL_DISK_PERFORMANCE, as perfmon's PhysicalDisk"),
        "{text}"
    );
}

/// `fsync` on a new file in a scratch directory: Windows' three methods, each measured at 4K and
/// 8K with figures that hold together, the text view, and Linux's names refused before anything
/// is made. Wine's timings are functional only (its FlushFileBuffers is an fsync of a Linux file).
#[test]
fn fsync_measures_the_windows_methods() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let target = win(dir.path());
    let base = [
        "fsync",
        "--sizes",
        "4K,8K",
        "--duration",
        "0.3s",
        "--no-save",
    ];
    let mut args = base.to_vec();
    args.extend(["--output", "json", &target]);
    let r = json(&wine(&exe, &args, &[]));
    assert_eq!(r["command"], "fsync");
    let f = &r["fsync"];
    assert!(
        f["target"]
            .as_str()
            .unwrap()
            .ends_with("iocap-fsync.testfile"),
        "{f}"
    );
    assert_eq!(f["file_size_bytes"], 16 << 20);
    let points = f["points"].as_array().unwrap();
    let mut seen = Vec::new();
    for p in points {
        let (m, size) = (p["method"].as_str().unwrap(), u(&p["size_bytes"]));
        seen.push((m.to_string(), size));
        assert_eq!(p["available"], true, "{p}");
        assert!(u(&p["ops"]) > 0, "{p}");
        let secs = p["duration_s"].as_f64().unwrap();
        let rate = p["ops_per_s"].as_f64().unwrap();
        assert!(
            (rate - u(&p["ops"]) as f64 / secs).abs() <= rate * 1e-6,
            "{p}"
        );
        assert!(p["lat_us"]["p50"].as_f64().unwrap() <= p["lat_us"]["max"].as_f64().unwrap());
        eprintln!("Wine, functional only: {m} {size} B: {rate:.0} durable writes/s");
    }
    let want: Vec<(String, u64)> = [4096u64, 8192]
        .iter()
        .flat_map(|s| {
            [
                "flush_file_buffers",
                "write_through",
                "no_buffering_write_through",
            ]
            .map(|m| (m.to_string(), *s))
        })
        .collect();
    assert_eq!(seen, want, "every method at every size, in table order");
    assert!(
        f["recommendation"]
            .as_str()
            .unwrap()
            .contains("open_datasync (the Windows default)"),
        "{f}"
    );
    // the text view: Windows' labels in the tables
    let mut args = base.to_vec();
    args.extend(["--profile", "sqlserver", &target]);
    let out = wine(&exe, &args, &[]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for label in [
        "FlushFileBuffers",
        "WRITE_THROUGH",
        "NO_BUFFERING|WRITE_THROUGH",
    ] {
        assert!(text.contains(label), "{label}: {text}");
    }
    assert!(text.contains("SQL Server on Windows"), "{text}");
    // Linux's methods are refused with Windows' list, before anything is made
    let other = tempfile::tempdir().unwrap();
    let out = wine(
        &exe,
        &[
            "fsync",
            "--methods",
            "fdatasync",
            "--no-save",
            &win(other.path()),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is a Linux method; on Windows the methods are flush_file_buffers"),
        "{err}"
    );
    assert!(!other.path().join("iocap-fsync.testfile").exists());
    // a volume with a mounted file system (Z:, Wine's view of the Unix root) is never written,
    // --allow-overwrite or not
    let out = wine(
        &exe,
        &[
            "fsync",
            "--allow-overwrite",
            "--quick",
            "--no-save",
            "\\\\.\\Z:",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to write") && err.contains("mounted"),
        "{err}"
    );
}

/// `audit` on a directory of Wine's Z: drive: it runs, in JSON and text, and every check on a
/// call Wine does not answer is UNKNOWN with the call named, never PASS.
#[test]
fn audit_runs_and_says_what_it_cannot_read() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = win(dir.path());
    let out = wine(
        &exe,
        &[
            "audit",
            &d,
            "--profile",
            "sqlserver",
            "--stripe-unit",
            "64K",
            "--output",
            "json",
        ],
        &[],
    );
    let v = json(&out);
    assert_eq!(v["targets"][0]["path"], d.as_str());
    let checks = v["checks"].as_array().expect("checks");
    let ids: Vec<&str> = checks.iter().filter_map(|c| c["id"].as_str()).collect();
    for id in [
        "partition.alignment",
        "fs.block_size",
        "cpu.power_plan",
        "cpu.frequency",
    ] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    for c in checks {
        let ev = c["evidence"].as_str().unwrap_or_default();
        if ev.contains("cannot be read here") {
            assert_eq!(c["severity"], "UNKNOWN", "{c}");
        }
        eprintln!("{} {} {}: {ev}", c["severity"], c["id"], c["subject"]);
    }
    let text = wine(&exe, &["audit", &d], &[]);
    assert_eq!(text.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&text.stdout).contains(" checks: "));
}

/// `run` on a small new file with `engine`, in `dir`.
fn run_with_engine(exe: &Path, dir: &Path, engine: &str) -> Output {
    let t = win(&dir.join(format!("{engine}.dat")));
    let db = win(&dir.join("r.db"));
    let args = [
        "run",
        "--engine",
        engine,
        "--size",
        "1M",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--output",
        "json",
        "--db",
        &db,
        &t,
    ];
    wine(exe, &args, &[])
}

#[test]
fn the_engine_names_are_windows_own() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    for (engine, ran) in [("iocp", "iocp"), ("sync", "sync"), ("auto", "iocp")] {
        let r = json(&run_with_engine(&exe, dir.path(), engine));
        assert_eq!(r["tests"][0]["engine"], ran, "--engine {engine}");
        assert!(
            r["tests"][0]["error"].is_null(),
            "{engine}: {}",
            r["tests"][0]
        );
    }
    // Linux's names are refused before anything is made, with what to use instead
    for engine in ["io_uring", "psync"] {
        let out = run_with_engine(&exe, dir.path(), engine);
        assert_eq!(out.status.code(), Some(2), "--engine {engine}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("{engine} is Linux's; on Windows use iocp or sync")),
            "{err}"
        );
        assert!(!dir.path().join(format!("{engine}.dat")).exists());
    }
}

#[test]
fn volumes_with_a_file_system_are_refused() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = win(&dir.path().join("r.db"));
    // Z: is Wine's view of the Unix root: a volume with a mounted file system
    let out = wine(
        &exe,
        &[
            "run",
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--duration",
            "1s",
            "--db",
            &db,
            "\\\\.\\Z:",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to write") && err.contains("mounted"),
        "{err}"
    );
    // without --allow-overwrite a disk is refused whatever is on it
    let out = wine(
        &exe,
        &[
            "run",
            "--rw",
            "randwrite",
            "--duration",
            "1s",
            "--db",
            &db,
            "\\\\.\\PhysicalDrive0",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to write"));
    // reading a volume opens it for reading (administrators only on Windows) and asks its size
    // of IOCTL_DISK_GET_LENGTH_INFO
    let out = wine(
        &exe,
        &[
            "run",
            "--rw",
            "randread",
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--db",
            &db,
            "\\\\.\\Z:",
        ],
        &[],
    );
    if !out.status.success() {
        eprintln!(
            "not checked under Wine: reading a volume; Wine said: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
}

#[test]
fn diskspd_runs_a_command_line_with_a_windows_path_in_text_and_xml() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    // drive F: (E: belongs to the sqlio test, which may run at the same time)
    let prefix = std::env::var_os("WINEPREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".wine"));
    let link = prefix.join("dosdevices").join("f:");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    let db = win(&dir.path().join("r.db"));
    let line = [
        "diskspd", "-b8K", "-d1", "-W0", "-o4", "-t2", "-r", "-w30", "-Sh", "-L",
    ];
    let mut text_args = line.to_vec();
    text_args.extend(["-c16M", "--db", &db, "F:\\t.dat"]);
    let text_out = wine(&exe, &text_args, &[]);
    let mut xml_args = line.to_vec();
    xml_args.extend(["-Rxml", "--no-save", "F:\\t.dat"]);
    let xml_out = wine(&exe, &xml_args, &[]);
    let _ = std::fs::remove_file(&link);
    let text = String::from_utf8_lossy(&text_out.stdout);
    assert!(text_out.status.success(), "{text}");
    for part in [
        "Command Line: diskspd -b8K",
        "Total IO",
        "Read IO",
        "Write IO",
        "F:\\t.dat",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    assert_eq!(
        std::fs::metadata(dir.path().join("t.dat")).unwrap().len(),
        16 << 20
    );
    let xml = String::from_utf8_lossy(&xml_out.stdout);
    assert!(xml_out.status.success(), "{xml}");
    for el in [
        "<Results>",
        "<TimeSpan>",
        "<Thread>",
        "<Target>",
        "<IOCount>",
        "<Latency ReadHistoBuckets=",
    ] {
        assert!(xml.contains(el), "{el}: {xml}");
    }
}

/// `verify` of `target` (a Windows path) with `extra`, its result as JSON, not saved.
fn verify(exe: &Path, target: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "verify",
        "--size",
        "8M",
        "--duration",
        "1s",
        "--output",
        "json",
        "--no-save",
    ];
    args.extend(extra);
    args.push(target);
    wine(exe, &args, &[])
}

#[test]
fn verify_passes_on_a_new_file_with_both_engines_and_refuses_a_foreign_one() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    for (engine, ran) in [("iocp", "iocp"), ("sync", "sync")] {
        let file = dir.path().join(format!("v-{engine}.dat"));
        let v = json(&verify(&exe, &win(&file), &["--engine", engine]))["verify"].clone();
        assert_eq!(v["passed"], true, "{engine}: {v}");
        assert_eq!(v["io_engine"], ran);
        let (pages, c) = (u(&v["pages"]), &v["counts"]);
        assert!(
            u(&c["pages_written"]) >= pages,
            "{engine}: the fill writes every page"
        );
        assert!(
            u(&c["pages_checked"]) >= pages,
            "{engine}: the final pass reads every page"
        );
        assert!(
            u(&c["random_updates"]) > 0 && u(&c["random_reads"]) > 0,
            "{engine}: {c}"
        );
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 8 << 20);
    }
    // a file iocap did not create is refused and left as it was
    let foreign = dir.path().join("foreign.dat");
    let content: Vec<u8> = (0..(1u32 << 20)).map(|i| (i * 13 % 251) as u8).collect();
    std::fs::write(&foreign, &content).unwrap();
    let out = verify(&exe, &win(&foreign), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("iocap did not create it"), "{err}");
    assert!(
        std::fs::read(&foreign).unwrap() == content,
        "the foreign file changed"
    );
}

#[test]
fn verify_with_a_journal_then_check() {
    let Some(exe) = exe() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (file, journal) = (dir.path().join("j.dat"), dir.path().join("j.journal"));
    let j = win(&journal);
    let v = json(&verify(&exe, &win(&file), &["--journal", &j]))["verify"].clone();
    assert_eq!(v["passed"], true, "{v}");
    assert!(u(&v["counts"]["journal_records"]) > 0, "{v}");
    let out = wine(
        &exe,
        &[
            "verify",
            "--check",
            "--journal",
            &j,
            "--output",
            "json",
            "--no-save",
        ],
        &[],
    );
    let ck = json(&out)["verify"].clone();
    assert_eq!(ck["passed"], true, "{ck}");
    assert!(u(&ck["check"]["pages_journaled"]) > 0, "{ck}");
    // an existing journal is never overwritten
    let out = verify(&exe, &win(&file), &["--journal", &j]);
    assert_eq!(out.status.code(), Some(2));
}
