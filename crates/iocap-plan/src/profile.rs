//! Database profiles: what one database family's I/O looks like, one workload per kind of I/O
//! (page reads, checkpoint bursts, log writes, scans, bulk load, backup, temp), each tied to the
//! file role it hits so the CLI can put it on the right volume.
//!
//! A profile is the input of `iocap preflight`: the capacity table has one row per workload, so
//! the workloads are kept by key rather than flattened into a suite. [`Profile::suite`] gives the
//! run order when they are to be run as tests.

use crate::fields::{job_table, Block, JobFields};
use crate::suite::{same_timing, PlannedTest, PlannedWorkload, Suite, DEFAULT_PAUSE_S};
use crate::values::{BlockSize, Secs};
use crate::PlanError;
use iocap_model::{JobSpec, Role};
use serde::{Deserialize, Serialize};

/// A database family's workloads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    pub name: String,
    /// `sqlserver`, `postgres`, `mysql` or `oracle` for the built-ins; guidelines and reports
    /// key on it.
    pub family: String,
    pub description: String,
    /// The engine's page size, and the default block size of its workloads.
    pub page_bytes: u64,
    /// Pause between workload groups when run as a suite.
    pub pause_s: f64,
    pub workloads: Vec<Workload>,
}

/// One kind of I/O of a database.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Workload {
    /// Stable identifier, e.g. `data-random-read`; reports and comparisons key on it.
    pub key: String,
    /// One line for people, e.g. "Data file: random 8 KB page reads".
    pub title: String,
    /// `data`, `log`, `temp` or `backup`: where the CLI places it.
    pub role: Role,
    /// Targets are empty; the CLI fills them from the role's directory.
    pub spec: JobSpec,
    /// Key of the workload this one runs together with (e.g. the backup write with the backup
    /// read); that one names no other.
    pub concurrent_with: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: String,
    family: String,
    #[serde(default)]
    description: String,
    page: BlockSize,
    #[serde(default)]
    pause: Option<Secs>,
    #[serde(default)]
    defaults: ProfileDefaults,
    #[serde(default)]
    workload: Vec<RawWorkload>,
}

job_table!(
    /// `[defaults]` of a profile.
    ProfileDefaults {}
);

job_table!(
    /// One `[[workload]]` of a profile.
    RawWorkload {
        key: String,
        title: String,
        concurrent_with: Option<String>,
    }
);

const BUILTIN: [&str; 4] = [
    include_str!("../profiles/sqlserver.toml"),
    include_str!("../profiles/postgres.toml"),
    include_str!("../profiles/mysql.toml"),
    include_str!("../profiles/oracle.toml"),
];

/// The built-in profiles: `sqlserver`, `postgres`, `mysql`, `oracle`.
pub fn builtin_profiles() -> Vec<Profile> {
    BUILTIN
        .iter()
        .map(|text| parse_profile(text).expect("built-in profiles parse (tested)"))
        .collect()
}

/// A built-in profile by name.
pub fn profile(name: &str) -> Result<Profile, PlanError> {
    let all = builtin_profiles();
    let known = all
        .iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    all.iter()
        .find(|p| p.name == name)
        .cloned()
        .ok_or(PlanError::Unknown {
            kind: "profile",
            name: name.to_string(),
            known,
        })
}

/// Parses a profile file's text. docs/profiles-and-suites.md describes every key; in short:
///
/// ```toml
/// name = "mine"
/// family = "postgres"
/// description = "What it models"
/// page = "8K"                   # the default block size of every workload
///
/// [defaults]                    # any workload key, as in a suite
/// duration = "60s"
///
/// [[workload]]
/// key = "backup-read"           # unique; reports key on it
/// title = "Backup: 1 MB reads"
/// role = "data"                 # data, log, temp or backup
/// rw = "read"
/// bs = "1M"
///
/// [[workload]]
/// key = "backup-write"
/// role = "backup"
/// rw = "write"
/// bs = "1M"
/// concurrent_with = "backup-read"
/// ```
pub fn parse_profile(toml_text: &str) -> Result<Profile, PlanError> {
    let raw: RawProfile = crate::from_toml(toml_text)?;
    for (what, value) in [("name", &raw.name), ("family", &raw.family)] {
        if value.trim().is_empty() {
            return Err(PlanError::invalid("profile", format!("{what} is empty")));
        }
    }
    let base = JobFields {
        block: Some(Block::Fixed(raw.page.0)),
        ..JobFields::default()
    };
    let defaults = base.under(
        &raw.defaults
            .job()
            .map_err(|e| PlanError::invalid("[defaults]", e))?,
    );
    let mut workloads: Vec<Workload> = Vec::new();
    for (i, w) in raw.workload.iter().enumerate() {
        let context = if w.key.is_empty() {
            format!("workload {}", i + 1)
        } else {
            format!("workload '{}'", w.key)
        };
        let bad = |p: String| PlanError::invalid(context.clone(), p);
        if w.key.is_empty() || w.key.chars().any(char::is_whitespace) {
            return Err(bad(
                "needs a key without spaces, e.g. key = \"data-random-read\"".into(),
            ));
        }
        if workloads.iter().any(|o| o.key == w.key) {
            return Err(bad("this key is used twice".into()));
        }
        let fields = defaults.under(&w.job().map_err(&bad)?);
        let spec = fields.spec(&w.key).map_err(&bad)?;
        workloads.push(Workload {
            key: w.key.clone(),
            title: if w.title.is_empty() {
                w.key.clone()
            } else {
                w.title.clone()
            },
            role: fields.role(),
            spec,
            concurrent_with: w.concurrent_with.clone(),
        });
    }
    if workloads.is_empty() {
        return Err(PlanError::invalid("profile", "it has no [[workload]]"));
    }
    check_groups(&workloads)?;
    Ok(Profile {
        name: raw.name,
        family: raw.family,
        description: raw.description,
        page_bytes: raw.page.0,
        pause_s: raw.pause.map_or(DEFAULT_PAUSE_S, |p| p.0),
        workloads,
    })
}

/// `concurrent_with` names another workload that names none, and workloads that run together
/// last equally long.
fn check_groups(workloads: &[Workload]) -> Result<(), PlanError> {
    for w in workloads {
        let Some(lead) = &w.concurrent_with else {
            continue;
        };
        let bad = |p: String| PlanError::invalid(format!("workload '{}'", w.key), p);
        let Some(l) = workloads.iter().find(|o| &o.key == lead) else {
            return Err(bad(format!(
                "concurrent_with names '{lead}', which is no workload here"
            )));
        };
        if l.key == w.key {
            return Err(bad("concurrent_with names the workload itself".into()));
        }
        if l.concurrent_with.is_some() {
            return Err(bad(format!(
                "concurrent_with names '{lead}', which itself runs with another; \
                 name the first workload of the group"
            )));
        }
        if !same_timing(&l.spec, &w.spec) {
            return Err(bad(format!(
                "runs together with '{lead}', so needs its duration, warmup and cooldown"
            )));
        }
    }
    Ok(())
}

impl Profile {
    /// The workloads that run together, in file order of each group's first workload.
    pub fn groups(&self) -> Vec<Vec<&Workload>> {
        self.workloads
            .iter()
            .filter(|w| w.concurrent_with.is_none())
            .map(|lead| {
                std::iter::once(lead)
                    .chain(
                        self.workloads
                            .iter()
                            .filter(|w| w.concurrent_with.as_deref() == Some(lead.key.as_str())),
                    )
                    .collect()
            })
            .collect()
    }

    /// The profile as a suite: one test per group, named by its workloads' keys joined by
    /// ` + `, each workload's spec named by its key.
    pub fn suite(&self) -> Suite {
        Suite {
            name: self.name.clone(),
            description: self.description.clone(),
            pause_s: self.pause_s,
            tests: self
                .groups()
                .into_iter()
                .map(|g| PlannedTest {
                    name: g
                        .iter()
                        .map(|w| w.key.as_str())
                        .collect::<Vec<_>>()
                        .join(" + "),
                    workloads: g
                        .iter()
                        .map(|w| PlannedWorkload {
                            role: w.role,
                            spec: w.spec.clone(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// A workload by key.
    pub fn workload(&self, key: &str) -> Option<&Workload> {
        self.workloads.iter().find(|w| w.key == key)
    }
}
