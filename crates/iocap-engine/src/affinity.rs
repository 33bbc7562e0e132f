//! CPU masks (SQLIO parameter files, DiskSpd's `-a`) checked against the CPUs this process may
//! run on, before any target is touched. Pinning to a CPU the host does not have fails in the
//! kernel and leaves the thread unpinned, so a mask naming one would run a test that is not the
//! one asked for, while its description says the threads were pinned: it is refused instead.

/// The CPUs this process may run on, as a mask of CPUs 0 to 63 (masks name no others), and how
/// many CPUs the host has; `None` when the system does not say.
#[cfg(target_os = "linux")]
pub fn usable_cpus() -> Option<(u64, u32)> {
    // SAFETY: a zeroed cpu_set_t is empty; sched_getaffinity writes at most its size into it
    // and CPU_ISSET reads inside it; sysconf has no memory effects.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        let mask = (0..64).fold(0u64, |m, cpu| {
            if libc::CPU_ISSET(cpu, &set) {
                m | 1 << cpu
            } else {
                m
            }
        });
        let host = libc::sysconf(libc::_SC_NPROCESSORS_ONLN);
        Some((
            mask,
            u32::try_from(host).unwrap_or(0).max(mask.count_ones()),
        ))
    }
}

/// The CPUs this process may run on, as a mask of CPUs 0 to 63 (processor group 0), and how
/// many CPUs the host has; `None` when the system does not say.
#[cfg(windows)]
pub fn usable_cpus() -> Option<(u64, u32)> {
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessAffinityMask};
    let (mut process, mut system) = (0usize, 0usize);
    // SAFETY: the pseudo-handle of this process; both outputs are valid usize locations.
    let ok = unsafe { GetProcessAffinityMask(GetCurrentProcess(), &mut process, &mut system) };
    (ok != 0).then(|| (process as u64, system.count_ones()))
}

/// Why `mask` cannot pin a thread here, where `usable` is the mask of the CPUs this process
/// may run on and `host_cpus` the host's count: it names a CPU outside `usable`.
pub fn mask_problem(mask: u64, usable: u64, host_cpus: u32) -> Option<String> {
    let missing = mask & !usable;
    if missing == 0 {
        return None;
    }
    let names = |m: u64| {
        let cpus: Vec<String> = (0..64)
            .filter(|c| m & (1 << c) != 0)
            .map(|c: u32| c.to_string())
            .collect();
        cpus.join(",")
    };
    let plural = if missing.count_ones() == 1 { "" } else { "s" };
    Some(format!(
        "CPU mask {mask:#x} names CPU{plural} {}, which iocap cannot run on: this host has \
         {host_cpus} CPU{} and iocap may use {}; name only those (pinning to a missing CPU \
         would leave the threads unpinned)",
        names(missing),
        if host_cpus == 1 { "" } else { "s" },
        names(usable),
    ))
}

/// Refuses `mask` when it names a CPU this process cannot run on; a system that does not say
/// which it may use lets it through.
pub fn check_mask(mask: u64) -> Result<(), String> {
    match usable_cpus() {
        Some((usable, host)) => mask_problem(mask, usable, host).map_or(Ok(()), Err),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mask_past_the_hosts_cpus_names_them_and_the_count() {
        let e = mask_problem(0x4, 0b11, 2).unwrap();
        assert!(
            e.starts_with("CPU mask 0x4 names CPU 2, which iocap cannot run on: this host has 2 CPUs and iocap may use 0,1"),
            "{e}"
        );
        let e = mask_problem(0b1110, 0b11, 2).unwrap();
        assert!(e.contains("names CPUs 2,3,"), "{e}");
        assert_eq!(mask_problem(0b10, 0b11, 2), None);
    }

    #[test]
    fn this_process_may_run_on_some_cpu() {
        if let Some((usable, host)) = usable_cpus() {
            assert!(
                usable != 0 && host >= usable.count_ones().min(64),
                "{usable:#x} {host}"
            );
            assert_eq!(check_mask(usable), Ok(()));
            if usable != u64::MAX {
                let outside = !usable;
                let first_outside = outside & outside.wrapping_neg();
                assert!(check_mask(first_outside).is_err());
            }
        }
    }
}
