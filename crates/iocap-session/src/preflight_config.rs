//! What a preflight is asked to do, once its flags are read ([`PreflightConfig`], the mode's
//! [`Timing`]): apart from the flow (`preflight`) and the verdicts (`preflight_judge`), which
//! both read it, so neither depends on the other for it.

use iocap_assess::cachescan::FileSizing;
use iocap_assess::{DeviceClass, Expectations, Guidelines};
use iocap_model::{JobSpec, Role};
use iocap_plan::Profile;

use crate::cachescan::PreflightScan;

/// What the judging step needs of a finished scan: the files' sizing it found, if one ran.
pub(crate) type Sizing = Option<FileSizing>;

/// Durations of one mode, in seconds.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub step_s: f64,
    pub step_warmup_s: f64,
    pub test_s: f64,
    pub test_warmup_s: f64,
}

/// What a preflight is asked to do, from the command line.
pub struct PreflightConfig {
    pub profile: Profile,
    pub guidelines: Guidelines,
    pub expectations: Option<Expectations>,
    /// The class the user gave for every role.
    pub forced_class: Option<DeviceClass>,
    pub quick: bool,
    pub timing: Timing,
    /// The test files' size when given; else the scan (or the mode's default) sizes them.
    pub size_bytes: Option<u64>,
    pub cache_size_bytes: Option<u64>,
    /// The scan to run first, unless the size or the cache was given.
    pub scan: PreflightScan,
    /// The size without a scan: 1 GiB quick, 8 GiB full.
    pub default_size_bytes: u64,
    pub allow_overwrite: bool,
    /// The test file (or device) of a role: `data`, `log`, `temp`, `backup`.
    pub role_target: Box<dyn Fn(Role) -> String>,
    /// Applied to every spec (`--until-stable`).
    pub tune: Box<dyn Fn(&mut JobSpec)>,
}

impl Timing {
    /// The durations of the quick (about two minutes) or the full mode (long enough for
    /// array caches to settle).
    pub fn of_mode(quick: bool) -> Timing {
        let (step_s, step_warmup_s, test_s, test_warmup_s) = if quick {
            (3.0, 1.0, 8.0, 1.0)
        } else {
            (10.0, 2.0, 30.0, 5.0)
        };
        Timing {
            step_s,
            step_warmup_s,
            test_s,
            test_warmup_s,
        }
    }
}
