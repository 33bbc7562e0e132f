//! System-wide CPU times parsed purely from the text or counters a system gives: `/proc/stat`'s
//! aggregate and per-CPU lines, and each CPU's share of a window. Below `sys` (whose Linux
//! reader parses with these, and whose Windows reader fills [`CpuTimes`]) and the neutral
//! `procstat` (which re-exports them with the system's readers), so the imports run one way;
//! tested on any system.

use iocap_model::CpuShare;

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
    fields(line)
}

/// The counters of one `cpu` or `cpuN` line, as [`parse`] reads them.
fn fields(line: &str) -> Option<CpuTimes> {
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

/// Parses every `cpuN` line of `/proc/stat` text: each online CPU's number and counters, in the
/// file's order (offline CPUs have no line). Lines that do not parse are left out.
pub fn parse_per_cpu(text: &str) -> Vec<(u32, CpuTimes)> {
    text.lines()
        .filter_map(|l| {
            let id = l
                .split_whitespace()
                .next()?
                .strip_prefix("cpu")?
                .parse()
                .ok()?;
            Some((id, fields(l)?))
        })
        .collect()
}

/// Each CPU's share of its own ticks between two readings, in percent: user (`user + nice`),
/// kernel (`system + irq + softirq`; Windows: kernel less idle), idle (`idle + iowait`) and usage
/// (100 less idle: stolen time is not idle, so it counts in usage though in neither user nor
/// kernel). In CPU order; a CPU missing from either reading (hot-plugged), or with no tick
/// between them, is left out.
pub fn shares(before: &[(u32, CpuTimes)], after: &[(u32, CpuTimes)]) -> Vec<CpuShare> {
    let mut out: Vec<CpuShare> = after
        .iter()
        .filter_map(|(id, a)| {
            let (_, b) = before.iter().find(|(i, _)| i == id)?;
            let d = a.since(b);
            let total = d.total();
            if total == 0 {
                return None;
            }
            let pct = |ticks: u64| ticks as f64 * 100.0 / total as f64;
            let idle_pct = pct(d.idle + d.iowait);
            Some(CpuShare {
                id: *id,
                usage_pct: 100.0 - idle_pct,
                user_pct: pct(d.user + d.nice),
                kernel_pct: pct(d.system + d.irq + d.softirq),
                idle_pct,
            })
        })
        .collect();
    out.sort_by_key(|c| c.id);
    out
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

    /// Two readings one second (100 ticks) apart. cpu0 was 25 % busy: 20 ticks of user and
    /// nice, 5 of system and softirq, 75 idle or waiting for I/O. cpu1 lost 20 ticks to the
    /// hypervisor: busy in usage, in neither user nor kernel. cpu2 came online between them,
    /// cpu3 counted nothing.
    const BEFORE: &str = "cpu  400 10 100 3000 20 0 5 50 0 0
cpu0 100 5 30 800 10 0 5 0 0 0
cpu1 100 5 30 800 10 0 0 50 0 0
cpu3 200 0 40 1400 0 0 0 0 0 0
intr 1 2 3
";
    const AFTER: &str = "cpu  600 20 200 3000 20 0 5 50 0 0
cpu0 115 10 34 870 15 0 6 0 0 0
cpu1 110 5 40 860 10 0 0 70 0 0
cpu2 5 0 5 90 0 0 0 0 0 0
cpu3 200 0 40 1400 0 0 0 0 0 0
";

    #[test]
    fn each_cpu_s_line() {
        let v = parse_per_cpu(BEFORE);
        let ids: Vec<u32> = v.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, vec![0, 1, 3], "the aggregate line is not a CPU");
        assert_eq!(v[1].1.steal, 50);
        assert_eq!(
            parse_per_cpu("cpu 1 2 3 4\ncpux 1 2 3 4\ncpu7 1 2\n"),
            vec![]
        );
    }

    #[test]
    fn each_cpu_s_share_of_the_window() {
        let s = shares(&parse_per_cpu(BEFORE), &parse_per_cpu(AFTER));
        let row = |c: &CpuShare| {
            let f = |v: f64| format!("{v:.2}");
            (
                c.id,
                f(c.usage_pct),
                f(c.user_pct),
                f(c.kernel_pct),
                f(c.idle_pct),
            )
        };
        let rows: Vec<_> = s.iter().map(row).collect();
        let r = |id, u: &str, us: &str, k: &str, i: &str| {
            (
                id,
                u.to_string(),
                us.to_string(),
                k.to_string(),
                i.to_string(),
            )
        };
        assert_eq!(
            rows,
            vec![
                r(0, "25.00", "20.00", "5.00", "75.00"),
                r(1, "40.00", "10.00", "10.00", "60.00"),
            ]
        );
    }

    /// Windows' counters as [`read_per_cpu`] keeps them: kernel time less idle is `system`.
    /// Kernel 60 of which 50 idle, user 40: half busy, 10 % kernel.
    #[test]
    fn windows_counters_share_alike() {
        let at = |user, system, idle| {
            vec![(
                0,
                CpuTimes {
                    user,
                    system,
                    idle,
                    ..CpuTimes::default()
                },
            )]
        };
        let s = shares(&at(1000, 500, 2000), &at(1040, 510, 2050));
        assert_eq!(s.len(), 1);
        let c = s[0];
        assert_eq!(
            (c.usage_pct, c.user_pct, c.kernel_pct, c.idle_pct),
            (50.0, 40.0, 10.0, 50.0)
        );
    }
}
