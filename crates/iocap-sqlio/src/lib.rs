//! SQLIO-compatible front end: SQLIO command lines, parameter files and batch files go in, an
//! iocap [`JobSpec`] comes out, and the measured [`TestResult`] is printed back in SQLIO's shape.
//!
//! Why it exists: DBAs have years of SQLIO batch files and spreadsheets that import SQLIO's
//! output. Letting them run those files unchanged on Linux, and get figures their scripts still
//! parse, is the cheapest way to move them to iocap. This crate only translates; it never touches
//! a file or a clock, so every rule below is unit-tested without a disk (the parameter file is read
//! through a callback).
//!
//! # Flags
//!
//! Values are attached to the flag letter, as in SQLIO (`-o8`, not `-o 8`). Flag letters are
//! case-sensitive (`-s` is not `-S`); their values are not (`-kr`, `-fRandom`). A leading EN DASH
//! or EM DASH counts as `-`, because word processors turn the dashes of pasted batch files into
//! them. The defaults are SQLIO 1.5's own, from its `readme.txt` ("Defaults: -kR -t1 -s30 -f64 -b2
//! -i64 -BN testfile.dat"; with no `-o`, each thread waits for its I/O before issuing the next).
//!
//! | flag | meaning | default | iocap mapping |
//! |---|---|---|---|
//! | `-kR` / `-kW` | read or write | `-kR` | `rw` read/write (or randread/randwrite), `write_pct` 0 or 100 |
//! | `-s<secs>` | test length in seconds | `-s30` | `duration_s`; `warmup_s` = `cooldown_s` = 0 |
//! | `-frandom` / `-fsequential` | access pattern | random (see below) | `rw` rand* or sequential; `-f1` = sequential |
//! | `-o<n>` | outstanding I/Os per thread per file | 1 | `qd` |
//! | `-b<KB>` | block size in KiB | `-b2` (2 KiB) | `bs_bytes` = KB × 1024, `align_bytes` = `bs_bytes` |
//! | `-t<n>` | threads per file | `-t1` | `threads`; a parameter file line overrides it per file |
//! | `-LS` / `-LP` | latency timer (system / processor) | none | [`SqlioCall::latency_timer`]; iocap always measures latency |
//! | `-BN` `-BY` `-BH` `-BS` | buffering | `-BN` | `direct` and `write_through`, table below |
//! | `-F<file>` | parameter file | none | one target per line, see [`parse_param_file`] |
//! | `<path>` | test file (several allowed) | `testfile.dat` in the current directory | one target each |
//! | `--allow-overwrite` | iocap: may write to files it did not create | off | `allow_overwrite` |
//! | `--engine <e>` / `--engine=<e>` | iocap: `auto`, `io_uring` or `psync` | `auto` | `engine` |
//!
//! Files that must be created are created at 100 MiB (`size_bytes`), unless a parameter file line
//! gives a size. The test is named after its shape, e.g. `sqlio -kR -frandom -b8 -o8`.
//!
//! SQLIO's default pattern, `-f64`, is a stride of 64 blocks over a small region of the file
//! (8 MB with the other defaults). iocap has no stride pattern, so a numeric `-f<n>` other than
//! `-f1` is refused, and a call without `-f` runs random I/O, the nearest match that no cache
//! or read-ahead can flatter; the call's [`SqlioCall::notes`] say so.
//!
//! SQLIO options iocap does not offer (`-d`, `-R`, `-p`, `-a`, `-i`, `-m`, `-U`, `-S`, `-v`,
//! `-D`, `-64`) are refused with a message that names them, rather than silently ignored: a
//! ported batch file should not quietly measure something else.
//!
//! # Buffering
//!
//! SQLIO's `-B` chooses Windows' `FILE_FLAG_NO_BUFFERING` (no OS cache) and
//! `FILE_FLAG_WRITE_THROUGH` (writes durable on completion). iocap maps them to `O_DIRECT` and
//! `O_DSYNC`:
//!
//! | `-B` | caches in use | `direct` | `write_through` |
//! |---|---|---|---|
//! | `N` (default) | none | true | true |
//! | `H` | the device's cache only | true | false |
//! | `S` | the OS page cache, writes go through | false | true |
//! | `Y` | both | false | false |

mod args;
mod batch;
mod batchvars;
mod own;
mod param;
mod summary;

pub use args::parse_args;
pub use batch::{parse_batch, parse_batch_in, BatchLine};
pub use own::{split_own_flags, OwnFlags, HELP};
pub use param::{parse_param_file, ParamLine};
pub use summary::{ms_buckets, render_header, render_result, render_summary};

use iocap_model::JobSpec;
#[cfg(doc)]
use iocap_model::TestResult;

/// One SQLIO invocation, translated.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlioCall {
    /// The test to run; not yet validated (the caller runs [`JobSpec::validate`]).
    pub spec: JobSpec,
    /// `'S'` or `'P'` from `-LS` / `-LP`, `None` without `-L`. Only the header mentions it.
    pub latency_timer: Option<char>,
    /// `'N'`, `'Y'`, `'H'` or `'S'`, upper case.
    pub buffering: char,
    /// The `-F` argument as given.
    pub param_file: Option<String>,
    /// Where each of `spec.targets` came from, in the same order. Targets named on the command
    /// line (or the default `testfile.dat`) have `line` 0, mask 0 and `size_mb` 0.
    pub targets: Vec<ParamLine>,
    /// Where iocap does something other than SQLIO would, in one sentence each; printed by
    /// [`render_header`].
    pub notes: Vec<String>,
}

/// Why a SQLIO command line, parameter file or batch file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SqlioError {
    /// A flag is unknown, lacks its value, or has a value iocap cannot use. `flag` is the
    /// argument as typed.
    #[error("option {flag}: {problem}")]
    BadFlag { flag: String, problem: String },
    /// The arguments contradict each other.
    #[error("{0}")]
    Usage(String),
    /// The parameter file could not be read.
    #[error("cannot read parameter file {path}: {reason}")]
    ReadParamFile { path: String, reason: String },
    /// A line of a parameter file is malformed (`line` counts from 1).
    #[error("{origin}:{line}: {problem}")]
    BadParamLine {
        origin: String,
        line: usize,
        problem: String,
    },
    /// The parameter file names no test file.
    #[error("{origin}: {problem}")]
    EmptyParamFile { origin: String, problem: String },
    /// A line of a batch file is not a sqlio call iocap can run (`line` counts from 1).
    #[error("batch file line {line}: {problem}")]
    BadBatchLine { line: usize, problem: String },
}

/// The whole string as a `u64` if it is nothing but ASCII digits; `Err(true)` when the digits
/// overflow, `Err(false)` when it is not a number at all. Stricter than `str::parse`, which
/// takes a leading `+`.
pub(crate) fn parse_digits(s: &str, radix: u32) -> Result<u64, bool> {
    if s.is_empty() || !s.chars().all(|c| c.is_digit(radix)) {
        return Err(false);
    }
    u64::from_str_radix(s, radix).map_err(|_| true)
}

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod seed_batch;
