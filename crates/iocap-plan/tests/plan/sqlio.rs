use crate::validate_with_target;
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
