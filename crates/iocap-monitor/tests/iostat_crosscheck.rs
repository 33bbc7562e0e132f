//! Cross-check against sysstat's `iostat -x` on a real block device.
//!
//! Alignment: `iostat -dxk -y DEV 1 1` is spawned and a [`Sampler`] with a
//! 1 s interval is started right after it, so both windows start within a
//! few ms of each other. The test's own I/O (O_DIRECT 4 KiB reads and writes
//! of a pre-written file on that device) runs only from +150 ms to at most
//! +650 ms, i.e. well inside both windows, so both tools see the same counts.
//! The remaining differences are (a) iostat's interval comes from
//! `/proc/uptime`, quantised to 10 ms (≤ 1 % on a 1 s interval), and
//! (b) background I/O of other processes in the few ms where the windows do
//! not overlap. The tolerance is therefore 2 % of the larger figure plus
//! 0.02 (iostat prints two decimals).
//!
//! Skipped (with a message) when iostat is missing — unless `CI` is set, then
//! it fails — or when the test directory is not on a block device. Linux only: iostat and
//! /proc/diskstats are Linux's.
#![cfg(target_os = "linux")]

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use iocap_monitor::{device_of_path, DeviceSample, Sampler};
use iocap_report::monitor::render_iostat_like;

#[cfg(target_arch = "x86_64")]
const O_DIRECT: Option<i32> = Some(0o40000);
#[cfg(any(target_arch = "aarch64", target_arch = "arm"))]
const O_DIRECT: Option<i32> = Some(0o200000);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "arm")))]
const O_DIRECT: Option<i32> = None;

const FILE_BYTES: u64 = 16 << 20;
const BS: usize = 4096;

fn iostat_available() -> bool {
    Command::new("iostat")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Parse `iostat -dxk` plain output: column name → value for `dev`.
fn parse_iostat(out: &str, dev: &str) -> Option<Vec<(String, f64)>> {
    let mut header: Option<Vec<String>> = None;
    for line in out.lines() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.first().is_some_and(|t| t.starts_with("Device")) {
            header = Some(toks.iter().map(|s| s.to_string()).collect());
        } else if toks.first() == Some(&dev) {
            let h = header.as_ref()?;
            return Some(
                h.iter()
                    .skip(1)
                    .zip(toks.iter().skip(1))
                    .filter_map(|(k, v)| v.parse().ok().map(|v| (k.clone(), v)))
                    .collect(),
            );
        }
    }
    None
}

fn col(cols: &[(String, f64)], name: &str) -> f64 {
    cols.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("iostat column {name} missing: {cols:?}"))
}

/// O_DIRECT 4 KiB random reads and writes until `deadline`; returns (reads, writes).
fn generate_io(path: &PathBuf, deadline: Instant) -> (u64, u64) {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(O_DIRECT.unwrap())
        .open(path)
        .expect("open O_DIRECT");
    let mut raw = vec![0u8; 2 * BS];
    let off = raw.as_ptr().align_offset(BS);
    let buf = &mut raw[off..off + BS];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let (mut r, mut w) = (0u64, 0u64);
    let blocks = FILE_BYTES / BS as u64;
    while Instant::now() < deadline && r + w < 20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let pos = (x % blocks) * BS as u64;
        if x & 1 == 0 {
            f.read_exact_at(buf, pos).expect("O_DIRECT read");
            r += 1;
        } else {
            buf[0] = x as u8;
            f.write_all_at(buf, pos).expect("O_DIRECT write");
            w += 1;
        }
    }
    (r, w)
}

#[test]
fn agrees_with_iostat_within_2_percent() {
    if !iostat_available() {
        if std::env::var_os("CI").is_some() {
            panic!("iostat (sysstat) is required in CI for the diskstats cross-check");
        }
        eprintln!("SKIP: iostat (sysstat) not installed");
        return;
    }
    if O_DIRECT.is_none() {
        eprintln!("SKIP: O_DIRECT value unknown on this architecture");
        return;
    }
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = tempfile::tempdir_in(&base).expect("tempdir");
    let Some(dev) = device_of_path(dir.path()) else {
        eprintln!("SKIP: {} is not on a block device", dir.path().display());
        return;
    };
    let path = dir.path().join("io.dat");
    {
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![0xA5u8; 1 << 20];
        for _ in 0..(FILE_BYTES >> 20) {
            f.write_all(&chunk).unwrap();
        }
        f.sync_all().unwrap();
    }
    // Probe O_DIRECT support (tmpfs-like filesystems refuse it).
    if OpenOptions::new()
        .read(true)
        .custom_flags(O_DIRECT.unwrap())
        .open(&path)
        .is_err()
    {
        eprintln!("SKIP: O_DIRECT not supported on {}", dir.path().display());
        return;
    }
    // Let writeback of the setup settle so it does not straddle a window edge.
    std::thread::sleep(Duration::from_millis(200));

    let child = Command::new("iostat")
        .args(["-dxk", "-y", &dev, "1", "1"])
        .env("LC_ALL", "C")
        .env("S_COLORS", "never")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iostat");
    let t0 = Instant::now();
    let sampler = Sampler::start(std::slice::from_ref(&dev), Duration::from_secs(1)).unwrap();

    std::thread::sleep(Duration::from_millis(150));
    let (reads, writes) = generate_io(&path, t0 + Duration::from_millis(650));
    let io_done = t0.elapsed();

    let out = child.wait_with_output().expect("iostat output");
    assert!(out.status.success(), "iostat failed: {out:?}");
    while sampler.samples().is_empty() && t0.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let samples = sampler.stop();
    let ours: &DeviceSample = samples
        .iter()
        .find(|s| s.device == dev)
        .expect("sampler produced a sample");
    let text = String::from_utf8_lossy(&out.stdout);
    let theirs = parse_iostat(&text, &dev).unwrap_or_else(|| panic!("no {dev} in:\n{text}"));

    eprintln!(
        "device {dev}: test I/O {reads} reads + {writes} writes (O_DIRECT 4 KiB) in \
         +150..{io_done:?}; our interval {:.4} s",
        ours.interval_s
    );
    eprintln!("iostat:\n{text}");
    eprintln!(
        "iocap-monitor:\n{}",
        render_iostat_like(std::slice::from_ref(ours))
    );

    let pairs = [
        ("r/s", ours.r_s),
        ("w/s", ours.w_s),
        ("rkB/s", ours.rkb_s),
        ("wkB/s", ours.wkb_s),
    ];
    let mut failures = Vec::new();
    for (name, mine) in pairs {
        let other = col(&theirs, name);
        let diff = (mine - other).abs();
        let rel = if other.abs().max(mine.abs()) > 0.0 {
            diff / other.abs().max(mine.abs()) * 100.0
        } else {
            0.0
        };
        eprintln!("{name:>6}: iocap {mine:10.2}  iostat {other:10.2}  diff {rel:5.2} %");
        if diff > 0.02 * other.abs().max(mine.abs()) + 0.02 {
            failures.push(format!("{name}: iocap {mine:.2} vs iostat {other:.2}"));
        }
    }
    // Informational (not asserted): per-request and time-based columns.
    for (name, mine) in [
        ("r_await", ours.r_await_ms),
        ("w_await", ours.w_await_ms),
        ("aqu-sz", ours.aqu_sz),
        ("%util", ours.util_pct),
    ] {
        eprintln!(
            "{name:>7}: iocap {mine:10.2}  iostat {:10.2}",
            col(&theirs, name)
        );
    }
    // Our own I/O must be visible to both (the device may see more: background).
    assert!(
        ours.r_s * ours.interval_s >= reads as f64 * 0.98,
        "device saw fewer reads than issued"
    );
    assert!(failures.is_empty(), "disagreement beyond 2 %: {failures:?}");
}
