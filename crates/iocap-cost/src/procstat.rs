//! System-wide CPU time from `/proc/stat`: a pure parser of its aggregate `cpu` line, a reader,
//! and a [`RunObserver`] that reads it on the engine's window edges, so the system-wide figure
//! covers the same window as the process's own (`getrusage`, read by the engine on the same
//! monitor thread just before each edge).
//!
//! Busy time is `user + nice + system + irq + softirq`. Not busy: `idle` and `iowait` (a CPU
//! waiting for I/O with nothing to run is idle), and `steal` (time the hypervisor ran someone
//! else on this virtual CPU: not CPU we got; reported on its own). `guest` and `guest_nice` are
//! already inside `user` and `nice` and are not added again.

use iocap_engine::{LiveSample, RunObserver};

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

/// Reads and parses `/proc/stat`.
pub fn read() -> Option<CpuTimes> {
    parse(&std::fs::read_to_string(PROC_STAT).ok()?)
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

/// System-wide CPU over the measured window, from its first and last edge.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WindowCpu {
    /// Seconds between the first and the last edge read (the engine's own clock).
    pub span_s: f64,
    pub delta: CpuTimes,
}

/// Reads `/proc/stat` at every window edge and keeps the first and the last; passes progress on
/// to `inner`.
pub struct StatWatch<'a> {
    pub inner: &'a mut dyn RunObserver,
    first: Option<(f64, CpuTimes)>,
    last: Option<(f64, CpuTimes)>,
}

impl<'a> StatWatch<'a> {
    pub fn new(inner: &'a mut dyn RunObserver) -> Self {
        StatWatch {
            inner,
            first: None,
            last: None,
        }
    }

    /// The window, when at least two edges were read.
    pub fn window(&self) -> Option<WindowCpu> {
        let ((t0, a), (t1, b)) = (self.first?, self.last?);
        (t1 > t0).then(|| WindowCpu {
            span_s: t1 - t0,
            delta: b.since(&a),
        })
    }
}

impl RunObserver for StatWatch<'_> {
    fn tick(&mut self, s: &LiveSample) {
        self.inner.tick(s);
    }
    fn window_edge(&mut self, t_s: f64) {
        // read first: the engine read its own counters just before calling us
        let now = read();
        if let Some(c) = now {
            if self.first.is_none() {
                self.first = Some((t_s, c));
            }
            self.last = Some((t_s, c));
        }
        self.inner.window_edge(t_s);
    }
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
    fn the_watch_keeps_the_first_and_last_edge() {
        let mut q = iocap_engine::Quiet;
        let mut w = StatWatch::new(&mut q);
        assert!(w.window().is_none());
        w.window_edge(0.0);
        w.window_edge(1.0);
        w.window_edge(2.0);
        if read().is_some() {
            let win = w.window().unwrap();
            assert_eq!(win.span_s, 2.0);
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
