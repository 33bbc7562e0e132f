//! Host checks: CPU power management, transparent huge pages, VM tunables, NUMA.

use crate::resolve::list_dir;
use crate::Finding;
use crate::{shown, AuditOptions, Check, DbFamily, Root, Severity};

/// Every host-wide check (run once per audit).
pub fn host_checks(root: &Root, opts: &AuditOptions) -> Vec<Check> {
    let mut out = Vec::new();
    cpu_checks(root, &mut out);
    thp(root, opts, &mut out);
    swappiness(root, &mut out);
    dirty(root, &mut out);
    numa(root, &mut out);
    out
}

/// `cpu0`, `cpu1`, ... in numeric order.
fn cpus(root: &Root) -> Vec<String> {
    let mut v: Vec<(u32, String)> = list_dir(root, "sys/devices/system/cpu")
        .into_iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse::<u32>().ok().map(|i| (i, n)))
        .collect();
    v.sort();
    v.into_iter().map(|(_, n)| n).collect()
}

const NO_CPUFREQ: &str =
    "no cpufreq in sysfs: the hypervisor or container does not expose it (check the BIOS / host power profile)";

fn cpu_checks(root: &Root, out: &mut Vec<Check>) {
    let cpus = cpus(root);
    let base = |c: &str, f: &str| format!("sys/devices/system/cpu/{c}/{f}");

    // Governor.
    let govs: Vec<(String, String)> = cpus
        .iter()
        .filter_map(|c| {
            Some((
                c.clone(),
                root.read(&base(c, "cpufreq/scaling_governor")).ok()?,
            ))
        })
        .collect();
    if govs.is_empty() {
        out.push(Check::unknown("cpu.governor", "cpu", NO_CPUFREQ));
    } else {
        let mut kinds: Vec<&str> = govs.iter().map(|(_, g)| g.as_str()).collect();
        kinds.sort();
        kinds.dedup();
        let ps = govs.iter().filter(|(_, g)| g == "powersave").count();
        let ev = format!(
            "scaling_governor {} on {} of {} CPUs from /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
            kinds.join(", "),
            govs.len(),
            cpus.len()
        );
        let (sev, rec) = if ps > 0 {
            (Severity::Warn, format!("{ps} CPUs run the powersave governor: set performance (cpupower frequency-set -g performance) and the BIOS power profile to maximum performance."))
        } else if kinds == ["performance"] {
            (
                Severity::Pass,
                "Nothing to do: every CPU runs the performance governor.".to_string(),
            )
        } else {
            (Severity::Info, "Dynamic governors add latency when load arrives in bursts; prefer performance on a database server.".to_string())
        };
        out.push(Check::new("cpu.governor", sev, "cpu", ev, rec));
    }

    // Current vs maximum frequency.
    let freqs: Vec<(String, u64, u64)> = cpus
        .iter()
        .filter_map(|c| {
            let cur = root.read_u64(&base(c, "cpufreq/scaling_cur_freq")).ok()?;
            let max = root.read_u64(&base(c, "cpufreq/cpuinfo_max_freq")).ok()?;
            (max > 0).then(|| (c.clone(), cur, max))
        })
        .collect();
    if freqs.is_empty() {
        out.push(Check::unknown("cpu.frequency", "cpu", NO_CPUFREQ));
    } else {
        let n = freqs.len() as u64;
        let cur: u64 = freqs.iter().map(|f| f.1).sum::<u64>() / n;
        let max: u64 = freqs.iter().map(|f| f.2).sum::<u64>() / n;
        let lowest = freqs
            .iter()
            .min_by(|a, b| (a.1 * b.2).cmp(&(b.1 * a.2)))
            .expect("non-empty");
        let pct = cur * 100 / max;
        let ev = format!(
            "mean scaling_cur_freq {cur} kHz = {pct} % of mean cpuinfo_max_freq {max} kHz over {n} CPUs (lowest {} at {} kHz) from /sys/devices/system/cpu/cpu*/cpufreq/",
            lowest.0, lowest.1
        );
        if pct < 80 {
            out.push(Check::new("cpu.frequency", Severity::Warn, "cpu", ev, "Cores run below 80 % of their rated speed: check the governor and BIOS power saving, and re-check under load (idle cores clock down)."));
        } else {
            out.push(Check::new(
                "cpu.frequency",
                Severity::Pass,
                "cpu",
                ev,
                "Nothing to do: cores run at 80 % or more of their rated speed.",
            ));
        }
    }

    // Energy/performance bias (0 performance .. 15 powersave).
    let epb: Vec<u64> = cpus
        .iter()
        .filter_map(|c| root.read_u64(&base(c, "power/energy_perf_bias")).ok())
        .collect();
    match epb.iter().max() {
        None => out.push(Check::unknown(
            "cpu.energy_perf_bias",
            "cpu",
            "no /sys/devices/system/cpu/cpu*/power/energy_perf_bias: not an Intel CPU, or not exposed by the hypervisor",
        )),
        Some(&worst) => {
            let ev = format!("highest energy_perf_bias {worst} (0 performance, 6 normal, 15 power saving) over {} CPUs from /sys/devices/system/cpu/cpu*/power/energy_perf_bias", epb.len());
            let (sev, rec) = if worst > 6 {
                (Severity::Warn, "Set energy_perf_bias to 0 (x86_energy_perf_policy performance): the CPU trades speed for power.")
            } else if worst > 0 {
                (Severity::Info, "Balanced bias; 0 (performance) gives the lowest I/O completion latency.")
            } else {
                (Severity::Pass, "Nothing to do: the CPU is biased to performance.")
            };
            out.push(Check::new("cpu.energy_perf_bias", sev, "cpu", ev, rec));
        }
    }
}

fn bracketed(s: &str) -> Option<String> {
    let a = s.find('[')?;
    let b = s[a..].find(']')? + a;
    Some(s[a + 1..b].to_string())
}

fn thp(root: &Root, opts: &AuditOptions, out: &mut Vec<Check>) {
    let rel = "sys/kernel/mm/transparent_hugepage/enabled";
    let raw = match root.read(rel) {
        Ok(r) => r,
        Err(e) => {
            out.push(Check::unknown("mem.thp", "memory", e));
            return;
        }
    };
    let Some(mode) = bracketed(&raw) else {
        out.push(Check::unknown(
            "mem.thp",
            "memory",
            format!("{} holds {raw:?}, no bracketed mode", shown(rel)),
        ));
        return;
    };
    let ev = format!(
        "transparent_hugepage {mode} from {}; profile {}",
        shown(rel),
        opts.profile.map_or("none", DbFamily::name)
    );
    let enabled = mode == "always" || mode == "madvise";
    let (sev, rec) = match opts.profile {
        Some(DbFamily::Sqlserver) => {
            if enabled {
                (Severity::Pass, "Nothing to do: SQL Server on Linux wants transparent huge pages enabled.")
            } else {
                (Severity::Warn, "Enable transparent huge pages (madvise or always): SQL Server on Linux recommends them.")
            }
        }
        Some(DbFamily::Postgres | DbFamily::Oracle | DbFamily::Mysql) => {
            if mode == "never" {
                (Severity::Pass, "Nothing to do: transparent huge pages are off, as this database recommends (use explicit huge pages for shared memory).")
            } else {
                (Severity::Warn, "Set transparent_hugepage=never: compaction and khugepaged stalls hurt this database; use explicit huge pages instead.")
            }
        }
        _ => (Severity::Info, "Depends on the database: SQL Server wants THP enabled; PostgreSQL, Oracle and MySQL want it off (never)."),
    };
    out.push(Check::new("mem.thp", sev, "memory", ev, rec));
}

fn swappiness(root: &Root, out: &mut Vec<Check>) {
    let rel = "proc/sys/vm/swappiness";
    match root.read_u64(rel) {
        Err(e) => out.push(Check::unknown("vm.swappiness", "memory", e)),
        Ok(v) => {
            let ev = format!("vm.swappiness {v} from {}", shown(rel));
            if v > 10 {
                out.push(Check::new("vm.swappiness", Severity::Warn, "memory", ev, "Set vm.swappiness to 1 to 10: the kernel should drop file cache before swapping out the buffer pool."));
            } else {
                out.push(Check::new(
                    "vm.swappiness",
                    Severity::Pass,
                    "memory",
                    ev,
                    "Nothing to do: swapping the buffer pool is discouraged.",
                ));
            }
        }
    }
}

fn dirty(root: &Root, out: &mut Vec<Check>) {
    let r_rel = "proc/sys/vm/dirty_ratio";
    let b_rel = "proc/sys/vm/dirty_background_ratio";
    let (ratio, bg) = match (root.read_u64(r_rel), root.read_u64(b_rel)) {
        (Ok(r), Ok(b)) => (r, b),
        (Err(e), _) | (_, Err(e)) => {
            out.push(Check::unknown("vm.dirty", "memory", e));
            return;
        }
    };
    let rb = root.read_u64("proc/sys/vm/dirty_bytes").unwrap_or(0);
    let bb = root
        .read_u64("proc/sys/vm/dirty_background_bytes")
        .unwrap_or(0);
    let ev = format!(
        "vm.dirty_ratio {ratio} %, vm.dirty_background_ratio {bg} %, dirty_bytes {rb}, dirty_background_bytes {bb} from /proc/sys/vm/"
    );
    if rb == 0 && bb == 0 && (bg > 10 || ratio > 40) {
        out.push(Check::new("vm.dirty", Severity::Warn, "memory", ev, "Lower vm.dirty_background_ratio to 10 or less and vm.dirty_ratio to 40 or less (or use the _bytes forms): large dirty caches flush in long stalls that hit commit latency."));
    } else {
        out.push(Check::new("vm.dirty", Severity::Info, "memory", ev, "On hosts with much RAM, consider vm.dirty_background_bytes and vm.dirty_bytes so flushing starts early and in small bursts."));
    }
}

fn numa(root: &Root, out: &mut Vec<Check>) {
    let nodes: Vec<String> = list_dir(root, "sys/devices/system/node")
        .into_iter()
        .filter(|n| {
            n.strip_prefix("node")
                .is_some_and(|i| i.parse::<u32>().is_ok())
        })
        .collect();
    if nodes.is_empty() {
        out.push(Check::unknown(
            "numa.nodes",
            "numa",
            "no /sys/devices/system/node/node*: kernel without NUMA support or not exposed",
        ));
    } else {
        out.push(Check::new(
            "numa.nodes",
            Severity::Info,
            "numa",
            format!("{} NUMA node(s) ({}) from /sys/devices/system/node/", nodes.len(), nodes.join(", ")),
            if nodes.len() > 1 {
                "Several NUMA nodes: bind the I/O test and the database to the node nearest the HBA / NVMe, or interleave memory."
            } else {
                "One NUMA node: nothing to place."
            },
        ));
    }
    let rel = "proc/sys/kernel/numa_balancing";
    match root.read_u64(rel) {
        Err(e) if nodes.len() > 1 => out.push(Check::unknown("numa.balancing", "numa", e)),
        Err(_) => {}
        Ok(v) => {
            let ev = format!(
                "kernel.numa_balancing {v} from {}; {} node(s)",
                shown(rel),
                nodes.len()
            );
            if v != 0 && nodes.len() > 1 {
                out.push(Check::new("numa.balancing", Severity::Warn, "numa", ev, "Set kernel.numa_balancing=0: automatic page migration stalls a large buffer pool."));
            } else {
                out.push(Check::new(
                    "numa.balancing",
                    Severity::Pass,
                    "numa",
                    ev,
                    "Nothing to do: no automatic page migration across nodes.",
                ));
            }
        }
    }
}
