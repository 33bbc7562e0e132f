//! The terminal's width, for the tables, wrapped sentences and live lines: `COLUMNS` when set,
//! else the size of the terminal on stdout (or stderr), else 80. Here beside [`crate::width`],
//! the width every view fits, which a front end sets from [`columns`] once at start.

#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;

/// Columns to fit: `COLUMNS`, the tty's width, or 80; never below 40.
pub fn columns() -> usize {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        return n.max(40);
    }
    #[cfg(target_os = "linux")]
    let tty = [std::io::stdout().as_raw_fd(), std::io::stderr().as_raw_fd()]
        .into_iter()
        .find_map(tty_columns);
    #[cfg(windows)]
    let tty = console_columns();
    tty.unwrap_or(80).max(40)
}

#[cfg(target_os = "linux")]
fn tty_columns(fd: i32) -> Option<usize> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one winsize into the valid, writable `ws`; on a descriptor that
    // is not a terminal it fails and leaves `ws` alone.
    let rc = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
    (rc == 0 && ws.ws_col > 0).then_some(usize::from(ws.ws_col))
}

/// The console window's width, when stdout or stderr is a console.
#[cfg(windows)]
pub fn console_columns() -> Option<usize> {
    use windows_sys::Win32::System::Console::{
        GetConsoleScreenBufferInfo, GetStdHandle, CONSOLE_SCREEN_BUFFER_INFO, STD_ERROR_HANDLE,
        STD_OUTPUT_HANDLE,
    };
    [STD_OUTPUT_HANDLE, STD_ERROR_HANDLE]
        .into_iter()
        .find_map(|which| {
            // SAFETY: a zeroed CONSOLE_SCREEN_BUFFER_INFO is a valid output buffer; a handle that is
            // not a console makes the call fail and leaves it alone.
            let mut info: CONSOLE_SCREEN_BUFFER_INFO = unsafe { std::mem::zeroed() };
            // SAFETY: `info` is a valid out-pointer for the call's duration.
            let ok = unsafe { GetConsoleScreenBufferInfo(GetStdHandle(which), &mut info) };
            let w = i32::from(info.srWindow.Right) - i32::from(info.srWindow.Left) + 1;
            (ok != 0 && w > 0).then_some(w as usize)
        })
}

/// `s` cut to `width` characters (with `…` at the end when cut).
pub fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(super::fit("abcdef", 6), "abcdef");
        assert_eq!(super::fit("abcdefg", 6), "abcde…");
        assert_eq!(super::fit("äöü", 2), "ä…");
    }
}
