//! The headroom of a recorded workload on a saturate run's curve (`iocap characterise
//! --against RUN`), as sentences a DBA reads aloud: what the busiest second needs, what the
//! knee gives, how many times over, and what runs out first. Wrapped to the terminal's width.

use iocap_model::format_bytes;
use iocap_model::workload::Headroom;

use crate::assess::wrap_indented;
use crate::fmt::{count, decimal_or, lat_us_or, printable, UNKNOWN};

/// The headroom block, its first line a heading, each sentence wrapped.
pub fn render(h: &Headroom) -> String {
    let width = crate::width().max(40);
    let mut o = format!(
        "Headroom on run {} ({}, {})\n",
        printable(&h.against_run_id),
        printable(&h.curve_rw),
        format_bytes(h.curve_bs_bytes)
    );
    for s in sentences(h) {
        o.push_str(&wrap_indented("  ", &s, width, 4));
    }
    o
}

/// `7.7×`; one decimal up to 100, none above, two below 0.1.
pub fn times(v: f64) -> String {
    if !v.is_finite() {
        UNKNOWN.into()
    } else if v >= 100.0 {
        format!("{}×", count(v))
    } else if v >= 0.1 {
        format!("{v:.1}×")
    } else {
        format!("{v:.2}×")
    }
}

fn sentences(h: &Headroom) -> Vec<String> {
    let least = if h.knee_reached { "" } else { "at least " };
    let each = |i: Option<f64>, m: Option<f64>| {
        let one = |v: Option<f64>| v.map_or(UNKNOWN.into(), |v| format!("{least}{}", times(v)));
        format!("headroom {} in IOPS, {} in MB/s", one(i), one(m))
    };
    let at = match h.workload_bs_bytes {
        0 => String::new(),
        b => format!(" at {}", format_bytes(b)),
    };
    let knee = format!(
        "{} IOPS and {} MB/s with p99 {} ({} in flight)",
        count(h.knee_iops),
        decimal_or(h.knee_mb_s, UNKNOWN),
        lat_us_or(h.knee_lat_us_p99, UNKNOWN),
        h.knee_outstanding
    );
    let storage = if h.knee_reached {
        format!("this storage's knee is {knee}")
    } else {
        format!("this storage never reached a knee; its highest step gave {knee}")
    };
    let (b, p) = (&h.busiest, &h.p99_second);
    let mut v = vec![
        format!(
            "The busiest {} needs {} IOPS{at} and {} MB/s; {storage}: {}.",
            bucket(h),
            count(b.iops),
            decimal_or(b.mb_s, UNKNOWN),
            each(b.iops_headroom, b.mb_s_headroom)
        ),
        format!(
            "The 99th-percentile {} needs {} IOPS and {} MB/s: {}.",
            bucket(h),
            count(p.iops),
            decimal_or(p.mb_s, UNKNOWN),
            each(p.iops_headroom, p.mb_s_headroom)
        ),
    ];
    if let Some(a) = &h.at_depth {
        v.push(format!(
            "At the workload's queue depth ({} in flight) this storage gives {} IOPS with p99 \
             {}{}: {} the busiest {}.",
            a.outstanding,
            count(a.iops),
            lat_us_or(a.lat_us_p99, UNKNOWN),
            if a.outside_curve {
                " (outside the curve's steps: the nearest stands for it)"
            } else {
                ""
            },
            times(a.iops_headroom),
            bucket(h)
        ));
    }
    v.push(first_out(h));
    v.extend(h.notes.iter().map(|n| format!("Note: {}.", printable(n))));
    v
}

/// `second`, or the bucket's width where a long trace's buckets are wider.
fn bucket(h: &Headroom) -> String {
    if (h.bucket_s - 1.0).abs() < 1e-9 || h.bucket_s <= 0.0 {
        "second".into()
    } else {
        format!("{} s bucket", h.bucket_s)
    }
}

fn first_out(h: &Headroom) -> String {
    let x = times(h.headroom);
    let least = if h.knee_reached { "" } else { "no less than " };
    let what = match h.limit.as_str() {
        "mb_s" => "MB/s",
        "latency" => "latency at the workload's queue depth",
        _ => "IOPS",
    };
    match (h.limit.as_str(), h.headroom < 1.0) {
        ("latency", false) => format!(
            "Runs out first: {what}: past {x} the busiest {}'s load, requests queue deeper than \
             when recorded and wait longer.",
            bucket(h)
        ),
        ("latency", true) => format!(
            "Runs out first: {what}: there this storage gives only {x} the busiest {}'s IOPS, so \
             requests queue deeper than when recorded and wait longer.",
            bucket(h)
        ),
        (_, false) => format!(
            "Runs out first: {what}, at {least}{x} the busiest {}'s load.",
            bucket(h)
        ),
        (_, true) => format!(
            "Runs out first: {what}. This storage falls behind at the busiest {}: its knee gives \
             only {x} of what that {} needs (headroom under 1).",
            bucket(h),
            bucket(h)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::workload::{AtDepth, Placement};

    fn headroom() -> Headroom {
        Headroom {
            against_run_id: "20261127-021500-3f9a1c2b".into(),
            curve_rw: "randread".into(),
            curve_bs_bytes: 8192,
            workload_bs_bytes: 8192,
            same_size: true,
            knee_reached: true,
            knee_outstanding: 16,
            knee_iops: 95_000.0,
            knee_mb_s: 778.2,
            knee_lat_us_p99: Some(500.0),
            busiest: Placement {
                iops: 12_400.0,
                mb_s: 101.6,
                iops_headroom: Some(7.66),
                mb_s_headroom: Some(7.66),
            },
            p99_second: Placement {
                iops: 9_000.0,
                mb_s: 73.7,
                iops_headroom: Some(10.56),
                mb_s_headroom: Some(10.56),
            },
            bucket_s: 1.0,
            limit: "iops".into(),
            headroom: 7.66,
            ..Default::default()
        }
    }

    fn fits(text: &str) {
        for l in text.lines() {
            assert!(l.chars().count() <= 80, "{}: {l}", l.chars().count());
        }
    }

    #[test]
    fn the_busiest_second_reads_as_the_issue_asks_within_80_columns() {
        let t = render(&headroom()).replace("\n    ", " ");
        fits(&render(&headroom()));
        for words in [
            "Headroom on run 20261127-021500-3f9a1c2b (randread, 8K)",
            "The busiest second needs 12,400 IOPS at 8K and 101.6 MB/s; this storage's knee is \
             95,000 IOPS and 778.2 MB/s with p99 500 µs (16 in flight): headroom 7.7× in IOPS, \
             7.7× in MB/s.",
            "The 99th-percentile second needs 9,000 IOPS and 73.7 MB/s: headroom 10.6×",
            "Runs out first: IOPS, at 7.7× the busiest second's load.",
        ] {
            assert!(t.contains(words), "no `{words}` in\n{t}");
        }
    }

    #[test]
    fn no_knee_reads_at_least_and_beyond_it_falls_behind() {
        let mut h = headroom();
        h.knee_reached = false;
        let t = render(&h).replace("\n    ", " ");
        assert!(
            t.contains("never reached a knee; its highest step gave"),
            "{t}"
        );
        assert!(t.contains("headroom at least 7.7× in IOPS"), "{t}");
        assert!(
            t.contains("Runs out first: IOPS, at no less than 7.7× the busiest"),
            "{t}"
        );
        let mut h = headroom();
        (h.headroom, h.busiest.iops_headroom) = (0.5, Some(0.5));
        let t = render(&h).replace("\n    ", " ");
        assert!(
            t.contains("falls behind at the busiest second: its knee gives only 0.5×"),
            "{t}"
        );
    }

    #[test]
    fn latency_at_the_workloads_depth_and_notes_fit_80_columns() {
        let mut h = headroom();
        h.at_depth = Some(AtDepth {
            outstanding: 4,
            iops: 40_000.0,
            lat_us_p99: Some(200.0),
            iops_headroom: 3.23,
            outside_curve: false,
            ..Default::default()
        });
        (h.limit, h.headroom) = ("latency".into(), 3.23);
        h.notes = vec![
            "the curve measured 8K requests, the workload's commonest are 16K: \
                        compared across sizes"
                .into(),
        ];
        h.bucket_s = 2.0;
        let text = render(&h);
        fits(&text);
        let t = text.replace("\n    ", " ");
        for words in [
            "At the workload's queue depth (4 in flight) this storage gives 40,000 IOPS with p99 \
             200 µs: 3.2× the busiest 2 s bucket.",
            "Runs out first: latency at the workload's queue depth: past 3.2×",
            "Note: the curve measured 8K requests",
        ] {
            assert!(t.contains(words), "no `{words}` in\n{t}");
        }
    }
}
