//! What each command's claim holds, built from its flags: the claim itself is
//! `iocap_platform::claim` ([`Claim`]), the one way iocap writes. A command makes it once, up
//! front, from its inputs and outputs, and hands it to its `SaveArgs`
//! ([`crate::flags::Keeping::claim`]), which adds the result store (`--db`) and `--html` and
//! checks the whole before anything is written or the store is opened. These are the few
//! builders more than one command needs, so `src/cli` stays a line per command.

use std::path::Path;

use anyhow::Result;
use iocap_model::JobSpec;

pub use iocap_platform::claim::{Claim, Existing};

/// The claim on every target of `specs`, each the file the engine opens (a directory's test
/// file, not the directory): `run`, `saturate`, `cost`, `diskspd`, `sqlio`, `cachescan`.
pub fn tests<'a>(specs: impl IntoIterator<Item = &'a JobSpec>) -> Claim {
    targets(specs.into_iter().flat_map(|s| &s.targets).map(|t| &t.path))
}

/// The claim on the targets at `paths`, as [`tests`] takes them (`scaleup`'s volumes).
pub fn targets<S: AsRef<str>>(paths: impl IntoIterator<Item = S>) -> Claim {
    let files: Vec<_> = paths
        .into_iter()
        .map(|p| iocap_engine::safety::target_path(Path::new(p.as_ref())))
        .collect();
    Claim::new(Existing::Refuse).targets("TARGET", &files)
}

/// The claim on every target of every test of a suite's plan.
pub fn suite(plan: &iocap_session::SuiteRun) -> Claim {
    tests(
        plan.steps
            .iter()
            .flat_map(|s| &s.specs)
            .map(|(_, spec)| spec),
    )
}

/// A claim on nothing of the command's own yet: the store and `--html` are added by
/// [`crate::flags::Keeping::claim`] (`preflight`, whose targets are planned per role later).
pub fn saving() -> Claim {
    Claim::new(Existing::Refuse)
}

/// The claim on one target, the file the command opens (`fsync`'s, `verify`'s).
pub fn target(path: &Path) -> Claim {
    Claim::new(Existing::Refuse).targets("TARGET", &[path])
}

/// `verify`'s claim: the file it rewrites and the journal it makes (`checking`: the file and
/// the journal it reads instead).
pub fn verify(file: Option<&Path>, journal: Option<&Path>, checking: bool) -> Claim {
    let (c, file) = (Claim::new(Existing::Refuse), Vec::from_iter(file));
    if checking {
        let journal = Vec::from_iter(journal);
        return c.reads("TARGET", &file).reads("--journal", &journal);
    }
    c.targets("TARGET", &file).journal("--journal", journal)
}

/// A claim on the output `out` (named by `flag`) that refuses it where it is the result store
/// read from (a SQLite file, by any name): `export --db r.db -o r.db --force` wrote the export
/// over the store.
pub fn against_store(
    store: &iocap_store::Store,
    flag: &str,
    out: &Path,
    force: bool,
) -> Result<Claim> {
    let mut claim = Claim::new(Existing::replace_if(force));
    if let iocap_store::Location::Sqlite(db) = store.location() {
        claim = claim.reads("the result store", std::slice::from_ref(db));
    }
    Ok(claim.writes(flag, Some(out)).check()?)
}
