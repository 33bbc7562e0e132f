//! The cost flow (`iocap cost`) on the mock executor: which points run, what stops the matrix,
//! which points are left out and said so, and the report built from what the points measured,
//! deterministically and without I/O (issue 26: every flow through the Executor).

use iocap_cost::Questions;
use iocap_model::{CacheMode, CostMatrix};
use iocap_model::{JobSpec, RunCommand, RunResult, RwMode, TargetSpec};
use iocap_session::{new_run, CostConfig, MockExecutor, Session};

fn base() -> JobSpec {
    JobSpec {
        targets: vec![TargetSpec::new("/t/iocap.testfile")],
        rw: RwMode::RandRead,
        bs_bytes: 4096,
        duration_s: 2.0,
        warmup_s: 0.0,
        size_bytes: 1 << 30,
        ..JobSpec::default()
    }
}

fn cost(exec: &mut MockExecutor, matrix: CostMatrix) -> RunResult {
    let mut run = new_run(RunCommand::Cost);
    run.host.cpus = 2;
    let c = CostConfig::new(matrix, 1, base(), Questions::default()).unwrap();
    let mut s = Session::new(run, exec);
    iocap_session::cost(&mut s, c).unwrap();
    s.finish()
}

#[test]
fn an_executor_without_cost_points_is_refused_before_anything_runs() {
    // as an MPI job's: several hosts cannot measure one host's CPU per I/O
    let mut exec = MockExecutor::knee(50_000.0, 1);
    exec.lends_cost_points = false;
    let c = CostConfig::new(CostMatrix::Quick, 1, base(), Questions::default()).unwrap();
    let mut s = Session::new(new_run(RunCommand::Cost), &mut exec);
    let err = iocap_session::cost(&mut s, c).unwrap_err().to_string();
    assert!(err.contains("measured on one host"), "{err}");
    assert!(s.run.tests.is_empty() && s.run.cost.is_none());
    assert!(exec.ran.is_empty(), "nothing ran: {:?}", exec.names());
}

#[test]
fn every_point_runs_once_and_the_report_holds_what_each_measured() {
    let mut exec = MockExecutor::knee(50_000.0, 1);
    let run = cost(&mut exec, CostMatrix::Quick);
    let (planned, _) = iocap_cost::plan(CostMatrix::Quick, 1);
    let report = run.cost.as_ref().expect("a cost report");
    assert_eq!(report.matrix, CostMatrix::Quick);
    assert_eq!(run.tests.len(), planned.len());
    assert_eq!(report.points.len(), planned.len());
    // each point ran its own spec: its block size and direction, in the plan's order
    for (spec, p) in exec.ran.iter().flatten().zip(&planned) {
        assert_eq!(spec.bs_bytes, p.bs_bytes);
        assert_eq!(spec.writes(), p.write, "{}", p.label());
    }
    // the mock's system CPU is 10 µs per I/O: what the report says per point
    for cp in &report.points {
        let sys = cp.system.as_ref().expect("system-wide CPU");
        assert!(
            (sys.us_per_io - 10.0).abs() < 0.5,
            "{} {} {}: {} µs",
            cp.engine,
            cp.rw,
            cp.bs_bytes,
            sys.us_per_io
        );
    }
    assert!(!report.models.is_empty(), "a model fitted");
}

#[test]
fn cache_hit_points_are_left_out_when_the_file_does_not_fit_in_memory_and_it_is_said() {
    let mut exec = MockExecutor::knee(50_000.0, 1);
    exec.mem_available = Some(1 << 30); // the 1 GiB range is more than half of it
    let run = cost(&mut exec, CostMatrix::Default);
    let report = run.cost.unwrap();
    assert!(
        report.points.iter().all(|p| p.cache != CacheMode::Hit),
        "no hit point runs"
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("cache-hit points skipped")),
        "{:?}",
        report.notes
    );
    let (planned, _) = iocap_cost::plan(CostMatrix::Default, 1);
    let hits = planned.iter().filter(|p| p.cache == CacheMode::Hit).count();
    assert!(hits > 0);
    assert_eq!(run.tests.len(), planned.len() - hits);
}

#[test]
fn a_fault_or_a_stop_ends_the_matrix_at_that_point() {
    let mut exec = MockExecutor::knee(50_000.0, 1);
    exec.fail_at = Some(2);
    let run = cost(&mut exec, CostMatrix::Quick);
    assert_eq!(
        run.tests.len(),
        3,
        "the failed point is kept, none after it"
    );
    assert!(run.tests[2].error.is_some());

    let mut exec = MockExecutor::knee(50_000.0, 1);
    exec.interrupt_at = Some(0);
    let run = cost(&mut exec, CostMatrix::Quick);
    assert_eq!(run.tests.len(), 1);
    assert!(run.tests[0].interrupted);
}

#[test]
fn a_point_that_completes_too_few_ios_is_measured_again_over_a_longer_window_and_said() {
    // the disk stalls for the first point's whole window (someone else's load), then answers
    let calls = std::rc::Rc::new(std::cell::Cell::new(0));
    let seen = calls.clone();
    let mut exec = MockExecutor::new(move |_| {
        seen.set(seen.get() + 1);
        (if seen.get() == 1 { 0.0 } else { 50_000.0 }, 20.0)
    });
    let run = cost(&mut exec, CostMatrix::Quick);
    let (planned, _) = iocap_cost::plan(CostMatrix::Quick, 1);
    let report = run.cost.as_ref().unwrap();
    assert_eq!(exec.ran.len(), planned.len() + 1, "one point ran twice");
    assert_eq!(exec.ran[1][0].duration_s, 2.0 * exec.ran[0][0].duration_s);
    assert!(
        report.points.iter().all(|p| p.ios > 0),
        "no point kept 0 I/Os"
    );
    assert_eq!(report.points[0].duration_s, exec.ran[1][0].duration_s);
    let said: Vec<_> = report
        .notes
        .iter()
        .filter(|n| n.contains("too few to divide its CPU by: measured again over 4.0 s"))
        .collect();
    assert_eq!(said.len(), 1, "{:?}", report.notes);
    assert!(said[0].starts_with(&planned[0].label()), "{}", said[0]);
}

#[test]
fn a_point_that_never_completes_enough_ios_stops_stretching_and_is_said_to_have_none() {
    let mut exec = MockExecutor::new(|_| (0.0, 20.0));
    let run = cost(&mut exec, CostMatrix::Quick);
    let (planned, _) = iocap_cost::plan(CostMatrix::Quick, 1);
    let stretches = iocap_cost::STRETCHES as usize;
    assert_eq!(exec.ran.len(), planned.len() * (1 + stretches));
    let last = &exec.ran[stretches][0];
    assert_eq!(last.duration_s, 2.0 * 8.0, "doubled {stretches} times");
    let notes = &run.cost.as_ref().unwrap().notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("no I/O completed in its window")),
        "{notes:?}"
    );
}
