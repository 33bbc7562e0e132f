//! System-wide CPU times on Windows: GetSystemTimes for the whole host, and
//! NtQuerySystemInformation's processor performance records for each CPU, group by group.

use crate::parse::procstat::CpuTimes;

/// The system's CPU times from GetSystemTimes, in 100 ns units: user, system (its kernel time
/// less idle, which GetSystemTimes counts inside kernel) and idle; no steal, no iowait.
pub fn read() -> Option<CpuTimes> {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::GetSystemTimes;
    let z = || FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut idle, mut kernel, mut user) = (z(), z(), z());
    // SAFETY: three valid, writable FILETIMEs.
    if unsafe { GetSystemTimes(&mut idle, &mut kernel, &mut user) } == 0 {
        return None;
    }
    let v = |f: FILETIME| u64::from(f.dwHighDateTime) << 32 | u64::from(f.dwLowDateTime);
    let (idle, kernel, user) = (v(idle), v(kernel), v(user));
    Some(CpuTimes {
        user,
        system: kernel.saturating_sub(idle),
        idle,
        ..CpuTimes::default()
    })
}

/// Each active CPU's number (its group × 64 + its number in the group, as `topology` numbers
/// it) and times, in 100 ns units as [`read`]'s, from NtQuerySystemInformation's
/// `SystemProcessorPerformanceInformation`. That answers for the calling thread's processor
/// group only, so on a host of several groups the thread moves to each group in turn (as
/// DiskSpd does) and goes back to its own after. `None` when a query fails.
pub fn read_per_cpu() -> Option<Vec<(u32, CpuTimes)>> {
    use windows_sys::Win32::System::SystemInformation::GROUP_AFFINITY;
    use windows_sys::Win32::System::Threading::{
        GetActiveProcessorCount, GetActiveProcessorGroupCount, GetCurrentThread,
        GetThreadGroupAffinity, SetThreadGroupAffinity,
    };
    // SAFETY: no arguments, no preconditions.
    let groups = unsafe { GetActiveProcessorGroupCount() };
    if groups <= 1 {
        return group_times(0);
    }
    // SAFETY: a zeroed GROUP_AFFINITY is a valid output buffer.
    let mut own: GROUP_AFFINITY = unsafe { std::mem::zeroed() };
    // SAFETY: this thread's pseudo-handle and a writable GROUP_AFFINITY.
    if unsafe { GetThreadGroupAffinity(GetCurrentThread(), &mut own) } == 0 {
        return None;
    }
    let mut out = Vec::new();
    let every_group = (0..groups).all(|g| {
        // SAFETY: no preconditions; a group number below the active group count.
        let n = unsafe { GetActiveProcessorCount(g) };
        let to = GROUP_AFFINITY {
            Mask: if n >= usize::BITS {
                usize::MAX
            } else {
                (1usize << n) - 1
            },
            Group: g,
            Reserved: [0; 3],
        };
        // SAFETY: this thread's pseudo-handle and an affinity within an active group.
        let moved =
            unsafe { SetThreadGroupAffinity(GetCurrentThread(), &to, std::ptr::null_mut()) };
        let times = (moved != 0).then(|| group_times(g)).flatten();
        times.map(|t| out.extend(t)).is_some()
    });
    // SAFETY: as above, back to the affinity the thread had.
    unsafe { SetThreadGroupAffinity(GetCurrentThread(), &own, std::ptr::null_mut()) };
    every_group.then_some(out)
}

/// The times of the active CPUs of processor group `group`, which the calling thread is in.
fn group_times(group: u16) -> Option<Vec<(u32, CpuTimes)>> {
    use windows_sys::Wdk::System::SystemInformation::{
        NtQuerySystemInformation, SystemProcessorPerformanceInformation,
    };
    use windows_sys::Win32::System::Threading::GetActiveProcessorCount;
    use windows_sys::Win32::System::WindowsProgramming::SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION;
    type Sppi = SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION;
    // SAFETY: no preconditions.
    let n = unsafe { GetActiveProcessorCount(group) } as usize;
    // SAFETY: a zeroed SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION is plain integers.
    let mut v: Vec<Sppi> = vec![unsafe { std::mem::zeroed() }; n.max(1)];
    let bytes = (v.len() * std::mem::size_of::<Sppi>()) as u32;
    let mut got = 0u32;
    // SAFETY: `v` is writable for `bytes` bytes, as stated; `got` is writable.
    let status = unsafe {
        NtQuerySystemInformation(
            SystemProcessorPerformanceInformation,
            v.as_mut_ptr().cast(),
            bytes,
            &mut got,
        )
    };
    if status < 0 {
        return None;
    }
    v.truncate(got as usize / std::mem::size_of::<Sppi>());
    let tick = |t: i64| u64::try_from(t).unwrap_or(0);
    let times = v.iter().enumerate().map(|(i, p)| {
        let (idle, kernel) = (tick(p.IdleTime), tick(p.KernelTime));
        let t = CpuTimes {
            user: tick(p.UserTime),
            system: kernel.saturating_sub(idle),
            idle,
            ..CpuTimes::default()
        };
        (u32::from(group) * 64 + i as u32, t)
    });
    Some(times.collect())
}

/// Units per second of [`read`]'s times: 100 ns.
pub fn ticks_per_s() -> u32 {
    10_000_000
}
