//! The prepared target while its points are measured, and what a method's open or a failed
//! write means to the loop ([`crate::measure`]). The calls themselves (how each method opens
//! the file and makes a write durable) are the platform's (`iocap_platform::durable`, one file
//! per system); what is here is the same on both systems: the device facts the analysis reads,
//! the caveats, the wording of a skip or a failure, and retry or stop on a signal.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use iocap_engine::TargetKind;
use iocap_platform::{devinfo, durable};

use crate::analyse::DeviceFlags;
use crate::durable::{OnError, OpenError};
use crate::method::Method;
use crate::FsyncError;

pub(crate) use iocap_platform::durable::{needs_alignment, Writer, DIRECT};

/// The prepared target, what the system says of its device, and the caveats of measuring it.
pub(crate) struct Site {
    prepared: durable::Prepared,
    path: PathBuf,
    pub device: Option<String>,
    pub fs_type: Option<String>,
    /// What sysfs says of the device (nothing on Windows, which names no device).
    pub flags: DeviceFlags,
    /// Caveats of this target, after the engine's.
    pub warnings: Vec<String>,
}

impl Site {
    /// From the engine's prepared `file` at `path`.
    pub fn new(file: File, path: &Path, kind: TargetKind) -> Result<Site, FsyncError> {
        let (device, fs_type) = devinfo::device_and_fs(&file);
        let prepared = durable::Prepared::new(file, path, kind).map_err(|e| FsyncError::Io {
            context: format!("cannot stat {}", path.display()),
            source: e,
        })?;
        let flags = device
            .as_deref()
            .map(DeviceFlags::from_sysfs)
            .unwrap_or_default();
        let mut warnings = Vec::new();
        if device.is_none() && devinfo::NAMES_BLOCK_DEVICE {
            warnings.push(format!(
                "{} is on a file system without a block device ({}): the figures say what this \
                 file system does with a flush, not what a disk does",
                path.display(),
                fs_type.as_deref().unwrap_or("unknown")
            ));
        }
        Ok(Site {
            prepared,
            path: path.to_path_buf(),
            device,
            fs_type,
            flags,
            warnings,
        })
    }

    /// The target's handle for `m`. A file system that refuses the method's flags makes the
    /// method unavailable, with the reason; so does `IOCAP_TEST_REFUSE_DIRECT` for a direct
    /// method, the tests' stand-in for such a file system.
    pub fn open(&self, m: Method) -> Result<Writer, OpenError> {
        let shown = self.path.display();
        if std::env::var_os("IOCAP_TEST_REFUSE_DIRECT").is_some() && m.direct() {
            return Err(self.refused(m));
        }
        let failed = |context: String, source: io::Error| {
            OpenError::Failed(FsyncError::Io { context, source })
        };
        self.prepared.open(m).map_err(|e| match e {
            durable::OpenError::Refused => self.refused(m),
            durable::OpenError::Open(e) => {
                failed(format!("cannot open {shown} with {}", m.label()), e)
            }
            durable::OpenError::Stat(e) => failed(format!("cannot stat {shown}"), e),
            durable::OpenError::Event(e) => failed(
                format!(
                    "cannot create the event an overlapped write signals with {}",
                    m.label()
                ),
                e,
            ),
            durable::OpenError::Changed => OpenError::Failed(FsyncError::Refused(
                iocap_engine::safety::changed(&shown.to_string(), "testing"),
            )),
        })
    }

    /// The skip of a method whose flags the file system refused.
    fn refused(&self, m: Method) -> OpenError {
        OpenError::Unavailable(format!(
            "the file system refused to open {} with {} ({})",
            self.path.display(),
            m.label(),
            durable::REFUSED
        ))
    }
}

/// What a failed write means: a call or flag the system does not offer, before any write
/// succeeded, is a method not offered here; a signal (EINTR: Linux's; Ctrl-C interrupts no
/// write on Windows) stops the point when the run is being stopped and retries the write
/// otherwise; anything else ends the run.
pub(crate) fn on_error(e: &io::Error, first: bool, stop: &AtomicBool) -> OnError {
    if first && durable::is_not_offered(e) {
        OnError::Unavailable
    } else if durable::is_interrupted(e) && stop.load(Ordering::Relaxed) {
        OnError::Stopped
    } else if durable::is_interrupted(e) {
        OnError::Retry
    } else {
        OnError::Fail
    }
}
