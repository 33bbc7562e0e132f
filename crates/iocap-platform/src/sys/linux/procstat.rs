//! System-wide CPU times on Linux: `/proc/stat`, parsed by `parse::procstat`, and
//! its clock tick.

use crate::parse::procstat::{parse, parse_per_cpu, CpuTimes, PROC_STAT};

/// Reads and parses `/proc/stat`.
pub fn read() -> Option<CpuTimes> {
    parse(&std::fs::read_to_string(PROC_STAT).ok()?)
}

/// Each online CPU's number and counters from `/proc/stat`; `None` when it cannot be read or
/// has no `cpuN` line.
pub fn read_per_cpu() -> Option<Vec<(u32, CpuTimes)>> {
    let v = parse_per_cpu(&std::fs::read_to_string(PROC_STAT).ok()?);
    (!v.is_empty()).then_some(v)
}

/// Clock ticks per second of `/proc/stat` (`sysconf(_SC_CLK_TCK)`, 100 almost everywhere).
pub fn ticks_per_s() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as u32
    } else {
        100
    }
}
