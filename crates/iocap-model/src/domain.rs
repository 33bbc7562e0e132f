//! The domain's words, one definition each: the database family a test stands for, the role of
//! a file (or test) on the database's volumes, the class of a device, and how a check or a
//! capacity line came out. Every crate speaks of them through these enums; each serialises to
//! the name it has always had in the JSON, the store and the command line (`sqlserver`,
//! `data`, `flash`, `PASS`).
//!
//! The result's fields hold the enums where every value ever written is one of their names (a
//! test's and a capacity line's `role`), and stay strings where a value may lie outside the
//! enum (a profile file's free `family`, a device class per role such as
//! `data flash, log rotational`); the enums give those strings their values
//! ([`Role::name`], [`Severity::name`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A database family: the advice, the built-in profile and the log-flush recommendation that
/// differ between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DbFamily {
    Sqlserver,
    Postgres,
    Mysql,
    Oracle,
}

impl DbFamily {
    pub const ALL: [DbFamily; 4] = [
        DbFamily::Sqlserver,
        DbFamily::Postgres,
        DbFamily::Mysql,
        DbFamily::Oracle,
    ];

    /// As the command line and the JSON name it: `sqlserver`, `postgres`, `mysql`, `oracle`.
    pub const fn name(self) -> &'static str {
        match self {
            DbFamily::Sqlserver => "sqlserver",
            DbFamily::Postgres => "postgres",
            DbFamily::Mysql => "mysql",
            DbFamily::Oracle => "oracle",
        }
    }

    /// One of the four names, exactly.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// What a file (or a test) stands for on the database's volumes. The four file roles each get
/// a directory of their own (`--data`, `--log`, `--temp`, `--backup`); `cachescan` marks the
/// tests of a cache scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Data,
    Log,
    Temp,
    Backup,
    Cachescan,
}

impl Role {
    /// The roles a workload of a profile or suite can stand for, each with its own directory.
    pub const FILES: [Role; 4] = [Role::Data, Role::Log, Role::Temp, Role::Backup];

    pub const fn name(self) -> &'static str {
        match self {
            Role::Data => "data",
            Role::Log => "log",
            Role::Temp => "temp",
            Role::Backup => "backup",
            Role::Cachescan => "cachescan",
        }
    }

    /// One of the file roles ([`Role::FILES`]) by name, or an error that lists them.
    pub fn parse_file_role(s: &str) -> Result<Self, String> {
        Self::FILES
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::FILES.iter().map(|r| r.name()).collect();
                format!("unknown role '{s}': use {}", names.join(", "))
            })
    }
}

/// A role and its name are the same word: `role == "log"`.
impl PartialEq<&str> for Role {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Flash or rotational, as the kernel reports it (`/sys/block/*/queue/rotational`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeviceClass {
    Flash,
    Rotational,
}

impl DeviceClass {
    /// From the sysfs rotational flag. Unknown counts as flash: most database servers bought
    /// today are flash, and holding a disk to the flash limits gives a WARN to look at, while
    /// the reverse would let a badly set-up flash path pass.
    pub fn from_rotational(rotational: Option<bool>) -> Self {
        match rotational {
            Some(true) => Self::Rotational,
            _ => Self::Flash,
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "flash" | "ssd" | "nvme" => Some(Self::Flash),
            "rotational" | "hdd" | "disk" => Some(Self::Rotational),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Flash => "flash",
            Self::Rotational => "rotational",
        }
    }
}

/// How a check of the host's configuration came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Severity {
    /// The setting is right for a database.
    Pass,
    /// The setting is likely to cost performance or safety.
    Warn,
    /// The setting is wrong and will cost performance or capacity.
    Fail,
    /// A fact worth knowing, with advice; no verdict.
    Info,
    /// The value could not be read; the evidence says why.
    Unknown,
}

impl Severity {
    /// As the views print it and a run records it: `PASS`, `WARN`, `FAIL`, `INFO`, `UNKNOWN`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Pass => "PASS",
            Severity::Warn => "WARN",
            Severity::Fail => "FAIL",
            Severity::Info => "INFO",
            Severity::Unknown => "UNKNOWN",
        }
    }

    pub const ALL: [Severity; 5] = [
        Severity::Pass,
        Severity::Warn,
        Severity::Fail,
        Severity::Info,
        Severity::Unknown,
    ];

    /// Whether this is at least as bad as WARN (`warn`) or FAIL: what `--fail-on` exits on.
    pub fn fails(self, warn: bool) -> bool {
        self == Severity::Fail || (warn && self == Severity::Warn)
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

// How a line of the preflight capacity table came out: a [`Severity`] without `UNKNOWN` (a
// line that could not be measured says so in its sentence). Not a doc comment: the schema
// states none for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
    /// Measured and shown, with nothing to hold it against.
    Info,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        self.severity().name()
    }

    /// The same word as a check's.
    pub fn severity(self) -> Severity {
        match self {
            Verdict::Pass => Severity::Pass,
            Verdict::Warn => Severity::Warn,
            Verdict::Fail => Severity::Fail,
            Verdict::Info => Severity::Info,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names are the JSON's: what serde writes is what `name` says.
    #[test]
    fn names_are_the_serialised_values() {
        let json = |v: serde_json::Value| v.as_str().unwrap().to_string();
        for f in DbFamily::ALL {
            assert_eq!(json(serde_json::to_value(f).unwrap()), f.name());
            assert_eq!(DbFamily::parse(f.name()), Some(f));
        }
        for r in [
            Role::Data,
            Role::Log,
            Role::Temp,
            Role::Backup,
            Role::Cachescan,
        ] {
            assert_eq!(json(serde_json::to_value(r).unwrap()), r.name());
            assert_eq!(serde_json::from_value::<Role>(r.name().into()).unwrap(), r);
        }
        for c in [DeviceClass::Flash, DeviceClass::Rotational] {
            assert_eq!(json(serde_json::to_value(c).unwrap()), c.name());
        }
        for v in [Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::Info] {
            assert_eq!(json(serde_json::to_value(v).unwrap()), v.name());
            assert_eq!(json(serde_json::to_value(v.severity()).unwrap()), v.name());
        }
        assert_eq!(Severity::Unknown.name(), "UNKNOWN");
        assert_eq!(DbFamily::parse("mssql"), None);
    }

    #[test]
    fn only_the_file_roles_have_directories() {
        assert_eq!(Role::parse_file_role("log"), Ok(Role::Log));
        let e = Role::parse_file_role("cachescan").unwrap_err();
        assert_eq!(e, "unknown role 'cachescan': use data, log, temp, backup");
    }
}
