//! Latency guidelines per file role and device class. The figures DBAs quote (log 1 to 5 ms,
//! OLTP data 4 to 20 ms) date from spinning disks; flash must be held to far stricter limits or
//! every flash system passes while hiding a misconfigured path. So the limits are data, not
//! code: a built-in TOML table (`guidelines.toml`, which documents its sources) that a user
//! TOML overrides key by key, and the device class of each role picks the column.

use serde::{Deserialize, Serialize};

use crate::AssessError;
pub use iocap_model::DeviceClass;
use iocap_model::Role;

const DEFAULT_TOML: &str = include_str!("guidelines.toml");

/// The device class of each file role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleClasses {
    pub data: DeviceClass,
    pub log: DeviceClass,
    pub temp: DeviceClass,
    pub backup: DeviceClass,
}

impl RoleClasses {
    pub fn all(class: DeviceClass) -> Self {
        Self {
            data: class,
            log: class,
            temp: class,
            backup: class,
        }
    }
    /// The class of `role`'s device (a test's role that is no file role: the data's).
    pub fn get(&self, role: Role) -> DeviceClass {
        match role {
            Role::Log => self.log,
            Role::Temp => self.temp,
            Role::Backup => self.backup,
            Role::Data | Role::Cachescan => self.data,
        }
    }
    /// `flash` when every role agrees, else e.g. `data flash, log rotational, ...`.
    pub fn describe(&self) -> String {
        if Role::FILES.iter().all(|r| self.get(*r) == self.data) {
            return self.data.name().into();
        }
        Role::FILES
            .iter()
            .map(|r| format!("{r} {}", self.get(*r).name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// PASS at or under `pass`, WARN at or under `warn`, FAIL above; in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    pub pass: f64,
    pub warn: f64,
}

impl Limit {
    pub fn pass_us(&self) -> f64 {
        self.pass * 1000.0
    }
    pub fn warn_us(&self) -> f64 {
        self.warn * 1000.0
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassGuidelines {
    /// Also the latency target of the random read capacity figure (its `pass`).
    pub data_read_p99: Limit,
    pub data_write_p99: Limit,
    pub log_write_p50: Limit,
    pub log_write_p99: Limit,
    pub temp_p99: Limit,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guidelines {
    pub flash: ClassGuidelines,
    pub rotational: ClassGuidelines,
}

impl Default for Guidelines {
    fn default() -> Self {
        Self::with_override(None).expect("the built-in guidelines parse")
    }
}

impl Guidelines {
    /// The built-in guidelines with the keys of `user_toml` (same shape, any subset) on top.
    pub fn with_override(user_toml: Option<&str>) -> Result<Self, AssessError> {
        let err = |e: toml::de::Error| AssessError::Guidelines(e.to_string().trim().to_string());
        let mut table: toml::Table = toml::from_str(DEFAULT_TOML).map_err(err)?;
        if let Some(user) = user_toml {
            let over: toml::Table = toml::from_str(user).map_err(err)?;
            merge(&mut table, over);
        }
        let g: Guidelines = toml::Value::Table(table).try_into().map_err(err)?;
        g.validate()?;
        Ok(g)
    }

    pub fn for_class(&self, class: DeviceClass) -> &ClassGuidelines {
        match class {
            DeviceClass::Flash => &self.flash,
            DeviceClass::Rotational => &self.rotational,
        }
    }

    fn validate(&self) -> Result<(), AssessError> {
        for (class, g) in [("flash", &self.flash), ("rotational", &self.rotational)] {
            for (key, l) in [
                ("data_read_p99", g.data_read_p99),
                ("data_write_p99", g.data_write_p99),
                ("log_write_p50", g.log_write_p50),
                ("log_write_p99", g.log_write_p99),
                ("temp_p99", g.temp_p99),
            ] {
                let good = l.pass.is_finite() && l.warn.is_finite() && l.pass > 0.0;
                if !good || l.warn < l.pass {
                    return Err(AssessError::Guidelines(format!(
                        "{class}.{key}: pass ({}) and warn ({}) must be positive milliseconds \
                            with pass <= warn",
                        l.pass, l.warn
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Tables merge key by key; any other value replaces.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}
