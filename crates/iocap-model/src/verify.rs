//! What `iocap verify` found: the data-integrity and crash-consistency verifier's configuration,
//! counts and failures. Kept on the [`crate::RunResult`] like the assessing commands' results, so
//! a saved verify run shows, years later, which page was lost and what was found in its place.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a page read back differs from what was written (docs/verify.md tells them apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// The read or write call itself failed (`errno`).
    IoError,
    /// The page reads back as zeros: it never reached the storage.
    NeverWritten,
    /// A valid page, but of another page or another file: a misdirected write or read.
    Misdirected,
    /// A valid page of an older generation: a lost write or a stale read.
    Stale,
    /// Every sector is a valid sector of this page, from more than one generation.
    Torn,
    /// Checksum mismatch otherwise: damaged data.
    Corrupt,
}

impl FailureClass {
    pub const ALL: [FailureClass; 6] = [
        FailureClass::IoError,
        FailureClass::NeverWritten,
        FailureClass::Misdirected,
        FailureClass::Stale,
        FailureClass::Torn,
        FailureClass::Corrupt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FailureClass::IoError => "io_error",
            FailureClass::NeverWritten => "never_written",
            FailureClass::Misdirected => "misdirected",
            FailureClass::Stale => "stale",
            FailureClass::Torn => "torn",
            FailureClass::Corrupt => "corrupt",
        }
    }
}

/// The result of `iocap verify` (a run) or `iocap verify --check` (a crash-consistency check).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Verify {
    /// `run` or `check`.
    pub mode: VerifyMode,
    pub target: String,
    pub page_bytes: u64,
    pub size_bytes: u64,
    pub pages: u64,
    pub threads: u32,
    /// In-flight I/Os per thread (io_uring), or synchronous threads per thread (psync).
    pub qd: u32,
    pub seed: u64,
    /// Random identity of the verify file, in every page header.
    pub file_id: u64,
    /// Time asked for the concurrent phase.
    pub duration_s: f64,
    /// Time the whole run took (fill, concurrent phase, final pass).
    pub elapsed_s: f64,
    /// Whether O_DIRECT was used (false: the file system refused it; reads may come from cache).
    pub direct: bool,
    /// The engine that ran: `io_uring` (`threads` rings of `qd` I/Os) or `psync` (`threads × qd`
    /// threads each issuing pread/pwrite).
    pub io_engine: crate::Engine,
    pub journal: Option<String>,
    /// The write unit the storage is trusted to keep whole after a crash (`--check`).
    pub atomic_unit_bytes: u64,
    pub counts: VerifyCounts,
    pub classes: ClassCounts,
    /// The first failures in full detail (at most 1000; `classes` counts them all).
    pub failures: Vec<VerifyFailure>,
    /// For `--check`: what the journal said and what was found.
    pub check: Option<VerifyCheck>,
    /// Where expected and actual bytes of failed pages were written.
    pub dump_dir: Option<String>,
    pub interrupted: bool,
    pub warnings: Vec<String>,
    /// True when every page was checked (the run or check was not interrupted), no page failed
    /// and no acknowledged write was lost.
    pub passed: bool,
}

impl Verify {
    /// `PASS`, `FAIL`, or `PARTIAL` for a run or check interrupted before it found a failure
    /// (not every page was checked): the word every view and the store's listing give it.
    pub fn verdict_word(&self) -> &'static str {
        let lost = self
            .check
            .as_ref()
            .is_some_and(|c| !c.lost_pages.is_empty());
        match (
            self.classes.total() > 0 || lost,
            self.interrupted,
            self.passed,
        ) {
            (true, _, _) => "FAIL",
            (false, true, _) => "PARTIAL",
            (false, false, true) => "PASS",
            (false, false, false) => "FAIL",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct VerifyCounts {
    /// Page writes, initial fill included.
    pub pages_written: u64,
    pub pages_read: u64,
    /// Pages read and compared with their expected generation.
    pub pages_checked: u64,
    /// Reads skipped because a write of the same page overlapped them.
    pub reads_skipped: u64,
    pub random_updates: u64,
    /// Durable (RWF_DSYNC) sequential writes to the log region.
    pub log_appends: u64,
    /// Read-ahead scans (runs of 8 to 64 pages).
    pub scans: u64,
    pub random_reads: u64,
    pub bytes_written: u64,
    pub bytes_read: u64,
    pub journal_records: u64,
}

/// How many pages of each class were found (a page that failed and then read back correctly
/// counts in its class and in `transient`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct ClassCounts {
    pub io_error: u64,
    pub never_written: u64,
    pub misdirected: u64,
    pub stale: u64,
    pub torn: u64,
    pub corrupt: u64,
    /// Failures that a later re-read did not show.
    pub transient: u64,
}

impl ClassCounts {
    pub fn add(&mut self, c: FailureClass) {
        *self.get_mut(c) += 1;
    }
    pub fn get(&self, c: FailureClass) -> u64 {
        match c {
            FailureClass::IoError => self.io_error,
            FailureClass::NeverWritten => self.never_written,
            FailureClass::Misdirected => self.misdirected,
            FailureClass::Stale => self.stale,
            FailureClass::Torn => self.torn,
            FailureClass::Corrupt => self.corrupt,
        }
    }
    fn get_mut(&mut self, c: FailureClass) -> &mut u64 {
        match c {
            FailureClass::IoError => &mut self.io_error,
            FailureClass::NeverWritten => &mut self.never_written,
            FailureClass::Misdirected => &mut self.misdirected,
            FailureClass::Stale => &mut self.stale,
            FailureClass::Torn => &mut self.torn,
            FailureClass::Corrupt => &mut self.corrupt,
        }
    }
    pub fn total(&self) -> u64 {
        FailureClass::ALL.iter().map(|c| self.get(*c)).sum()
    }
    pub fn merge(&mut self, o: &ClassCounts) {
        for c in FailureClass::ALL {
            *self.get_mut(c) += o.get(c);
        }
        self.transient += o.transient;
    }
}

/// What `iocap verify` did ([`Verify::mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerifyMode {
    /// Wrote and checked pages.
    #[default]
    Run,
    /// `--check`: compared the journal's acknowledged writes against the file after a crash.
    Check,
}

/// The step that found a failure ([`VerifyFailure::op`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerifyOp {
    /// A page read in the mixed phase.
    Read,
    /// A page write.
    Write,
    /// An append to the log file.
    LogAppend,
    /// The scan after the fill.
    Scan,
    /// The pass over every page at the end.
    FinalPass,
    /// `--check` after a crash.
    Check,
}

crate::names::names! {
    VerifyMode { Run => "run", Check => "check" }
    VerifyOp {
        Read => "read",
        Write => "write",
        LogAppend => "log_append",
        Scan => "scan",
        FinalPass => "final_pass",
        Check => "check",
    }
}

/// One page that did not read back as expected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VerifyFailure {
    pub class: FailureClass,
    pub path: String,
    pub page: u64,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// `read`, `write`, `log_append`, `scan`, `final_pass` or `check`.
    pub op: VerifyOp,
    pub expected_generation: u64,
    pub found_generation: Option<u64>,
    /// For a misdirected page: the page its header names.
    pub found_page: Option<u64>,
    /// For a misdirected page: the file id its header names, if not this file's.
    pub found_file_id: Option<u64>,
    /// 512 B sectors (index within the page) that are not the expected generation's.
    pub sectors_512_differing: Vec<u32>,
    /// 4 KiB sectors (index within the page) that are not the expected generation's.
    pub sectors_4k_differing: Vec<u32>,
    /// The page read back correctly on a later re-read.
    pub transient: bool,
    /// Re-reads done before concluding.
    pub rereads: u32,
    /// The text summary of the dump (expected and actual bytes sit beside it).
    pub dump: Option<String>,
    pub errno: Option<i32>,
    pub message: String,
}

/// What `iocap verify --check` compared: the journal's acknowledged writes against the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct VerifyCheck {
    pub journal: String,
    /// Complete records read from the journal.
    pub records: u64,
    /// Bytes at the end of the journal that did not form a valid record (a torn tail).
    pub torn_tail_bytes: u64,
    /// Pages with an acknowledged write after the initial fill.
    pub pages_journaled: u64,
    /// Pages holding a newer generation than the acknowledged one (a write that landed but was
    /// not acknowledged before the crash): allowed.
    pub pages_newer: u64,
    /// Pages torn between generations at atomic-unit boundaries, each unit acknowledged or
    /// newer: allowed.
    pub pages_torn_allowed: u64,
    /// Pages whose acknowledged write was lost (older, torn inside a unit, damaged).
    pub lost_pages: Vec<u64>,
}
