//! The headroom of a recorded workload on a saturate run's curve (`iocap characterise
//! --against RUN`), as sentences a DBA reads aloud: what the busiest second needs, what the
//! knee gives, how many times over, what runs out first, and each stream on its own (a table,
//! or a sentence each where the terminal is too narrow for it). Wrapped to the terminal's
//! width.

use iocap_model::format_bytes;
use iocap_model::workload::{Headroom, StreamHeadroom};

use crate::fmt::wrap_indented;
use crate::fmt::{count, decimal_or, lat_us_or, printable, UNKNOWN};

/// The headroom block, its first line a heading, each sentence wrapped.
pub fn render(h: &Headroom) -> String {
    render_at(h, crate::width().max(40))
}

fn render_at(h: &Headroom, width: usize) -> String {
    let mut o = format!(
        "Headroom on run {} ({}, {})\n",
        printable(&h.against_run_id),
        printable(&h.curve_rw),
        format_bytes(h.curve_bs_bytes)
    );
    if let Some(why) = &h.partial_run {
        o.push_str(&wrap_indented(
            "  ",
            &format!(
                "PARTIAL: the run was cut short ({}); every headroom below is a lower bound.",
                printable(why)
            ),
            width,
            4,
        ));
    }
    for s in sentences(h) {
        o.push_str(&wrap_indented("  ", &s, width, 4));
    }
    o.push_str(&streams(h, width));
    o
}

/// A headroom ratio: under 2 to two significant figures (`0.98×`, `1.5×`, `0.012×`), and one
/// just under 1 never as `1.0×` (`0.996×`); one decimal up to 100 (`7.7×`), none above.
pub fn times(v: f64) -> String {
    if !v.is_finite() || v < 0.0 {
        UNKNOWN.into()
    } else if v >= 100.0 {
        format!("{}×", count(v))
    } else if v >= 2.0 {
        format!("{v:.1}×")
    } else if v == 0.0 {
        "0×".into()
    } else {
        // two significant figures: 1 decimal in [1, 2), 2 in [0.1, 1), 3 in [0.01, 0.1), ...
        let mut decimals = (1 - v.log10().floor() as i32).clamp(1, 12) as usize;
        let mut s = format!("{v:.decimals$}");
        // under 1 must read under 1: more digits until it does
        while v < 1.0 && decimals < 12 && s.parse::<f64>().is_ok_and(|r| r >= 1.0) {
            decimals += 1;
            s = format!("{v:.decimals$}");
        }
        if v < 1.0 && s.parse::<f64>().is_ok_and(|r| r >= 1.0) {
            s = format!("0.{}", "9".repeat(decimals));
        }
        format!("{s}×")
    }
}

/// Whether every headroom is a lower bound (runs saved before `lower_bound` was recorded: when
/// the curve never flattened).
fn bounded(h: &Headroom) -> bool {
    h.lower_bound || !h.knee_reached
}

/// The verdict, as assess gave it, or for a run saved before it was recorded as assess would.
fn verdict(h: &Headroom) -> &str {
    if !h.verdict.is_empty() {
        return &h.verdict;
    }
    match (h.headroom >= 1.0, bounded(h)) {
        (true, false) => "fits",
        (true, true) => "at_least",
        (false, false) => "falls_behind",
        (false, true) => "none",
    }
}

/// `5.4`, or `4` for a whole number of requests in flight.
fn depth(d: f64) -> String {
    if (d - d.round()).abs() < 0.05 {
        format!("{:.0}", d.round())
    } else {
        format!("{d:.1}")
    }
}

/// Where the workload's depth came from, in words: `the busiest second's own queue depth`.
fn depth_whose(h: &Headroom) -> String {
    match h.at_depth.as_ref().map(|a| a.depth_source.as_str()) {
        Some("busiest_second") => format!("the busiest {}'s own queue depth", bucket(h)),
        _ => "the workload's queue depth".into(),
    }
}

fn sentences(h: &Headroom) -> Vec<String> {
    let least = if bounded(h) { "at least " } else { "" };
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
    } else if h.partial_run.is_some() {
        format!("the run was cut short before a knee; its highest whole step gave {knee}")
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
        let d = if a.depth > 0.0 {
            depth(a.depth)
        } else {
            a.outstanding.to_string()
        };
        v.push(format!(
            "At {} ({d} in flight) this storage gives {} IOPS with p99 {}{}: {least}{} the \
             busiest {}.",
            depth_whose(h),
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
    let least = if bounded(h) { "no less than " } else { "" };
    let what = match h.limit.as_str() {
        "mb_s" => "MB/s".to_string(),
        "latency" => format!("latency at {}", depth_whose(h)),
        _ => "IOPS".into(),
    };
    let b = bucket(h);
    if verdict(h) == "none" {
        let why = if h.partial_run.is_some() {
            "the run was cut short"
        } else {
            "the curve never flattened"
        };
        let gives = match h.limit.as_str() {
            "latency" => format!("at {} the curve gives", depth_whose(h)),
            _ => format!("in {what} the curve gives"),
        };
        return format!(
            "No verdict: {why}, so its figures are lower bounds: {gives} at least {x} of what \
             the busiest {b} needs, and a lower bound under 1 cannot say that this storage \
             falls behind (a saturate run that reaches its knee would tell)."
        );
    }
    match (h.limit.as_str(), h.headroom < 1.0) {
        ("latency", false) => format!(
            "Runs out first: {what}: past {least}{x} the busiest {b}'s load, requests queue \
             deeper than when recorded and wait longer."
        ),
        ("latency", true) => format!(
            "Runs out first: {what}: there this storage gives only {x} the busiest {b}'s IOPS, \
             so requests queue deeper than when recorded and wait longer."
        ),
        (_, false) => format!("Runs out first: {what}, at {least}{x} the busiest {b}'s load."),
        (_, true) => format!(
            "Runs out first: {what}. This storage falls behind at the busiest {b}: its knee \
             gives only {x} of what that {b} needs (headroom under 1)."
        ),
    }
}

/// A stream's headroom cell: `5.9× (latency)`, `at least 3.1× (IOPS)`, `no verdict (0.48×)`.
fn cell(s: &StreamHeadroom) -> String {
    let Some(x) = s.headroom else {
        return UNKNOWN.into();
    };
    let limit = match s.limit.as_str() {
        "mb_s" => "MB/s",
        "latency" => "latency",
        _ => "IOPS",
    };
    match s.verdict.as_str() {
        "none" => format!("no verdict ({})", times(x)),
        "at_least" => format!("at least {} ({limit})", times(x)),
        _ => format!("{} ({limit})", times(x)),
    }
}

/// Each stream on its own: a heading, a table (a sentence each where it would not fit), and
/// the streams' notes. Nothing for a workload without streams.
fn streams(h: &Headroom, width: usize) -> String {
    if h.streams.is_empty() {
        return String::new();
    }
    let log = if h.streams.iter().any(|s| s.depth_source == "log") {
        " (a log at 1: its writer waits on each flush)"
    } else {
        ""
    };
    let mut o = wrap_indented(
        "  ",
        &format!(
            "Each stream alone, its busiest second against the curve at the depth it ran \
             at{log}:"
        ),
        width,
        4,
    );
    let head = [
        "stream",
        "IOPS",
        "depth",
        "curve IOPS",
        "curve p99",
        "headroom",
    ];
    let rows: Vec<[String; 6]> = h
        .streams
        .iter()
        .map(|s| {
            [
                format!(
                    "{}{}",
                    s.role.name(),
                    if s.curve_matches { "" } else { "*" }
                ),
                count(s.iops),
                s.depth.map_or(UNKNOWN.into(), depth),
                s.curve_iops.map_or(UNKNOWN.into(), count),
                lat_us_or(s.curve_lat_us_p99, UNKNOWN),
                cell(s),
            ]
        })
        .collect();
    let mut w = head.map(|c| c.chars().count());
    for r in &rows {
        for (k, c) in r.iter().enumerate() {
            w[k] = w[k].max(c.chars().count());
        }
    }
    let line = |r: [&str; 6]| {
        let mut l = format!("    {:<w0$}", r[0], w0 = w[0]);
        for k in 1..5 {
            l.push_str(&format!("  {:>wk$}", r[k], wk = w[k]));
        }
        l.push_str(&format!("  {}", r[5]));
        l.trim_end().to_string() + "\n"
    };
    let table_width = 4 + w.iter().sum::<usize>() + 2 * 5;
    if table_width <= width {
        o.push_str(&line(head));
        for r in &rows {
            o.push_str(&line(r.each_ref().map(String::as_str)));
        }
    } else {
        for (s, r) in h.streams.iter().zip(&rows) {
            let at = match s.depth {
                Some(_) => format!(
                    "; at depth {} the curve gives {} IOPS with p99 {}",
                    r[2], r[3], r[4]
                ),
                None => String::new(),
            };
            o.push_str(&wrap_indented(
                "    ",
                &format!("{}: needs {} IOPS{at}: {}.", r[0], r[1], r[5]),
                width,
                6,
            ));
        }
    }
    if h.streams.iter().any(|s| !s.curve_matches) {
        o.push_str(&wrap_indented(
            "    ",
            "* the curve's workload is not this stream's: its note says why.",
            width,
            6,
        ));
    }
    for s in &h.streams {
        for n in &s.notes {
            o.push_str(&wrap_indented(
                "  ",
                &format!("Note ({}): {}.", s.role, printable(n)),
                width,
                4,
            ));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::workload::{AtDepth, Placement, StreamRole};

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
            t.contains("falls behind at the busiest second: its knee gives only 0.50×"),
            "{t}"
        );
    }

    #[test]
    fn a_ratio_under_2_has_two_significant_figures_and_under_1_never_reads_1() {
        for (v, says) in [
            (0.977, "0.98×"),
            (1.46, "1.5×"),
            (0.5, "0.50×"),
            (1.0, "1.0×"),
            (1.96, "2.0×"),
            (0.0123, "0.012×"),
            (0.996, "0.996×"),
            (0.99996, "0.99996×"),
            (12.3, "12.3×"),
            (7.66, "7.7×"),
            (123.4, "123×"),
            (0.0, "0×"),
        ] {
            assert_eq!(times(v), says, "{v}");
        }
        // the issue's verdict: 0.977 read as "1.0×"
        let mut h = headroom();
        (h.limit, h.headroom, h.busiest.iops_headroom) = ("iops".into(), 0.977, Some(0.977));
        let t = render(&h).replace("\n    ", " ");
        assert!(t.contains("its knee gives only 0.98× of what"), "{t}");
        assert!(!t.contains("1.0×"), "{t}");
    }

    #[test]
    fn latency_is_said_at_the_busiest_seconds_own_depth() {
        let mut h = headroom();
        h.at_depth = Some(AtDepth {
            outstanding: 5,
            depth: 5.4,
            depth_source: "busiest_second".into(),
            iops: 57_320.0,
            lat_us_p99: Some(243.3),
            iops_headroom: 5.87,
            ..Default::default()
        });
        (h.limit, h.headroom, h.verdict) = ("latency".into(), 5.87, "fits".into());
        let text = render(&h);
        fits(&text);
        let t = text.replace("\n    ", " ");
        for words in [
            "At the busiest second's own queue depth (5.4 in flight) this storage gives 57,320 \
             IOPS with p99 243 µs: 5.9× the busiest second.",
            "Runs out first: latency at the busiest second's own queue depth: past 5.9× the \
             busiest second's load",
        ] {
            assert!(t.contains(words), "no `{words}` in\n{t}");
        }
    }

    #[test]
    fn a_partial_run_says_so_and_gives_at_least_or_no_verdict() {
        let mut h = headroom();
        h.knee_reached = false;
        h.lower_bound = true;
        h.partial_run = Some("interrupted by SIGINT (Ctrl-C) during its step at qd 32".into());
        h.notes = vec!["run 20261127-021500-3f9a1c2b was cut short (...): ... lower bound".into()];
        (h.verdict, h.headroom) = ("at_least".into(), 7.66);
        let text = render(&h);
        fits(&text);
        let t = text.replace("\n    ", " ");
        for words in [
            "PARTIAL: the run was cut short (interrupted by SIGINT (Ctrl-C) during its step at \
             qd 32); every headroom below is a lower bound.",
            "the run was cut short before a knee; its highest whole step gave 95,000 IOPS",
            "headroom at least 7.7× in IOPS",
            "Runs out first: IOPS, at no less than 7.7× the busiest second's load.",
            "Note: run 20261127-021500-3f9a1c2b was cut short",
        ] {
            assert!(t.contains(words), "no `{words}` in\n{t}");
        }
        // under 1 on a partial curve: no verdict, never "falls behind"
        (h.verdict, h.headroom, h.busiest.iops_headroom) = ("none".into(), 0.51, Some(0.51));
        let text = render(&h);
        fits(&text);
        let t = text.replace("\n    ", " ");
        assert!(
            t.contains(
                "No verdict: the run was cut short, so its figures are lower bounds: in IOPS \
                 the curve gives at least 0.51× of what the busiest second needs, and a lower \
                 bound under 1 cannot say that this storage falls behind"
            ),
            "{t}"
        );
        assert!(
            !t.contains("falls behind at") && !t.contains("Runs out"),
            "{t}"
        );
        // a run saved before the verdict was recorded: a curve that never flattened is a
        // lower bound too
        let mut h = headroom();
        (h.knee_reached, h.headroom) = (false, 0.51);
        let t = render(&h).replace("\n    ", " ");
        assert!(t.contains("No verdict: the curve never flattened"), "{t}");
    }

    fn streams_of(h: &mut Headroom) {
        h.streams = vec![
            StreamHeadroom {
                role: StreamRole::Data,
                iops: 11_600.0,
                depth: Some(6.0),
                depth_source: "stream_peak".into(),
                curve_iops: Some(63_400.0),
                curve_lat_us_p99: Some(258.5),
                limit: "latency".into(),
                headroom: Some(5.47),
                verdict: "fits".into(),
                curve_matches: true,
                ..Default::default()
            },
            StreamHeadroom {
                role: StreamRole::Log,
                iops: 800.0,
                depth: Some(1.0),
                depth_source: "log".into(),
                curve_iops: Some(10_000.0),
                curve_lat_us_p99: Some(150.0),
                limit: "latency".into(),
                headroom: Some(3.125),
                verdict: "fits".into(),
                notes: vec![
                    "the curve is random reads, the log stream sequential durable writes: \
                     the curve cannot speak for it"
                        .into(),
                ],
                ..Default::default()
            },
            StreamHeadroom {
                role: StreamRole::Doublewrite,
                iops: 1_234_567.0,
                depth: Some(12.5),
                curve_iops: Some(96_000.0),
                curve_lat_us_p99: Some(12_300.0),
                limit: "iops".into(),
                headroom: Some(0.077),
                verdict: "none".into(),
                curve_matches: true,
                ..Default::default()
            },
        ];
    }

    #[test]
    fn each_stream_has_its_line_within_80_columns_and_its_notes() {
        let mut h = headroom();
        streams_of(&mut h);
        let text = render(&h);
        fits(&text);
        let lines: Vec<&str> = text.lines().collect();
        let row = |role: &str| {
            let l = lines
                .iter()
                .find(|l| l.trim_start().starts_with(role))
                .unwrap_or_else(|| panic!("no {role} row in\n{text}"));
            l.split_whitespace().collect::<Vec<_>>().join(" ")
        };
        assert_eq!(row("data"), "data 11,600 6 63,400 258 µs 5.5× (latency)");
        assert_eq!(row("log"), "log* 800 1 10,000 150 µs 3.1× (latency)");
        assert_eq!(
            row("doublewrite"),
            "doublewrite 1,234,567 12.5 96,000 12.3 ms no verdict (0.077×)"
        );
        let t = text.replace("\n    ", " ");
        for words in [
            "Each stream alone, its busiest second against the curve at the depth it ran at (a \
             log at 1: its writer waits on each flush):",
            "stream IOPS depth curve IOPS curve p99 headroom",
            "* the curve's workload is not this stream's: its note says why.",
            "Note (log): the curve is random reads, the log stream sequential durable writes: \
             the curve cannot speak for it.",
        ] {
            let flat = t.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(words), "no `{words}` in\n{t}");
        }
        // too narrow for the table: a sentence each
        let text = streams(&h, 50);
        assert!(render_at(&h, 50).contains(&text));
        for l in text.lines() {
            assert!(l.chars().count() <= 50, "{l}");
        }
        let t = text.replace("\n      ", " ").replace("\n    ", " ");
        assert!(
            t.contains(
                "log*: needs 800 IOPS; at depth 1 the curve gives 10,000 IOPS with p99 150 µs: \
                 3.1× (latency)."
            ),
            "{t}"
        );
        // no streams, no block
        assert!(!render(&headroom()).contains("Each stream"));
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
