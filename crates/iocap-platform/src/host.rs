//! The host fingerprint stored with every result: enough to tell two machines, two kernels or
//! two CPU configurations apart when results are compared later, down to where the CPUs sit
//! (`topology`) and the power policy they ran under.

pub use crate::sys::host::{host_info, mem_available_bytes, process_cpu_s};

#[cfg(test)]
mod tests {
    #[test]
    fn fingerprint_is_filled() {
        let h = super::host_info();
        assert!(!h.kernel.is_empty());
        assert!(h.cpus >= 1);
        assert!(h.memory_bytes > 0);
        if let Some(t) = &h.topology {
            assert!(!t.cpus.is_empty());
        }
        if let Some(p) = &h.power_policy {
            assert!(!p.name.is_empty());
            assert_eq!(p.guid.is_some(), cfg!(windows), "{p:?}");
        }
    }
}
