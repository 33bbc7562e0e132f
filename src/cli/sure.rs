//! The flags that make a figure surer, shared by every command that measures: `--repeat N`
//! (run each test N times and report the spread across runs) and `--until-stable PCT[:MAX]`
//! (measure past `--duration` until the IOPS' 95 % interval is within PCT of the mean).

use clap::Args;
use iocap_model::{parse_duration, JobSpec, UntilStable};

use super::args::duration_arg;

/// `--until-stable PCT[:MAX]`, before the spec's duration is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UntilStableArg {
    pub ci_pct: f64,
    pub max_s: Option<f64>,
}

/// Parses `2`, `2%`, `0.5%:5m`.
pub fn until_stable_arg(s: &str) -> Result<UntilStableArg, String> {
    let (pct, max) = match s.split_once(':') {
        Some((p, m)) => (p, Some(m)),
        None => (s, None),
    };
    let p = pct.trim().trim_end_matches('%');
    let ci_pct: f64 = p
        .parse()
        .ok()
        .filter(|v: &f64| *v > 0.0 && *v < 100.0)
        .ok_or_else(|| {
            format!(
                "'{s}': the interval's half-width is a percentage above 0 and below 100, \
                 e.g. 2% or 2%:5m"
            )
        })?;
    let max_s = max
        .map(|m| parse_duration(m).map_err(|e| format!("'{s}': the longest window: {e}")))
        .transpose()?;
    if max_s == Some(0.0) {
        return Err(format!("'{s}': the longest window must be above zero"));
    }
    Ok(UntilStableArg { ci_pct, max_s })
}

/// How many times the longest `--until-stable` window is `--duration`, when it is not given.
pub const DEFAULT_MAX_FACTOR: f64 = 10.0;

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
    pub until_stable: Option<UntilStableArg>,
}

impl SureArgs {
    /// Sets `--until-stable` on `spec`, its longest window from the spec's own duration.
    pub fn apply(&self, spec: &mut JobSpec) {
        spec.until_stable = self.until_stable.map(|u| UntilStable {
            ci_pct: u.ci_pct,
            // a longest window given shorter than --duration is refused by validation
            max_s: u.max_s.unwrap_or(spec.duration_s * DEFAULT_MAX_FACTOR),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_stable_takes_a_percentage_and_a_longest_window() {
        let u = until_stable_arg("2").unwrap();
        assert_eq!((u.ci_pct, u.max_s), (2.0, None));
        let u = until_stable_arg("0.5%:5m").unwrap();
        assert_eq!((u.ci_pct, u.max_s), (0.5, Some(300.0)));
        for bad in [
            "",
            "0",
            "100",
            "-1%",
            "x%",
            "2%:",
            "2%:0s",
            "2%:forever",
            "nan",
        ] {
            let e = until_stable_arg(bad).unwrap_err();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn the_longest_window_defaults_to_ten_durations() {
        let mut spec = JobSpec {
            duration_s: 6.0,
            ..JobSpec::default()
        };
        let mut a = SureArgs {
            repeat: 1,
            repeat_pause: 0.0,
            until_stable: Some(until_stable_arg("3").unwrap()),
        };
        a.apply(&mut spec);
        assert_eq!(spec.until_stable.unwrap().max_s, 60.0);
        spec.validate().unwrap();
        a.until_stable = Some(until_stable_arg("3:2s").unwrap());
        a.apply(&mut spec);
        let e = spec.validate().unwrap_err().to_string();
        assert!(e.contains("shorter than --duration"), "{e}");
    }
}
