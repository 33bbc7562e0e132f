//! DiskSpd-compatible front end: a DiskSpd command line goes in, iocap [`JobSpec`]s come out, and
//! the measured [`RunResult`] is printed back in DiskSpd's text (`-Rtext`) or XML (`-Rxml`) shape.
//!
//! Why it exists: Windows teams validate storage with DiskSpd command lines kept in runbooks,
//! vendor guides and scripts, and they read its output with scripts of their own (often XPath
//! over `-Rxml`). Running those command lines unchanged on Linux and on Windows, and handing back
//! output those scripts still read, is the cheapest way to let them compare a Linux host with the
//! Windows ones, and to check both with one tool. This crate only translates, as `iocap-sqlio` does for SQLIO: it never touches a file or
//! a clock, so every rule is unit-tested without a disk.
//!
//! The API is four calls: [`parse`] a command line into a [`DiskspdRun`], [`map_targets`] for the
//! system it runs on (`#2`, `E:`), run its `specs` on the engine, then [`render_text`] or
//! [`render_xml`] the [`RunResult`] as `run.output` asks; [`DiskspdRun::note`] is the note to
//! save it with.
//! docs/diskspd.md lists every flag, its mapping and every difference from DiskSpd; where iocap
//! runs something other than what DiskSpd would, [`DiskspdRun::notes`] says so in one sentence.

mod args;
mod convert;
mod cpu;
mod figures;
mod series;
mod size;
mod targets;
mod text;
mod text_results;
mod xml;
mod xml_results;
mod xml_writer;

pub use targets::{is_device_path, map_targets, target_path, TargetOs};
pub use text::render_text;
pub use xml::render_xml;

use iocap_model::JobSpec;
#[cfg(doc)]
use iocap_model::RunResult;

/// Parses the arguments of one DiskSpd call (without the program name) into a validated run.
pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<DiskspdRun, DiskspdError> {
    let (draft, command_line) = args::read(args)?;
    convert::finish(draft, command_line)
}

// DiskSpd's defaults, from its usage text (`-b64K -d10 -W5 -C0 -o2 -t1`, seed 0).
/// `-b`: 64 KiB.
pub const DEFAULT_BLOCK_BYTES: u64 = 64 << 10;
/// `-d`: 10 s.
pub const DEFAULT_DURATION_S: u32 = 10;
/// `-W`: 5 s.
pub const DEFAULT_WARMUP_S: u32 = 5;
/// `-o`: 2 outstanding I/Os per thread per target.
pub const DEFAULT_REQUESTS: u32 = 2;
/// `-D` without a value: 1000 ms.
pub const DEFAULT_INTERVAL_MS: u32 = 1000;

/// One DiskSpd invocation, translated.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskspdRun {
    /// The tests to run, in order: one per DiskSpd timespan. A command line always has exactly
    /// one; the list leaves room for `-X` XML profiles, which may hold several. Validated.
    pub specs: Vec<JobSpec>,
    /// `-Rtext` (the default) or `-Rxml`.
    pub output: Output,
    /// `-L`: the latency columns and the percentile table. iocap measures latency either way.
    pub latency: bool,
    /// `-D`: the IOPS standard deviation column (text) and the per-interval series (XML).
    pub per_interval_std: bool,
    /// The `-D` interval DiskSpd was asked for, in ms (1000 without a value); with `-D` the
    /// spec asks the engine for a series at it (`JobSpec::interval_ms`).
    pub interval_ms: u32,
    /// `-c`: the size to create the targets at. `None`: DiskSpd would fail on a missing target,
    /// and the caller should refuse one too rather than let iocap create it at `spec.size_bytes`.
    pub create_bytes: Option<u64>,
    /// `-z` without a seed: DiskSpd seeds from the clock. This crate reads no clock, so the
    /// caller should put a time-based seed into `specs[..].seed`.
    pub seed_from_clock: bool,
    /// What DiskSpd prints after `Command Line:`: `diskspd` and the arguments, space-separated.
    pub command_line: String,
    /// DiskSpd's own view of the parameters, for the `Input parameters` and `<Profile>` output.
    pub profile: Profile,
    /// Where iocap does something other than DiskSpd would, one sentence each; the text output
    /// ends with them and the XML carries them as comments.
    pub notes: Vec<String>,
}

impl DiskspdRun {
    /// The note the run is saved with: the DiskSpd command line, after the user's `--note` when
    /// one is given, so neither is lost.
    pub fn note(&self, user: Option<&str>) -> String {
        match user {
            Some(u) if !u.trim().is_empty() => format!("{u}\n({})", self.command_line),
            _ => self.command_line.clone(),
        }
    }
}

/// `-R`: the output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Output {
    #[default]
    Text,
    Xml,
}

/// The parameters as DiskSpd states them (before iocap's mapping), echoed in the output.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// `-b`, in bytes.
    pub block_bytes: u64,
    /// `-d`, `-W`, `-C`, in seconds.
    pub duration_s: u32,
    pub warmup_s: u32,
    pub cooldown_s: u32,
    /// `-t`: threads per target; `None` with `-F`.
    pub threads_per_target: Option<u32>,
    /// `-F`: the total number of threads, each issuing I/O to every target.
    pub total_threads: Option<u32>,
    /// `-o`: outstanding I/Os per thread per target.
    pub requests: u32,
    /// `-O`: outstanding I/Os per thread of a `-F` pool.
    pub pool_requests: Option<u32>,
    /// `-w`: share of writes in percent.
    pub write_pct: u8,
    pub access: Access,
    /// `-T`, in bytes; 0 when not given.
    pub thread_stride_bytes: u64,
    /// `-f<size>`, in bytes; 0: the whole target.
    pub max_size_bytes: u64,
    /// `-S`, `-h`: whether the OS cache is bypassed.
    pub disable_os_cache: bool,
    /// `-Sw`, `-Sh`, `-h`: write-through.
    pub write_through: bool,
    /// `-g`: the per-thread, per-target throttle.
    pub throttle: Option<Throttle>,
    /// `-z<seed>`; 0 without `-z`.
    pub seed: u32,
    /// `-Z`: what writes carry.
    pub write_buffers: WriteBuffers,
    /// `-a`: the CPUs to run on (group 0); empty: DiskSpd's default affinity.
    pub affinity: Vec<u32>,
    /// `-n`: no affinity.
    pub no_affinity: bool,
    /// `-fr`, `-fs`, `-ft`: Windows access hints, echoed only.
    pub hints: Hints,
    /// `-x`: completion routines instead of completion ports, echoed only.
    pub completion_routines: bool,
    /// `-l`: large pages for the buffers, echoed only.
    pub large_pages: bool,
    /// `-v`: verbose, echoed only.
    pub verbose: bool,
    /// `-P`: a progress dot every so many I/Os; 0 when not given. Echoed only.
    pub progress: u32,
    /// The targets as typed: paths, `#<disk>` or `<letter>:`.
    pub targets: Vec<String>,
    /// `-B<base>`, in bytes; 0 when not given (DiskSpd's `BaseFileOffset`). With
    /// `-B<base>:<length>`, `max_size_bytes` is base + length, as DiskSpd's `MaxFileSize`.
    pub base_bytes: u64,
    /// `-rs<pct>`: the share of random I/O as typed (DiskSpd's `RandomRatio`; 100 is plain
    /// `-r`, which DiskSpd does not write as a ratio).
    pub random_pct: Option<u8>,
    /// `-p`: parallel async I/O at one offset (DiskSpd's `ParallelAsyncIO`).
    pub parallel_async: bool,
    /// `-i`: I/Os per burst per target, as typed (DiskSpd's `BurstSize`).
    pub burst_ios: Option<u32>,
    /// `-j`: think time in ms after each burst (DiskSpd's `ThinkTime`).
    pub think_ms: Option<u32>,
    /// `-vs`: verbose summary statistics, echoed only.
    pub verbose_stats: bool,
}

/// Random or sequential access, as `-r` and `-s` state it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `-r[align]`: random offsets aligned to `align_bytes` (the block size by default).
    Random { align_bytes: u64 },
    /// `-s[i][stride]` or neither flag: each thread walks forward by `stride_bytes` (the block
    /// size by default); `interlocked` (`-si`) shares one offset between a target's threads.
    Sequential {
        stride_bytes: u64,
        interlocked: bool,
    },
}

/// `-g<n>`: bytes per millisecond, or `-g<n>i`: I/Os per second; per thread, per target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throttle {
    BytesPerMs(u64),
    Iops(u64),
}

/// `-Z`: the content of the write buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteBuffers {
    /// No `-Z`: DiskSpd's repeating 0, 1, ..., 255 pattern.
    #[default]
    Pattern,
    /// `-Z`: zeros.
    Zero,
    /// `-Zr`: fresh random data for every write.
    RandomPerIo,
    /// `-Z<size>`: a random buffer of this many bytes that writes take their data from.
    Random { bytes: u64 },
}

/// `-f<rst>`: Windows file access hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hints {
    pub random: bool,
    pub sequential: bool,
    pub temporary: bool,
}

/// Why a DiskSpd command line was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiskspdError {
    /// A flag is unknown, lacks its value, has a value DiskSpd or iocap cannot use, or conflicts
    /// with an earlier one. `flag` is the argument as typed.
    #[error("option {flag}: {problem}")]
    BadFlag { flag: String, problem: String },
    /// The arguments as a whole cannot run (no target, flags that need each other).
    #[error("{0}")]
    Usage(String),
    /// A target cannot be run on this system (`#<n>` or `<letter>:` on Linux) or is malformed.
    /// `target` is as typed.
    #[error("target '{target}': {problem}")]
    Target { target: String, problem: String },
    /// The translated test breaks one of iocap's rules (`JobSpec::validate`).
    #[error("the test cannot run: {0}")]
    Spec(String),
}

impl DiskspdError {
    pub(crate) fn flag(flag: &str, problem: impl Into<String>) -> Self {
        Self::BadFlag {
            flag: flag.to_string(),
            problem: problem.into(),
        }
    }
}

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod props;

#[cfg(test)]
mod tests {
    #[test]
    fn the_note_keeps_the_command_line_after_the_user_s_note() {
        let run = crate::parse(&["-b8K", "-r", "t.dat"]).unwrap();
        assert_eq!(run.note(None), "diskspd -b8K -r t.dat");
        assert_eq!(run.note(Some(" ")), "diskspd -b8K -r t.dat");
        assert_eq!(
            run.note(Some("after the firmware update")),
            "after the firmware update\n(diskspd -b8K -r t.dat)"
        );
    }
}
