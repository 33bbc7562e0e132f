//! The terminal view of `iocap monitor`: device samples as `iostat -x` prints them.

use std::fmt::Write as _;

use iocap_model::DeviceSample;

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
    }
}
