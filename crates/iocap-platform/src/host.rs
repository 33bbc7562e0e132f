//! The host fingerprint stored with every result: enough to tell two machines, two kernels or
//! two CPU configurations apart when results are compared later, down to where the CPUs sit
//! (`topology`) and the power policy they ran under.

use iocap_model::PowerPolicy;

pub use crate::sys::host::{host_info, mem_available_bytes, process_cpu_s};

/// The power policy `scaling_governor`'s text names; `None` when it names none.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn governor(text: &str) -> Option<PowerPolicy> {
    let name = text.trim();
    (!name.is_empty()).then(|| PowerPolicy {
        name: name.to_string(),
        guid: None,
    })
}

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

    #[test]
    fn the_governor_is_linux_s_power_policy() {
        let p = super::governor("performance\n").unwrap();
        assert_eq!((p.name.as_str(), p.guid), ("performance", None));
        assert_eq!(super::governor("\n"), None);
    }
}
