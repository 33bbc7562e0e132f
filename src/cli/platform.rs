//! What differs at the command line on Windows: what `--version --verbose` says of the engines
//! (Ctrl-C through the console's handler is `iocap_console::interrupt`'s). Every command runs
//! on both systems since issue 28 (audit, monitor, cost and fsync were Linux's alone).

/// What `--version --verbose` says of the asynchronous engine.
#[cfg(not(target_os = "linux"))]
pub fn engines() -> String {
    "iocp (I/O completion ports) and sync; io_uring is Linux's".into()
}
