//! Windows: what the audit asks of the power settings: the active scheme, its processor
//! minimum state on AC power (PowerReadACValueIndex) and each processor's power record
//! (CallNtPowerInformation), whose bytes `iocap-audit` decodes purely. Each failure is
//! returned as text naming the call and its error.

use windows_sys::core::GUID;
use windows_sys::Win32::System::Power::{
    CallNtPowerInformation, PowerReadACValueIndex, ProcessorInformation,
    PROCESSOR_POWER_INFORMATION,
};
use windows_sys::Win32::System::Threading::GetActiveProcessorCount;

use super::win;

/// The size of one processor's `PROCESSOR_POWER_INFORMATION`, as windows-sys lays it out.
pub const PROCESSOR_POWER_INFORMATION_SIZE: usize =
    std::mem::size_of::<PROCESSOR_POWER_INFORMATION>();

/// GUID_PROCESSOR_SETTINGS_SUBGROUP (winnt.h).
const PROCESSOR_SUBGROUP: u128 = 0x54533251_82be_4824_96c1_47b60b740d00;
/// GUID_PROCESSOR_THROTTLE_MINIMUM (winnt.h).
const THROTTLE_MINIMUM: u128 = 0x893dee8e_2bef_41e0_89c6_b55d0929964c;

/// The active power scheme: (friendly name, GUID text), from PowerGetActiveScheme.
pub fn active_scheme() -> Result<(String, String), String> {
    win::power_scheme().ok_or_else(|| "PowerGetActiveScheme gave no active power scheme".into())
}

/// The scheme's processor minimum state on AC power, in percent.
pub fn min_processor_state(scheme_guid: &str) -> Result<u32, String> {
    let scheme = u128::from_str_radix(&scheme_guid.replace('-', ""), 16)
        .map(GUID::from_u128)
        .map_err(|_| format!("power scheme GUID {scheme_guid:?} not understood"))?;
    let sub = GUID::from_u128(PROCESSOR_SUBGROUP);
    let min = GUID::from_u128(THROTTLE_MINIMUM);
    let mut v = 0u32;
    // SAFETY: the default root key; three valid GUIDs; `v` is writable.
    let rc = unsafe { PowerReadACValueIndex(std::ptr::null_mut(), &scheme, &sub, &min, &mut v) };
    if rc != 0 {
        return Err(format!(
            "PowerReadACValueIndex(processor minimum state) failed: error {rc}"
        ));
    }
    Ok(v)
}

/// CallNtPowerInformation(ProcessorInformation)'s output, one record per active processor.
pub fn processors() -> Result<Vec<u8>, String> {
    // SAFETY: no arguments but the group (ALL_PROCESSOR_GROUPS).
    let n = unsafe { GetActiveProcessorCount(0xffff) }.max(1) as usize;
    let mut buf = vec![0u8; n * PROCESSOR_POWER_INFORMATION_SIZE];
    // SAFETY: no input; `buf` is writable for its stated length.
    let status = unsafe {
        CallNtPowerInformation(
            ProcessorInformation,
            std::ptr::null(),
            0,
            buf.as_mut_ptr().cast(),
            buf.len() as u32,
        )
    };
    if status != 0 {
        return Err(format!(
            "CallNtPowerInformation(ProcessorInformation) failed: NTSTATUS 0x{:08x}",
            status as u32
        ));
    }
    Ok(buf)
}
