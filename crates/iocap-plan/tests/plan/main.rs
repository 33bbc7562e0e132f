//! One test binary for the crate: the built-ins as shipped, the errors users see for bad files,
//! and inputs that must never panic.

mod builtins;
mod errors;
mod fuzz;
mod sqlio;

use iocap_model::{JobSpec, TargetSpec};

/// The spec with a target, as the CLI would fill it in, validated.
pub fn validate_with_target(spec: &JobSpec) {
    assert!(
        spec.targets.is_empty(),
        "{}: targets are the CLI's",
        spec.name
    );
    let mut s = spec.clone();
    s.targets.push(TargetSpec::new("/data/iocap.testfile"));
    s.validate()
        .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
}
