//! What the engine's integration tests share: the stop flag that never stops, and the engines
//! of the system the tests run on (io_uring and psync on Linux, IOCP and sync on Windows).

use std::sync::atomic::AtomicBool;

use iocap_model::EngineChoice;

pub static NEVER: AtomicBool = AtomicBool::new(false);

/// The asynchronous engine of this system.
#[cfg(target_os = "linux")]
pub const ASYNC: EngineChoice = EngineChoice::IoUring;
#[cfg(windows)]
pub const ASYNC: EngineChoice = EngineChoice::Auto;
/// Both engines of this system.
pub const ENGINES: [EngineChoice; 2] = [ASYNC, EngineChoice::Psync];
