//! The initial fill: the file is created (or claimed) and every page written at generation 1,
//! in large sequential writes, then made durable and marked complete. The mixed phase starts
//! from a map where every page is at generation 1, so every page must hold it first.
//!
//! Same rules as `iocap run` (docs/safety.md): a file iocap created and did not finish (the
//! fill interrupted, or the journal could not be created) is removed; O_DIRECT refused at the
//! first write falls back to buffered I/O with a warning.

use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};

use iocap_engine::IoFailure;
use iocap_model::VerifyCounts;

use super::config::VerifyConfig;
use super::shared::BATCH_BYTES;
use crate::error::{buffer, VerifyError};
use crate::file::{self, now_ns, pwrite_all, MarkAs, Open};
use crate::page::{self, FileIdent};

/// The verify file, opened for the run.
pub(crate) struct Target {
    /// The descriptor that created or claimed the file (its marker is written through it).
    marked: File,
    created: bool,
    /// Held for the whole run: no test, replay or other verify writes the file meanwhile, and
    /// every I/O descriptor must be the claimed file.
    claim: iocap_platform::claim::Held,
    /// The I/O descriptor.
    pub f: File,
    /// Whether `f` is O_DIRECT.
    pub direct: bool,
}

impl Target {
    /// Creates the target of `cfg`, or claims a file iocap made (or any, with
    /// `allow_overwrite`), and opens it for the I/O.
    pub fn open(cfg: &VerifyConfig, warnings: &mut Vec<String>) -> Result<Self, VerifyError> {
        let path = &cfg.target;
        let file::Claimed {
            file: marked,
            created,
            claim,
        } = file::create_or_claim(path, cfg.file_bytes(), cfg.allow_overwrite, warnings)?;
        let (f, direct) = file::open_io(
            path,
            Open {
                write: true,
                direct: cfg.direct,
            },
            Some(&claim),
            warnings,
        )?;
        Ok(Self {
            marked,
            created,
            claim,
            f,
            direct,
        })
    }

    /// Removes the file if this run created it: half-made and ours, as `iocap run` does.
    pub fn remove_if_created(&self, cfg: &VerifyConfig) {
        if self.created {
            let _ = std::fs::remove_file(&cfg.target);
            iocap_engine::marker::remove_sidecar(&cfg.target);
        }
    }
}

/// Writes every page of `t` at generation 1 as `id`, makes them durable and marks the file
/// complete; returns the writes. Interrupted by `stop`, a file this run created is removed.
pub(crate) fn fill(
    cfg: &VerifyConfig,
    t: &mut Target,
    id: &FileIdent,
    stop: &AtomicBool,
    warnings: &mut Vec<String>,
) -> Result<VerifyCounts, VerifyError> {
    let (pb, pages) = (cfg.page_bytes, cfg.pages());
    let shown = cfg.target.display().to_string();
    let batch = (BATCH_BYTES / pb).max(1);
    let mut buf = buffer(batch * pb)?;
    let mut counts = VerifyCounts::default();
    let mut p = 0u64;
    while p < pages {
        if stop.load(Ordering::Relaxed) {
            t.remove_if_created(cfg);
            return Err(VerifyError::Interrupted(shown));
        }
        let n = batch.min((pages - p) as usize);
        let pages_buf = &mut buf.as_mut_slice()[..n * pb];
        if !write_batch(cfg, t, id, pages_buf, p, warnings)? {
            continue;
        }
        counts.pages_written += n as u64;
        counts.bytes_written += (n * pb) as u64;
        p += n as u64;
    }
    t.f.sync_data()
        .map_err(IoFailure::with(format!("cannot make {shown} durable")))?;
    file::set_marker(&t.marked, &cfg.target, MarkAs::Complete, cfg.file_bytes())?;
    Ok(counts)
}

/// Writes the pages from `p` that `buf` holds, at generation 1. `Ok(false)`: O_DIRECT was
/// refused at the first write and `t` reopened without it; the batch is to be written again.
fn write_batch(
    cfg: &VerifyConfig,
    t: &mut Target,
    id: &FileIdent,
    buf: &mut [u8],
    p: u64,
    warnings: &mut Vec<String>,
) -> Result<bool, VerifyError> {
    let pb = cfg.page_bytes;
    for (i, chunk) in buf.chunks_exact_mut(pb).enumerate() {
        page::encode(chunk, id, p + i as u64, 1, now_ns());
    }
    let shown = cfg.target.display();
    match pwrite_all(&t.f, buf, p * pb as u64) {
        Ok(()) => Ok(true),
        Err(e) if t.direct && p == 0 && iocap_engine::safety::is_direct_refused(&e) => {
            warnings.push(file::direct_refused(&shown.to_string()));
            let reopened = file::open_io(
                &cfg.target,
                Open {
                    write: true,
                    direct: false,
                },
                Some(&t.claim),
                warnings,
            )?;
            (t.f, t.direct) = reopened;
            Ok(false)
        }
        Err(e) => Err(IoFailure::with(format!(
            "the initial fill of {shown} failed at offset {}",
            p * pb as u64
        ))(e)
        .into()),
    }
}
