//! The command line's shared flags: each group declared once, as a clap `Args` struct that the
//! commands taking it flatten (`#[command(flatten)]`), with the value parsers behind them.
//!
//! Why a crate of its own: a flag's name, wording, default and parsing are one decision, made
//! here once for every command (`--db` used to be declared ten times, `--allow-overwrite`
//! eight), so `src/cli` holds only each command's own flags and the call into a library. A
//! command whose wording or default differs says so with `#[command(mut_arg(..))]`; the name,
//! the value parsing and the field stay the ones here. The rules a value must follow are the
//! model's (`iocap_model::flags`, `units`); the parsers here only adapt them to clap.

mod args;
mod common;
mod filter;
mod misread;
mod output;
mod roles;
mod save;
mod sure;

pub use args::*;
pub use common::*;
pub use filter::RunFilterArgs;
pub use misread::{plain_error, plain_error_in};
pub use output::*;
pub use roles::RoleDirs;
pub use save::{SaveArgs, StoreArg};
pub use sure::SureArgs;

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// A command that ends as every measuring command does.
    #[derive(Parser, Debug)]
    struct Measuring {
        #[command(flatten)]
        timing: TimingArgs,
        #[command(flatten)]
        common: CommonArgs<DataAndSure>,
    }

    fn parse(args: &[&str]) -> Result<Measuring, clap::Error> {
        Measuring::try_parse_from(std::iter::once("iocap").chain(args.iter().copied()))
    }

    #[test]
    fn the_shared_groups_parse_with_their_defaults() {
        let m = parse(&[]).unwrap();
        assert_eq!(m.timing.duration.duration, 10.0);
        assert_eq!(m.timing.warmup.warmup, 2.0);
        assert_eq!(m.common.output.output, OutputFormat::Text);
        assert!(!m.common.safety.allow_overwrite);
        assert_eq!(m.common.extra.sure.repeat, 1);
        let m = parse(&["--duration", "1m", "--format", "json", "--tag", "a"]).unwrap();
        assert_eq!(m.timing.duration.duration, 60.0);
        assert_eq!(m.common.output.output, OutputFormat::Json);
        assert_eq!(m.common.save.tags, ["a"]);
    }

    /// A sweep, as saturate and cachescan end.
    #[derive(Parser, Debug)]
    struct Sweep {
        #[command(flatten)]
        step: StepDurationArg,
    }

    #[test]
    fn duration_and_step_duration_are_one_flag_everywhere() {
        for flag in ["--duration", "--step-duration"] {
            assert_eq!(parse(&[flag, "3s"]).unwrap().timing.duration.duration, 3.0);
            let s = Sweep::try_parse_from(["iocap", flag, "4s"]).unwrap();
            assert_eq!(s.step.step_duration, 4.0);
        }
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        let e = parse(&["--duration", "ten"]).unwrap_err().to_string();
        assert!(e.contains("--duration"), "{e}");
        let e = parse(&["--output", "markdown"]).unwrap_err().to_string();
        assert!(e.contains("markdown") && e.contains("json"), "{e}");
        assert!(parse(&["--compressible", "101"]).is_err());
    }
}
