//! The flags that make a figure surer, shared by every command that measures: `--repeat N`
//! (run each test N times and report the spread across runs) and `--until-stable PCT[:MAX]`
//! (measure past `--duration` until the IOPS' 95 % interval is within PCT of the mean; parsed
//! and resolved by `iocap_model::UntilStableFlag`).

use clap::Args;
use iocap_model::{JobSpec, UntilStableFlag};

use super::args::{duration_arg, until_stable_arg};

#[derive(Args, Debug, Clone)]
pub struct SureArgs {
    /// Run each test N times; the report gives the median and spread across the runs and
    /// keeps every run (a curve or verdict takes the median run)
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Pause between the runs of --repeat, so write caches drain (e.g. 10s)
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = duration_arg)]
    pub repeat_pause: f64,
    /// Measure past --duration until the IOPS' 95 % confidence interval is within PCT of the
    /// mean, for at most MAX (default: 10 x --duration), e.g. 2% or 2%:5m
    #[arg(long, value_name = "PCT[:MAX]", value_parser = until_stable_arg)]
    pub until_stable: Option<UntilStableFlag>,
}

impl SureArgs {
    /// Sets `--until-stable` on `spec`, its longest window from the spec's own duration.
    pub fn apply(&self, spec: &mut JobSpec) {
        spec.until_stable = self.until_stable.map(|u| u.for_duration(spec.duration_s));
    }
}
