//! The host on Windows: the power plan, the processor's minimum state, the clock against the
//! rated one, and SQL Server's service-account rights.

use super::{decode, Source};
use crate::Finding;
use crate::{AuditOptions, Check, Severity};

/// Windows' own power schemes (powercfg /list).
const HIGH_PERFORMANCE: &str = "8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c";
const ULTIMATE_PERFORMANCE: &str = "e9a42b02-d5df-448d-aa00-03f14749eb61";
const BALANCED: &str = "381b4222-f694-41f0-9685-ff5bb260df2e";
const POWER_SAVER: &str = "a1841308-3541-4fab-bc81-f71556f20b4a";

/// Every host-wide check on Windows.
pub fn host_checks(src: &dyn Source, opts: &AuditOptions) -> Vec<Check> {
    let mut out = Vec::new();
    let scheme = src.power_scheme();
    out.push(power_plan(&scheme));
    out.push(match &scheme {
        Err(e) => Check::unknown("cpu.min_processor_state", "cpu", e.clone()),
        Ok((_, guid)) => min_state(src.min_processor_state(guid)),
    });
    out.push(frequency(src.processors()));
    out.extend(sql_rights(src, opts));
    out
}

fn power_plan(scheme: &Result<(String, String), String>) -> Check {
    let (name, guid) = match scheme {
        Ok(s) => s,
        Err(e) => return Check::unknown("cpu.power_plan", "cpu", e.clone()),
    };
    let ev = format!("active power plan \"{name}\" ({guid}) from PowerGetActiveScheme");
    let (sev, rec) = match guid.as_str() {
        HIGH_PERFORMANCE | ULTIMATE_PERFORMANCE => (Severity::Pass, "Nothing to do: the plan keeps the processors at full speed."),
        BALANCED | POWER_SAVER => (Severity::Warn, "Choose the High performance plan (powercfg /setactive SCHEME_MIN) and the BIOS power profile to maximum performance: seed 004's survey found power saving on by mistake on about 40 % of servers, with cores at 75 % of rated speed."),
        _ => (Severity::Info, "A custom plan: check that its processor minimum state is 100 % and the BIOS power profile is maximum performance."),
    };
    Check::new("cpu.power_plan", sev, "cpu", ev, rec)
}

fn min_state(v: Result<u32, String>) -> Check {
    match v {
        Err(e) => Check::unknown("cpu.min_processor_state", "cpu", e),
        Ok(pct) => {
            let ev = format!("processor minimum state {pct} % on AC power from PowerReadACValueIndex (active plan, processor power management)");
            if pct >= 100 {
                Check::new(
                    "cpu.min_processor_state",
                    Severity::Pass,
                    "cpu",
                    ev,
                    "Nothing to do: idle cores do not clock down.",
                )
            } else {
                Check::new("cpu.min_processor_state", Severity::Warn, "cpu", ev, "Set the minimum processor state to 100 % (or use High performance): cores clocked down between bursts add latency to every I/O completion.")
            }
        }
    }
}

/// `cpu.frequency`: CurrentMhz against MaxMhz, as Linux compares scaling_cur_freq and
/// cpuinfo_max_freq (the same thresholds).
fn frequency(raw: Result<Vec<u8>, String>) -> Check {
    let cpus = match raw.and_then(|b| {
        decode::processor_power(&b).ok_or_else(|| {
            format!(
                "CallNtPowerInformation(ProcessorInformation) answered {} B: no \
                 PROCESSOR_POWER_INFORMATION",
                b.len()
            )
        })
    }) {
        Ok(c) => c,
        Err(e) => return Check::unknown("cpu.frequency", "cpu", e),
    };
    let rated: Vec<_> = cpus.iter().filter(|c| c.max_mhz > 0).collect();
    if rated.is_empty() {
        return Check::unknown(
            "cpu.frequency",
            "cpu",
            "CallNtPowerInformation(ProcessorInformation) gave MaxMhz 0 for every processor",
        );
    }
    let n = rated.len() as u64;
    let cur: u64 = rated.iter().map(|c| u64::from(c.current_mhz)).sum::<u64>() / n;
    let max: u64 = rated.iter().map(|c| u64::from(c.max_mhz)).sum::<u64>() / n;
    let limit: u64 = rated.iter().map(|c| u64::from(c.limit_mhz)).sum::<u64>() / n;
    let lowest = rated
        .iter()
        .min_by_key(|c| u64::from(c.current_mhz) * 1000 / u64::from(c.max_mhz))
        .expect("non-empty");
    let pct = cur * 100 / max;
    let ev = format!(
        "mean CurrentMhz {cur} MHz = {pct} % of mean MaxMhz {max} MHz (MhzLimit {limit} MHz) over {n} processors (lowest: processor {} at {} MHz) from CallNtPowerInformation(ProcessorInformation)",
        lowest.number, lowest.current_mhz
    );
    if pct < 80 || limit * 100 < max * 80 {
        Check::new("cpu.frequency", Severity::Warn, "cpu", ev, "Cores run (or are limited) below 80 % of their rated speed: check the power plan and BIOS power saving, and re-check under load (idle cores clock down).")
    } else {
        Check::new(
            "cpu.frequency",
            Severity::Pass,
            "cpu",
            ev,
            "Nothing to do: cores run at 80 % or more of their rated speed.",
        )
    }
}

/// The default instance's service: named instances run as `MSSQL$NAME`.
const SQL_SERVICE: &str = "MSSQLSERVER";

/// The rights SQL Server's account should hold: (check, privilege, its name in secpol.msc,
/// what is lost without it, how to see it in SQL Server).
const SQL_RIGHTS: [(&str, &str, &str, &str, &str); 2] = [
    (
        "sqlserver.instant_file_init",
        "SeManageVolumePrivilege",
        "Perform volume maintenance tasks",
        "every data-file growth and restore writes zeros first",
        "SELECT instant_file_initialization_enabled FROM sys.dm_server_services",
    ),
    (
        "sqlserver.lock_pages",
        "SeLockMemoryPrivilege",
        "Lock pages in memory",
        "Windows may page out the buffer pool under memory pressure",
        "SELECT sql_memory_model_desc FROM sys.dm_os_sys_info: LOCK_PAGES",
    ),
];

/// `sqlserver.instant_file_init` and `sqlserver.lock_pages`: always INFO. The rights granted
/// to the default instance's account directly; one that comes through a group (Administrators)
/// is not seen, so a missing one is never a FAIL.
fn sql_rights(src: &dyn Source, opts: &AuditOptions) -> Vec<Check> {
    if opts
        .profile
        .is_some_and(|p| p != crate::DbFamily::Sqlserver)
    {
        return Vec::new();
    }
    let got = src.service_rights(SQL_SERVICE);
    SQL_RIGHTS
        .iter()
        .map(|(id, privilege, shown, loss, query)| {
            let (ev, rec) = match &got {
                Err(e) => (
                    format!("not read: {privilege} (\"{shown}\") of the {SQL_SERVICE} service's account: {e}"),
                    format!("Check it in SQL Server ({query}) or secpol.msc: without it {loss}."),
                ),
                Ok((account, rights)) if rights.iter().any(|r| r == privilege) => (
                    format!("{privilege} (\"{shown}\") granted to {account}, the {SQL_SERVICE} service's account, from LsaEnumerateAccountRights"),
                    "Nothing to do: the service account holds the right (SQL Server uses it after a restart).".to_string(),
                ),
                Ok((account, _)) => (
                    format!("{privilege} (\"{shown}\") not granted to {account}, the {SQL_SERVICE} service's account, directly, from LsaEnumerateAccountRights (a group such as Administrators may grant it)"),
                    format!("Grant \"{shown}\" to the service account (secpol.msc, User Rights Assignment) unless a group grants it ({query}): without it {loss}."),
                ),
            };
            Check::new(id, Severity::Info, "sqlserver", ev, rec)
        })
        .collect()
}
