//! A run cut short (Ctrl-C, SIGTERM, an I/O error, a suite that did not finish) looks partial
//! in every view, first, and names what stopped it (issue 23 item 5); a whole run says nothing
//! of the kind. On constructed runs.

mod common;

use iocap_assess::compare::Thresholds;
use iocap_model::fixture::{self, FixtureRun};
use iocap_model::*;
use iocap_report::compare::{compare, render_json, render_text};

/// A saturate run of two steps, the second stopped by `signal` (as the session records it).
fn interrupted(signal: &str) -> RunResult {
    let mut r = common::saturation_run("ramp", 1, 1.0, 1.0);
    r.command = Some(RunCommand::Saturate);
    r.tests.truncate(2);
    r.tests[1].interrupted = true;
    r.interrupted_by = Some(signal.into());
    r
}

/// A saturate run that ended by itself (another salt: another run id).
fn whole() -> RunResult {
    let mut r = common::saturation_run("ramp", 2, 1.0, 1.0);
    r.command = Some(RunCommand::Saturate);
    r
}

#[test]
fn the_text_view_says_partial_first_and_names_the_signal() {
    let text = iocap_report::run_text(&interrupted("SIGTERM"));
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        "PARTIAL: this saturate was interrupted by SIGTERM after 1 complete test; the"
    );
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("the figures cover only what ran"), "{text}");
    assert!(!text.contains("Ctrl-C"), "SIGTERM is not Ctrl-C:\n{text}");
    let banner = text.split("\n\n").next().unwrap();
    assert!(banner.lines().all(|l| l.chars().count() <= 80), "{banner}");
    // Ctrl-C's signal is named as the user knows it
    let text = iocap_report::run_text(&interrupted("SIGINT"));
    assert!(
        text.starts_with("PARTIAL: this saturate was interrupted by SIGINT (Ctrl-C)"),
        "{text}"
    );
    // a whole run says nothing of the kind
    assert!(!iocap_report::run_text(&whole()).contains("PARTIAL"));
}

#[test]
fn a_run_interrupted_between_tests_is_partial_too() {
    // Ctrl-C in a --repeat-pause: no test was cut, the run was
    let mut r = fixture::run(&FixtureRun::default());
    r.command = Some(RunCommand::Run);
    r.interrupted_by = Some("SIGINT".into());
    let text = iocap_report::text::single_run_text(&r);
    assert!(
        text.starts_with("PARTIAL: this run was interrupted by SIGINT (Ctrl-C) after 1"),
        "{text}"
    );
    r.interrupted_by = None;
    assert!(!iocap_report::text::single_run_text(&r).contains("PARTIAL"));
}

#[test]
fn an_io_error_and_an_unfinished_suite_are_partial_with_their_cause() {
    let mut r = whole();
    r.tests[2].error = Some(IoFault {
        op: iocap_model::FaultOp::Read,
        path: "/data/f".into(),
        offset_bytes: 0,
        len_bytes: 8192,
        errno: 5,
        message: "Input/output error".into(),
    });
    let note = iocap_report::partial_note(&r).unwrap();
    assert!(
        note.starts_with("PARTIAL: this saturate was stopped by an I/O error after"),
        "{note}"
    );
    let mut s = fixture::run(&FixtureRun::default());
    s.suite = Some(SuiteInfo {
        name: "oltp".into(),
        planned: 3,
    });
    s.interrupted_by = Some("SIGTERM".into());
    let note = iocap_report::partial_note(&s).unwrap();
    assert!(
        note.starts_with("PARTIAL: 1 of 3 tests finished, interrupted by SIGTERM;")
            && note.contains(&format!("--resume {}", s.run_id)),
        "{note}"
    );
}

#[test]
fn show_puts_partial_above_the_heading() {
    let r = interrupted("SIGTERM");
    let shown = iocap_report::history::show_text(&r, &iocap_report::text::run_body(&r));
    assert!(shown.starts_with("PARTIAL: this saturate was interrupted by SIGTERM"));
    assert_eq!(shown.matches("PARTIAL").count(), 1, "{shown}");
}

#[test]
fn the_history_list_marks_a_run_interrupted_between_tests() {
    let mut r = fixture::run(&FixtureRun::default());
    r.interrupted_by = Some("SIGINT".into());
    let summary = RunSummary {
        run_id: r.run_id.clone(),
        started_at: r.started_at.clone(),
        hostname: "db01".into(),
        label: None,
        tags: vec![],
        tests: 1,
        workload: "randread 8K".into(),
        targets: vec![],
        iops: 1.0,
        mb_s: 1.0,
        lat_us_p99: None,
        ranks: 0,
    };
    let key = iocap_report::history::key_figure(&summary, Some(&r));
    assert!(key.starts_with("partial: "), "{key}");
    r.interrupted_by = None;
    let key = iocap_report::history::key_figure(&summary, Some(&r));
    assert!(!key.contains("partial"), "{key}");
}

#[test]
fn csv_has_a_partial_column() {
    let csv = iocap_report::csv::render_many(&[interrupted("SIGINT"), whole()]);
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",targets,partial"));
    let id = interrupted("SIGINT").run_id;
    assert_ne!(id, whole().run_id);
    for row in lines {
        let partial = row.starts_with(&id);
        let cell = if partial { ",true" } else { ",false" };
        assert!(row.ends_with(cell), "{row}");
    }
}

#[test]
fn markdown_opens_the_run_with_a_banner() {
    let md = iocap_report::markdown::render(&[interrupted("SIGTERM")]);
    let after_heading = md
        .split("\n## ")
        .nth(1)
        .and_then(|s| s.lines().find(|l| !l.is_empty() && !l.contains(" — ")))
        .unwrap();
    assert!(
        after_heading.starts_with("> **PARTIAL: this saturate was interrupted by SIGTERM"),
        "{md}"
    );
    assert!(!iocap_report::markdown::render(&[whole()]).contains("PARTIAL"));
}

#[test]
fn html_opens_with_a_visible_banner() {
    let html = iocap_report::html::render(&[interrupted("SIGTERM")]);
    let banner = html.find(r#"<p class="partial-banner""#).expect("a banner");
    let first_section = html.find("<section").unwrap();
    assert!(
        banner < first_section,
        "the banner comes before every section"
    );
    assert!(html[banner..first_section]
        .contains("PARTIAL: this saturate was interrupted by SIGTERM after 1 complete test"));
    assert!(!iocap_report::html::render(&[whole()]).contains("partial-banner\""));
}

#[test]
fn compare_marks_the_side_that_is_partial() {
    let th = Thresholds::default();
    let (cut, full) = (interrupted("SIGTERM"), whole());
    let text = render_text(&compare(&cut, std::slice::from_ref(&full), &th));
    assert!(
        text.starts_with("PARTIAL base: this saturate was interrupted by SIGTERM"),
        "{text}"
    );
    assert!(!text.contains("PARTIAL run"), "{text}");
    let text = render_text(&compare(&full, std::slice::from_ref(&cut), &th));
    assert!(text.starts_with("PARTIAL run: this saturate"), "{text}");
    assert!(!text.contains("PARTIAL base"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&render_json(&compare(&full, &[cut], &th))).unwrap();
    assert!(json["runs"][0]["run"]["partial"]
        .as_str()
        .unwrap()
        .contains("SIGTERM"));
    assert!(json["base"].get("partial").is_none());
    let text = render_text(&compare(&full, std::slice::from_ref(&full), &th));
    assert!(!text.contains("PARTIAL"), "{text}");
}
