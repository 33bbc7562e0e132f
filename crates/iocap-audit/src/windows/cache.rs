//! A disk's write cache and whether Windows flushes it: `device.write_cache` (as on Linux,
//! always INFO) and `device.cache_flushing` (flushing turned off on a volatile cache: FAIL).

use super::decode::{Tri, WriteCache};
use crate::Finding;
use crate::{Check, Severity};

const WC_CALL: &str = "IOCTL_STORAGE_QUERY_PROPERTY(StorageDeviceWriteCacheProperty)";
const CI_CALL: &str = "IOCTL_DISK_GET_CACHE_INFORMATION";

fn on(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

fn tri(t: Tri) -> &'static str {
    match t {
        Tri::Yes => "enabled",
        Tri::No => "disabled",
        Tri::Unknown => "state unknown",
    }
}

/// `device.write_cache`: the write-cache property, and the cache information beside it.
pub fn write_cache(
    name: &str,
    wc: &Result<WriteCache, String>,
    ci: &Result<(bool, bool), String>,
) -> Check {
    let ci_text = ci.as_ref().ok().map(|(r, w)| {
        format!(
            "read cache {}, write cache {} from {CI_CALL}",
            on(*r),
            on(*w)
        )
    });
    let (ev, enabled) = match (wc, &ci_text) {
        (Ok(w), _) => (
            format!(
                "write cache {}, {}, flush {}supported{} from {WC_CALL}{}",
                w.type_name(),
                tri(w.enabled),
                if w.flush_supported { "" } else { "not " },
                if w.user_power_protection {
                    ", the user has declared it power-protected (buffer flushing off)"
                } else {
                    ""
                },
                ci_text
                    .as_ref()
                    .map(|c| format!("; {c}"))
                    .unwrap_or_default()
            ),
            match w.enabled {
                Tri::Yes => Some(true),
                Tri::No => Some(false),
                Tri::Unknown => ci.as_ref().ok().map(|c| c.1),
            },
        ),
        (Err(_), Some(c)) => (c.clone(), ci.as_ref().ok().map(|c| c.1)),
        (Err(a), None) => {
            let b = ci.as_ref().err().cloned().unwrap_or_default();
            return Check::unknown("device.write_cache", name, format!("{a}; {b}"));
        }
    };
    let rec = match enabled {
        Some(true) => "Volatile write cache: Windows sends flushes (FlushFileBuffers, FUA writes), so commits wait for them; expect results to differ by several times from write-through.",
        Some(false) => "Write-through: every write waits for the medium; a power-loss-protected controller cache in write-back mode can cut log latency several times.",
        None => "Whether the cache is on was not told: check the disk's policies in Device Manager.",
    };
    Check::new("device.write_cache", Severity::Info, name, ev, rec)
}

/// `device.cache_flushing`: "Turn off Windows write-cache buffer flushing on the device" on a
/// write cache the device reports as volatile loses acknowledged log writes on power loss.
pub fn flushing(name: &str, wc: &Result<WriteCache, String>) -> Check {
    let w = match wc {
        Ok(w) => w,
        Err(e) => return Check::unknown("device.cache_flushing", name, e.clone()),
    };
    let ev = format!(
        "write cache {}, {}; UserDefinedPowerProtection {} (buffer flushing {}) from {WC_CALL}",
        w.type_name(),
        tri(w.enabled),
        w.user_power_protection as u8,
        if w.user_power_protection {
            "turned off"
        } else {
            "on"
        }
    );
    let volatile = w.enabled == Tri::Yes && w.cache_type != 1 && w.cache_type != 3;
    if w.user_power_protection && volatile {
        Check::new("device.cache_flushing", Severity::Fail, name, ev, "Turn Windows write-cache buffer flushing back on (Device Manager, the disk's Policies): without flushes a power loss loses log writes SQL Server was told are durable. Turn it off only when the device's cache is battery- or flash-backed, which Windows cannot see here.")
    } else if w.user_power_protection && w.enabled == Tri::Unknown {
        Check::unknown("device.cache_flushing", name, format!("{ev}; whether the write cache is on was not told, so whether writes can be lost is not known"))
    } else if w.user_power_protection {
        Check::new("device.cache_flushing", Severity::Pass, name, ev, "Nothing to lose: the device reports no volatile write cache, so skipped flushes cost nothing.")
    } else {
        Check::new(
            "device.cache_flushing",
            Severity::Pass,
            name,
            ev,
            "Nothing to do: Windows flushes the write cache when SQL Server asks.",
        )
    }
}
