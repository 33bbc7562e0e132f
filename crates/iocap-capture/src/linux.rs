//! The capture on Linux: maps, programs, attachments and the reader, owned together.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use iocap_trace::IoRecord;

use crate::decode::{decode, Assembler, Filter};
use crate::program::{self, Maps};
use crate::ringbuf::RingBuf;
use crate::{format, sys, CaptureConfig, CaptureError, CaptureStats};

/// How long a record waits for requests issued before it to complete (issue order).
const WINDOW_NS: u64 = 2_000_000_000;
/// Requests in flight the kernel's table holds.
const IN_FLIGHT: u32 = 65_536;
/// How often the ring is drained while `poll` waits.
const DRAIN_EVERY: Duration = Duration::from_millis(10);

/// A running capture. Dropping it detaches the programs.
pub struct Capture {
    // attachments first: dropped (detached) before the programs and maps
    _links: Vec<OwnedFd>,
    _progs: Vec<OwnedFd>,
    counters: OwnedFd,
    _inflight: OwnedFd,
    ring: RingBuf,
    asm: Assembler,
}

/// What a user without the privileges reads.
const NEEDS_ROOT: &str = "a capture needs root (or the CAP_BPF and CAP_PERFMON capabilities)";

fn unavailable(what: impl Into<String>) -> CaptureError {
    CaptureError::Unavailable { what: what.into() }
}

/// What a refused bpf(2) call means here.
fn refused(e: std::io::Error, doing: &str) -> CaptureError {
    let lockdown = std::fs::read_to_string("/sys/kernel/security/lockdown").unwrap_or_default();
    let locked = lockdown.contains("[integrity]") || lockdown.contains("[confidentiality]");
    let unpriv = std::fs::read_to_string("/proc/sys/kernel/unprivileged_bpf_disabled")
        .map(|s| s.trim() != "0")
        .unwrap_or(false);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let why = match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) if locked => {
            format!(
                "the kernel is locked down ({}), which forbids eBPF tracing",
                lockdown.trim()
            )
        }
        Some(libc::EPERM) | Some(libc::EACCES) if !root => format!(
            "{NEEDS_ROOT} ({doing} was refused){}",
            if unpriv {
                "; kernel.unprivileged_bpf_disabled is set"
            } else {
                ""
            }
        ),
        Some(libc::EINVAL) if doing.contains("ring buffer") => {
            "this kernel has no BPF ring buffer (Linux 5.8 or later is needed)".to_string()
        }
        Some(libc::ENOSYS) => "this kernel has no bpf(2) system call".to_string(),
        _ => format!("{doing} failed: {e}"),
    };
    unavailable(why)
}

impl Capture {
    pub fn start(cfg: &CaptureConfig) -> Result<Capture, CaptureError> {
        let ring_bytes = cfg.ring_bytes.max(4096).next_power_of_two();
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let tracefs = format::tracefs().ok_or_else(|| match root {
            true => unavailable(
                "tracefs is not mounted and could not be (mount it: `mount -t tracefs nodev \
                 /sys/kernel/tracing`)",
            ),
            // tracefs is root's alone on most systems: the cause is who runs, not the mount
            false => unavailable(NEEDS_ROOT),
        })?;
        let unreadable = |e: String| match root {
            true => unavailable(format!(
                "this kernel's block tracepoints cannot be read ({e})"
            )),
            false => unavailable(format!("{NEEDS_ROOT} ({e})")),
        };
        let issue_ev = format::read_event(&tracefs, "block_rq_issue").map_err(unreadable)?;
        let done_ev = format::read_event(&tracefs, "block_rq_complete").map_err(unreadable)?;
        let ring = sys::map_create(sys::MAP_RINGBUF, 0, 0, ring_bytes as u32)
            .map_err(|e| refused(e, "creating the BPF ring buffer"))?;
        let inflight = sys::map_create(
            sys::MAP_LRU_HASH,
            program::KEY_BYTES,
            program::VALUE_BYTES,
            IN_FLIGHT,
        )
        .map_err(|e| refused(e, "creating a BPF map"))?;
        let counters = sys::map_create(sys::MAP_ARRAY, 4, 8, program::COUNTERS)
            .map_err(|e| refused(e, "creating a BPF map"))?;
        use std::os::fd::AsRawFd;
        let maps = Maps {
            inflight: inflight.as_raw_fd(),
            ring: ring.as_raw_fd(),
            counters: counters.as_raw_fd(),
            devs: cfg.devices.iter().map(|d| d.to_kernel()).collect(),
        };
        let mut progs = Vec::new();
        let mut links = Vec::new();
        let t0 = sys::monotonic_ns();
        for (ev, insns, name) in [
            (
                &issue_ev,
                program::issue(&issue_ev, &maps),
                "iocap_rq_issue",
            ),
            (
                &done_ev,
                program::complete(&done_ev, &maps),
                "iocap_rq_done",
            ),
        ] {
            let insns = insns.map_err(unavailable)?;
            let prog = sys::prog_load(&insns, name).map_err(|(e, log)| match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) if log.is_empty() => {
                    refused(e, "loading an eBPF program")
                }
                _ => CaptureError::Rejected { source: e, log },
            })?;
            // one perf event on one CPU: a tracepoint's programs belong to the tracepoint and
            // run on every CPU (as libbpf attaches them); a second event would be EEXIST
            let cpu = sys::online_cpus().first().copied().unwrap_or(0);
            links.push(
                sys::attach(&prog, ev.id, cpu)
                    .map_err(|e| refused(e, "attaching to the block tracepoints"))?,
            );
            progs.push(prog);
        }
        let filter = Filter {
            comm: cfg.comm.clone(),
            pid: cfg.pid,
        };
        Ok(Capture {
            _links: links,
            _progs: progs,
            counters,
            _inflight: inflight,
            ring: RingBuf::new(ring, ring_bytes)?,
            asm: Assembler::new(t0, WINDOW_NS, filter),
        })
    }

    fn drain(&mut self, sink: &mut dyn FnMut(&IoRecord)) {
        let asm = &mut self.asm;
        self.ring.drain(&mut |bytes| {
            if let Some(raw) = decode(bytes) {
                asm.push(&raw, sink);
            }
        });
        self.asm.tick(sys::monotonic_ns(), sink);
    }

    /// Waits up to `timeout`, draining the ring every 10 ms; every record released goes to
    /// `sink`, in issue order.
    pub fn poll(
        &mut self,
        timeout: Duration,
        sink: &mut dyn FnMut(&IoRecord),
    ) -> Result<(), CaptureError> {
        let end = Instant::now() + timeout;
        loop {
            self.drain(sink);
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep(DRAIN_EVERY.min(end - now));
        }
    }

    pub fn stats(&self) -> CaptureStats {
        let count = |slot: i32| sys::array_u64(&self.counters, slot as u32).unwrap_or(0);
        CaptureStats {
            records: self.asm.records,
            lost_ring_full: count(program::COUNTER_RING_FULL),
            lost_map_full: count(program::COUNTER_MAP_FULL),
            skipped_by_kernel: self._progs.iter().map(sys::prog_recursion_misses).sum(),
            unmatched_completions: count(program::COUNTER_UNMATCHED) + self.asm.unmatched,
            filtered_out: self.asm.filtered_out,
        }
    }

    /// Detaches, drains what is left and lets every record out.
    pub fn finish(mut self, sink: &mut dyn FnMut(&IoRecord)) -> Result<CaptureStats, CaptureError> {
        self._links.clear();
        self.drain(sink);
        self.asm.finish(sink);
        Ok(self.stats())
    }
}
