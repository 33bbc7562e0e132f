//! How sure a test's figures are, in words a DBA can act on: the interval, spread and trend of
//! the IOPS and MB/s, the CPU the hypervisor stole and the verdict; what `--submit auto` chose;
//! and the spread across the runs of `--repeat`. Every line fits 80 columns.

use iocap_model::{RepeatSummary, Spread, Stability, SubmitMode, TestResult};

use crate::assess::wrap;
use crate::fmt::{self, MISSING};
use crate::table;

fn spread_words(name: &str, s: &Spread, value: String) -> String {
    let trend = s
        .trend_pct
        .map_or(String::new(), |t| format!(", trend {t:+.1} %"));
    format!(
        "  {name:<5} {value} ± {:.1} % (95 % CI), CV {:.1} %{trend}",
        s.ci95_half_pct, s.cv_pct
    )
}

/// The "how sure" block of one test; empty for results saved before it was recorded.
pub fn render_uncertainty(r: &TestResult) -> String {
    let Some(u) = &r.uncertainty else {
        return String::new();
    };
    let steal = u
        .steal_pct
        .map_or(String::new(), |s| format!(", CPU stolen {s:.1} %"));
    let mut out = format!("how sure: {}{steal}\n", u.verdict.name());
    if let Some(s) = &u.iops {
        out.push_str(&spread_words("IOPS", s, fmt::count(r.total.iops)));
        out.push('\n');
    }
    if let Some(s) = &u.mb_s {
        out.push_str(&spread_words("MB/s", s, format!("{:.1}", r.total.mb_s)));
        out.push('\n');
    }
    if u.verdict != Stability::Stable {
        for why in &u.reasons {
            out.push_str(&wrap("  - ", why, 80));
        }
    }
    out
}

/// What the io_uring engine did with `--submit`, when it was `auto`.
pub fn render_submit(r: &TestResult) -> String {
    let Some(s) = r
        .submit
        .as_ref()
        .filter(|s| s.requested == SubmitMode::Auto)
    else {
        return String::new();
    };
    let rate = |v: Option<f64>| v.map_or(MISSING.to_string(), fmt::count);
    let mut out = format!(
        "auto kept {} (trial: each {} IOPS, batch {} IOPS",
        s.chosen,
        rate(s.trial_iops_each),
        rate(s.trial_iops_batch)
    );
    if s.trial_in_window_s > 0.0 {
        out.push_str(&format!(
            "; it took the first {} of the window",
            fmt::secs(s.trial_in_window_s)
        ));
    }
    out.push(')');
    wrap("submission: ", &out, 80)
}

/// The spread across the runs of each repeated test.
pub fn render_repeats(repeats: &[RepeatSummary]) -> String {
    let mut out = String::new();
    for r in repeats {
        out.push_str(&format!("{}: {} runs\n", r.name, r.runs));
        let mut t = table(&["", "median", "q1", "q3", "min", "max", "IQR"]);
        let mut row = |name: &str, s: &iocap_model::RepeatSpread, f: &dyn Fn(f64) -> String| {
            t.add_row(vec![
                name.to_string(),
                f(s.median),
                f(s.q1),
                f(s.q3),
                f(s.min),
                f(s.max),
                format!("{:.1} %", s.iqr_pct),
            ]);
        };
        row("IOPS", &r.iops, &fmt::count);
        row("MB/s", &r.mb_s, &|v| format!("{v:.1}"));
        if let Some(p) = &r.p99_us {
            row("p99", p, &fmt::lat_us);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out
}
