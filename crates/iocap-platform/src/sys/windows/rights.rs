//! Windows: the rights of a service's account, from the local security policy, for the
//! audit's check of SQL Server's rights: the account from the service's configuration
//! (QueryServiceConfigW), its SID (LookupAccountNameW), the rights granted to that SID directly
//! (LsaEnumerateAccountRights). Rights that come through a group (Administrators) are not
//! listed there. Needs an administrator; each failure says which call.

use std::ptr::{null, null_mut};

use windows_sys::Win32::Security::Authentication::Identity::{
    LsaClose, LsaEnumerateAccountRights, LsaFreeMemory, LsaNtStatusToWinError, LsaOpenPolicy,
    LSA_OBJECT_ATTRIBUTES, LSA_UNICODE_STRING, POLICY_LOOKUP_NAMES,
};
use windows_sys::Win32::Security::LookupAccountNameW;
use windows_sys::Win32::System::Services::{
    CloseServiceHandle, OpenSCManagerW, OpenServiceW, QueryServiceConfigW, QUERY_SERVICE_CONFIGW,
    SC_MANAGER_CONNECT, SERVICE_QUERY_CONFIG,
};

use super::win;

/// STATUS_OBJECT_NAME_NOT_FOUND: the account has no rights of its own.
const NO_RIGHTS: i32 = 0xC000_0034_u32 as i32;

fn os_error() -> String {
    std::io::Error::last_os_error().to_string()
}

fn wide(s: &str) -> Vec<u16> {
    win::wide(std::ffi::OsStr::new(s))
}

/// The NUL-terminated UTF-16 text at `p`.
///
/// # Safety
/// `p` is null or points to a NUL-terminated UTF-16 string.
unsafe fn from_pwstr(p: *const u16) -> String {
    if p.is_null() {
        return String::new();
    }
    let mut n = 0;
    // SAFETY: the string is NUL-terminated (the caller's contract): reads stop at the NUL.
    while unsafe { *p.add(n) } != 0 {
        n += 1;
    }
    // SAFETY: `n` units were just read.
    String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(p, n) })
}

/// The account `service` runs as (`NT Service\MSSQLSERVER`, `DOMAIN\sql`), and the rights
/// granted to it directly.
pub fn service_rights(service: &str) -> Result<(String, Vec<String>), String> {
    let account = service_account(service)?;
    // LocalSystem is the SCM's name for the SYSTEM account
    let lookup = if account.eq_ignore_ascii_case("LocalSystem") {
        "NT AUTHORITY\\SYSTEM"
    } else {
        account.as_str()
    };
    let mut sid = account_sid(lookup)?;
    Ok((account, rights_of(&mut sid)?))
}

fn service_account(service: &str) -> Result<String, String> {
    // SAFETY: the local machine's active database; connect access only.
    let scm = unsafe { OpenSCManagerW(null(), null(), SC_MANAGER_CONNECT) };
    if scm.is_null() {
        return Err(format!("OpenSCManagerW failed: {}", os_error()));
    }
    let name = wide(service);
    // SAFETY: `scm` is open; `name` is NUL-terminated.
    let svc = unsafe { OpenServiceW(scm, name.as_ptr(), SERVICE_QUERY_CONFIG) };
    let out = if svc.is_null() {
        Err(format!(
            "no service {service} here (OpenServiceW: {})",
            os_error()
        ))
    } else {
        let r = config_account(svc);
        // SAFETY: closes the service handle opened above, once.
        unsafe { CloseServiceHandle(svc) };
        r
    };
    // SAFETY: closes the manager handle opened above, once.
    unsafe { CloseServiceHandle(scm) };
    out
}

fn config_account(svc: *mut core::ffi::c_void) -> Result<String, String> {
    let mut need = 0u32;
    // SAFETY: a null buffer of 0 bytes asks for the size only.
    unsafe { QueryServiceConfigW(svc, null_mut(), 0, &mut need) };
    // u64s: the structure's pointers need 8-byte alignment
    let mut buf = vec![0u64; (need as usize).div_ceil(8).max(8)];
    let cfg: *mut QUERY_SERVICE_CONFIGW = buf.as_mut_ptr().cast();
    // SAFETY: `buf` is writable for its stated length and aligned for the structure.
    if unsafe { QueryServiceConfigW(svc, cfg, (buf.len() * 8) as u32, &mut need) } == 0 {
        return Err(format!("QueryServiceConfigW failed: {}", os_error()));
    }
    // SAFETY: the call filled the structure; its strings point into `buf`, alive here.
    Ok(unsafe { from_pwstr((*cfg).lpServiceStartName) })
}

fn account_sid(account: &str) -> Result<Vec<u64>, String> {
    let name = wide(account);
    let (mut cb_sid, mut cch_domain, mut kind) = (0u32, 0u32, 0i32);
    // SAFETY: null buffers with zero sizes ask for the sizes only.
    unsafe {
        LookupAccountNameW(
            null(),
            name.as_ptr(),
            null_mut(),
            &mut cb_sid,
            null_mut(),
            &mut cch_domain,
            &mut kind,
        )
    };
    if cb_sid == 0 {
        return Err(format!(
            "LookupAccountNameW({account}) failed: {}",
            os_error()
        ));
    }
    let mut sid = vec![0u64; (cb_sid as usize).div_ceil(8)];
    let mut domain = vec![0u16; cch_domain.max(1) as usize];
    // SAFETY: both buffers are writable for the sizes the first call gave.
    let ok = unsafe {
        LookupAccountNameW(
            null(),
            name.as_ptr(),
            sid.as_mut_ptr().cast(),
            &mut cb_sid,
            domain.as_mut_ptr(),
            &mut cch_domain,
            &mut kind,
        )
    };
    if ok == 0 {
        return Err(format!(
            "LookupAccountNameW({account}) failed: {}",
            os_error()
        ));
    }
    Ok(sid)
}

fn rights_of(sid: &mut [u64]) -> Result<Vec<String>, String> {
    // SAFETY: LSA_OBJECT_ATTRIBUTES is plain data; all zeroes is what LsaOpenPolicy wants.
    let attrs: LSA_OBJECT_ATTRIBUTES = unsafe { std::mem::zeroed() };
    let mut policy = 0isize;
    // SAFETY: the local system; valid attributes; `policy` is writable.
    let st = unsafe { LsaOpenPolicy(null(), &attrs, POLICY_LOOKUP_NAMES as u32, &mut policy) };
    if st != 0 {
        // SAFETY: converts a status code.
        let e = unsafe { LsaNtStatusToWinError(st) };
        return Err(format!(
            "LsaOpenPolicy failed: error {e} (run from an elevated prompt)"
        ));
    }
    let mut rights: *mut LSA_UNICODE_STRING = null_mut();
    let mut n = 0u32;
    // SAFETY: `policy` is open; `sid` holds the SID LookupAccountNameW wrote; out-pointers valid.
    let st =
        unsafe { LsaEnumerateAccountRights(policy, sid.as_mut_ptr().cast(), &mut rights, &mut n) };
    // SAFETY: closes the policy handle opened above, once.
    unsafe { LsaClose(policy) };
    if st == NO_RIGHTS {
        return Ok(Vec::new());
    }
    if st != 0 {
        // SAFETY: converts a status code.
        let e = unsafe { LsaNtStatusToWinError(st) };
        return Err(format!("LsaEnumerateAccountRights failed: error {e}"));
    }
    let out = (0..n as usize)
        .map(|i| {
            // SAFETY: the call returned `n` strings at `rights`, each `Length` bytes long.
            unsafe {
                let s = &*rights.add(i);
                let units = std::slice::from_raw_parts(s.Buffer, usize::from(s.Length) / 2);
                String::from_utf16_lossy(units)
            }
        })
        .collect();
    // SAFETY: frees the array the call allocated, once.
    unsafe { LsaFreeMemory(rights.cast()) };
    Ok(out)
}
