//! The host's facts parsed purely: cpufreq's governor as the power policy. Below `sys` (whose
//! Linux `host_info` reads the governor and parses it here) and the neutral `host`, so the
//! imports run one way; tested on any system.

use iocap_model::PowerPolicy;

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
    fn the_governor_is_linux_s_power_policy() {
        let p = super::governor("performance\n").unwrap();
        assert_eq!((p.name.as_str(), p.guid), ("performance", None));
        assert_eq!(super::governor("\n"), None);
    }
}
