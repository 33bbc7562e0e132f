//! Where the CPUs sit, parsed purely from what each system gives: Linux's CPU lists and
//! per-CPU topology files, Windows' GetLogicalProcessorInformationEx records. Below `sys` (whose
//! readers fetch those and call these) and the neutral `topology` (which re-exports them with the
//! system's reader), so the imports run one way; each layout is tested on any system.

use iocap_model::{CpuPlace, CpuTopology};

/// A kernel CPU list (`0-3,8-11`, `5`, an empty line for none), in order; `None` for anything
/// else.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let v: u32 = part.trim().parse().ok()?;
                (v, v)
            }
        };
        if lo > hi {
            return None;
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// The topology from Linux's /sys: `online` is `cpu/online`'s text, `nodes` each NUMA node's
/// number and `cpulist` text (empty without NUMA information), and `file(cpu, name)` the text
/// of `cpu/cpu<cpu>/topology/<name>`. A CPU whose package id is missing (or -1, as some
/// platforms say) is on socket 0; one whose core id is missing counts as a core of its own (its
/// own number), never as a sibling it cannot be shown to be. `None` when `online` is not a list
/// of at least one CPU.
pub fn from_sys(
    online: &str,
    nodes: &[(u32, String)],
    file: impl Fn(u32, &str) -> Option<String>,
) -> Option<CpuTopology> {
    let cpus = parse_cpu_list(online).filter(|c| !c.is_empty())?;
    let node_cpus: Vec<(u32, Vec<u32>)> = nodes
        .iter()
        .filter_map(|(n, list)| Some((*n, parse_cpu_list(list)?)))
        .collect();
    let number = |cpu: u32, name: &str| {
        file(cpu, name)
            .and_then(|t| t.trim().parse::<i64>().ok())
            .and_then(|v| u32::try_from(v).ok())
    };
    let cpus = cpus
        .into_iter()
        .map(|id| CpuPlace {
            id,
            socket: number(id, "physical_package_id").unwrap_or(0),
            node: node_cpus
                .iter()
                .find(|(_, l)| l.contains(&id))
                .map_or(0, |(n, _)| *n),
            core: number(id, "core_id").unwrap_or(id),
        })
        .collect();
    Some(CpuTopology { cpus })
}

/// `LOGICAL_PROCESSOR_RELATIONSHIP` values of the records [`from_slpi`] reads.
const RELATION_PROCESSOR_CORE: u32 = 0;
const RELATION_NUMA_NODE: u32 = 1;
const RELATION_PROCESSOR_PACKAGE: u32 = 3;

/// Bytes of a `GROUP_AFFINITY`'s `Mask` (a `KAFFINITY`, pointer-sized) and of the whole
/// structure (the mask, the group's `u16` and three reserved `u16`s, padded to the mask's
/// alignment).
pub(crate) const MASK_BYTES: usize = std::mem::size_of::<usize>();
pub(crate) const GROUP_AFFINITY_SIZE: usize = MASK_BYTES + 8;
/// Where a record's `GroupCount` and first `GROUP_AFFINITY` sit, from the record's start
/// (`Relationship` and `Size` are 8 bytes; `PROCESSOR_RELATIONSHIP` and
/// `NUMA_NODE_RELATIONSHIP` both hold their group count at 22 and their masks at 24).
pub(crate) const GROUP_COUNT_AT: usize = 8 + 22;
pub(crate) const GROUP_MASKS_AT: usize = 8 + 24;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The CPU numbers (group × 64 + bit) of a record's `count` group masks.
fn record_cpus(rec: &[u8], count: usize) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for i in 0..count {
        let at = GROUP_MASKS_AT + i * GROUP_AFFINITY_SIZE;
        let mut m = [0u8; 8];
        m[..MASK_BYTES].copy_from_slice(rec.get(at..at + MASK_BYTES)?);
        let mask = u64::from_le_bytes(m);
        let group = u32::from(u16_at(rec, at + MASK_BYTES)?);
        out.extend(
            (0..64)
                .filter(|b| mask >> b & 1 == 1)
                .map(|b| group * 64 + b),
        );
    }
    Some(out)
}

/// The topology from GetLogicalProcessorInformationEx's `SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX`
/// records (any relations; those other than core, NUMA node and package are skipped). Sockets
/// are numbered in the order of the package records, cores within their socket in the order of
/// the core records; a NUMA record's group count of 0 (Windows before 20H2) means one mask.
/// `None` when the records are cut short or name no core.
pub fn from_slpi(b: &[u8]) -> Option<CpuTopology> {
    let (mut cores, mut packages, mut nodes) = (Vec::new(), Vec::new(), Vec::new());
    let mut at = 0;
    while at < b.len() {
        let size = u32_at(b, at + 4)? as usize;
        let rec = b.get(at..at + size).filter(|_| size > 0)?;
        let count = usize::from(u16_at(rec, GROUP_COUNT_AT)?);
        match u32_at(rec, 0)? {
            RELATION_PROCESSOR_CORE => cores.push(record_cpus(rec, count)?),
            RELATION_PROCESSOR_PACKAGE => packages.push(record_cpus(rec, count)?),
            RELATION_NUMA_NODE => nodes.push((u32_at(rec, 8)?, record_cpus(rec, count.max(1))?)),
            _ => {}
        }
        at += size;
    }
    let socket_of = |cpu: u32| packages.iter().position(|p: &Vec<u32>| p.contains(&cpu));
    let mut next_core = vec![0u32; packages.len() + 1];
    let mut cpus = Vec::new();
    for core in &cores {
        let socket = core.first().and_then(|c| socket_of(*c)).unwrap_or(0);
        for &id in core {
            let node = nodes
                .iter()
                .find(|(_, l)| l.contains(&id))
                .map_or(0, |(n, _)| *n);
            cpus.push(CpuPlace {
                id,
                socket: socket as u32,
                node,
                core: next_core[socket],
            });
        }
        next_core[socket] += 1;
    }
    cpus.sort_by_key(|c| c.id);
    (!cpus.is_empty()).then_some(CpuTopology { cpus })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn place(id: u32, socket: u32, node: u32, core: u32) -> CpuPlace {
        CpuPlace {
            id,
            socket,
            node,
            core,
        }
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,8-11\n"),
            Some(vec![0, 1, 2, 3, 8, 9, 10, 11])
        );
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
        assert_eq!(parse_cpu_list("\n"), Some(vec![]), "a memory-only node");
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("0-x"), None);
    }

    /// /sys of a host: `files` maps (cpu, name) to the topology file's text.
    type Files = HashMap<(u32, &'static str), String>;
    fn sys(files: &Files) -> impl Fn(u32, &str) -> Option<String> + '_ {
        |cpu, name| {
            let (_, text) = files.iter().find(|((c, n), _)| *c == cpu && *n == name)?;
            Some(text.clone())
        }
    }

    /// Two sockets of two hyperthreaded cores, each socket its own NUMA node; Linux numbers the
    /// first thread of every core before the second (cpu4 is cpu0's sibling).
    #[test]
    fn a_two_socket_hyperthreaded_host() {
        let mut files = HashMap::new();
        for cpu in 0..8u32 {
            let socket = u32::from(cpu % 4 >= 2);
            files.insert((cpu, "physical_package_id"), format!("{socket}\n"));
            files.insert((cpu, "core_id"), format!("{}\n", cpu % 2));
        }
        let nodes = [(0, "0-1,4-5\n".to_string()), (1, "2-3,6-7\n".to_string())];
        let t = from_sys("0-7\n", &nodes, sys(&files)).unwrap();
        assert_eq!(t.cpus.len(), 8);
        assert_eq!(t.sockets(), vec![0, 1]);
        assert_eq!(t.nodes(), vec![0, 1]);
        assert_eq!(t.cores(), vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(t.place(0), Some(&place(0, 0, 0, 0)));
        assert_eq!(t.place(4), Some(&place(4, 0, 0, 0)), "cpu0's sibling");
        assert_eq!(t.place(7), Some(&place(7, 1, 1, 1)));
    }

    /// A VM: no node directories, one package, a core per vCPU; cpu3 offline.
    #[test]
    fn a_vm_without_numa_is_node_0() {
        let mut files = HashMap::new();
        for cpu in [0u32, 1, 2, 4] {
            files.insert((cpu, "physical_package_id"), "0\n".to_string());
            files.insert((cpu, "core_id"), format!("{cpu}\n"));
        }
        let t = from_sys("0-2,4\n", &[], sys(&files)).unwrap();
        let ids: Vec<u32> = t.cpus.iter().map(|c| c.id).collect();
        assert_eq!(ids, vec![0, 1, 2, 4]);
        assert_eq!(
            (t.sockets(), t.nodes(), t.cores().len()),
            (vec![0], vec![0], 4)
        );
    }

    #[test]
    fn missing_topology_files_neither_invent_siblings_nor_fail() {
        let mut files = HashMap::new();
        files.insert((0, "physical_package_id"), "-1\n".to_string());
        let t = from_sys("0-1", &[], sys(&files)).unwrap();
        assert_eq!(t.cpus, vec![place(0, 0, 0, 0), place(1, 0, 0, 1)]);
        assert_eq!(from_sys("", &[], sys(&files)), None);
        assert_eq!(from_sys("garbage", &[], sys(&files)), None);
    }

    /// One `SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX` record as Windows lays it out.
    fn record(relation: u32, node: u32, group_count: u16, masks: &[(u16, u64)]) -> Vec<u8> {
        let size = (GROUP_MASKS_AT + masks.len().max(1) * GROUP_AFFINITY_SIZE).next_multiple_of(8);
        let mut b = vec![0u8; size];
        b[0..4].copy_from_slice(&relation.to_le_bytes());
        b[4..8].copy_from_slice(&(size as u32).to_le_bytes());
        b[8..12].copy_from_slice(&node.to_le_bytes());
        b[GROUP_COUNT_AT..GROUP_COUNT_AT + 2].copy_from_slice(&group_count.to_le_bytes());
        for (i, (group, mask)) in masks.iter().enumerate() {
            let at = GROUP_MASKS_AT + i * GROUP_AFFINITY_SIZE;
            b[at..at + MASK_BYTES].copy_from_slice(&mask.to_le_bytes()[..MASK_BYTES]);
            b[at + MASK_BYTES..at + MASK_BYTES + 2].copy_from_slice(&group.to_le_bytes());
        }
        b
    }

    fn core(mask: u64) -> Vec<u8> {
        record(RELATION_PROCESSOR_CORE, 0, 1, &[(0, mask)])
    }

    /// Windows numbers a core's hardware threads next to each other: two packages of two
    /// cores, a NUMA node each (written as Windows before 20H2 does, group count 0), and a
    /// cache record between them that is not a CPU's place.
    #[test]
    fn windows_records_of_a_two_socket_hyperthreaded_host() {
        let mut b = Vec::new();
        for mask in [0b11, 0b1100, 0b11_0000, 0b1100_0000] {
            b.extend(core(mask));
        }
        b.extend(record(2, 0, 1, &[(0, 0b11)])); // a cache
        b.extend(record(RELATION_NUMA_NODE, 0, 0, &[(0, 0x0f)]));
        b.extend(record(RELATION_NUMA_NODE, 1, 0, &[(0, 0xf0)]));
        b.extend(record(RELATION_PROCESSOR_PACKAGE, 0, 1, &[(0, 0x0f)]));
        b.extend(record(RELATION_PROCESSOR_PACKAGE, 0, 1, &[(0, 0xf0)]));
        let t = from_slpi(&b).unwrap();
        assert_eq!(t.cpus.len(), 8);
        assert_eq!(t.cores(), vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(t.place(1), Some(&place(1, 0, 0, 0)), "cpu0's sibling");
        assert_eq!(t.place(6), Some(&place(6, 1, 1, 1)));
        assert_eq!(from_slpi(&b[..b.len() - 4]), None, "cut short");
        assert_eq!(from_slpi(&[]), None);
    }

    /// A CPU's number is its group × 64 + its bit: the first CPU of group 1 is 64.
    #[test]
    fn windows_processor_groups() {
        let mut b = core(0b1);
        b.extend(record(RELATION_PROCESSOR_CORE, 0, 1, &[(1, 0b1)]));
        b.extend(record(
            RELATION_PROCESSOR_PACKAGE,
            0,
            2,
            &[(0, 0b1), (1, 0b1)],
        ));
        let t = from_slpi(&b).unwrap();
        assert_eq!(t.cpus, vec![place(0, 0, 0, 0), place(64, 0, 0, 1)]);
    }
}
