//! The values users type after iocap's flags, parsed purely, each failing with a message that
//! names the problem: latencies, bursts, workloads, engines, `--until-stable`, percentages, the
//! write share of a workload and the name of a test. They live here, next to the units they
//! build on, so that every front end (the command line, a suite file, a future GUI) reads a
//! value the same way; the command line only wraps them as clap value parsers.

use crate::{format_bytes, parse_duration, BsWeight, Burst, EngineChoice, RwMode, UntilStable};

/// A latency such as `10ms`, in microseconds.
pub fn parse_latency_us(s: &str) -> Result<f64, String> {
    parse_duration(s)
        .map(|secs| secs * 1e6)
        .map_err(|e| e.to_string())
}

/// A workload name: read, write, randread, randwrite, rw or randrw.
pub fn parse_rw(s: &str) -> Result<RwMode, String> {
    RwMode::parse(s).ok_or_else(|| {
        format!("unknown workload '{s}': use read, write, randread, randwrite, rw or randrw")
    })
}

/// An engine name of this system (Linux: auto, io_uring, io_uring_unregistered or psync;
/// Windows: auto, iocp or sync).
pub fn parse_engine(s: &str) -> Result<EngineChoice, String> {
    EngineChoice::parse(s)
}

/// `ON:OFF`, e.g. `2s:8s`: seconds at full speed, then idle.
pub fn parse_burst(s: &str) -> Result<Burst, String> {
    let (on, off) = s
        .split_once(':')
        .ok_or_else(|| format!("burst '{s}' is ON:OFF, e.g. 2s:8s"))?;
    Ok(Burst {
        on_s: parse_duration(on).map_err(|e| e.to_string())?,
        off_s: parse_duration(off).map_err(|e| e.to_string())?,
    })
}

/// A percentage from 0 to 1000, with or without `%` (a threshold of `iocap compare`).
pub fn parse_pct(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage"))?;
    if !(0.0..=1000.0).contains(&v) {
        return Err(format!("{s} is outside 0 to 1000 %"));
    }
    Ok(v)
}

/// The write share of a workload given `--write-pct` (or not): 0 for reads, 100 for writes,
/// 50 or the given share for a mix; a share given for a workload that does not mix is refused.
pub fn write_pct_of(rw: RwMode, given: Option<u8>) -> Result<u8, String> {
    match given {
        None => Ok(rw.write_pct(50)),
        Some(p) if rw.is_mixed() => Ok(p),
        Some(_) => Err(format!(
            "--write-pct needs a mixed workload (--rw rw or randrw), not {}",
            rw.name()
        )),
    }
}

/// The name of a single test: its workload and size (`randread 8K`), or its block-size mix
/// (`randrw 8K:70,64K:30`).
pub fn test_name(rw: RwMode, bs_bytes: u64, split: &[BsWeight]) -> String {
    let size = if split.is_empty() {
        format_bytes(bs_bytes)
    } else {
        split
            .iter()
            .map(|b| format!("{}:{}", format_bytes(b.bs_bytes), b.weight))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!("{} {size}", rw.name())
}

/// `--until-stable PCT[:MAX]`, before the spec's duration is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UntilStableFlag {
    pub ci_pct: f64,
    pub max_s: Option<f64>,
}

/// How many times the longest `--until-stable` window is `--duration`, when it is not given.
pub const DEFAULT_MAX_FACTOR: f64 = 10.0;

impl UntilStableFlag {
    /// Parses `2`, `2%`, `0.5%:5m`.
    pub fn parse(s: &str) -> Result<Self, String> {
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
        Ok(Self { ci_pct, max_s })
    }

    /// The spec's setting for a test of `duration_s`: the longest window as given, else
    /// [`DEFAULT_MAX_FACTOR`] durations (one given shorter than the duration is refused by
    /// validation).
    pub fn for_duration(self, duration_s: f64) -> UntilStable {
        UntilStable {
            ci_pct: self.ci_pct,
            max_s: self.max_s.unwrap_or(duration_s * DEFAULT_MAX_FACTOR),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JobSpec;

    #[test]
    fn until_stable_takes_a_percentage_and_a_longest_window() {
        let u = UntilStableFlag::parse("2").unwrap();
        assert_eq!((u.ci_pct, u.max_s), (2.0, None));
        let u = UntilStableFlag::parse("0.5%:5m").unwrap();
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
            let e = UntilStableFlag::parse(bad).unwrap_err();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn the_longest_window_defaults_to_ten_durations() {
        let mut spec = JobSpec {
            duration_s: 6.0,
            ..JobSpec::default()
        };
        let u = UntilStableFlag::parse("3").unwrap();
        spec.until_stable = Some(u.for_duration(spec.duration_s));
        assert_eq!(spec.until_stable.unwrap().max_s, 60.0);
        spec.validate().unwrap();
        let u = UntilStableFlag::parse("3:2s").unwrap();
        spec.until_stable = Some(u.for_duration(spec.duration_s));
        let e = spec.validate().unwrap_err().to_string();
        assert!(e.contains("shorter than --duration"), "{e}");
    }

    #[test]
    fn a_write_share_needs_a_mix() {
        assert_eq!(write_pct_of(RwMode::RandRead, None), Ok(0));
        assert_eq!(write_pct_of(RwMode::Write, None), Ok(100));
        assert_eq!(write_pct_of(RwMode::RandRw, None), Ok(50));
        assert_eq!(write_pct_of(RwMode::Rw, Some(30)), Ok(30));
        let e = write_pct_of(RwMode::RandWrite, Some(30)).unwrap_err();
        assert!(e.contains("not randwrite"), "{e}");
    }
}
