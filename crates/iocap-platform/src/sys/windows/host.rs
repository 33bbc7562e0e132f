//! The host on Windows: the computer's name, RtlGetVersion, CPUID's brand string,
//! GlobalMemoryStatusEx, the active power scheme and GetProcessTimes.

use iocap_model::{HostInfo, PowerPolicy};

/// The host on Windows: the computer's name, the OS version from RtlGetVersion (which, unlike
/// GetVersionEx, does not lie to unmanifested programs), the CPU's brand string from CPUID and
/// the physical memory from GlobalMemoryStatusEx.
pub fn host_info() -> HostInfo {
    HostInfo {
        hostname: std::env::var("COMPUTERNAME").unwrap_or_default(),
        kernel: super::win::os_version(),
        cpu_model: cpu_brand(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_bytes: super::win::memory().map_or(0, |m| m.0),
        topology: super::topology::read(),
        power_policy: super::win::power_scheme().map(|(name, guid)| PowerPolicy {
            name,
            guid: Some(guid),
        }),
    }
}

/// Bytes of physical memory available, from GlobalMemoryStatusEx.
pub fn mem_available_bytes() -> Option<u64> {
    super::win::memory().map(|m| m.1)
}

/// User and system CPU seconds of the whole process so far, from GetProcessTimes.
pub fn process_cpu_s() -> (f64, f64) {
    super::win::process_times().unwrap_or((0.0, 0.0))
}

/// The CPU's brand string (CPUID leaves 0x80000002 to 0x80000004), as /proc/cpuinfo's model name.
#[cfg(target_arch = "x86_64")]
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

#[cfg(not(target_arch = "x86_64"))]
fn cpu_brand() -> String {
    String::new()
}
