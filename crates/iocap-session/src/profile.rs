//! Database profiles and suites by name or from a file: the built-ins of `iocap-plan`, or TOML
//! the user wrote, with an error that says which when a file is not TOML at all.

use anyhow::{Context, Result};
use iocap_plan::{Profile, Suite};

/// A built-in profile by name (`sqlserver`) or a profile TOML file.
pub fn load_profile(what: &str) -> Result<Profile> {
    let p = std::path::Path::new(what);
    if p.exists() || what.ends_with(".toml") {
        let text = iocap_engine::input::read_text(p)
            .with_context(|| format!("cannot read profile file {what}"))?;
        return iocap_plan::parse_profile(&text).map_err(|e| not_toml(e, what, "profile"));
    }
    Ok(iocap_plan::profile(what)?)
}

/// A built-in suite by name, a suite file, or a database profile's workloads as a suite
/// (`profile:sqlserver`).
pub fn load_suite(what: &str) -> Result<Suite> {
    if let Some(name) = what.strip_prefix("profile:") {
        return Ok(load_profile(name)?.suite());
    }
    let p = std::path::Path::new(what);
    if p.exists() || what.ends_with(".toml") {
        let text = iocap_engine::input::read_text(p)
            .with_context(|| format!("cannot read suite file {what}"))?;
        return iocap_plan::parse_suite(&text).map_err(|e| not_toml(e, what, "suite"));
    }
    Ok(iocap_plan::suite(what)?)
}

/// The error for a suite or profile file: one that is not TOML at all (`/etc/passwd`) is named
/// as not being such a file, with the line the parser stopped at; valid TOML with a bad key or
/// value is named as in that file, with `toml`'s words for the key, its line and column.
pub fn not_toml(e: iocap_plan::PlanError, what: &str, kind: &str) -> anyhow::Error {
    match &e {
        iocap_plan::PlanError::NotToml(m) => anyhow::anyhow!(
            "{what} is not a {kind} file: {kind} files are TOML (docs/profiles-and-suites.md), \
             and this one is not: {m}"
        ),
        _ => anyhow::Error::new(e).context(format!("in {kind} file {what}")),
    }
}
