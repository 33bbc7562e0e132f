//! The terminal's width, for the tables, wrapped sentences and live lines: `COLUMNS` when set,
//! else the size of the terminal on stdout (or stderr), else 80.

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
    let tty = super::platform::console_columns();
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

/// `s` cut to `width` characters (with `…` at the end when cut).
pub fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}
