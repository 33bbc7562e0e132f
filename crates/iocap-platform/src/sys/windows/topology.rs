//! Where the CPUs sit, read from GetLogicalProcessorInformationEx and decoded by
//! [`from_slpi`].

use iocap_model::CpuTopology;

use crate::parse::topology::{
    from_slpi, GROUP_AFFINITY_SIZE, GROUP_COUNT_AT, GROUP_MASKS_AT, MASK_BYTES,
};

/// Reads the topology from GetLogicalProcessorInformationEx (every relation at once).
pub fn read() -> Option<CpuTopology> {
    use windows_sys::Win32::System::SystemInformation::{
        GetLogicalProcessorInformationEx, RelationAll,
    };
    let mut len = 0u32;
    // SAFETY: a null buffer of length 0 asks only for the length needed, written to `len`.
    unsafe { GetLogicalProcessorInformationEx(RelationAll, std::ptr::null_mut(), &mut len) };
    if len == 0 {
        return None;
    }
    // u64s: the records' natural alignment
    let mut buf = vec![0u64; (len as usize).div_ceil(8)];
    // SAFETY: `buf` is writable and aligned for `len` bytes, as `len` says.
    let ok =
        unsafe { GetLogicalProcessorInformationEx(RelationAll, buf.as_mut_ptr().cast(), &mut len) };
    if ok == 0 {
        return None;
    }
    let n = (len as usize).min(buf.len() * 8);
    // SAFETY: the first `n` bytes of `buf`, which it owns, viewed as bytes for as long as it lives.
    let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n) };
    from_slpi(bytes)
}

// The decoder's offsets are the SDK's: checked against windows-sys when building for Windows.
const _: () = {
    use std::mem::{offset_of, size_of};
    use windows_sys::Win32::System::SystemInformation::{
        GROUP_AFFINITY, NUMA_NODE_RELATIONSHIP, PROCESSOR_RELATIONSHIP,
        SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX,
    };
    type Slpi = SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX;
    assert!(offset_of!(Slpi, Size) == 4);
    assert!(offset_of!(Slpi, Anonymous) == 8);
    assert!(8 + offset_of!(PROCESSOR_RELATIONSHIP, GroupCount) == GROUP_COUNT_AT);
    assert!(8 + offset_of!(PROCESSOR_RELATIONSHIP, GroupMask) == GROUP_MASKS_AT);
    assert!(8 + offset_of!(NUMA_NODE_RELATIONSHIP, GroupCount) == GROUP_COUNT_AT);
    assert!(8 + offset_of!(NUMA_NODE_RELATIONSHIP, Anonymous) == GROUP_MASKS_AT);
    assert!(size_of::<GROUP_AFFINITY>() == GROUP_AFFINITY_SIZE);
    assert!(offset_of!(GROUP_AFFINITY, Group) == MASK_BYTES);
};
