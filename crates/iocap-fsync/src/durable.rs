//! What the measuring loop ([`crate::measure`]) asks of a method's handle, so that the loop,
//! its timing and its results are written once: the handle is the platform's
//! (`iocap_platform::durable::Writer`, each system's calls), opened by [`crate::site`], which
//! also says what its errors mean.

use std::io;

use crate::FsyncError;

/// A target opened for one method: each call makes one write of `buf` at `off` durable, and
/// returns only once the system says it is (queue depth 1).
pub(crate) trait DurableWrite {
    fn write_durably(&mut self, buf: &[u8], off: u64) -> io::Result<()>;
}

impl DurableWrite for iocap_platform::durable::Writer {
    #[inline]
    fn write_durably(&mut self, buf: &[u8], off: u64) -> io::Result<()> {
        iocap_platform::durable::Writer::write_durably(self, buf, off)
    }
}

/// Why a method could not be opened: not offered here (the point is skipped with the reason),
/// or a failure that ends the run.
pub(crate) enum OpenError {
    Unavailable(String),
    Failed(FsyncError),
}

/// What the loop does with a failed write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnError {
    /// The method is not offered here: the point is skipped with the error as its reason.
    Unavailable,
    /// A signal cut the call short and the run is being stopped: the point ends there.
    Stopped,
    /// A signal cut the call short: the write is made again, timed from then.
    Retry,
    /// A real failure: the run ends with it.
    Fail,
}
