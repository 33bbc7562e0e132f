//! The capture on Linux: maps, programs, attachments and the reader, owned together.

use std::collections::HashSet;
use std::os::fd::OwnedFd;
use std::time::Duration;

use iocap_trace::IoRecord;

use crate::btf::Btf;
use crate::cadence::Cadence;
use crate::decode::{self, decode, in_flight, Assembler, Filter};
use crate::program::{self, Maps, Source};
use crate::rawtp::Layout;
use crate::ringbuf::RingBuf;
use crate::tagtable::TagTable;
use crate::yielding::Yield;
use crate::{format, sys, CaptureConfig, CaptureError, CaptureStats};

/// How long a record waits for requests issued before it to complete (issue order).
const WINDOW_NS: u64 = 2_000_000_000;
/// The ring's space one record takes: the record and its 8-byte header.
const RECORD_SPACE: u64 = program::RECORD_BYTES as u64 + 8;
/// Requests in flight the kernel's table holds.
const IN_FLIGHT: u32 = 65_536;
/// How often the in-flight map is looked through for requests whose completion was not seen,
/// and how long one is in flight before it counts as such (longer than a driver's timeout,
/// 30 s for SCSI and NVMe, so a slow request is not taken for one).
const SWEEP_EVERY_NS: u64 = 10_000_000_000;
const STALE_NS: u64 = 60_000_000_000;

/// A running capture. Dropping it detaches the programs.
pub struct Capture {
    // attachments first: dropped (detached) before the programs and maps
    _links: Vec<OwnedFd>,
    progs: Vec<OwnedFd>,
    counters: OwnedFd,
    inflight: OwnedFd,
    /// The tag table, where the typed programs keep the requests in flight
    /// ([`crate::program::tags`]).
    tags: Option<TagTable>,
    ring: RingBuf,
    asm: Assembler,
    /// Where the programs read the request themselves (raw tracepoints): what their records'
    /// flags and status are turned back into.
    layout: Option<Layout>,
    next_sweep_ns: u64,
    cadence: Cadence,
    ring_bytes: u64,
    /// The polling thread's yield of the CPUs to the workload ([`crate::yielding`]).
    yielding: Yield,
    last_drain_ns: u64,
    next_drain_ns: u64,
    /// Requests of the recorded devices taken out of the in-flight map, their completion
    /// not seen.
    missed_completions: u64,
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

/// Set (to anything), the capture uses the formatted tracepoints even where raw ones would
/// do: for the tests and benchmarks that hold the two ways in side by side.
pub const FORMATTED_ONLY: &str = "IOCAP_CAPTURE_FORMATTED";

/// Set (to anything), the raw tracepoints get programs that return at once and record
/// nothing: for `bench/capture-overhead.py`'s floor, what attaching any program to the block
/// tracepoints costs a workload on this kernel, apart from what iocap's programs do.
pub const EMPTY_PROGRAMS: &str = "IOCAP_CAPTURE_EMPTY";

/// `r0 = 0; exit`: a program that does nothing.
fn empty() -> Result<Vec<crate::asm::Insn>, String> {
    let mut a = crate::asm::Asm::default();
    a.mov_imm(crate::asm::R0, 0).exit();
    Ok(a.finish())
}

/// The programs loaded and attached: attachments and programs.
#[derive(Default)]
struct Attached {
    links: Vec<OwnedFd>,
    progs: Vec<OwnedFd>,
}

/// Set (to anything), the capture uses the plain raw tracepoints even where typed ones would
/// do: for the test and the benchmark that hold the ways in side by side.
pub const UNTYPED_ONLY: &str = "IOCAP_CAPTURE_UNTYPED";

/// The programs on the block layer's raw tracepoints, reading the request at the offsets the
/// kernel's BTF gives ([`crate::rawtp`]): typed (`tp_btf`, loading the fields directly) where
/// the kernel takes them, else plain (copying them with `bpf_probe_read_kernel`); `None` where
/// both fail (no BTF, an older kernel's layout, a refusal): the formatted tracepoints are used
/// then, and say why if they fail too.
fn raw_tracepoints(maps: &Maps) -> Option<(Attached, Layout)> {
    if std::env::var_os(FORMATTED_ONLY).is_some() {
        return None;
    }
    let btf = Btf::kernel().ok()?;
    let layout = Layout::from_btf(&btf).ok()?;
    if std::env::var_os(UNTYPED_ONLY).is_none() {
        let mut typed = layout.clone();
        typed.typed = true;
        if let Some(a) = attach_raw(maps, &typed, Some(&btf)) {
            return Some((a, typed));
        }
    }
    let maps = Maps {
        tags: None,
        ..maps.clone()
    };
    attach_raw(&maps, &layout, None).map(|a| (a, layout))
}

/// Loads the three programs for the raw tracepoints, then attaches them, the issue's last:
/// every request whose issue is recorded then has its completion recorded too (a completion
/// whose issue was not seen, from before the start, is told apart and left out). Typed where
/// `btf` is given (each program names its tracepoint's `btf_trace_*` typedef).
fn attach_raw(maps: &Maps, layout: &Layout, btf: Option<&Btf>) -> Option<Attached> {
    let src = Source::Raw(layout);
    // (program, tracepoint, name, needed): without the requeue's, a requeued request reads
    // as one whose completion was lost, as on the formatted way in
    let programs = [
        (
            program::complete(src, maps),
            "block_rq_complete",
            "iocap_rq_done",
            true,
        ),
        (
            program::requeue(src, maps),
            "block_rq_requeue",
            "iocap_rq_requeue",
            false,
        ),
        (
            program::issue(src, maps),
            "block_rq_issue",
            "iocap_rq_issue",
            true,
        ),
    ];
    let floor = std::env::var_os(EMPTY_PROGRAMS).is_some();
    let mut loaded = Vec::new();
    for (insns, point, name, needed) in programs {
        let insns = if floor { empty() } else { insns }.ok()?;
        let prog = match btf {
            Some(btf) => btf
                .typedef(&format!("btf_trace_{point}"))
                .and_then(|id| sys::prog_load_typed(&insns, name, id).ok()),
            None => sys::prog_load(sys::PROG_RAW_TRACEPOINT, &insns, name).ok(),
        };
        match prog {
            Some(prog) => loaded.push((prog, point, needed)),
            None if !needed => continue,
            None => return None,
        }
    }
    let mut a = Attached::default();
    for (prog, point, needed) in loaded {
        let name = std::ffi::CString::new(point).expect("a tracepoint's name has no NUL");
        let link = sys::attach_raw(&prog, btf.is_none().then_some(name.as_c_str()));
        match link {
            Ok(link) => {
                a.links.push(link);
                a.progs.push(prog);
            }
            Err(_) if !needed => continue,
            Err(_) => return None,
        }
    }
    Some(a)
}

/// The programs on the block tracepoints, at the offsets of the records tracefs describes.
fn tracepoints(maps: &Maps) -> Result<Attached, CaptureError> {
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
    // every kernel with the others has it; without it a requeued request reads as one
    // whose completion was not seen
    let requeue_ev = format::read_event(&tracefs, "block_rq_requeue").ok();
    // loaded first, then attached with the issue's last, as on the raw tracepoints
    let mut programs = vec![(
        &done_ev,
        program::complete(Source::Tracepoint(&done_ev), maps),
        "iocap_rq_done",
    )];
    if let Some(ev) = &requeue_ev {
        programs.push((
            ev,
            program::requeue(Source::Tracepoint(ev), maps),
            "iocap_rq_requeue",
        ));
    }
    programs.push((
        &issue_ev,
        program::issue(Source::Tracepoint(&issue_ev), maps),
        "iocap_rq_issue",
    ));
    let mut loaded = Vec::new();
    for (ev, insns, name) in programs {
        let insns = insns.map_err(unavailable)?;
        let prog =
            sys::prog_load(sys::PROG_TRACEPOINT, &insns, name).map_err(|(e, log)| {
                match e.raw_os_error() {
                    Some(libc::EPERM) | Some(libc::EACCES) if log.is_empty() => {
                        refused(e, "loading an eBPF program")
                    }
                    _ => CaptureError::Rejected { source: e, log },
                }
            })?;
        loaded.push((ev, prog));
    }
    let mut a = Attached::default();
    for (ev, prog) in loaded {
        // one perf event on one CPU: a tracepoint's programs belong to the tracepoint and
        // run on every CPU (as libbpf attaches them); a second event would be EEXIST
        let cpu = sys::online_cpus().first().copied().unwrap_or(0);
        a.links.push(
            sys::attach(&prog, ev.id, cpu)
                .map_err(|e| refused(e, "attaching to the block tracepoints"))?,
        );
        a.progs.push(prog);
    }
    Ok(a)
}

impl Capture {
    pub fn start(cfg: &CaptureConfig) -> Result<Capture, CaptureError> {
        let ring_bytes = cfg.ring_bytes.max(4096).next_power_of_two();
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
        let devs: Vec<u32> = cfg.devices.iter().map(|d| d.to_kernel()).collect();
        // where it cannot be made (too many devices, an older kernel), the hash map alone
        let mut table = match devs.len() {
            1..=program::tags::MAX_DEVICES => TagTable::new(&devs).ok(),
            _ => None,
        };
        let maps = Maps {
            inflight: inflight.as_raw_fd(),
            ring: ring.as_raw_fd(),
            counters: counters.as_raw_fd(),
            devs,
            tags: table.as_ref().map(TagTable::fd),
        };
        let t0 = sys::monotonic_ns();
        // raw tracepoints where the kernel describes its types; else the formatted ones
        let (attached, layout) = match raw_tracepoints(&maps) {
            Some((attached, layout)) => (attached, Some(layout)),
            None => (tracepoints(&Maps { tags: None, ..maps })?, None),
        };
        if !layout.as_ref().is_some_and(Layout::tagged) {
            table = None;
        }
        let filter = Filter {
            comm: cfg.comm.clone(),
            pid: cfg.pid,
        };
        Ok(Capture {
            _links: attached.links,
            progs: attached.progs,
            counters,
            inflight,
            tags: table,
            ring: RingBuf::new(ring, ring_bytes)?,
            asm: Assembler::new(t0, WINDOW_NS, filter),
            layout,
            next_sweep_ns: t0 + SWEEP_EVERY_NS,
            cadence: Cadence::new(ring_bytes as u64),
            ring_bytes: ring_bytes as u64,
            yielding: Yield::start(),
            last_drain_ns: t0,
            next_drain_ns: t0,
            missed_completions: 0,
        })
    }

    /// Drains the ring; returns how many records it held.
    fn drain(&mut self, sink: &mut dyn FnMut(&IoRecord)) -> usize {
        let (asm, layout) = (&mut self.asm, &self.layout);
        let n = self.ring.drain(&mut |bytes| {
            if let Some(mut raw) = decode(bytes) {
                if let Some(l) = layout {
                    l.fix(&mut raw.rwbs, &mut raw.error);
                }
                asm.push(&raw, sink);
            }
        });
        let now = sys::monotonic_ns();
        self.asm.tick(now, sink);
        if now >= self.next_sweep_ns {
            self.next_sweep_ns = now + SWEEP_EVERY_NS;
            self.sweep(now, STALE_NS, false);
        }
        n
    }

    /// Looks through the in-flight map. An entry issued `age_ns` or more before `now` is a
    /// request whose completion the kernel did not run the program for: it leaves the map (an
    /// LRU map would otherwise push live entries out once such entries filled it) and is
    /// counted, unless the filters leave it out. With `end` (the programs detached), the
    /// others are the requests in flight at the end, written without a completion.
    ///
    /// The map is walked key by key, and changes under the walk while the programs run: a
    /// key deleted meanwhile sends the walk back to the first key, so the keys already seen
    /// are skipped and the walk is bounded; an entry missed is found by the next sweep.
    fn sweep(&mut self, now: u64, age_ns: u64, end: bool) {
        let mut seen: HashSet<sys::Key> = HashSet::new();
        let mut stale = Vec::new();
        let mut young = Vec::new();
        let mut prev: Option<sys::Key> = None;
        let mut key: sys::Key = [0; program::KEY_BYTES as usize];
        let mut value: sys::Value = [0; program::VALUE_BYTES as usize];
        for _ in 0..2 * IN_FLIGHT {
            match sys::map_next_key(&self.inflight, prev.as_ref(), &mut key) {
                Ok(true) => prev = Some(key),
                _ => break,
            }
            if !seen.insert(key)
                || !matches!(sys::map_lookup(&self.inflight, &key, &mut value), Ok(true))
            {
                continue;
            }
            let mut raw = in_flight(&key, &value);
            if let Some(l) = &self.layout {
                l.fix(&mut raw.rwbs, &mut raw.error);
            }
            if raw.issue_ns.saturating_add(age_ns) <= now {
                stale.push((key, raw));
            } else if end {
                young.push(raw);
            }
        }
        // deleted after the walk: a deletion in it would send it back to the first key
        let mut stale: Vec<_> = stale
            .into_iter()
            .map(|(key, raw)| {
                let _ = sys::map_delete(&self.inflight, &key);
                raw
            })
            .collect();
        // a tag table is the typed way's, which has a layout
        if let (Some(table), Some(layout)) = (&self.tags, &self.layout) {
            let (old, in_flight) = table.sweep(now, age_ns, end);
            let mut fixed = |mut raw: decode::Raw| {
                layout.fix(&mut raw.rwbs, &mut raw.error);
                raw
            };
            stale.extend(old.into_iter().map(&mut fixed));
            young.extend(in_flight.into_iter().map(&mut fixed));
        }
        for raw in stale {
            let rec = self.asm.record(&raw);
            if self.asm.keeps(&rec) {
                self.missed_completions += 1;
            }
        }
        for raw in young {
            let rec = self.asm.record(&raw);
            self.asm.add_unfinished(rec);
        }
    }

    /// The records held back to be put in issue order, in issue order: each one issued after
    /// every record let out so far. A capture writes them each second
    /// ([`iocap_trace::TraceWriter::write_window`]), so a capture killed keeps them.
    pub fn window(&mut self) -> &[IoRecord] {
        self.asm.held()
    }

    /// Waits up to `timeout`, draining the ring as often as its [`Cadence`] says; every
    /// record released goes to `sink`, in issue order.
    pub fn poll(
        &mut self,
        timeout: Duration,
        sink: &mut dyn FnMut(&IoRecord),
    ) -> Result<(), CaptureError> {
        let end = sys::monotonic_ns() + timeout.as_nanos() as u64;
        loop {
            let now = sys::monotonic_ns();
            if now >= self.next_drain_ns {
                let n = self.drain(sink);
                let since = now.saturating_sub(self.last_drain_ns);
                let bytes = n as u64 * RECORD_SPACE;
                self.cadence.drained(bytes, since);
                let late = now.saturating_sub(self.next_drain_ns);
                self.yielding
                    .drained(bytes as f64 / self.ring_bytes as f64, late);
                self.last_drain_ns = now;
                self.next_drain_ns = now + self.cadence.every_ns();
            }
            if now >= end {
                return Ok(());
            }
            let wake = self.next_drain_ns.min(end);
            std::thread::sleep(Duration::from_nanos(wake.saturating_sub(now)));
        }
    }

    pub fn stats(&self) -> CaptureStats {
        let count = |slot: i32| sys::array_u64(&self.counters, slot as u32).unwrap_or(0);
        CaptureStats {
            records: self.asm.records,
            lost_ring_full: count(program::COUNTER_RING_FULL),
            lost_map_full: count(program::COUNTER_MAP_FULL),
            missed_issues: self.asm.missed_issues,
            missed_completions: self.missed_completions + count(program::COUNTER_OVERWRITTEN),
            skipped_runs: self.progs.iter().map(sys::prog_recursion_misses).sum(),
            before_start: self.asm.before_start,
            zero_byte_completions: self.asm.zero_byte,
            filtered_out: self.asm.filtered_out,
        }
    }

    /// Detaches, drains what is left and lets every record out: the requests still in the
    /// in-flight map issued a window or more before the end are counted as requests whose
    /// completion was not seen, the others are written without a completion.
    pub fn finish(mut self, sink: &mut dyn FnMut(&IoRecord)) -> Result<CaptureStats, CaptureError> {
        self.yielding.end();
        self._links.clear();
        self.drain(sink);
        self.sweep(sys::monotonic_ns(), WINDOW_NS, true);
        self.asm.finish(sink);
        Ok(self.stats())
    }
}
