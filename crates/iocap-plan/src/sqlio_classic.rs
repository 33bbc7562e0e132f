//! The `sqlio-classic` suite: the SQLIO batch file of seed 003 (a SQL Server I/O white paper),
//! run through `iocap-sqlio`'s own parser rather than transcribed, so that it is exactly what
//! `iocap sqlio --batch` would run for that file, en dashes and all.
//!
//! The batch's calls all take `-Fparam.txt`, whose two lines each put 4 threads on a 100 MB
//! file. A suite leaves targets to the CLI, so each call keeps the per-file thread count and
//! file size and drops the paths: every target the CLI adds gets 4 threads, as each file did.
//! 100 MB files are what the paper used; they fit in many controller caches, so `--size` should
//! raise them to 2 to 4 times the caches in the path.

use crate::suite::{PlannedTest, PlannedWorkload, Suite, DEFAULT_PAUSE_S};
use crate::PlanError;
use iocap_model::Role;
use iocap_sqlio::{parse_args, parse_batch};

/// The batch file, verbatim from seed 003.
pub const SQLIO_CLASSIC_BATCH: &str = include_str!("../suites/sqlio-classic.bat");
/// The `param.txt` that batch file names.
pub const SQLIO_CLASSIC_PARAM: &str = include_str!("../suites/sqlio-classic.param.txt");

/// The `sqlio-classic` suite, built from [`SQLIO_CLASSIC_BATCH`].
pub fn sqlio_suite() -> Result<Suite, PlanError> {
    let mut suite = sqlio_batch_suite(SQLIO_CLASSIC_BATCH, SQLIO_CLASSIC_PARAM)?;
    suite.name = "sqlio-classic".into();
    suite.description = "The SQLIO batch of a SQL Server I/O white paper: 8K random read and \
                         write, small sequential writes at qd 1, large sequential reads and writes"
        .into();
    Ok(suite)
}

/// A suite from any SQLIO batch file whose calls name at most the given parameter file: one
/// test per call, role `data`, named after the call.
pub(crate) fn sqlio_batch_suite(batch: &str, param: &str) -> Result<Suite, PlanError> {
    let read = |_: &str| Ok(param.to_string());
    let mut tests: Vec<PlannedTest> = Vec::new();
    for line in parse_batch(batch).map_err(|e| PlanError::Sqlio(e.to_string()))? {
        let call = parse_args(&line.args, &read)
            .map_err(|e| PlanError::Sqlio(format!("line {}: {e}", line.line)))?;
        let mut spec = call.spec;
        if let Some(first) = spec.targets.first() {
            spec.threads = first.threads.unwrap_or(spec.threads);
            spec.size_bytes = first.size_bytes.unwrap_or(spec.size_bytes);
        }
        spec.targets.clear();
        crate::fields::check(&spec)
            .map_err(|e| PlanError::Sqlio(format!("line {}: {e}", line.line)))?;
        let mut name = spec.name.clone();
        if tests.iter().any(|t| t.name == name) {
            name = format!("{name} (line {})", line.line);
            spec.name.clone_from(&name);
        }
        tests.push(PlannedTest {
            name,
            workloads: vec![PlannedWorkload {
                role: Role::Data,
                spec,
            }],
        });
    }
    if tests.is_empty() {
        return Err(PlanError::Sqlio(
            "the batch file holds no sqlio call".into(),
        ));
    }
    Ok(Suite {
        name: String::new(),
        description: String::new(),
        pause_s: DEFAULT_PAUSE_S,
        tests,
    })
}
