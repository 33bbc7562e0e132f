//! The system calls: bpf(2) for the maps and programs, perf_event_open(2) to attach a program
//! to a tracepoint on every CPU. Raw calls through libc, no loader library (see the crate's
//! doc for why). Every descriptor is an [`OwnedFd`], so dropping a capture detaches and frees
//! everything.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::asm::Insn;

const BPF_MAP_CREATE: i32 = 0;
const BPF_MAP_LOOKUP_ELEM: i32 = 1;
const BPF_MAP_DELETE_ELEM: i32 = 3;
const BPF_MAP_GET_NEXT_KEY: i32 = 4;
const BPF_PROG_LOAD: i32 = 5;
/// An LRU hash: a request whose completion the kernel skipped (see `prog_recursion_misses`)
/// would otherwise hold its entry for ever, and a capture of hours would fill the map. (A plain
/// hash was tried: its updates took 2.1 % of all CPU samples under fio at qd 16 on a loop
/// device, against 1.8 % for the LRU hash's updates with their list upkeep.)
pub const MAP_LRU_HASH: u32 = 9;
pub const MAP_ARRAY: u32 = 2;
pub const MAP_RINGBUF: u32 = 27;
pub const PROG_TRACEPOINT: u32 = 5;
pub const PROG_RAW_TRACEPOINT: u32 = 17;
/// A tracing program; with `BPF_TRACE_RAW_TP` and a tracepoint's BTF id, a typed raw
/// tracepoint (`tp_btf`): its arguments carry their kernel types, so it loads from them.
pub const PROG_TRACING: u32 = 26;
const TRACE_RAW_TP: u32 = 23;
const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_SAMPLE_RAW: u64 = 1 << 10;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
/// `_IOW('$', 8, __u32)` and `_IO('$', 0)`.
const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;

/// `union bpf_attr`, as wide as any command here needs, zeroed.
#[repr(C, align(8))]
struct Attr([u8; 128]);

impl Attr {
    fn new() -> Attr {
        Attr([0; 128])
    }
    fn u32(&mut self, at: usize, v: u32) -> &mut Attr {
        self.0[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64(&mut self, at: usize, v: u64) -> &mut Attr {
        self.0[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
}

fn bpf(cmd: i32, attr: &mut Attr) -> io::Result<i64> {
    // SAFETY: `attr` is a live, writable buffer of the size passed; the kernel reads (and for
    // some commands writes) at most that many bytes, and the pointers stored inside it point
    // at buffers the caller keeps alive across the call.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.0.as_mut_ptr(), attr.0.len() as u32) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r)
}

fn owned(fd: i64) -> OwnedFd {
    // SAFETY: the kernel just returned this descriptor to us, and nothing else owns it.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

/// `BPF_MAP_CREATE`.
pub fn map_create(kind: u32, key: u32, value: u32, entries: u32) -> io::Result<OwnedFd> {
    map_create_flags(kind, key, value, entries, 0)
}

/// `BPF_MAP_CREATE` with `map_flags`.
pub fn map_create_flags(
    kind: u32,
    key: u32,
    value: u32,
    entries: u32,
    flags: u32,
) -> io::Result<OwnedFd> {
    let mut a = Attr::new();
    a.u32(0, kind)
        .u32(4, key)
        .u32(8, value)
        .u32(12, entries)
        .u32(16, flags);
    bpf(BPF_MAP_CREATE, &mut a).map(owned)
}

/// `BPF_MAP_LOOKUP_ELEM` of a u64 in an array map.
pub fn array_u64(map: &OwnedFd, index: u32) -> io::Result<u64> {
    let key = index;
    let mut value = 0u64;
    let mut a = Attr::new();
    a.u32(0, map.as_raw_fd() as u32)
        .u64(8, &key as *const u32 as u64)
        .u64(16, &mut value as *mut u64 as u64);
    bpf(BPF_MAP_LOOKUP_ELEM, &mut a)?;
    Ok(value)
}

/// A key of the in-flight map, and its value: the sizes the kernel reads and writes.
pub type Key = [u8; crate::program::KEY_BYTES as usize];
pub type Value = [u8; crate::program::VALUE_BYTES as usize];

/// `BPF_MAP_GET_NEXT_KEY` on the in-flight map: the key after `key` (the first key for `None`,
/// or where `key` is no longer there) into `next`; `false` after the last.
pub fn map_next_key(map: &OwnedFd, key: Option<&Key>, next: &mut Key) -> io::Result<bool> {
    let mut a = Attr::new();
    a.u32(0, map.as_raw_fd() as u32)
        .u64(8, key.map_or(0, |k| k.as_ptr() as u64))
        .u64(16, next.as_mut_ptr() as u64);
    match bpf(BPF_MAP_GET_NEXT_KEY, &mut a) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(e),
    }
}

/// `BPF_MAP_LOOKUP_ELEM` of `key` into `value` on the in-flight map; `false` where the key is
/// not there (any more).
pub fn map_lookup(map: &OwnedFd, key: &Key, value: &mut Value) -> io::Result<bool> {
    let mut a = Attr::new();
    a.u32(0, map.as_raw_fd() as u32)
        .u64(8, key.as_ptr() as u64)
        .u64(16, value.as_mut_ptr() as u64);
    match bpf(BPF_MAP_LOOKUP_ELEM, &mut a) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(e),
    }
}

/// `BPF_MAP_DELETE_ELEM` of `key` on the in-flight map; a key already gone is no error.
pub fn map_delete(map: &OwnedFd, key: &Key) -> io::Result<()> {
    let mut a = Attr::new();
    a.u32(0, map.as_raw_fd() as u32).u64(8, key.as_ptr() as u64);
    match bpf(BPF_MAP_DELETE_ELEM, &mut a) {
        Err(e) if e.raw_os_error() != Some(libc::ENOENT) => Err(e),
        _ => Ok(()),
    }
}

/// How many times the kernel skipped running `prog` because another tracing program was
/// running on that CPU (`bpf_prog_info.recursion_misses`, Linux 5.12; 0 where unknown). A
/// skip is the run for a request of any device: the program never ran to look at which.
pub fn prog_recursion_misses(prog: &OwnedFd) -> u64 {
    const BPF_OBJ_GET_INFO_BY_FD: i32 = 15;
    // struct bpf_prog_info up to recursion_misses (offset 208), zeroed
    let mut info = [0u64; 27];
    let mut a = Attr::new();
    a.u32(0, prog.as_raw_fd() as u32)
        .u32(4, std::mem::size_of_val(&info) as u32)
        .u64(8, info.as_mut_ptr() as u64);
    match bpf(BPF_OBJ_GET_INFO_BY_FD, &mut a) {
        Ok(_) => info[26],
        Err(_) => 0,
    }
}

/// `BPF_PROG_LOAD` of a program of type `kind` ([`PROG_TRACEPOINT`], [`PROG_RAW_TRACEPOINT`]);
/// on a refusal, the verifier's log's last lines.
pub fn prog_load(kind: u32, insns: &[Insn], name: &str) -> Result<OwnedFd, (io::Error, String)> {
    load(kind, insns, name, None)
}

/// `BPF_PROG_LOAD` of a typed raw tracepoint's program: `btf_id` is the tracepoint's
/// `btf_trace_*` typedef in the kernel's BTF.
pub fn prog_load_typed(
    insns: &[Insn],
    name: &str,
    btf_id: u32,
) -> Result<OwnedFd, (io::Error, String)> {
    load(PROG_TRACING, insns, name, Some(btf_id))
}

fn load(
    kind: u32,
    insns: &[Insn],
    name: &str,
    btf_id: Option<u32>,
) -> Result<OwnedFd, (io::Error, String)> {
    let code: Vec<u8> = insns.iter().flat_map(|i| i.bytes()).collect();
    let license = c"Dual MIT/GPL";
    let mut log = vec![0u8; 1 << 16];
    let load = |level: u32, log: &mut [u8]| {
        let mut a = Attr::new();
        a.u32(0, kind)
            .u32(4, insns.len() as u32)
            .u64(8, code.as_ptr() as u64)
            .u64(16, license.as_ptr() as u64);
        if level > 0 {
            a.u32(24, level)
                .u32(28, log.len() as u32)
                .u64(32, log.as_mut_ptr() as u64);
        }
        let n = name.as_bytes();
        a.0[48..48 + n.len().min(15)].copy_from_slice(&n[..n.len().min(15)]);
        if let Some(id) = btf_id {
            // expected_attach_type, attach_btf_id (0 attach_btf_obj_fd: vmlinux)
            a.u32(68, TRACE_RAW_TP).u32(108, id);
        }
        bpf(BPF_PROG_LOAD, &mut a).map(owned)
    };
    match load(0, &mut log) {
        Ok(fd) => Ok(fd),
        // again with the verifier's log, to say why
        Err(e) => {
            let _ = load(1, &mut log);
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            let tail: Vec<&str> = text.lines().rev().take(6).collect();
            Err((e, tail.into_iter().rev().collect::<Vec<_>>().join("\n")))
        }
    }
}

/// `struct perf_event_attr` (PERF_ATTR_SIZE_VER5, 112 bytes), zeroed.
#[repr(C, align(8))]
struct PerfAttr([u8; 112]);

/// Attaches `prog` to tracepoint `id` on CPU `cpu`, enabled.
pub fn attach(prog: &OwnedFd, id: u64, cpu: i32) -> io::Result<OwnedFd> {
    let mut attr = PerfAttr([0; 112]);
    attr.0[0..4].copy_from_slice(&PERF_TYPE_TRACEPOINT.to_ne_bytes());
    attr.0[4..8].copy_from_slice(&112u32.to_ne_bytes());
    attr.0[8..16].copy_from_slice(&id.to_ne_bytes());
    attr.0[16..24].copy_from_slice(&1u64.to_ne_bytes()); // sample_period
    attr.0[24..32].copy_from_slice(&PERF_SAMPLE_RAW.to_ne_bytes());
    // SAFETY: `attr` is a live perf_event_attr of the size it declares; the other arguments
    // are plain integers.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr.0.as_ptr(),
            -1i32,
            cpu,
            -1i32,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let ev = owned(fd);
    for (req, arg) in [
        (PERF_EVENT_IOC_SET_BPF, prog.as_raw_fd()),
        (PERF_EVENT_IOC_ENABLE, 0),
    ] {
        // SAFETY: an ioctl on a perf event descriptor we own, with an integer argument.
        if unsafe { libc::ioctl(ev.as_raw_fd(), req as _, arg) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(ev)
}

/// `BPF_RAW_TRACEPOINT_OPEN`: attaches `prog` to the tracepoint `name` (`block_rq_issue`) for
/// a plain raw-tracepoint program, or, with `None`, where a typed program's load named it;
/// closing the descriptor returned detaches it.
pub fn attach_raw(prog: &OwnedFd, name: Option<&std::ffi::CStr>) -> io::Result<OwnedFd> {
    const BPF_RAW_TRACEPOINT_OPEN: i32 = 17;
    let mut a = Attr::new();
    a.u64(0, name.map_or(0, |n| n.as_ptr() as u64))
        .u32(8, prog.as_raw_fd() as u32);
    bpf(BPF_RAW_TRACEPOINT_OPEN, &mut a).map(owned)
}

/// The CPUs that are online (`/sys/devices/system/cpu/online`: `0-3,5`).
pub fn online_cpus() -> Vec<i32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
            cpus.extend(a..=b);
        }
    }
    if cpus.is_empty() {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        cpus.extend(0..n.max(1) as i32);
    }
    cpus
}

/// CLOCK_MONOTONIC in ns: `bpf_ktime_get_ns`'s clock.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
