//! iocap's figures beside the block devices' own counters (`/proc/diskstats`, as `iostat -x`
//! computes them) over the same measured window: one column for iocap, one per device. The
//! terminal and the HTML report show the same rows. Windows' counters (IOCTL_DISK_PERFORMANCE)
//! fill the same rows, named after perfmon's PhysicalDisk counters, with two rows of its own.

use iocap_model::{DeviceRole, DeviceSample, OsCounters, TestResult, DISK_PERFORMANCE_SOURCE};

use crate::fmt::{self, MISSING};

/// The side-by-side table of one test: header, rows, and the lines to print under it (why a
/// target has no counters). The findings are not repeated here: they are the test's warnings.
pub struct OsTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

fn per_io_kib(bytes: u64, ios: u64) -> String {
    if ios == 0 {
        MISSING.into()
    } else {
        format!("{:.1}", bytes as f64 / ios as f64 / 1024.0)
    }
}

fn ms(us: Option<f64>) -> String {
    us.map_or_else(|| MISSING.into(), |u| format!("{:.3}", u / 1e3))
}

/// Whether the counters are Windows' (named after perfmon's) rather than diskstats'.
fn perfmon(os: &OsCounters) -> bool {
    os.source == DISK_PERFORMANCE_SOURCE
}

/// The heading over the table: where the counters came from and whose formulas made them.
pub fn title(os: &OsCounters) -> String {
    if perfmon(os) {
        format!("OS counters over the same window ({DISK_PERFORMANCE_SOURCE}, as perfmon's PhysicalDisk)")
    } else {
        "OS counters over the same window (/proc/diskstats, as iostat -x)".to_string()
    }
}

/// A row's label: iostat's name on Linux, perfmon's counter on Windows.
fn label(os: &OsCounters, linux: &str, windows: &str) -> String {
    if perfmon(os) { windows } else { linux }.to_string()
}

/// `None` when the test carries no OS counters (results saved before they were recorded).
pub fn os_table(t: &TestResult) -> Option<OsTable> {
    let os: &OsCounters = t.os_counters.as_ref()?;
    let l = |linux: &str, windows: &str| label(os, linux, windows);
    let mut header = vec![String::new(), "iocap".to_string()];
    let devs: Vec<&DeviceSample> = os
        .devices
        .iter()
        .filter(|d| !d.series.is_empty())
        .map(|d| &d.summary)
        .collect();
    for d in &os.devices {
        if !d.series.is_empty() {
            header.push(if d.role == DeviceRole::Target {
                d.device.clone()
            } else {
                format!("{} (below)", d.device)
            });
        }
    }
    let row = |name: &str, mine: String, dev: &dyn Fn(&DeviceSample) -> String| {
        let mut r = vec![name.to_string(), mine];
        r.extend(devs.iter().map(|d| dev(d)));
        r
    };
    let mut rows = vec![
        row(
            &l("reads/s", "reads/s (Disk Reads/sec)"),
            fmt::count(t.read.iops),
            &|d| fmt::count(d.r_s),
        ),
        row(
            &l("writes/s", "writes/s (Disk Writes/sec)"),
            fmt::count(t.write.iops),
            &|d| fmt::count(d.w_s),
        ),
        row(
            &l("read MB/s", "read MB/s (Disk Read Bytes/sec)"),
            format!("{:.1}", t.read.mb_s),
            &|d| format!("{:.1}", d.rmb_s),
        ),
        row(
            &l("write MB/s", "write MB/s (Disk Write Bytes/sec)"),
            format!("{:.1}", t.write.mb_s),
            &|d| format!("{:.1}", d.wmb_s),
        ),
        row(
            &l("avg read KiB", "avg read KiB (Avg. Disk Bytes/Read)"),
            per_io_kib(t.read.bytes, t.read.ios),
            &|d| format!("{:.1}", d.rareq_sz_kb),
        ),
        row(
            &l("avg write KiB", "avg write KiB (Avg. Disk Bytes/Write)"),
            per_io_kib(t.write.bytes, t.write.ios),
            &|d| format!("{:.1}", d.wareq_sz_kb),
        ),
        row(
            &l(
                "read ms (mean; r_await)",
                "read ms (mean; Avg. Disk sec/Read)",
            ),
            ms(t.read.lat_us.as_ref().map(|l| l.mean)),
            &|d| format!("{:.3}", d.r_await_ms),
        ),
        row(
            &l(
                "write ms (mean; w_await)",
                "write ms (mean; Avg. Disk sec/Write)",
            ),
            ms(t.write.lat_us.as_ref().map(|l| l.mean)),
            &|d| format!("{:.3}", d.w_await_ms),
        ),
        row(
            &l(
                "in flight (qd; aqu-sz)",
                "in flight (qd; Avg. Disk Queue Length)",
            ),
            format!("{:.1}", t.qd_mean),
            &|d| format!("{:.1}", d.aqu_sz),
        ),
        row(
            &l("%util", "busy % (100 - % Idle Time)"),
            MISSING.into(),
            &|d| format!("{:.0}", d.util_pct),
        ),
    ];
    if perfmon(os) {
        let opt = |v: Option<f64>, digits: usize| {
            v.map_or_else(|| MISSING.into(), |v| format!("{v:.digits$}"))
        };
        rows.push(row(
            "Current Disk Queue Length (mean)",
            MISSING.into(),
            &|d| opt(d.current_queue_length, 1),
        ));
        rows.push(row("Split IO/Sec", MISSING.into(), &|d| opt(d.split_s, 0)));
    }
    if devs.is_empty() {
        rows.clear();
    }
    // the findings are among the test's warnings, which every view prints already
    let notes = os.unavailable.clone();
    Some(OsTable {
        header,
        rows,
        notes,
    })
}

/// The terminal section: the table and its notes, or nothing.
pub fn render_os(t: &TestResult) -> String {
    let (Some(ot), Some(os)) = (os_table(t), t.os_counters.as_ref()) else {
        return String::new();
    };
    let mut out = format!("\n{}\n", title(os));
    if ot.rows.is_empty() {
        out.push_str("  no device was sampled\n");
    } else {
        let header: Vec<&str> = ot.header.iter().map(String::as_str).collect();
        let mut table = crate::table(&header);
        if let Some(c) = table.column_mut(0) {
            c.set_cell_alignment(comfy_table::CellAlignment::Left);
        }
        for r in ot.rows {
            table.add_row(r);
        }
        out.push_str(&format!("{table}\n"));
    }
    for n in &ot.notes {
        out.push_str(&format!("  {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use iocap_model::OsDevice;

    use super::*;

    fn test_with(source: &str, device: &str) -> TestResult {
        let s = DeviceSample {
            device: device.into(),
            interval_s: 1.0,
            r_s: 100.0,
            r_await_ms: 5.0,
            util_pct: 40.0,
            current_queue_length: (source == DISK_PERFORMANCE_SOURCE).then_some(3.0),
            split_s: (source == DISK_PERFORMANCE_SOURCE).then_some(2.0),
            ..DeviceSample::default()
        };
        TestResult {
            os_counters: Some(OsCounters {
                source: source.into(),
                devices: vec![OsDevice {
                    device: device.into(),
                    summary: s.clone(),
                    series: vec![s],
                    ..OsDevice::default()
                }],
                unavailable: vec![],
            }),
            ..TestResult::default()
        }
    }

    fn labels(t: &TestResult) -> Vec<String> {
        os_table(t)
            .unwrap()
            .rows
            .into_iter()
            .map(|r| r[0].clone())
            .collect()
    }

    #[test]
    fn linux_rows_keep_iostats_names() {
        let t = test_with("/proc/diskstats", "vda");
        assert_eq!(
            labels(&t),
            [
                "reads/s",
                "writes/s",
                "read MB/s",
                "write MB/s",
                "avg read KiB",
                "avg write KiB",
                "read ms (mean; r_await)",
                "write ms (mean; w_await)",
                "in flight (qd; aqu-sz)",
                "%util"
            ]
        );
        assert!(render_os(&t)
            .starts_with("\nOS counters over the same window (/proc/diskstats, as iostat -x)\n"));
    }

    #[test]
    fn windows_rows_carry_perfmons_names() {
        let t = test_with(DISK_PERFORMANCE_SOURCE, "PhysicalDrive2");
        let l = labels(&t);
        for name in [
            "reads/s (Disk Reads/sec)",
            "writes/s (Disk Writes/sec)",
            "read ms (mean; Avg. Disk sec/Read)",
            "write ms (mean; Avg. Disk sec/Write)",
            "in flight (qd; Avg. Disk Queue Length)",
            "busy % (100 - % Idle Time)",
            "Current Disk Queue Length (mean)",
            "Split IO/Sec",
        ] {
            assert!(l.iter().any(|x| x == name), "{name} in {l:?}");
        }
        let ot = os_table(&t).unwrap();
        assert_eq!(ot.header[2], "PhysicalDrive2");
        let row = |name: &str| ot.rows.iter().find(|r| r[0] == name).unwrap()[2].clone();
        assert_eq!(row("read ms (mean; Avg. Disk sec/Read)"), "5.000");
        assert_eq!(row("Current Disk Queue Length (mean)"), "3.0");
        let text = render_os(&t);
        assert!(
            text.contains("(IOCTL_DISK_PERFORMANCE, as perfmon's PhysicalDisk)"),
            "{text}"
        );
    }
}
