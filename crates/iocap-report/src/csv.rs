//! CSV: one row per test and scope (total, read, write, fsync, then each target's total), with
//! every latency figure in microseconds. Made for spreadsheets and `awk`; the JSON carries more.
//! The columns added later (label, start, workload shape, targets, partial) come after the
//! first ones, so scripts that read columns by position keep working. Values are quoted as
//! RFC 4180 says. `partial` is `true` on every row of a run cut short (Ctrl-C, SIGTERM, an I/O
//! error, a suite that did not finish): its figures cover only what ran.
//!
//! The text cells (run id, test, target, label, start) hold what users and other hosts wrote,
//! and a CSV file is opened in spreadsheets and terminals alike: their control and
//! bidirectional characters read escaped, as in the text views (`\e`, `\u{202e}`), and one that
//! would start a formula (`=`, `+`, `-`, `@`, a tab or CR first) starts with `'`, as OWASP's
//! rule against CSV injection says, unless it is a number (`-1.5`). The figures are numbers.
//! JSON is the exact form of a result.

use iocap_model::{OpStats, RunResult, TestResult};

const HEADER: &str = "run_id,test,scope,target,ios,bytes,iops,mib_s,mb_s,lat_us_min,lat_us_mean,\
lat_us_stddev,lat_us_p50,lat_us_p90,lat_us_p95,lat_us_p99,lat_us_p99_9,lat_us_p99_99,\
lat_us_p99_999,lat_us_max,label,started_at,rw,bs_bytes,qd,threads,targets,partial";

/// A text cell: controls escaped, a formula neutralised, then quoted (the one rule, the
/// model's).
fn quote(s: &str) -> String {
    iocap_model::text::csv_cell(s)
}

fn row(out: &mut String, run: &RunResult, t: &TestResult, scope: &str, target: &str, o: &OpStats) {
    let mut cells = vec![
        quote(&run.run_id),
        quote(&t.name),
        scope.to_string(),
        quote(target),
        o.ios.to_string(),
        o.bytes.to_string(),
        format!("{:.3}", o.iops),
        format!("{:.3}", o.mib_s),
        format!("{:.3}", o.mb_s),
    ];
    match &o.lat_us {
        Some(l) => {
            for v in [
                l.min, l.mean, l.stddev, l.p50, l.p90, l.p95, l.p99, l.p99_9, l.p99_99, l.p99_999,
                l.max,
            ] {
                cells.push(format!("{v:.3}"));
            }
        }
        None => cells.extend(std::iter::repeat_n(String::new(), 11)),
    }
    let targets: Vec<&str> = t.targets.iter().map(|x| x.path.as_str()).collect();
    cells.extend([
        quote(run.label.as_deref().unwrap_or_default()),
        quote(&run.started_at),
        t.spec.rw.name().to_string(),
        t.spec.bs_bytes.to_string(),
        t.spec.qd.to_string(),
        t.spec.threads.to_string(),
        // one cell: several targets apart by a space-free separator a path rarely holds
        quote(&targets.join(";")),
        crate::partial::csv_cell(run).to_string(),
    ]);
    out.push_str(&cells.join(","));
    out.push('\n');
}

fn rows(out: &mut String, run: &RunResult) {
    for t in &run.tests {
        row(out, run, t, "total", "", &t.total);
        row(out, run, t, "read", "", &t.read);
        row(out, run, t, "write", "", &t.write);
        if t.sync.ios > 0 {
            row(out, run, t, "fsync", "", &t.sync);
        }
        for tr in &t.targets {
            row(out, run, t, "target", &tr.path, &tr.total);
        }
    }
}

/// One run: the header, then its rows.
pub fn render(run: &RunResult) -> String {
    render_many(std::slice::from_ref(run))
}

/// Several runs in one file: one header, then the rows of every run in order; the `run_id`
/// column tells them apart. Of one run, the same bytes as [`render`].
pub fn render_many(runs: &[RunResult]) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for run in runs {
        rows(&mut out, run);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoting() {
        assert_eq!(super::quote("a,b"), "\"a,b\"");
        assert_eq!(super::quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(super::quote("plain"), "plain");
        assert_eq!(super::quote("two\r\nlines"), "\"two\\r\nlines\"");
    }

    #[test]
    fn controls_escaped_and_formulas_neutralised() {
        use super::quote;
        assert_eq!(quote("a\x1b[2J\u{202e}"), "a\\e[2J\\u{202e}");
        assert_eq!(quote("=1+2"), "'=1+2");
        assert_eq!(quote("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        for f in ["+A1", "-A1", "@SUM(A1)", "\tx", "-", "-inf", "+nan", "-1+2"] {
            assert!(quote(f).starts_with('\''), "{f}: {}", quote(f));
        }
        for n in ["-1.5", "+3", "-2e3", "1.5", "plain", "a=b", ""] {
            assert_eq!(quote(n), n);
        }
    }
}
