//! The host's CPUs as DiskSpd numbers and reports them: Windows processor groups of up to 64
//! CPUs, cores numbered within their group, and every CPU's use over the test, system-wide.
//!
//! Why: DiskSpd's scripts find the hot core (`CpuUtilization/CPU/UsagePercent`) and read the
//! topology the threads ran on; iocap's result holds every CPU's share (`CpuStats.system`) and
//! where each CPU sits (`HostInfo.topology`), in the OS's numbering. This module lays them out
//! the way DiskSpd 2.2 does, once, for the text table and the XML elements alike.

use iocap_model::detail::{CpuShare, CpuTopology};
use iocap_model::{HostInfo, TestResult};
use std::collections::BTreeMap;

/// CPUs per Windows processor group: CPU `id` is processor `id % 64` of group `id / 64`.
const GROUP_CPUS: u32 = 64;

/// One processor group's CPUs: how many, and their mask.
pub(crate) struct Group {
    pub group: u32,
    /// One more than the highest processor number in it (DiskSpd's `MaximumProcessors`).
    pub max: u32,
    pub active: u32,
    pub mask: u64,
}

/// One core (within one group): its number in the group and its CPUs.
pub(crate) struct Core {
    pub group: u32,
    pub number: u32,
    pub mask: u64,
}

/// The topology in DiskSpd's terms. Sockets are numbered 0, 1, ... in the order of the OS's
/// package numbers (as DiskSpd numbers them); nodes keep the OS's numbers.
pub(crate) struct Layout {
    pub groups: Vec<Group>,
    /// Each node or socket with its CPUs' mask in each group.
    pub nodes: Vec<(u32, Vec<(u32, u64)>)>,
    pub sockets: Vec<(u32, Vec<(u32, u64)>)>,
    /// In DiskSpd's order: by group, then by mask.
    pub cores: Vec<Core>,
    topology: CpuTopology,
}

/// Where one CPU sits; `None` where the host's topology was not read.
pub(crate) struct Place {
    pub socket: Option<u32>,
    pub node: Option<u32>,
    pub group: u32,
    pub core: Option<u32>,
    /// Its number within its group (DiskSpd's `Id`).
    pub number: u32,
}

fn bit(id: u32) -> u64 {
    1u64 << (id % GROUP_CPUS)
}

/// CPUs by (key, group) into masks.
fn masks(t: &CpuTopology, key: impl Fn(u32) -> u32) -> Vec<(u32, Vec<(u32, u64)>)> {
    let mut m: BTreeMap<u32, BTreeMap<u32, u64>> = BTreeMap::new();
    for c in &t.cpus {
        *m.entry(key(c.id))
            .or_default()
            .entry(c.id / GROUP_CPUS)
            .or_default() |= bit(c.id);
    }
    m.into_iter()
        .map(|(k, g)| (k, g.into_iter().collect()))
        .collect()
}

impl Layout {
    pub fn of(t: &CpuTopology) -> Layout {
        let sockets = t.sockets();
        let socket_no = |id: u32| -> u32 {
            let s = t.place(id).map_or(0, |p| p.socket);
            sockets.iter().position(|&x| x == s).unwrap_or(0) as u32
        };
        let groups = masks(t, |_| 0)
            .pop()
            .map(|(_, g)| g)
            .unwrap_or_default()
            .into_iter()
            .map(|(group, mask)| Group {
                group,
                max: 64 - mask.leading_zeros(),
                active: mask.count_ones(),
                mask,
            })
            .collect();
        let mut by_core: BTreeMap<(u32, u32, u32), u64> = BTreeMap::new();
        for c in &t.cpus {
            *by_core
                .entry((c.id / GROUP_CPUS, c.socket, c.core))
                .or_default() |= bit(c.id);
        }
        let mut cores: Vec<(u32, u64)> = by_core.into_iter().map(|((g, _, _), m)| (g, m)).collect();
        cores.sort_unstable();
        let mut numbered = Vec::with_capacity(cores.len());
        for (i, &(group, mask)) in cores.iter().enumerate() {
            let first = cores.iter().position(|&(g, _)| g == group).unwrap_or(i);
            numbered.push(Core {
                group,
                number: (i - first) as u32,
                mask,
            });
        }
        Layout {
            groups,
            nodes: masks(t, |id| t.place(id).map_or(0, |p| p.node)),
            sockets: masks(t, socket_no),
            cores: numbered,
            topology: t.clone(),
        }
    }

    /// Whether some core has more than one CPU (DiskSpd's text then shows a `Core` column).
    pub fn smt(&self) -> bool {
        self.cores.iter().any(|c| c.mask.count_ones() > 1)
    }

    fn place(&self, id: u32) -> Place {
        let group = id / GROUP_CPUS;
        let known = self.topology.place(id).is_some();
        let find = |list: &[(u32, Vec<(u32, u64)>)]| {
            let has = |(_, g): &&(u32, Vec<(u32, u64)>)| {
                g.iter().any(|&(gr, m)| gr == group && m & bit(id) != 0)
            };
            list.iter().find(has).map(|(k, _)| *k)
        };
        let core = self
            .cores
            .iter()
            .find(|c| c.group == group && c.mask & bit(id) != 0);
        Place {
            socket: find(&self.sockets).filter(|_| known),
            node: find(&self.nodes).filter(|_| known),
            group,
            core: core.map(|c| c.number).filter(|_| known),
            number: id % GROUP_CPUS,
        }
    }
}

/// One CPU's row: where it sits and its share of the test's time.
pub(crate) struct Row {
    pub place: Place,
    pub share: CpuShare,
}

/// DiskSpd's CPU table: a row per CPU, the average, and which place columns the text shows.
pub(crate) struct Table {
    pub rows: Vec<Row>,
    /// Usage, user, kernel and idle, each the mean over the CPUs.
    pub avg: [f64; 4],
    pub multi_socket: bool,
    pub multi_node: bool,
    pub multi_group: bool,
    pub smt: bool,
}

/// The table of the test's system-wide CPU shares; `None` for a result without them.
pub(crate) fn table(test: &TestResult, host: &HostInfo) -> Option<Table> {
    if test.cpu.system.is_empty() {
        return None;
    }
    let layout = host.topology.as_ref().map(Layout::of);
    let mut shares = test.cpu.system.clone();
    shares.sort_by_key(|c| c.id);
    let rows: Vec<Row> = shares
        .into_iter()
        .map(|share| Row {
            place: match &layout {
                Some(l) => l.place(share.id),
                None => Place {
                    socket: None,
                    node: None,
                    group: share.id / GROUP_CPUS,
                    core: None,
                    number: share.id % GROUP_CPUS,
                },
            },
            share,
        })
        .collect();
    let n = rows.len() as f64;
    let mean = |f: fn(&CpuShare) -> f64| rows.iter().map(|r| finite(f(&r.share))).sum::<f64>() / n;
    let avg = [
        mean(|c| c.usage_pct),
        mean(|c| c.user_pct),
        mean(|c| c.kernel_pct),
        mean(|c| c.idle_pct),
    ];
    let mut groups: Vec<u32> = rows.iter().map(|r| r.place.group).collect();
    groups.dedup();
    Some(Table {
        avg,
        multi_socket: layout.as_ref().is_some_and(|l| l.sockets.len() > 1),
        multi_node: layout.as_ref().is_some_and(|l| l.nodes.len() > 1),
        multi_group: groups.len() > 1,
        smt: layout.as_ref().is_some_and(Layout::smt),
        rows,
    })
}

/// A percentage as printed: NaN and infinities as 0.
pub(crate) fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// The power scheme's name and GUID as DiskSpd states them: `<unknown>` for a name it cannot
/// read (DiskSpd's own word for it); no GUID where the host has none (Linux).
pub(crate) fn power_scheme(h: &HostInfo) -> (&str, Option<&str>) {
    match &h.power_policy {
        Some(p) if !p.name.trim().is_empty() => (&p.name, p.guid.as_deref()),
        Some(p) => (UNKNOWN, p.guid.as_deref()),
        None => (UNKNOWN, None),
    }
}

/// What DiskSpd writes for a power scheme it cannot read.
pub(crate) const UNKNOWN: &str = "<unknown>";

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::detail::CpuPlace;

    fn place(id: u32, socket: u32, core: u32) -> CpuPlace {
        CpuPlace {
            id,
            socket,
            node: socket,
            core,
        }
    }

    /// Two sockets of two cores with two threads each, Linux-numbered (siblings 4 apart): the
    /// cores are numbered 0-3 in the group by their mask, each CPU on its own.
    #[test]
    fn a_two_socket_host_in_diskspd_s_terms() {
        let t = CpuTopology {
            cpus: (0..8).map(|id| place(id, id % 4 / 2, id % 2)).collect(),
        };
        let l = Layout::of(&t);
        assert_eq!(l.groups.len(), 1);
        let g = &l.groups[0];
        assert_eq!((g.group, g.max, g.active, g.mask), (0, 8, 8, 0xff));
        assert_eq!(l.sockets, vec![(0, vec![(0, 0x33)]), (1, vec![(0, 0xcc)])]);
        assert_eq!(l.nodes, l.sockets);
        let cores: Vec<(u32, u64)> = l.cores.iter().map(|c| (c.number, c.mask)).collect();
        assert_eq!(cores, [(0, 0x11), (1, 0x22), (2, 0x44), (3, 0x88)]);
        assert!(l.smt());
        let p = l.place(6);
        assert_eq!(
            (p.socket, p.node, p.group, p.core, p.number),
            (Some(1), Some(1), 0, Some(2), 6)
        );
    }

    /// CPUs past 63 are in group 1, numbered from 0 there, their cores too.
    #[test]
    fn cpus_past_63_are_in_the_next_group() {
        let t = CpuTopology {
            cpus: vec![place(0, 0, 0), place(64, 0, 1), place(65, 0, 1)],
        };
        let l = Layout::of(&t);
        let groups: Vec<(u32, u32, u64)> = l
            .groups
            .iter()
            .map(|g| (g.group, g.active, g.mask))
            .collect();
        assert_eq!(groups, [(0, 1, 0x1), (1, 2, 0x3)]);
        let cores: Vec<(u32, u32, u64)> = l
            .cores
            .iter()
            .map(|c| (c.group, c.number, c.mask))
            .collect();
        assert_eq!(cores, [(0, 0, 0x1), (1, 0, 0x3)]);
        let p = l.place(65);
        assert_eq!((p.group, p.core, p.number), (1, Some(0), 1));
    }
}
