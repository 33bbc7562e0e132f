use std::cell::RefCell;
use std::rc::Rc;

use super::*;
use crate::{cross_check_series, AppFigures, EdgeSampler};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// A disk before and after 2 s of 8 KiB reads at 5 ms and 64 KiB writes at 2 ms, 1 s idle of
/// the 2, 3 requests in flight at the end, 4 requests split.
fn before_after() -> (DiskPerformance, DiskPerformance) {
    let before = DiskPerformance {
        bytes_read: 1 << 30,
        bytes_written: 1 << 29,
        read_time_100ns: 5_000_000_000,
        write_time_100ns: 7_000_000_000,
        idle_time_100ns: 90_000_000_000,
        read_count: 100_000,
        write_count: 50_000,
        split_count: 7,
        query_time_100ns: 134_402_400_000_000_000,
        device_number: 2,
        manager: "PhysDisk".into(),
        ..DiskPerformance::default()
    };
    let mut after = before.clone();
    after.read_count += 200;
    after.bytes_read += 200 * 8192;
    after.read_time_100ns += 200 * 50_000;
    after.write_count += 400;
    after.bytes_written += 400 * 65_536;
    after.write_time_100ns += 400 * 20_000;
    after.idle_time_100ns += 10_000_000;
    after.queue_depth = 3;
    after.split_count += 4;
    after.query_time_100ns += 20_000_000;
    (before, after)
}

#[test]
fn two_readings_give_perfmons_figures() {
    let (a, b) = before_after();
    let s = perf_delta(&a, &b, 2.0);
    let expect = [
        // Disk Reads/sec, Disk Writes/sec
        ("r_s", s.r_s, 100.0),
        ("w_s", s.w_s, 200.0),
        ("rkb_s", s.rkb_s, 800.0),
        ("wkb_s", s.wkb_s, 12_800.0),
        ("rmb_s", s.rmb_s, 0.8192),
        ("wmb_s", s.wmb_s, 13.1072),
        // Avg. Disk sec/Read 0.005, /Write 0.002, /Transfer (200 × 5 + 400 × 2) / 600
        ("r_await_ms", s.r_await_ms, 5.0),
        ("w_await_ms", s.w_await_ms, 2.0),
        ("await_ms", s.await_ms, 3.0),
        ("rareq_sz_kb", s.rareq_sz_kb, 8.0),
        ("wareq_sz_kb", s.wareq_sz_kb, 64.0),
        // Avg. Disk Queue Length: 1.8 s of response time over 2 s
        ("aqu_sz", s.aqu_sz, 0.9),
        // % Idle Time 50
        ("util_pct", s.util_pct, 50.0),
        ("interval_s", s.interval_s, 2.0),
        ("d_s", s.d_s, 0.0),
        ("rrqm_s", s.rrqm_s, 0.0),
    ];
    for (name, got, want) in expect {
        assert!(close(got, want), "{name}: got {got}, want {want}");
    }
    assert_eq!(
        s.current_queue_length,
        Some(3.0),
        "Current Disk Queue Length"
    );
    assert_eq!(s.split_s, Some(2.0), "Split IO/Sec");
}

#[test]
fn the_readings_are_decoded_from_disk_performance_bytes() {
    // the same reading through winstruct's decoder: the bytes Windows returns
    let (a, _) = before_after();
    let mut b = vec![0u8; iocap_platform::winstruct::DISK_PERFORMANCE_SIZE];
    for (at, v) in [
        (0, a.bytes_read),
        (8, a.bytes_written),
        (16, a.read_time_100ns),
        (24, a.write_time_100ns),
        (32, a.idle_time_100ns),
        (56, a.query_time_100ns),
    ] {
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    for (at, v) in [(40, a.read_count), (44, a.write_count), (52, a.split_count)] {
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    b[64..68].copy_from_slice(&2u32.to_le_bytes());
    for (k, u) in "PhysDisk".encode_utf16().enumerate() {
        b[68 + 2 * k..70 + 2 * k].copy_from_slice(&u.to_le_bytes());
    }
    assert_eq!(iocap_platform::winstruct::disk_performance(&b), Some(a));
}

#[test]
fn an_idle_disk_and_a_bad_interval_are_zero_not_nan() {
    let (a, b) = before_after();
    // nothing done, nothing in flight: idle, whatever IdleTime did
    let idle = perf_delta(&a, &a, 1.0);
    assert_eq!(
        (idle.util_pct, idle.r_await_ms, idle.aqu_sz),
        (0.0, 0.0, 0.0)
    );
    assert_eq!(idle.current_queue_length, Some(0.0));
    for t in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let s = perf_delta(&a, &b, t);
        assert_eq!((s.r_s, s.util_pct, s.aqu_sz), (0.0, 0.0, 0.0));
        assert!(close(s.r_await_ms, 5.0), "per request: no interval needed");
    }
    // a disk busy the whole time: IdleTime did not move
    let mut busy = b.clone();
    busy.idle_time_100ns = a.idle_time_100ns;
    assert!(close(perf_delta(&a, &busy, 2.0).util_pct, 100.0));
    // more idle than the interval (clock skew): 0, never negative
    busy.idle_time_100ns = a.idle_time_100ns + 50_000_000;
    assert_eq!(perf_delta(&a, &busy, 2.0).util_pct, 0.0);
}

#[test]
fn the_32_bit_counts_wrap() {
    let (mut a, mut b) = before_after();
    a.read_count = u32::MAX - 9;
    b.read_count = 10;
    let s = perf_delta(&a, &b, 1.0);
    assert!(close(s.r_s, 20.0));
    assert!(close(s.r_await_ms, 200.0 * 5.0 / 20.0));
}

#[test]
fn disks_are_named_as_users_write_them() {
    for name in [
        "2",
        "PhysicalDrive2",
        r"\\.\physicaldrive2",
        r"\\?\PHYSICALDRIVE2",
    ] {
        assert_eq!(parse_disk(name), Some(2), "{name}");
    }
    for name in ["sda", "PhysicalDriveX", r"\\.\C:", ""] {
        assert_eq!(parse_disk(name), None, "{name}");
    }
    assert_eq!(disk_name(2), "PhysicalDrive2");
}

/// Readings a test hands out: each disk's current counters, or an error for disks not listed.
type Disks = Rc<RefCell<Vec<(u32, DiskPerformance)>>>;

fn reader(disks: &Disks) -> impl FnMut(u32) -> io::Result<DiskPerformance> {
    let disks = disks.clone();
    move |n| {
        disks
            .borrow()
            .iter()
            .find(|(d, _)| *d == n)
            .map(|(_, c)| c.clone())
            .ok_or_else(|| io::Error::from_raw_os_error(2))
    }
}

#[test]
fn the_edge_sampler_reads_physical_disks_and_the_cross_check_applies() {
    let (a, b) = before_after();
    let disks: Disks = Rc::new(RefCell::new(vec![(2, a)]));
    let source = PhysicalDisks::new(vec![2], reader(&disks));
    let mut s = EdgeSampler::from_source(source, &[disk_name(2)]).unwrap();
    assert_eq!(s.source_name(), "IOCTL_DISK_PERFORMANCE");
    s.edge(0.0);
    std::thread::sleep(std::time::Duration::from_millis(20));
    disks.borrow_mut()[0].1 = b;
    s.edge(1.0);
    let v = s.series("PhysicalDrive2");
    assert_eq!(v.len(), 1);
    assert!((v[0].r_s * v[0].interval_s - 200.0).abs() < 1e-6);
    assert!(close(v[0].r_await_ms, 5.0));
    // iocap issued ten times the reads the disk completed: a cache answered
    let app = AppFigures {
        read_iops: v[0].r_s * 10.0,
        read_bytes_per_io: 8192.0,
        ..AppFigures::default()
    };
    let f = cross_check_series(&app, &v);
    assert_eq!(f[0].kind, iocap_model::FindingKind::ServedFromCache);
    assert!(
        f[0].message.starts_with("PhysicalDrive2: "),
        "{}",
        f[0].message
    );
    // the disk goes away: remembered, not fatal
    disks.borrow_mut().clear();
    s.edge(2.0);
    assert!(s.error().unwrap().contains("cannot be read here"));
    assert_eq!(s.samples().len(), 1);
}

#[test]
fn counters_that_cannot_be_read_are_said_never_made_up() {
    let none: Disks = Rc::default();
    let e = EdgeSampler::from_source(PhysicalDisks::new(vec![0], reader(&none)), &[])
        .err()
        .unwrap();
    let msg = e.to_string();
    assert!(msg.starts_with("PhysicalDrive0: the disk's performance counters cannot be read here (IOCTL_DISK_PERFORMANCE: "), "{msg}");
    assert!(msg.contains("iocap does not turn them on"), "{msg}");
    // monitor: nothing to read, a named disk that cannot be read, a name that is not a disk
    let e = Watch::physical_disks(&[], reader(&none)).err().unwrap();
    assert!(
        e.to_string()
            .starts_with("no physical disk's counters can be read here: PhysicalDrive0: "),
        "{e}"
    );
    let e = Watch::physical_disks(&["3".into()], reader(&none))
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .starts_with("PhysicalDrive3: the disk's performance counters cannot be read here"),
        "{e}"
    );
    let e = Watch::physical_disks(&["sda".into()], reader(&none))
        .err()
        .unwrap();
    assert!(matches!(e, MonitorError::NoDisk(_)), "{e}");
}

#[test]
fn monitor_finds_the_readable_disks_and_shows_those_with_io() {
    let (a, b) = before_after();
    let disks: Disks = Rc::new(RefCell::new(vec![(0, a.clone()), (2, a.clone())]));
    let mut w = Watch::physical_disks(&[], reader(&disks)).unwrap();
    assert_eq!(w.source_name(), "IOCTL_DISK_PERFORMANCE");
    disks.borrow_mut()[1].1 = b;
    let v = w.sample().unwrap();
    assert_eq!(v.len(), 1, "only the disk with I/O: {v:?}");
    assert_eq!(v[0].device, "PhysicalDrive2");
    // a disk named is shown, I/O or not
    let mut w = Watch::physical_disks(&[r"\\.\PhysicalDrive0".into()], reader(&disks)).unwrap();
    let v = w.sample().unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!((v[0].device.as_str(), v[0].r_s), ("PhysicalDrive0", 0.0));
}

#[test]
fn a_tests_summary_keeps_windows_own_figures_and_linux_has_none() {
    let (a, b) = before_after();
    let mut s1 = perf_delta(&a, &b, 1.0);
    let mut s2 = s1.clone();
    s1.current_queue_length = Some(2.0);
    s2.current_queue_length = Some(4.0);
    s2.split_s = Some(6.0);
    s2.interval_s = 3.0;
    let m = crate::average(&[s1, s2]);
    assert_eq!(m.current_queue_length, Some(3.0), "the gauge's mean");
    // 1 s at 4/s and 3 s at 6/s
    assert!(close(m.split_s.unwrap(), 5.5));
    let linux = crate::average(&[crate::tests::sample(1.0, 1.0, 4.0, 10.0)]);
    assert_eq!((linux.current_queue_length, linux.split_s), (None, None));
}
