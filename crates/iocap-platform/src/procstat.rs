//! System-wide CPU time from `/proc/stat`: a pure parser of its aggregate `cpu` line and a
//! reader. The monitor reads it on the window's edges for the share of CPU the hypervisor stole
//! during a test; `iocap cost` reads it for the system-wide CPU per I/O.
//!
//! Busy time is `user + nice + system + irq + softirq`. Not busy: `idle` and `iowait` (a CPU
//! waiting for I/O with nothing to run is idle), and `steal` (time the hypervisor ran someone
//! else on this virtual CPU: not CPU we got; reported on its own). `guest` and `guest_nice` are
//! already inside `user` and `nice` and are not added again.
//!
//! Per CPU (`cpuN` lines; Windows' processor performance information) for the system-wide load
//! of every CPU over a test, DiskSpd's CPU table: [`read_per_cpu`] on the window's edges and
//! [`shares`] of the difference.

pub use crate::parse::procstat::{parse, parse_per_cpu, shares, CpuTimes, PROC_STAT};
pub use crate::sys::procstat::{read, read_per_cpu, ticks_per_s};

/// Whether the counters say what the hypervisor stole: Linux's do; Windows' GetSystemTimes has no
/// such counter, so there `steal` is always 0 and means "not known", not "none".
pub const STEAL_KNOWN: bool = cfg!(target_os = "linux");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_cpu_of_this_machine() {
        if cfg!(windows) || std::path::Path::new(PROC_STAT).exists() {
            let v = read_per_cpu().expect("every CPU's times");
            assert!(!v.is_empty());
            assert!(v.iter().all(|(_, t)| t.total() > 0), "{v:?}");
        }
    }

    #[test]
    fn reads_this_machine() {
        if std::path::Path::new(PROC_STAT).exists() {
            let c = read().expect("/proc/stat parses");
            assert!(c.busy() + c.idle > 0);
        }
        assert!(ticks_per_s() > 0);
    }
}
