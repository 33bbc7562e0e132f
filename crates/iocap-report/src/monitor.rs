//! The terminal view of `iocap monitor`: device samples as `iostat -x` prints them, or, from
//! Windows' counters, as perfmon's report view shows its PhysicalDisk counters (a counter per
//! row, a disk per column, perfmon's units: bytes and seconds).

use std::fmt::Write as _;

use iocap_model::{DeviceSample, DISK_PERFORMANCE_SOURCE};

/// The view for samples from `source` (`Watch::source_name`): perfmon's for Windows' counters,
/// iostat's otherwise.
pub fn render_for(source: &str, samples: &[DeviceSample]) -> String {
    if source == DISK_PERFORMANCE_SOURCE {
        render_perfmon_like(samples)
    } else {
        render_iostat_like(samples)
    }
}

/// perfmon's PhysicalDisk counters, with perfmon's names and units, from samples of Windows'
/// counters (IOCTL_DISK_PERFORMANCE).
pub fn render_perfmon_like(samples: &[DeviceSample]) -> String {
    type Counter = (&'static str, fn(&DeviceSample) -> String);
    let rows: [Counter; 10] = [
        ("Disk Reads/sec", |s| format!("{:.3}", s.r_s)),
        ("Disk Writes/sec", |s| format!("{:.3}", s.w_s)),
        ("Disk Read Bytes/sec", |s| {
            format!("{:.0}", s.rkb_s * 1024.0)
        }),
        ("Disk Write Bytes/sec", |s| {
            format!("{:.0}", s.wkb_s * 1024.0)
        }),
        ("Avg. Disk sec/Read", |s| {
            format!("{:.6}", s.r_await_ms / 1e3)
        }),
        ("Avg. Disk sec/Write", |s| {
            format!("{:.6}", s.w_await_ms / 1e3)
        }),
        ("Avg. Disk Queue Length", |s| format!("{:.3}", s.aqu_sz)),
        ("Current Disk Queue Length", |s| {
            s.current_queue_length
                .map_or_else(|| "-".into(), |q| format!("{q:.0}"))
        }),
        ("% Idle Time", |s| format!("{:.3}", 100.0 - s.util_pct)),
        ("Split IO/Sec", |s| {
            s.split_s.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
        }),
    ];
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0) + 2;
    let cols: Vec<usize> = samples.iter().map(|s| s.device.len().max(12) + 2).collect();
    let mut out = format!("{:<w$}", "PhysicalDisk");
    for (s, c) in samples.iter().zip(&cols) {
        let _ = write!(out, "{:>c$}", s.device);
    }
    out.push('\n');
    if samples.is_empty() {
        return out;
    }
    for (name, value) in rows {
        let _ = write!(out, "{name:<w$}");
        for (s, c) in samples.iter().zip(&cols) {
            let _ = write!(out, "{:>c$}", value(s));
        }
        out.push('\n');
    }
    out
}

/// Render samples as an `iostat -x`-style table (one header, one row per
/// sample, in the given order; kB = KiB as in iostat).
pub fn render_iostat_like(samples: &[DeviceSample]) -> String {
    let mut out = String::new();
    let w = samples
        .iter()
        .map(|s| s.device.len())
        .max()
        .unwrap_or(0)
        .max(13);
    let _ = writeln!(
        out,
        "{:<w$}{:>8}{:>8}{:>10}{:>10}{:>8}{:>8}{:>8}{:>8}{:>8}{:>9}{:>9}{:>7}",
        "Device",
        "r/s",
        "w/s",
        "rkB/s",
        "wkB/s",
        "rrqm/s",
        "wrqm/s",
        "r_await",
        "w_await",
        "aqu-sz",
        "rareq-sz",
        "wareq-sz",
        "%util",
    );
    for s in samples {
        let _ = writeln!(
            out,
            "{:<w$}{:>8.2}{:>8.2}{:>10.2}{:>10.2}{:>8.2}{:>8.2}{:>8.2}{:>8.2}{:>8.2}{:>9.2}{:>9.2}{:>7.2}",
            s.device,
            s.r_s,
            s.w_s,
            s.rkb_s,
            s.wkb_s,
            s.rrqm_s,
            s.wrqm_s,
            s.r_await_ms,
            s.w_await_ms,
            s.aqu_sz,
            s.rareq_sz_kb,
            s.wareq_sz_kb,
            s.util_pct,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_has_iostat_columns() {
        let s = DeviceSample {
            device: "sda".into(),
            r_s: 100.0,
            w_s: 200.0,
            rkb_s: 400.0,
            wkb_s: 1600.0,
            rrqm_s: 25.0,
            wrqm_s: 50.0,
            r_await_ms: 0.5,
            w_await_ms: 2.0,
            aqu_sz: 0.45,
            rareq_sz_kb: 4.0,
            wareq_sz_kb: 8.0,
            util_pct: 25.0,
            ..DeviceSample::default()
        };
        let out = render_iostat_like(&[s]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        let hdr: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(
            hdr,
            [
                "Device", "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "r_await", "w_await",
                "aqu-sz", "rareq-sz", "wareq-sz", "%util"
            ]
        );
        let row: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(
            row,
            [
                "sda", "100.00", "200.00", "400.00", "1600.00", "25.00", "50.00", "0.50", "2.00",
                "0.45", "4.00", "8.00", "25.00"
            ]
        );
        assert_eq!(render_iostat_like(&[]).lines().count(), 1);
        assert_eq!(render_for("/proc/diskstats", &[]), render_iostat_like(&[]));
    }

    #[test]
    fn windows_counters_read_as_perfmon_shows_them() {
        let s = DeviceSample {
            device: "PhysicalDrive2".into(),
            r_s: 100.0,
            w_s: 200.0,
            rkb_s: 800.0,
            wkb_s: 12_800.0,
            r_await_ms: 5.0,
            w_await_ms: 2.0,
            aqu_sz: 0.9,
            util_pct: 50.0,
            current_queue_length: Some(3.0),
            split_s: Some(2.0),
            ..DeviceSample::default()
        };
        let out = render_for(DISK_PERFORMANCE_SOURCE, &[s]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0].split_whitespace().collect::<Vec<_>>(),
            ["PhysicalDisk", "PhysicalDrive2"]
        );
        let value = |name: &str| {
            let l = lines.iter().find(|l| l.starts_with(name)).unwrap();
            l[name.len()..].trim().to_string()
        };
        assert_eq!(value("Disk Reads/sec"), "100.000");
        assert_eq!(value("Disk Writes/sec"), "200.000");
        assert_eq!(value("Disk Read Bytes/sec"), "819200");
        assert_eq!(value("Avg. Disk sec/Read"), "0.005000");
        assert_eq!(value("Avg. Disk sec/Write"), "0.002000");
        assert_eq!(value("Avg. Disk Queue Length"), "0.900");
        assert_eq!(value("Current Disk Queue Length"), "3");
        assert_eq!(value("% Idle Time"), "50.000");
        assert_eq!(value("Split IO/Sec"), "2.000");
        assert_eq!(lines.len(), 11);
        // no disk with I/O this interval: the heading alone
        assert_eq!(render_perfmon_like(&[]).lines().count(), 1);
    }
}
