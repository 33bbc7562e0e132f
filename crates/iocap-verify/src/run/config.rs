//! What a verify run is asked to do, and the limits a request must keep before any file is
//! touched.

use std::path::PathBuf;
use std::time::Duration;

use iocap_model::EngineChoice;

use crate::error::VerifyError;
use crate::page;

/// What to verify and how.
#[derive(Debug, Clone)]
pub struct VerifyConfig {
    pub target: PathBuf,
    pub size_bytes: u64,
    pub page_bytes: usize,
    pub threads: u32,
    pub qd: u32,
    pub seed: u64,
    pub duration: Duration,
    /// Try O_DIRECT (falls back to buffered I/O with a warning where refused).
    pub direct: bool,
    /// Record acknowledged writes here (a new file) for a later [`crate::check`].
    pub journal: Option<PathBuf>,
    /// Where dumps go [default: `<target>.dumps`].
    pub dump_dir: Option<PathBuf>,
    pub allow_overwrite: bool,
    /// `Auto`: io_uring (`threads` rings of `qd` I/Os) where a ring can be set up, else psync
    /// (`threads × qd` threads).
    pub engine: EngineChoice,
}

impl VerifyConfig {
    pub fn new(target: impl Into<PathBuf>) -> Self {
        Self {
            target: target.into(),
            size_bytes: 256 << 20,
            page_bytes: page::DEFAULT_PAGE_BYTES,
            threads: 2,
            qd: 4,
            seed: 0x10CAFE,
            duration: Duration::from_secs(10),
            direct: true,
            journal: None,
            dump_dir: None,
            allow_overwrite: false,
            engine: EngineChoice::Auto,
        }
    }

    /// Pages in the file.
    pub fn pages(&self) -> u64 {
        self.size_bytes / self.page_bytes as u64
    }

    /// Bytes of the file: a whole number of pages.
    pub fn file_bytes(&self) -> u64 {
        self.pages() * self.page_bytes as u64
    }

    pub fn validate(&self) -> Result<(), VerifyError> {
        let bad = |m: String| Err(VerifyError::invalid(m));
        if !page::valid_page_bytes(self.page_bytes as u64) {
            return bad(format!(
                "page size {} B: use a power of two from 4K to 64K",
                self.page_bytes
            ));
        }
        if self.pages() < 16 {
            return bad(format!(
                "size {} B holds fewer than 16 pages of {} B",
                self.size_bytes, self.page_bytes
            ));
        }
        if self.pages() >= 1 << 40 {
            return bad("size too large".into());
        }
        if self.threads == 0 || self.qd == 0 || u64::from(self.threads) * u64::from(self.qd) > 1024
        {
            return bad("threads and qd must be at least 1, and threads × qd at most 1024".into());
        }
        Ok(())
    }
}
