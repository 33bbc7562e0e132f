use crate::validate_with_target;
use iocap_model::RwMode;
use iocap_plan::{suite, SQLIO_CLASSIC_BATCH, SQLIO_CLASSIC_PARAM};
use iocap_sqlio::{parse_args, parse_batch};

#[test]
fn sqlio_classic_is_the_seed_batch_call_for_call() {
    let s = suite("sqlio-classic").unwrap();
    let calls = parse_batch(SQLIO_CLASSIC_BATCH).unwrap();
    assert_eq!(calls.len(), 15);
    assert_eq!(s.tests.len(), calls.len());
    for (t, line) in s.tests.iter().zip(&calls) {
        let call = parse_args(&line.args, &|_: &str| Ok(SQLIO_CLASSIC_PARAM.to_string())).unwrap();
        assert_eq!(t.workloads.len(), 1);
        let (w, mut expected) = (&t.workloads[0], call.spec);
        assert_eq!(w.role, "data");
        // Targets go to the CLI; the per-file thread count and size of param.txt stay.
        expected.targets.clear();
        expected.threads = 4;
        expected.size_bytes = 100 << 20;
        assert_eq!(w.spec, expected, "line {}", line.line);
        assert_eq!(t.name, w.spec.name);
        validate_with_target(&w.spec);
    }
}

#[test]
fn sqlio_classic_shapes_as_written_in_the_paper() {
    let expected: [(RwMode, u64, u32, f64); 15] = [
        (RwMode::RandWrite, 8, 32, 600.0),
        (RwMode::RandRead, 8, 32, 600.0),
        (RwMode::Write, 4, 1, 60.0),
        (RwMode::Write, 8, 1, 60.0),
        (RwMode::Write, 16, 1, 60.0),
        (RwMode::Write, 32, 1, 60.0),
        (RwMode::Write, 64, 1, 60.0),
        (RwMode::Read, 8, 8, 60.0),
        (RwMode::Read, 64, 8, 60.0),
        (RwMode::Read, 128, 8, 60.0),
        (RwMode::Read, 256, 8, 60.0),
        (RwMode::Write, 8, 8, 60.0),
        (RwMode::Write, 64, 8, 60.0),
        (RwMode::Write, 128, 8, 60.0),
        (RwMode::Write, 256, 8, 60.0),
    ];
    let s = suite("sqlio-classic").unwrap();
    for (i, (t, (rw, kb, qd, secs))) in s.tests.iter().zip(expected).enumerate() {
        let sp = &t.workloads[0].spec;
        assert_eq!(
            (sp.rw, sp.bs_bytes, sp.qd, sp.duration_s, sp.threads),
            (rw, kb << 10, qd, secs, 4),
            "call {i}"
        );
        assert!(sp.direct && sp.write_through, "-BN: no cache at all");
        assert_eq!((sp.warmup_s, sp.cooldown_s), (0.0, 0.0));
    }
    assert_eq!(s.estimated_s(), 2.0 * 600.0 + 13.0 * 60.0 + 14.0 * 10.0);
}
