//! The text view of `iocap verify`: a run (the file, the I/O, what was checked) or a check
//! against a journal (what was acknowledged, what was lost), then the failure classes, the
//! verdict, the warnings and the first failures in detail. All of them are in the JSON.

use iocap_model::{format_bytes, FailureClass, Verify, VerifyCheck, VerifyFailure};

/// Failures listed in the text view (all of them are in the JSON).
pub const SHOWN_FAILURES: usize = 20;
/// Lost pages named in the view of a check.
const SHOWN_LOST_PAGES: usize = 50;

/// The text view of a verify run or check. The file's path, the journal's, the dumps' and the
/// warnings and failures naming them come from the user (or a saved run): the view's control
/// characters read escaped (`iocap_model::text::printable_lines`), its line breaks kept. A
/// line longer than the width is wrapped under its text.
pub fn render(v: &Verify) -> String {
    let mut o = String::new();
    match &v.check {
        Some(c) => check_summary(&mut o, v, c),
        None => run_summary(&mut o, v),
    }
    line(&mut o, "failures", classes(v));
    line(&mut o, "verdict", verdict(v));
    for w in &v.warnings {
        o.push_str(&format!("  warning: {w}\n"));
    }
    first_failures(&mut o, v);
    let o = crate::fmt::printable_lines(&o);
    crate::assess::wrap_long_lines(&o, crate::width())
}

/// One `key  value` line of the summary.
fn line(o: &mut String, k: &str, val: String) {
    o.push_str(&format!("  {k:<15} {val}\n"));
}

fn check_summary(o: &mut String, v: &Verify, c: &VerifyCheck) {
    o.push_str(&format!("iocap verify --check: {}\n", v.target));
    let torn_tail = if c.torn_tail_bytes > 0 {
        format!(", torn tail of {} B ignored", c.torn_tail_bytes)
    } else {
        String::new()
    };
    line(
        o,
        "journal",
        format!(
            "{}: {} acknowledged writes on {} pages{torn_tail}",
            c.journal, c.records, c.pages_journaled,
        ),
    );
    line(
        o,
        "pages checked",
        format!(
            "{} of {} ({} each, {})",
            v.counts.pages_checked,
            v.pages,
            format_bytes(v.page_bytes),
            if v.direct { "O_DIRECT" } else { "buffered" }
        ),
    );
    line(
        o,
        "allowed",
        format!(
            "{} pages newer than acknowledged, {} torn at {} boundaries between acknowledged and \
             newer writes",
            c.pages_newer,
            c.pages_torn_allowed,
            format_bytes(v.atomic_unit_bytes)
        ),
    );
    line(o, "lost writes", lost_writes(&c.lost_pages));
}

/// `none`, or how many pages lost an acknowledged write and the first of them.
fn lost_writes(lost: &[u64]) -> String {
    if lost.is_empty() {
        return "none".to_string();
    }
    let shown: Vec<String> = lost
        .iter()
        .take(SHOWN_LOST_PAGES)
        .map(u64::to_string)
        .collect();
    let more = if lost.len() > SHOWN_LOST_PAGES {
        ", ..."
    } else {
        ""
    };
    format!("{} pages: {}{more}", lost.len(), shown.join(", "))
}

fn run_summary(o: &mut String, v: &Verify) {
    o.push_str(&format!("iocap verify: {}\n", v.target));
    line(
        o,
        "file",
        format!(
            "{}, {} pages of {}, file id {:016x}, seed {}",
            format_bytes(v.size_bytes),
            v.pages,
            format_bytes(v.page_bytes),
            v.file_id,
            v.seed
        ),
    );
    let cache = if v.direct {
        "O_DIRECT"
    } else {
        "buffered (page cache)"
    };
    line(
        o,
        "I/O",
        format!(
            "{cache}, {}, {} threads × qd {}, {:.1} s mixed, {:.1} s in all",
            v.io_engine, v.threads, v.qd, v.duration_s, v.elapsed_s
        ),
    );
    run_counts(o, v);
}

/// What the run's pages went through: checks, writes, reads.
fn run_counts(o: &mut String, v: &Verify) {
    let c = &v.counts;
    line(
        o,
        "pages checked",
        format!(
            "{} ({:.0}/s over the {:.1} s of the run)",
            c.pages_checked,
            c.pages_checked as f64 / v.elapsed_s.max(1e-9),
            v.elapsed_s
        ),
    );
    let journaled = if v.journal.is_some() {
        format!(", {} journaled", c.journal_records)
    } else {
        String::new()
    };
    line(
        o,
        "writes",
        format!(
            "{} random page updates, {} durable log appends{journaled}",
            c.random_updates, c.log_appends
        ),
    );
    line(
        o,
        "reads",
        format!(
            "{} read-ahead scans, {} random page reads; {} reads overlapped a write and were not \
             judged",
            c.scans, c.random_reads, c.reads_skipped
        ),
    );
}

/// `none`, or each failure class found with its count.
fn classes(v: &Verify) -> String {
    let found: Vec<String> = FailureClass::ALL
        .iter()
        .filter(|k| v.classes.get(**k) > 0)
        .map(|k| format!("{} {}", k.name(), v.classes.get(*k)))
        .collect();
    if found.is_empty() {
        return "none".into();
    }
    format!(
        "{} ({} transient: read back right later)",
        found.join(", "),
        v.classes.transient
    )
}

fn verdict(v: &Verify) -> String {
    let words = match (v.verdict_word(), v.check.is_some()) {
        ("PARTIAL", _) => "interrupted: not every page was checked",
        ("PASS", false) => "every page read back as written",
        ("PASS", true) => "every acknowledged write is there",
        (_, false) if v.interrupted => {
            "the storage did not give back what was written (interrupted: not every page was \
             checked)"
        }
        (_, true) if v.interrupted => {
            "acknowledged writes were lost or damaged (interrupted: not every page was checked)"
        }
        (_, false) => "the storage did not give back what was written",
        (_, true) => "acknowledged writes were lost or damaged",
    };
    format!("{}: {words}", v.verdict_word())
}

/// The first [`SHOWN_FAILURES`] failures, each with what was expected and found.
fn first_failures(o: &mut String, v: &Verify) {
    if v.failures.is_empty() {
        return;
    }
    o.push_str(&format!(
        "\nFirst failures ({} of {}):\n",
        v.failures.len().min(SHOWN_FAILURES),
        v.classes.total()
    ));
    for f in v.failures.iter().take(SHOWN_FAILURES) {
        failure(o, f);
    }
}

fn failure(o: &mut String, f: &VerifyFailure) {
    let found = f
        .found_generation
        .map_or_else(|| "-".to_string(), |g| g.to_string());
    let sectors = if f.sectors_512_differing.is_empty() {
        String::new()
    } else {
        format!(
            "; 512 B sectors {:?}, 4 KiB sectors {:?} differ",
            f.sectors_512_differing, f.sectors_4k_differing
        )
    };
    let rereads = if f.transient {
        "; transient (a re-read was right)"
    } else if f.rereads > 0 {
        "; persistent over re-reads"
    } else {
        ""
    };
    o.push_str(&format!(
        "  page {} at {} B: {} during {}, expected generation {}, found \
         {found}{sectors}{rereads}\n    {}\n",
        f.page,
        f.offset_bytes,
        f.class.name(),
        f.op,
        f.expected_generation,
        f.message
    ));
    if let Some(d) = &f.dump {
        o.push_str(&format!("    dump: {d}\n"));
    }
}

#[cfg(test)]
mod tests {
    use iocap_model::{ClassCounts, VerifyCounts};

    use super::*;

    fn failed_check() -> Verify {
        let mut classes = ClassCounts::default();
        classes.add(FailureClass::Stale);
        Verify {
            mode: iocap_model::VerifyMode::Check,
            target: "/t/v".into(),
            page_bytes: 8192,
            pages: 16,
            atomic_unit_bytes: 4096,
            counts: VerifyCounts {
                pages_checked: 16,
                ..Default::default()
            },
            classes,
            failures: vec![VerifyFailure {
                class: FailureClass::Stale,
                page: 3,
                offset_bytes: 24576,
                op: iocap_model::VerifyOp::Check,
                expected_generation: 2,
                found_generation: Some(1),
                dump: Some("/t/v.dumps/page-3.txt".into()),
                message: "older than acknowledged".into(),
                path: "/t/v".into(),
                len_bytes: 8192,
                found_page: None,
                found_file_id: None,
                sectors_512_differing: vec![],
                sectors_4k_differing: vec![],
                transient: false,
                rereads: 3,
                errno: None,
            }],
            check: Some(VerifyCheck {
                journal: "j".into(),
                records: 2,
                pages_journaled: 2,
                lost_pages: (0..51).collect(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_check_names_the_lost_pages_and_the_first_failures() {
        let t = render(&failed_check());
        assert!(t.starts_with("iocap verify --check: /t/v\n"), "{t}");
        assert!(t.contains("  lost writes     51 pages: 0, 1, 2,"), "{t}");
        assert!(t.contains(", 49, ...\n"), "at most 50 pages named: {t}");
        assert!(t.contains("  failures        stale 1 (0 transient: read back right later)\n"));
        assert!(
            t.contains("FAIL: acknowledged writes were lost or damaged"),
            "{t}"
        );
        assert!(t.contains(
            "  page 3 at 24576 B: stale during check, expected generation 2, found 1;\n    \
             persistent over re-reads\n    older than acknowledged\n    dump: /t/v.dumps/page-3.txt\n"
        ));
        // every line fits 80 columns, the 50 lost pages' wrapped under their label's text
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        let mut lost = t.lines().skip_while(|l| !l.starts_with("  lost writes"));
        assert!(lost.nth(1).unwrap().starts_with(&" ".repeat(18)), "{t}");
    }

    #[test]
    fn an_interrupted_run_is_partial_unless_it_found_a_failure() {
        let mut v = Verify {
            mode: iocap_model::VerifyMode::Run,
            interrupted: true,
            ..Default::default()
        };
        let t = render(&v);
        assert!(
            t.contains("  verdict         PARTIAL: interrupted: not every page was checked\n"),
            "{t}"
        );
        assert!(!t.contains("PASS"), "{t}");
        v.classes.add(FailureClass::Stale);
        assert_eq!(v.verdict_word(), "FAIL");
        assert!(render(&v).contains("FAIL: the storage did not give back what was written"));
    }

    #[test]
    fn paths_reach_the_terminal_escaped() {
        let v = Verify {
            mode: iocap_model::VerifyMode::Run,
            target: "f\x1b[31mRED\u{202e}evil\x07.dat".into(),
            warnings: vec!["\x1b]0;title\x07".into()],
            ..Default::default()
        };
        let t = render(&v);
        assert!(
            t.starts_with("iocap verify: f\\e[31mRED\\u{202e}evil\\a.dat\n"),
            "{t}"
        );
        assert!(!t
            .chars()
            .any(|c| c != '\n' && iocap_model::text::acts_on_terminal(c)));
    }

    #[test]
    fn a_clean_run_says_what_it_did() {
        let v = Verify {
            mode: iocap_model::VerifyMode::Run,
            target: "/t/v".into(),
            io_engine: iocap_model::Engine::Psync,
            threads: 2,
            qd: 4,
            elapsed_s: 2.0,
            passed: true,
            warnings: vec!["O_DIRECT was refused".into()],
            ..Default::default()
        };
        let t = render(&v);
        assert!(t.contains("  I/O             buffered (page cache), psync, 2 threads × qd 4"));
        assert!(t.contains("  failures        none\n"), "{t}");
        assert!(t.contains("PASS: every page read back as written\n  warning: O_DIRECT"));
        assert!(!t.contains("First failures"), "{t}");
    }
}
