//! System-wide CPU time from `/proc/stat`: a pure parser of its aggregate `cpu` line and a
//! reader. The monitor reads it on the window's edges for the share of CPU the hypervisor stole
//! during a test; `iocap cost` reads it for the system-wide CPU per I/O.
//!
//! Busy time is `user + nice + system + irq + softirq`. Not busy: `idle` and `iowait` (a CPU
//! waiting for I/O with nothing to run is idle), and `steal` (time the hypervisor ran someone
//! else on this virtual CPU: not CPU we got; reported on its own). `guest` and `guest_nice` are
//! already inside `user` and `nice` and are not added again.

/// Where the counters come from.
pub const PROC_STAT: &str = "/proc/stat";

/// The aggregate `cpu` line, in clock ticks (`USER_HZ`), summed over all CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// Ticks some CPU spent running something: user, nice, system, irq and softirq.
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }

    /// Every tick counted: busy, idle, iowait and steal.
    pub fn total(&self) -> u64 {
        self.busy() + self.idle + self.iowait + self.steal
    }

    /// Share of all ticks the hypervisor stole, in percent; `None` when no tick passed.
    pub fn steal_pct(&self) -> Option<f64> {
        let t = self.total();
        (t > 0).then(|| self.steal as f64 * 100.0 / t as f64)
    }

    /// `self - earlier`, field by field; a counter that went backwards (CPU hot-unplug) gives 0.
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// Parses the aggregate `cpu ` line of `/proc/stat` text. Missing trailing fields (old kernels
/// have no `steal`) read as 0; `None` when there is no such line or it holds fewer than the four
/// fields every kernel has.
pub fn parse(text: &str) -> Option<CpuTimes> {
    let line = text.lines().find(|l| {
        let mut w = l.split_whitespace();
        w.next() == Some("cpu")
    })?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map_while(|f| f.parse().ok())
        .collect();
    if v.len() < 4 {
        return None;
    }
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(CpuTimes {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
    })
}

/// Whether the counters say what the hypervisor stole: Linux's do; Windows' GetSystemTimes has no
/// such counter, so there `steal` is always 0 and means "not known", not "none".
pub const STEAL_KNOWN: bool = cfg!(target_os = "linux");

/// Reads and parses `/proc/stat`.
#[cfg(target_os = "linux")]
pub fn read() -> Option<CpuTimes> {
    parse(&std::fs::read_to_string(PROC_STAT).ok()?)
}

/// The system's CPU times from GetSystemTimes, in 100 ns units: user, system (its kernel time
/// less idle, which GetSystemTimes counts inside kernel) and idle; no steal, no iowait.
#[cfg(windows)]
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

/// Units per second of [`read`]'s times: 100 ns.
#[cfg(windows)]
pub fn ticks_per_s() -> u32 {
    10_000_000
}

/// Clock ticks per second of `/proc/stat` (`sysconf(_SC_CLK_TCK)`, 100 almost everywhere).
#[cfg(target_os = "linux")]
pub fn ticks_per_s() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as u32
    } else {
        100
    }
}

// TEMPORARY (replaced by the per-CPU reader being written on branch i27-host)
pub fn read_per_cpu() -> Option<Vec<(u32, CpuTimes)>> {
    None
}
pub fn shares(_: &[(u32, CpuTimes)], _: &[(u32, CpuTimes)]) -> Vec<iocap_model::CpuShare> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  1411094 4034 210257 389043 36798 10 26329 71159 0 0
cpu0 711137 1882 102404 211601 13430 0 3702 30403 0 0
cpu1 699957 2152 107852 177441 23367 0 22626 40755 0 0
intr 123 4 5
ctxt 99
";

    #[test]
    fn parses_the_aggregate_line() {
        let c = parse(STAT).unwrap();
        assert_eq!(c.user, 1411094);
        assert_eq!(c.nice, 4034);
        assert_eq!(c.system, 210257);
        assert_eq!(c.idle, 389043);
        assert_eq!(c.iowait, 36798);
        assert_eq!(c.irq, 10);
        assert_eq!(c.softirq, 26329);
        assert_eq!(c.steal, 71159);
        assert_eq!(c.busy(), 1411094 + 4034 + 210257 + 10 + 26329);
        let stolen = c.steal_pct().unwrap();
        assert!(
            (stolen - 71159.0 * 100.0 / 2148724.0).abs() < 1e-9,
            "{stolen}"
        );
    }

    #[test]
    fn old_kernels_and_garbage() {
        let c = parse("cpu 10 0 5 100\n").unwrap();
        assert_eq!((c.busy(), c.idle, c.steal), (15, 100, 0));
        assert_eq!(parse("cpu0 1 2 3 4\n"), None, "no aggregate line");
        assert_eq!(parse("cpu 1 2\n"), None, "too few fields");
        assert_eq!(parse(""), None);
    }

    #[test]
    fn deltas_never_underflow() {
        let a = parse("cpu 10 0 5 100 1 1 1 1\n").unwrap();
        let b = parse("cpu 20 0 9 150 1 0 3 4\n").unwrap();
        let d = b.since(&a);
        assert_eq!(
            (d.user, d.system, d.idle, d.irq, d.softirq, d.steal),
            (10, 4, 50, 0, 2, 3)
        );
        assert_eq!(a.since(&b).user, 0);
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
