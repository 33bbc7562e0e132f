//! The terminal view of `iocap cost`: CPU per I/O at each point in three accountings, the fitted
//! models, the answers in plain words and the notes.

use iocap_model::{
    format_bytes, CacheMode, CostReport, CpuAccount, EngineChoice, EngineFeature, System,
};

use crate::fmt::{self, MISSING};
use crate::table;

fn us(v: f64) -> String {
    if !v.is_finite() {
        MISSING.into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn per_io(a: &Option<CpuAccount>) -> String {
    a.as_ref()
        .map(|a| us(a.us_per_io))
        .unwrap_or_else(|| MISSING.into())
}

/// An engine as the system that measured the report names it.
pub(crate) fn engine_name(c: &CostReport, e: EngineChoice) -> &'static str {
    e.name_on(if c.windows {
        System::Windows
    } else {
        System::Linux
    })
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| MISSING.into())
}

/// The points, the models, the answers and the notes.
pub fn render(c: &CostReport) -> String {
    let mut out = format!(
        "CPU per I/O ({} matrix, {} CPUs; µs of CPU per completed I/O)\n",
        c.matrix, c.cpus
    );
    let mut t = table(&[
        "engine",
        "rw",
        "size",
        "cache",
        "qd",
        "IOPS",
        "MB/s",
        "process",
        "system",
        "elsewhere",
        "proc µs/KiB",
        "registered",
    ]);
    for p in &c.points {
        let reg = [
            (EngineFeature::RegisteredFiles, "file"),
            (EngineFeature::RegisteredBuffers, "bufs"),
        ]
        .iter()
        .filter(|(f, _)| p.engine_features.contains(f))
        .map(|(_, s)| *s)
        .collect::<Vec<_>>()
        .join("+");
        // a point without I/O has no CPU per I/O: its zeros are not figures
        let fig = |v: String| if p.ios == 0 { MISSING.to_string() } else { v };
        t.add_row(vec![
            engine_name(c, p.engine).to_string(),
            p.rw.to_string(),
            format_bytes(p.bs_bytes),
            match p.resident_after_pct {
                Some(r) if p.cache == CacheMode::Miss => format!("miss ({r:.0} % cached after)"),
                _ => p.cache.to_string(),
            },
            p.qd.to_string(),
            fmt::count(p.iops),
            format!("{:.1}", p.mb_s),
            fig(us(p.process.us_per_io)),
            fig(per_io(&p.system)),
            fig(per_io(&p.elsewhere)),
            fig(us(p.process.us_per_kb)),
            if reg.is_empty() { MISSING.into() } else { reg },
        ]);
    }
    out.push_str(&t.to_string());
    out.push_str("\n\nModel: µs per I/O = fixed + per-KiB × KiB (least squares over the sizes)\n");
    let mut m = table(&[
        "engine",
        "rw",
        "cache",
        "qd",
        "accounting",
        "fixed µs",
        "per-KiB µs",
        "R²",
        "sizes",
    ]);
    for x in &c.models {
        m.add_row(vec![
            engine_name(c, x.engine).to_string(),
            x.rw.to_string(),
            x.cache.to_string(),
            x.qd.to_string(),
            x.accounting.to_string(),
            opt(x.fixed_us, us),
            opt(x.per_kb_us, |v| format!("{v:.4}")),
            opt(x.r2, |v| format!("{v:.3}")),
            x.points.len().to_string(),
        ]);
    }
    out.push_str(&m.to_string());
    // the findings are sentences: wrapped to the width, under their text
    let width = crate::width();
    if !c.answers.is_empty() {
        out.push_str("\n\nIn plain words (process CPU; system-wide as the upper bound):\n");
        for a in &c.answers {
            out.push_str(&crate::assess::wrap("- ", &fmt::printable(&a.text), width));
        }
    }
    if !c.notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in &c.notes {
            out.push_str(&crate::assess::wrap("- ", &fmt::printable(n), width));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use iocap_model::CostAnswer;

    use super::*;

    #[test]
    fn findings_wrap_under_their_text() {
        let long = "io_uring randread 4K at qd 32 completes about 410,000 IOPS per core of the \
                    process's own CPU (1.0 core at 410,000 IOPS), and at most 380,000 per core \
                    counting every CPU of the host, which is the upper bound here";
        let c = CostReport {
            answers: vec![CostAnswer {
                text: long.into(),
                ..Default::default()
            }],
            notes: vec![format!("{long} \x1b[2J")],
            ..Default::default()
        };
        let t = render(&c);
        let at = t.find("In plain words").unwrap();
        let findings = &t[at..];
        assert!(findings.lines().all(|l| l.chars().count() <= 80), "{t}");
        assert!(
            findings.contains("\n- io_uring randread 4K at qd 32 completes"),
            "{t}"
        );
        assert!(findings.contains("\n  "), "wrapped under the text: {t}");
        assert!(
            findings.contains("\\e[2J") && !findings.contains('\x1b'),
            "{t}"
        );
    }
}
