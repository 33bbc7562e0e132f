//! The host fingerprint stored with every result: enough to tell two machines, two kernels or
//! two CPU configurations apart when results are compared later, down to where the CPUs sit
//! (`topology`) and the power policy they ran under.

use iocap_model::{HostInfo, PowerPolicy};

#[cfg(target_os = "linux")]
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
        topology: crate::topology::read(),
        power_policy: std::fs::read_to_string(GOVERNOR)
            .ok()
            .and_then(|t| governor(&t)),
    }
}

/// CPU 0's cpufreq governor, Linux's CPU power policy (absent where the kernel does no frequency
/// scaling, as in most VMs).
#[cfg(target_os = "linux")]
const GOVERNOR: &str = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";

/// The power policy `scaling_governor`'s text names; `None` when it names none.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn governor(text: &str) -> Option<PowerPolicy> {
    let name = text.trim();
    (!name.is_empty()).then(|| PowerPolicy {
        name: name.to_string(),
        guid: None,
    })
}

/// Bytes of memory the kernel says are available for new allocations.
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
pub fn process_cpu_s() -> (f64, f64) {
    // SAFETY: a zeroed rusage is a valid output buffer.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

/// Whether this kernel gives iocap an io_uring, in words for `iocap --version --verbose`: the
/// engine's own probe (a ring of two entries), and the sysctl that may explain a refusal.
#[cfg(target_os = "linux")]
pub fn io_uring_support() -> String {
    let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .map(|v| format!("kernel.io_uring_disabled = {}", v.trim()))
        .ok();
    match (crate::backend::uring::probe(), sysctl) {
        (Ok(()), Some(s)) => format!("available ({s})"),
        (Ok(()), None) => "available".into(),
        (Err(e), Some(s)) => format!("not available: {e} ({s})"),
        (Err(e), None) => format!("not available: {e}"),
    }
}

/// The host on Windows: the computer's name, the OS version from RtlGetVersion (which, unlike
/// GetVersionEx, does not lie to unmanifested programs), the CPU's brand string from CPUID and
/// the physical memory from GlobalMemoryStatusEx.
#[cfg(windows)]
pub fn host_info() -> HostInfo {
    HostInfo {
        hostname: std::env::var("COMPUTERNAME").unwrap_or_default(),
        kernel: crate::win::os_version(),
        cpu_model: cpu_brand(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_bytes: crate::win::memory().map_or(0, |m| m.0),
        topology: crate::topology::read(),
        power_policy: crate::win::power_scheme().map(|(name, guid)| PowerPolicy {
            name,
            guid: Some(guid),
        }),
    }
}

/// Bytes of physical memory available, from GlobalMemoryStatusEx.
#[cfg(windows)]
pub fn mem_available_bytes() -> Option<u64> {
    crate::win::memory().map(|m| m.1)
}

/// User and system CPU seconds of the whole process so far, from GetProcessTimes.
#[cfg(windows)]
pub fn process_cpu_s() -> (f64, f64) {
    crate::win::process_times().unwrap_or((0.0, 0.0))
}

/// The CPU's brand string (CPUID leaves 0x80000002 to 0x80000004), as /proc/cpuinfo's model name.
#[cfg(all(windows, target_arch = "x86_64"))]
#[allow(unused_unsafe)] // __cpuid is safe from Rust 1.87; the workspace builds from 1.85
fn cpu_brand() -> String {
    use std::arch::x86_64::__cpuid;
    // SAFETY: CPUID exists on every x86_64 CPU; leaf 0x80000000 says which extended leaves do.
    let max = unsafe { __cpuid(0x8000_0000) }.eax;
    if max < 0x8000_0004 {
        return String::new();
    }
    let mut b = Vec::with_capacity(48);
    for leaf in 0x8000_0002u32..=0x8000_0004 {
        // SAFETY: as above; the leaf is within the maximum checked.
        let r = unsafe { __cpuid(leaf) };
        for v in [r.eax, r.ebx, r.ecx, r.edx] {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    String::from_utf8_lossy(&b)
        .trim_matches(char::from(0))
        .trim()
        .to_string()
}

#[cfg(all(windows, not(target_arch = "x86_64")))]
fn cpu_brand() -> String {
    String::new()
}

#[cfg(test)]
mod tests {
    #[test]
    fn fingerprint_is_filled() {
        let h = super::host_info();
        assert!(!h.kernel.is_empty());
        assert!(h.cpus >= 1);
        assert!(h.memory_bytes > 0);
        if let Some(t) = &h.topology {
            assert!(!t.cpus.is_empty());
        }
        if let Some(p) = &h.power_policy {
            assert!(!p.name.is_empty());
            assert_eq!(p.guid.is_some(), cfg!(windows), "{p:?}");
        }
    }

    #[test]
    fn the_governor_is_linux_s_power_policy() {
        let p = super::governor("performance\n").unwrap();
        assert_eq!((p.name.as_str(), p.guid), ("performance", None));
        assert_eq!(super::governor("\n"), None);
    }
}
