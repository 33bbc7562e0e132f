//! The refusals that keep iocap from destroying data it did not create, as read-only checks:
//! a write through a symlink, to a file without iocap's marker, or to a block device (mounted or
//! held, or without `--allow-overwrite`). `prepare_targets` applies them to the very file it
//! opens; [`check_targets`] applies them before anything is created or written, so that a test
//! run on several hosts can be refused on every host when one host's target is foreign.

use std::io;
use std::path::{Path, PathBuf};

use iocap_model::{JobSpec, DEFAULT_TARGET};

use crate::plat;
use crate::{marker, TargetError};

/// Refusing a write through a symbolic link.
pub fn symlink(shown: &str) -> TargetError {
    TargetError::Refused(format!(
        "{shown} is a symbolic link; iocap does not write through symlinks (give the real path)"
    ))
}

/// Refusing a target that is neither a regular file nor a block device (a FIFO, a socket, a
/// character device such as /dev/null, a directory), by its kind as stat read it: judged
/// before anything opens it, since a FIFO's read-only open waits for a writer.
pub fn not_a_target(shown: &str, meta: &std::fs::Metadata) -> TargetError {
    TargetError::Invalid(format!(
        "{shown} is a {}; iocap tests a regular file or a {}",
        iocap_model::file_kind(&meta.file_type()),
        plat::DEVICE
    ))
}

/// Refusing a write to a file iocap did not create.
pub fn foreign_file(shown: &str) -> TargetError {
    TargetError::Refused(format!(
        "refusing to write to {shown}: iocap did not create it. Writing would destroy its \
         contents; pass --allow-overwrite if that is intended, or name a new file"
    ))
}

/// Refusing a write to a block device that is mounted or held (`why` says by what).
pub fn device_in_use(shown: &str, why: &str) -> TargetError {
    TargetError::Refused(format!(
        "refusing to write to {shown}: {why}. iocap never writes to a block device in use"
    ))
}

/// Refusing a write to a block device without `--allow-overwrite`.
pub fn device_overwrite(shown: &str) -> TargetError {
    TargetError::Refused(format!(
        "refusing to write to block device {shown}: its contents would be destroyed; pass \
         --allow-overwrite if that is intended"
    ))
}

/// The refusal, if any, of writing `path` as `spec` would; a missing path is fine (iocap
/// creates it).
fn check_one(spec: &JobSpec, path: &Path) -> Result<(), TargetError> {
    let shown = path.display().to_string();
    if plat::names_device(path) {
        if !spec.writes() {
            return Ok(());
        }
        if let Some(why) = plat::device_in_use(None, path) {
            return Err(device_in_use(&shown, &why));
        }
        if !spec.allow_overwrite {
            return Err(device_overwrite(&shown));
        }
        return Ok(());
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(TargetError::Invalid(format!("cannot inspect {shown}: {e}")));
        }
    };
    if let Ok(m) = std::fs::metadata(path) {
        if !m.is_file() && !plat::is_block_device(&m) {
            return Err(not_a_target(&shown, &m));
        }
    }
    if !spec.writes() {
        return Ok(());
    }
    if plat::is_link(&meta) {
        return Err(symlink(&shown));
    }
    if meta.file_type().is_file() {
        let f = plat::open_read(path)
            .map_err(|e| TargetError::Invalid(format!("cannot open {shown}: {e}")))?;
        if marker::read(&f, path).is_none() && !spec.allow_overwrite {
            return Err(foreign_file(&shown));
        }
    } else if plat::is_block_device(&meta) {
        if let Some(why) = plat::device_in_use(Some(&meta), path) {
            return Err(device_in_use(&shown, &why));
        }
        if !spec.allow_overwrite {
            return Err(device_overwrite(&shown));
        }
    }
    Ok(())
}

/// Checks every target of `spec` as `prepare_targets` will, without creating or writing
/// anything.
pub fn check_targets(spec: &JobSpec) -> Result<(), TargetError> {
    for t in &spec.targets {
        let mut path = PathBuf::from(&t.path);
        if path.is_dir() {
            path.push(DEFAULT_TARGET);
        }
        check_one(spec, &path)?;
    }
    Ok(())
}
