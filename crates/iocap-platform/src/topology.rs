//! Where the host's CPUs sit: each online CPU's socket, NUMA node and core, for the result's
//! `HostInfo.topology` (DiskSpd's `ProcessorTopology`, and any view that asks whether two busy
//! CPUs are hardware threads of one core or a test's threads crossed sockets).
//!
//! Linux: `/sys/devices/system/cpu/online`, each CPU's `topology/physical_package_id` and
//! `core_id`, and the NUMA nodes' `cpulist`s (a host without node directories, as most VMs, is
//! node 0). Windows: GetLogicalProcessorInformationEx's processor core, NUMA node and package
//! records; a CPU's number is its group × 64 + its bit in the group's mask. Both are parsed by
//! pure functions of what the system gave, so each layout is unit-tested on any system.

pub use crate::parse::topology::{from_slpi, from_sys, parse_cpu_list};
pub use crate::sys::topology::read;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_machine() {
        if cfg!(windows) || std::path::Path::new("/sys/devices/system/cpu/online").exists() {
            let t = read().expect("the system's CPUs parse");
            assert!(!t.cpus.is_empty() && !t.sockets().is_empty());
        }
    }
}
