//! The host on Linux: /proc's hostname, kernel release, CPU model and memory, cpufreq's
//! governor, and the process's CPU times from getrusage.

use iocap_model::HostInfo;

/// The host on Linux: the hostname and kernel release from /proc/sys/kernel, the CPU's model
/// name from /proc/cpuinfo, the memory from /proc/meminfo, where the CPUs sit and CPU 0's
/// cpufreq governor.
pub fn host_info() -> HostInfo {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpu_model = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    HostInfo {
        hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        cpu_model,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_bytes,
        topology: super::topology::read(),
        power_policy: std::fs::read_to_string(GOVERNOR)
            .ok()
            .and_then(|t| crate::parse::host::governor(&t)),
    }
}

/// CPU 0's cpufreq governor, Linux's CPU power policy (absent where the kernel does no frequency
/// scaling, as in most VMs).
const GOVERNOR: &str = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";

/// Bytes of memory the kernel says are available for new allocations.
pub fn mem_available_bytes() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()?
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// User and system CPU seconds of the whole process so far: every thread, including io_uring's
/// kernel workers, which run as threads of this process.
pub fn process_cpu_s() -> (f64, f64) {
    // SAFETY: a zeroed rusage is a valid output buffer.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}
