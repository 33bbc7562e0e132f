//! Where the CPUs sit, read from Linux's /sys and parsed by [`from_sys`].

use iocap_model::CpuTopology;

use crate::parse::topology::from_sys;

/// Reads the topology from /sys; `None` when `cpu/online` cannot be read.
pub fn read() -> Option<CpuTopology> {
    let sys = std::path::Path::new("/sys/devices/system");
    let text = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    let online = text(sys.join("cpu/online"))?;
    let nodes: Vec<(u32, String)> = std::fs::read_dir(sys.join("node"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_str()?.strip_prefix("node")?.parse().ok()?;
            Some((n, text(e.path().join("cpulist"))?))
        })
        .collect();
    from_sys(&online, &nodes, |cpu, name| {
        text(sys.join(format!("cpu/cpu{cpu}/topology/{name}")))
    })
}
