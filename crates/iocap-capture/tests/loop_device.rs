//! A capture of I/O this test issues itself on a loop device it makes: every request is there,
//! once, with its offset, size, operation, times, and this process's pid and name. Needs root
//! and the loop driver; elsewhere it says why and passes (under CI=1 it fails).
#![cfg(target_os = "linux")]

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::process::Command;
use std::time::Duration;

use iocap_capture::{Capture, CaptureConfig};
use iocap_trace::{DevId, IoRecord, Op};

struct Loop(String);

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

fn skip(why: &str) -> bool {
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipping: {why}");
    true
}

fn dev_of(path: &str) -> DevId {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(path).unwrap().rdev();
    DevId {
        major: ((rdev >> 8) & 0xfff) as u32,
        minor: ((rdev & 0xff) | ((rdev >> 12) & !0xff)) as u32,
    }
}

/// 8 KiB-aligned buffer.
#[repr(C, align(4096))]
struct Buf([u8; 8192]);

impl Buf {
    /// Bytes no compressor or deduplicator shrinks (xorshift64*), so nothing below the loop
    /// device could make these writes cheaper than the device's.
    fn random(seed: u64) -> Buf {
        let mut b = Buf([0; 8192]);
        let mut x = seed | 1;
        for chunk in b.0.chunks_mut(8) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            chunk.copy_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
        }
        b
    }
}

/// A loop device (direct I/O) over a new file of `bytes` in `dir`, detached when dropped;
/// `None` after [`skip`] when this is not root or losetup fails.
fn attach(dir: &std::path::Path, bytes: u64) -> Option<Loop> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("needs root");
        return None;
    }
    let backing = dir.join("disk");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(bytes)
        .unwrap();
    let out = Command::new("losetup")
        .args(["--find", "--show", "--direct-io=on"])
        .arg(&backing)
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
            std::thread::sleep(Duration::from_millis(300)); // udev's probe reads
            Some(Loop(dev))
        }
        _ => {
            skip("losetup could not attach a loop device");
            None
        }
    }
}

#[test]
fn every_request_issued_on_a_loop_device_is_captured_once() {
    let dir = tempfile::tempdir().unwrap();
    let Some(lo) = attach(dir.path(), 64 << 20) else {
        return;
    };
    let dev = lo.0.clone();
    let cfg = CaptureConfig {
        devices: vec![dev_of(&dev)],
        ..CaptureConfig::default()
    };
    // as root on Linux a capture must start: a refusal here is a defect, not a skip
    let mut cap = Capture::start(&cfg).unwrap();
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&dev)
        .unwrap();
    let mut buf = Buf::random(7);
    let mut want = vec![];
    for i in 0..200u64 {
        let off = (i * 37 % 4000) * 8192;
        f.read_exact_at(&mut buf.0, off).unwrap();
        want.push((Op::Read, off, 8192));
    }
    for i in 0..50u64 {
        let off = (i * 11 % 100) * 4096 + (32 << 20);
        f.write_all_at(&buf.0[..4096], off).unwrap();
        want.push((Op::Write, off, 4096));
    }
    let mut got: Vec<IoRecord> = vec![];
    cap.poll(Duration::from_millis(200), &mut |r| got.push(*r))
        .unwrap();
    let stats = cap.finish(&mut |r| got.push(*r)).unwrap();
    let data: Vec<_> = got
        .iter()
        .filter(|r| r.op != Op::Flush)
        .map(|r| (r.op, r.offset_bytes(), r.bytes))
        .collect();
    if stats.lost() == 0 {
        assert_eq!(data, want, "the requests captured, in issue order");
    } else {
        // the kernel skipped some runs (a tracing program already running on that CPU): each
        // request of this device it cost is counted lost, and what was captured is still
        // what was issued, in order
        let mut rest = want.iter();
        assert!(
            data.iter().all(|d| rest.any(|w| w == d)),
            "in issue order: {stats:?}"
        );
        assert_eq!(want.len() - data.len(), stats.lost() as usize, "{stats:?}");
    }
    assert_eq!(
        (stats.before_start, stats.zero_byte_completions),
        (0, 0),
        "nothing was in flight at the start, and O_DIRECT reads and writes end once: {stats:?}"
    );
    let me = std::process::id();
    let name = std::thread::current()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    for r in &got {
        assert_eq!(r.pid, me, "{r:?}");
        assert!(
            name.starts_with(&r.comm_str()) || r.comm_str().is_empty(),
            "{r:?} {name}"
        );
        assert!(r.complete_ns.unwrap() >= r.issue_ns, "{r:?}");
        assert_eq!(r.dev, dev_of(&dev));
    }
    assert_eq!(
        (stats.lost_ring_full, stats.lost_map_full),
        (0, 0),
        "{stats:?}"
    );
    assert_eq!(stats.records, got.len() as u64);
}

#[test]
fn a_pid_filter_of_another_process_records_nothing_of_ours() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 && skip("needs root") {
        return;
    }
    let cfg = CaptureConfig {
        pid: Some(u32::MAX - 1),
        ..CaptureConfig::default()
    };
    // as root on Linux a capture must start: a refusal here is a defect, not a skip
    let mut cap = Capture::start(&cfg).unwrap();
    let f = tempfile::NamedTempFile::new_in(".").unwrap();
    f.as_file().write_all_at(&[1u8; 65536], 0).unwrap();
    f.as_file().sync_all().unwrap();
    let mut n = 0;
    cap.poll(Duration::from_millis(100), &mut |_| n += 1)
        .unwrap();
    let stats = cap.finish(&mut |_| n += 1).unwrap();
    assert_eq!(n, 0);
    assert!(
        stats.filtered_out > 0,
        "{stats:?}: our fsync's writes were seen and left out"
    );
}

#[test]
fn a_ring_buffer_too_small_to_keep_up_counts_every_request_it_lost() {
    let dir = tempfile::tempdir().unwrap();
    let Some(lo) = attach(dir.path(), 16 << 20) else {
        return;
    };
    let dev = lo.0.clone();
    // one page of ring: about 50 records, and nothing drains it while the reads run
    let cfg = CaptureConfig {
        devices: vec![dev_of(&dev)],
        ring_bytes: 4096,
        ..CaptureConfig::default()
    };
    let cap = Capture::start(&cfg).unwrap();
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&dev)
        .unwrap();
    let mut buf = Buf::random(9);
    for i in 0..500u64 {
        f.read_exact_at(&mut buf.0[..4096], (i % 4000) * 4096)
            .unwrap();
    }
    let mut n = 0u64;
    let stats = cap
        .finish(&mut |r| n += u64::from(r.op == Op::Read))
        .unwrap();
    assert!(stats.lost_ring_full > 0, "{stats:?}");
    assert_eq!(
        n + stats.lost(),
        500,
        "every read recorded or counted lost: {n} {stats:?}"
    );
}
