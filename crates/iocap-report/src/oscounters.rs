//! iocap's figures beside the block devices' own counters (`/proc/diskstats`, as `iostat -x`
//! computes them) over the same measured window: one column for iocap, one per device. The
//! terminal and the HTML report show the same rows.

use iocap_model::{DeviceRole, DeviceSample, OsCounters, TestResult};

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

/// `None` when the test carries no OS counters (results saved before they were recorded).
pub fn os_table(t: &TestResult) -> Option<OsTable> {
    let os: &OsCounters = t.os_counters.as_ref()?;
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
        row("reads/s", fmt::count(t.read.iops), &|d| fmt::count(d.r_s)),
        row("writes/s", fmt::count(t.write.iops), &|d| fmt::count(d.w_s)),
        row("read MB/s", format!("{:.1}", t.read.mb_s), &|d| {
            format!("{:.1}", d.rmb_s)
        }),
        row("write MB/s", format!("{:.1}", t.write.mb_s), &|d| {
            format!("{:.1}", d.wmb_s)
        }),
        row("avg read KiB", per_io_kib(t.read.bytes, t.read.ios), &|d| {
            format!("{:.1}", d.rareq_sz_kb)
        }),
        row(
            "avg write KiB",
            per_io_kib(t.write.bytes, t.write.ios),
            &|d| format!("{:.1}", d.wareq_sz_kb),
        ),
        row(
            "read ms (mean; r_await)",
            ms(t.read.lat_us.as_ref().map(|l| l.mean)),
            &|d| format!("{:.3}", d.r_await_ms),
        ),
        row(
            "write ms (mean; w_await)",
            ms(t.write.lat_us.as_ref().map(|l| l.mean)),
            &|d| format!("{:.3}", d.w_await_ms),
        ),
        row(
            "in flight (qd; aqu-sz)",
            format!("{:.1}", t.qd_mean),
            &|d| format!("{:.1}", d.aqu_sz),
        ),
        row("%util", MISSING.into(), &|d| format!("{:.0}", d.util_pct)),
    ];
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
    let Some(ot) = os_table(t) else {
        return String::new();
    };
    let mut out =
        String::from("\nOS counters over the same window (/proc/diskstats, as iostat -x)\n");
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
