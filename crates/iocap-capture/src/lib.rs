//! `iocap capture`'s kernel side: every block request a device is sent, recorded from the
//! kernel's block tracepoints through eBPF, as the device saw it (after the block layer's
//! merges), with its issue and completion times, size, operation and flags, and the process
//! that issued it.
//!
//! How: three small eBPF programs ([`program`]) on the block layer's `block_rq_issue`,
//! `block_rq_complete` and `block_rq_requeue` keep each request in flight (in the tag table,
//! [`program::tags`], indexed by the request's tag; else in a hash map) and write one record
//! per request into a BPF ring buffer ([`ringbuf`]) at its completion; user space drains the
//! ring as often as it fills ([`cadence`]), yielding the CPUs to the workload while it keeps
//! up ([`yielding`]), pairs what needs pairing and puts the records in issue order
//! ([`decode`]).
//! Events travel in binary; no text is formatted per I/O.
//!
//! Three ways in. Where the kernel describes its types (BTF, `/sys/kernel/btf/vmlinux`, since
//! Linux 5.4 where the distribution enables it) and its request queue names its disk
//! (`q->disk`, in recent kernels), the programs are attached as raw tracepoints and read the
//! request themselves at the offsets BTF gives ([`btf`], [`rawtp`]): the kernel formats
//! nothing for them, and skips a run only inside the same program. Typed (`tp_btf`), they load
//! the fields directly; where the kernel refuses that, plain, they copy each with
//! `bpf_probe_read_kernel`. Elsewhere, or if any step of that fails, they are attached to the
//! tracepoints through perf_event_open(2) and read the record the kernel formats, at the
//! offsets tracefs publishes ([`format`]). docs/capture.md has what each costs a workload.
//!
//! Why no loader library. `aya` would need the programs compiled to a BPF object by a nightly
//! Rust with bpf-linker, `libbpf-rs` a C toolchain with clang, libelf and zlib headers (through
//! libbpf-sys); either way a fresh machine with only the Rust toolchain could not build iocap
//! unless the object was committed, and a committed object can drift from its source. Here the
//! programs are assembled at run time by a 200-line assembler ([`asm`]) from the offsets the
//! running kernel publishes, and loaded with the bpf(2) system call through libc ([`sys`]):
//! what is in the source is what runs, on any kernel from 5.8 (the ring buffer) with the block
//! tracepoints, BTF or not.
//!
//! Nothing is lost silently, and only what was lost is called lost ([`CaptureStats`]): a
//! request of a recorded device that went unrecorded (a full ring buffer or in-flight map, an
//! issue or a completion the kernel did not run the program for) is counted as lost; the
//! program runs the kernel skipped (any device's), completions of requests issued before the
//! start and zero-byte completions are each counted under their own name.

pub mod asm;
pub mod btf;
pub mod cadence;
pub mod decode;
pub mod format;
pub mod program;
pub mod rawtp;
#[cfg(target_os = "linux")]
mod ringbuf;
#[cfg(target_os = "linux")]
mod sys;
#[cfg(target_os = "linux")]
mod tagtable;
#[cfg(target_os = "linux")]
pub mod yielding;

#[cfg(not(target_os = "linux"))]
use std::time::Duration;

use iocap_trace::DevId;
#[cfg(not(target_os = "linux"))]
use iocap_trace::IoRecord;

/// What to record.
#[derive(Clone, Debug)]
pub struct CaptureConfig {
    /// The whole disks to record (a partition's requests are its disk's); empty: every device.
    pub devices: Vec<DevId>,
    /// Only requests issued by processes of this name (the kernel's 15-byte `comm`).
    pub comm: Option<String>,
    /// Only requests issued by this process id.
    pub pid: Option<u32>,
    /// The ring buffer's size: a power of two of at least a page.
    pub ring_bytes: usize,
}

impl Default for CaptureConfig {
    fn default() -> Self {
        CaptureConfig {
            devices: vec![],
            comm: None,
            pid: None,
            ring_bytes: 16 << 20,
        }
    }
}

/// What a capture recorded and what it could not.
///
/// Lost ([`CaptureStats::lost`]) are requests of the recorded devices that went unrecorded:
/// `lost_ring_full`, `lost_map_full`, `missed_issues` and `missed_completions`. The rest are
/// not requests lost: `skipped_runs` may be any device's, and the recorded devices' among
/// them are already in the missed counts; `before_start` and `zero_byte_completions` are
/// completions that are no request of the capture's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Records handed to the caller.
    pub records: u64,
    /// Requests lost because the ring buffer was full (the reader fell behind); a flush's
    /// issue and its completion are one each.
    pub lost_ring_full: u64,
    /// Requests lost because the table of requests in flight was full.
    pub lost_map_full: u64,
    /// Requests lost because their issue was not seen: a completion with data and no issue,
    /// later than the reorder window after the start (the kernel skipped the issue's run).
    pub missed_issues: u64,
    /// Requests lost because their completion was not seen: an entry still in the table of
    /// requests in flight a window (at the end) or a minute (during the capture) after its
    /// issue, or found there by the next issue on its sector.
    pub missed_completions: u64,
    /// Runs of the programs the kernel skipped (a tracing program was already running on that
    /// CPU, e.g. an interrupt completed a request inside one; `recursion_misses`). The program
    /// did not run, so whose request it was is not known: any device's, most often one the
    /// capture does not record. Not lost: a recorded device's is in the missed counts.
    pub skipped_runs: u64,
    /// Completions with data in the first window after the start whose issue was not seen:
    /// requests issued before the start, left out.
    pub before_start: u64,
    /// Completions of 0 bytes whose issue was not seen: the flush machinery's second end of
    /// a write with preflush or FUA (the original request, completed again with no bytes),
    /// or a flush's completion without its issue.
    pub zero_byte_completions: u64,
    /// Requests the `--comm`/`--pid` filters left out.
    pub filtered_out: u64,
}

impl CaptureStats {
    /// Requests of the recorded devices that went unrecorded, for any cause.
    pub fn lost(&self) -> u64 {
        self.lost_ring_full.saturating_add(self.lost_other())
    }

    /// Those lost for another cause than a full ring buffer.
    pub fn lost_other(&self) -> u64 {
        self.lost_map_full
            .saturating_add(self.missed_issues)
            .saturating_add(self.missed_completions)
    }
}

/// Why a capture cannot run here; each says what is missing and how to bring a trace instead.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{what}; {}", BRING)]
    Unavailable { what: String },
    #[error(
        "the kernel refused the capture's eBPF program ({source}); the verifier said:\n{log}\n{}",
        BRING
    )]
    Rejected { source: std::io::Error, log: String },
    #[error("capture: {0}")]
    Io(#[from] std::io::Error),
}

/// How to bring a trace where a capture cannot run.
pub const BRING: &str = "record the workload with `blktrace -d DEV` (or fio's --write_iolog) on \
a host that allows it and give the files to `iocap characterise` or `iocap convert`";

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::Capture;

/// Stands in for the Linux capture elsewhere: it cannot start.
#[cfg(not(target_os = "linux"))]
pub struct Capture;

#[cfg(not(target_os = "linux"))]
impl Capture {
    pub fn start(_: &CaptureConfig) -> Result<Capture, CaptureError> {
        Err(CaptureError::Unavailable {
            what: "a capture needs Linux's eBPF and block tracepoints".into(),
        })
    }
    pub fn poll(&mut self, _: Duration, _: &mut dyn FnMut(&IoRecord)) -> Result<(), CaptureError> {
        Ok(())
    }
    pub fn stats(&self) -> CaptureStats {
        CaptureStats::default()
    }
    pub fn window(&mut self) -> &[IoRecord] {
        &[]
    }
    pub fn finish(self, _: &mut dyn FnMut(&IoRecord)) -> Result<CaptureStats, CaptureError> {
        Ok(CaptureStats::default())
    }
}
