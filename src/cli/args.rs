//! Value parsers shared by the commands' flags: sizes, durations, rates, workloads, engines,
//! block-size mixes and bursts, each failing with a message that names the problem.

use iocap_model::{
    parse_bs_split, parse_duration, parse_rate, parse_size, BsWeight, Burst, EngineChoice, RwMode,
};

/// A latency such as `10ms`, in microseconds.
pub fn us_arg(s: &str) -> Result<f64, String> {
    parse_duration(s)
        .map(|secs| secs * 1e6)
        .map_err(|e| e.to_string())
}
pub fn size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}
pub fn duration_arg(s: &str) -> Result<f64, String> {
    parse_duration(s).map_err(|e| e.to_string())
}
pub fn rate_arg(s: &str) -> Result<f64, String> {
    parse_rate(s).map_err(|e| e.to_string())
}
pub fn rw_arg(s: &str) -> Result<RwMode, String> {
    RwMode::parse(s).ok_or_else(|| {
        format!("unknown workload '{s}': use read, write, randread, randwrite, rw or randrw")
    })
}
/// A parsed `--bs-split` (a newtype: clap would take a bare Vec for a repeated flag).
#[derive(Debug, Clone)]
pub struct Mix(pub Vec<BsWeight>);

pub fn bs_split_arg(s: &str) -> Result<Mix, String> {
    parse_bs_split(s).map(Mix).map_err(|e| e.to_string())
}
pub fn burst_arg(s: &str) -> Result<Burst, String> {
    let (on, off) = s
        .split_once(':')
        .ok_or_else(|| format!("burst '{s}' is ON:OFF, e.g. 2s:8s"))?;
    Ok(Burst {
        on_s: parse_duration(on).map_err(|e| e.to_string())?,
        off_s: parse_duration(off).map_err(|e| e.to_string())?,
    })
}
pub fn engine_arg(s: &str) -> Result<EngineChoice, String> {
    EngineChoice::parse(s).ok_or_else(|| {
        format!("unknown engine '{s}': use auto, io_uring, io_uring_unregistered or psync")
    })
}

/// What written data looks like (`--compressible`, `--dedupe`), shared by the commands that
/// write.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DataShapeArgs {
    /// Share of each 4 KiB block written that is zeros, so a compressor saves about this much
    /// (fio's buffer_compress_percentage); 0 is incompressible
    #[arg(long, value_name = "PCT", default_value_t = 0,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub compressible: u8,

    /// Share of the 4 KiB blocks written that duplicate other blocks (fio's
    /// dedupe_percentage); 0 makes every block unique
    #[arg(long, value_name = "PCT", default_value_t = 0,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub dedupe: u8,
}

impl DataShapeArgs {
    pub fn apply(&self, spec: &mut iocap_model::JobSpec) {
        spec.compressible_pct = self.compressible;
        spec.dedupe_pct = self.dedupe;
    }
}

/// How bad a verdict or check must be for `--fail-on` to exit with 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Exit 1 when any line is WARN or FAIL
    Warn,
    /// Exit 1 when any line is FAIL
    Fail,
}

/// The flag parsers that do more than call the model's (`us_arg` scales, `burst_arg` splits)
/// never panic. Run longer with `PROPTEST_CASES=200000` (`bench/fuzz.sh`).
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn cases(default: u32) -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    fn flagish() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[0-9.]{0,25}(|ms|us|s|m|h|d|k|K|M|G|T|x)(:[0-9.]{0,25}(|ms|s|m|x))?(:.{0,3})?",
            "([0-9]{0,12}[KkMm]?:[0-9]{0,11},?){0,4}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases(2000)))]

        #[test]
        fn value_parsers_never_panic(s in flagish()) {
            if let Ok(us) = us_arg(&s) {
                prop_assert!(us.is_finite() && us >= 0.0);
            }
            if let Ok(b) = burst_arg(&s) {
                prop_assert!(b.on_s.is_finite() && b.off_s.is_finite());
            }
            let _ = size_arg(&s);
            let _ = duration_arg(&s);
            let _ = rate_arg(&s);
            let _ = rw_arg(&s);
            let _ = bs_split_arg(&s);
            let _ = engine_arg(&s);
        }

        /// `iocap fsync --sizes` and `--methods`: lists of sizes and method names.
        #[test]
        fn fsync_list_parsers_never_panic(
            s in prop_oneof![
                any::<String>(),
                "([0-9.]{0,8}[KkMm]?,?){0,5}",
                "((fsync|fdatasync|o_dsync|o_direct_o_dsync|o_sync|o_direct_o_sync|rwf_dsync|[a-z_]{0,8}) ?,?){0,8}",
            ]
        ) {
            if let Ok(sizes) = iocap_fsync::parse_sizes(&s) {
                prop_assert!(!sizes.is_empty());
                prop_assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{:?}", sizes);
                prop_assert!(sizes.iter().all(|v| (512..=65536).contains(v) && v % 512 == 0));
            }
            if let Ok(methods) = iocap_fsync::parse_methods(&s) {
                prop_assert!(!methods.is_empty() && methods.len() <= iocap_fsync::Method::ALL.len());
                for (i, m) in methods.iter().enumerate() {
                    prop_assert!(!methods[..i].contains(m), "{:?} repeats", methods);
                }
            }
        }
    }
}
