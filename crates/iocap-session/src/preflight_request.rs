//! What preflight's flags ask for, before the files they name are read and the mode's defaults
//! filled in: the profile (a name or a TOML file), the guideline and expectation files, the
//! device class, the sizes and the hidden `STEP:TEST` timing of iocap's own tests. Here rather
//! than in the command line because the mode's defaults (file size, the short scan's reach and
//! budget) are part of what a preflight is.

use anyhow::{Context, Result};
use iocap_assess::{Expectations, Guidelines};
use iocap_model::{parse_duration, DeviceClass, JobSpec, Role};

use crate::cachescan::PreflightScan;
use crate::preflight_config::{PreflightConfig, Timing};
use crate::profile::load_profile;

/// Preflight's flags, as given.
#[derive(Debug, Clone, Default)]
pub struct PreflightRequest {
    /// A built-in profile's name or a profile TOML file.
    pub profile: String,
    /// A TOML file of latency guidelines, overriding the defaults.
    pub guidelines: Option<String>,
    /// A TOML file of what the storage should deliver.
    pub expect: Option<String>,
    /// `flash` or `rotational` for every role, instead of sysfs.
    pub device_class: Option<String>,
    pub quick: bool,
    pub size_bytes: Option<u64>,
    pub cache_size_bytes: Option<u64>,
    /// The largest working set of the sizing scan.
    pub scan_max_bytes: Option<u64>,
    /// `STEP:TEST` durations, for tests of iocap itself.
    pub timing: Option<String>,
    pub allow_overwrite: bool,
}

/// The size of test files without a scan: 1 GiB quick, 8 GiB full.
pub fn default_size(quick: bool) -> u64 {
    if quick {
        1 << 30
    } else {
        8 << 30
    }
}

/// A TOML file's text, or an error naming the file.
fn read(f: &str) -> Result<String> {
    iocap_engine::input::read_text(std::path::Path::new(f))
        .with_context(|| format!("cannot read {f}"))
}

impl PreflightRequest {
    /// The config: the profile and files read, the class parsed, the mode's timing (or
    /// `STEP:TEST`) and scan; tests placed by `role_target`, every spec passed to `tune`.
    pub fn config(
        &self,
        role_target: Box<dyn Fn(Role) -> String>,
        tune: Box<dyn Fn(&mut JobSpec)>,
    ) -> Result<PreflightConfig> {
        let profile = load_profile(&self.profile)?;
        let guidelines = match &self.guidelines {
            Some(f) => Guidelines::with_override(Some(&read(f)?))
                .with_context(|| format!("in guidelines file {f}"))?,
            None => Guidelines::default(),
        };
        let expectations = match &self.expect {
            Some(f) => Some(
                Expectations::from_toml(&read(f)?)
                    .with_context(|| format!("in expectations file {f}"))?,
            ),
            None => None,
        };
        let forced_class = match &self.device_class {
            Some(c) => Some(
                DeviceClass::parse(c)
                    .with_context(|| format!("--device-class '{c}': use flash or rotational"))?,
            ),
            None => None,
        };
        let timing = self.timing()?;
        Ok(PreflightConfig {
            profile,
            guidelines,
            expectations,
            forced_class,
            quick: self.quick,
            size_bytes: self.size_bytes,
            cache_size_bytes: self.cache_size_bytes,
            scan: self.scan(timing.step_s),
            default_size_bytes: default_size(self.quick),
            timing,
            allow_overwrite: self.allow_overwrite,
            role_target,
            tune,
        })
    }

    /// `STEP:TEST`, or the mode's durations.
    fn timing(&self) -> Result<Timing> {
        let Some(t) = &self.timing else {
            return Ok(Timing::of_mode(self.quick));
        };
        let (st, te) = t.split_once(':').context("--timing is STEP:TEST")?;
        Ok(Timing {
            step_s: parse_duration(st)?,
            step_warmup_s: 0.0,
            test_s: parse_duration(te)?,
            test_warmup_s: 0.0,
        })
    }

    /// The short cache scan of this preflight: up to the largest working set asked (the
    /// mode's file size), within a fifth of the mode's time.
    fn scan(&self, step_s: f64) -> PreflightScan {
        let quick = self.quick;
        PreflightScan {
            max_bytes: self.scan_max_bytes.unwrap_or(default_size(quick)),
            step_s: if self.timing.is_some() {
                step_s
            } else if quick {
                0.5
            } else {
                2.0
            },
            budget_s: if quick { 24.0 } else { 120.0 },
            files: 3 + usize::from(!quick),
            fill_budget_s: if quick { 30.0 } else { 120.0 },
            allow_overwrite: self.allow_overwrite,
        }
    }
}
