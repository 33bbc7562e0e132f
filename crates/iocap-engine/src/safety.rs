//! The refusals that keep iocap from destroying data it did not create, decided in one place:
//! [`inspect`] gathers the facts about a path without writing (or opening anything but a
//! regular file), and [`decide`] says, from those facts and what the command means to do
//! ([`Intent`]), whether it may: a write through a symlink, to a file without iocap's marker,
//! to a block device (mounted or held, or without `--allow-overwrite`), or to anything else (a
//! FIFO, /dev/null) is refused, each in one wording. `prepare_targets` decides on the very file
//! it then opens; [`check_targets`] decides before anything is created or written, so that a
//! test run on several hosts can be refused on every host when one host's target is foreign;
//! `iocap-verify` decides for its file with [`Intent::RewriteFile`].

use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};

use iocap_model::{JobSpec, DEFAULT_TARGET};
use iocap_platform::target as plat;

use crate::{marker, TargetError};

/// Direct I/O's name on this system (`O_DIRECT`, `FILE_FLAG_NO_BUFFERING`), for what a
/// warning says.
pub const DIRECT: &str = plat::DIRECT;

/// Sets `o` to open never through a link (`O_NOFOLLOW`, Windows' `FILE_FLAG_OPEN_REPARSE_POINT`),
/// nor into a child process; `direct` bypasses the cache (`O_DIRECT`, `FILE_FLAG_NO_BUFFERING`).
/// The no-follow open of the engine's files and verify's.
pub fn no_follow(o: &mut OpenOptions, direct: bool) -> &mut OpenOptions {
    plat::no_follow(o, direct)
}

/// Whether an open or an I/O failed because the file system refuses direct I/O (`EINVAL`;
/// `ERROR_INVALID_PARAMETER`).
pub fn is_direct_refused(e: &io::Error) -> bool {
    plat::is_direct_refused(e)
}

/// The error a file system that refuses direct I/O gives (tests stand it in with
/// `IOCAP_TEST_REFUSE_DIRECT`).
pub fn direct_refused_error() -> io::Error {
    plat::direct_refused_error()
}

/// The refusal of a path that is no longer the file that was checked, in the claim's words.
pub use iocap_platform::claim::changed;

/// Refusing a write through a symbolic link (a reparse point on Windows).
pub fn symlink(shown: &str) -> TargetError {
    TargetError::Refused(format!(
        "{shown} is a {}; iocap does not write through one (give the real path)",
        plat::LINK
    ))
}

/// Refusing a target that is neither a regular file nor a block device (a FIFO, a socket, a
/// character device such as /dev/null, a directory), by its kind as stat read it: judged
/// before anything opens it, since a FIFO's read-only open waits for a writer.
pub fn not_a_target(shown: &str, kind: &str) -> TargetError {
    TargetError::Invalid(format!(
        "{shown} is a {kind}; iocap tests a regular file or a {}",
        plat::DEVICE
    ))
}

/// Refusing anything but a regular file for a command that rewrites every byte (verify): a
/// device could be mounted.
pub fn not_a_file(shown: &str) -> TargetError {
    TargetError::Refused(format!(
        "{shown} is not a regular file; iocap verify rewrites every byte of its target, so it \
         takes only files (give a file on the file system to test)"
    ))
}

/// Refusing a write to a file iocap did not create (`rewrite`: verify's, which rewrites it all).
pub fn foreign_file(shown: &str, rewrite: bool) -> TargetError {
    let doing = if rewrite { "Verifying" } else { "Writing" };
    TargetError::Refused(format!(
        "refusing to write to {shown}: iocap did not create it. {doing} would destroy its \
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

/// What is at a target's path, read before anything is written to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Nothing: iocap creates it (O_EXCL).
    Missing,
    /// A regular file; `ours`: it carries iocap's marker ([`crate::marker`]).
    File { ours: bool },
    /// A block device (on Windows a volume or physical disk); `in_use`: what holds it (a
    /// mount, swap, a device-mapper or md stack), looked up only for a write.
    Device { in_use: Option<String> },
    /// Anything else, by its kind's name as stat read it: a FIFO, a socket, a character device
    /// such as /dev/null, a directory.
    Other(&'static str),
}

/// The facts the decision is made from: what the path leads to, and whether the path itself
/// is a symbolic link (a Windows reparse point), which reads follow and writes never do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub found: Found,
    pub link: bool,
}

/// What a command means to do with a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// Read only.
    Read,
    /// Write: a test, a fill; a file or a block device.
    Write,
    /// Rewrite every byte of a file (verify): never a device.
    RewriteFile,
}

/// The one decision of docs/safety.md: may a command with `intent` go on with a target of
/// these facts? Pure: every caller (a test's targets, the check of all hosts' targets before
/// any is touched, verify's file) gathers the facts and asks here, so the rules and their words
/// are the same everywhere.
pub fn decide(
    shown: &str,
    facts: &Facts,
    intent: Intent,
    allow_overwrite: bool,
) -> Result<(), TargetError> {
    let rewrite = intent == Intent::RewriteFile;
    match (&facts.found, intent) {
        (Found::Other(_), Intent::RewriteFile) | (Found::Device { .. }, Intent::RewriteFile) => {
            return Err(not_a_file(shown))
        }
        (Found::Other(kind), _) => return Err(not_a_target(shown, kind)),
        (_, Intent::Read) => return Ok(()),
        _ => {}
    }
    if facts.link {
        return Err(symlink(shown));
    }
    match &facts.found {
        Found::File { ours: false } if !allow_overwrite => Err(foreign_file(shown, rewrite)),
        Found::Device { in_use: Some(why) } => Err(device_in_use(shown, why)),
        Found::Device { in_use: None } if !allow_overwrite => Err(device_overwrite(shown)),
        _ => Ok(()),
    }
}

/// What [`inspect`] read: the facts, and for an existing regular file its read-only
/// descriptor and iocap's marker on it (the caller goes on with that very file).
pub struct Inspected {
    pub facts: Facts,
    pub file: Option<std::fs::File>,
    pub marker: Option<marker::Marker>,
}

/// Gathers the facts about `path` without writing anything and without opening what is not a
/// regular file (opening a FIFO waits for a writer): lstat and stat, then a regular file is
/// opened read-only for its marker; a device's holders are looked up only for a write.
pub fn inspect(path: &Path, intent: Intent) -> Result<Inspected, TargetError> {
    let shown = path.display().to_string();
    let io = |what: &str| crate::error::IoFailure::with(format!("cannot {what} {shown}"));
    let facts = |found, link| Inspected {
        facts: Facts { found, link },
        file: None,
        marker: None,
    };
    let in_use = |m: Option<&std::fs::Metadata>| match intent {
        Intent::Read => None,
        _ => plat::device_in_use(m, path),
    };
    if plat::names_device(path) {
        return Ok(facts(
            Found::Device {
                in_use: in_use(None),
            },
            false,
        ));
    }
    let lmeta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(facts(Found::Missing, false)),
        Err(e) => return Err(io("inspect")(e).into()),
    };
    let link = plat::is_link(&lmeta);
    let meta = if link {
        match std::fs::metadata(path) {
            Ok(m) => m,
            // a link to nothing: a write would create through it
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(facts(Found::Missing, true))
            }
            Err(e) => return Err(io("inspect")(e).into()),
        }
    } else {
        lmeta
    };
    if plat::is_block_device(&meta) {
        return Ok(facts(
            Found::Device {
                in_use: in_use(Some(&meta)),
            },
            link,
        ));
    }
    if !meta.is_file() {
        return Ok(facts(
            Found::Other(iocap_model::file_kind(&meta.file_type())),
            link,
        ));
    }
    let f = plat::open_read(path).map_err(io("open"))?;
    let mark = marker::read(&f, path);
    Ok(Inspected {
        facts: Facts {
            found: Found::File {
                ours: mark.is_some(),
            },
            link,
        },
        file: Some(f),
        marker: mark,
    })
}

/// The refusal, if any, of writing `path` as `spec` would; a missing path is fine (iocap
/// creates it). `size` is the target's range, from the spec's base offset.
fn check_one(spec: &JobSpec, path: &Path, size: Option<u64>) -> Result<(), TargetError> {
    let intent = if spec.writes() {
        Intent::Write
    } else {
        Intent::Read
    };
    let seen = inspect(path, intent)?;
    let shown = path.display().to_string();
    decide(&shown, &seen.facts, intent, spec.allow_overwrite)?;
    match (&seen.facts.found, &seen.file) {
        (Found::File { ours: false }, Some(f)) => check_region(spec, &shown, f, size),
        _ => Ok(()),
    }
}

/// With a base offset (DiskSpd's `-B`), a file iocap did not create must hold the whole region,
/// since iocap never extends it: refused here, before anything on any host is written, as
/// preparing the target would refuse it. A base writes only its region, but writing there
/// still needs what [`decide`] asks (the region's data is destroyed all the same).
fn check_region(
    spec: &JobSpec,
    shown: &str,
    file: &std::fs::File,
    size: Option<u64>,
) -> Result<(), TargetError> {
    let base = spec.base_bytes;
    if base == 0 {
        return Ok(());
    }
    let held = file
        .metadata()
        .map_err(crate::error::IoFailure::with(format!(
            "cannot stat {shown}"
        )))?
        .len();
    let want = size.unwrap_or(spec.bs_bytes).saturating_add(base);
    if held < want {
        return Err(TargetError::Invalid(format!(
            "{shown} holds {held} B; the test asks for bytes {base} to {want} (its base offset \
             and size), which it does not hold, and iocap never extends a file it did not \
             create: give a smaller base offset or size"
        )));
    }
    Ok(())
}

/// The file a target names: `p` itself, or `name` inside it when it is a directory (a
/// directory target means iocap's test file there). The one resolver every command uses.
pub fn file_in(p: &Path, name: &str) -> PathBuf {
    if p.is_dir() {
        p.join(name)
    } else {
        p.to_path_buf()
    }
}

/// [`file_in`] with the test file of `run` and the commands like it ([`DEFAULT_TARGET`]).
pub fn target_path(p: &Path) -> PathBuf {
    file_in(p, DEFAULT_TARGET)
}

/// Checks every target of `spec` as `prepare_targets` will, without creating or writing
/// anything.
pub fn check_targets(spec: &JobSpec) -> Result<(), TargetError> {
    for t in &spec.targets {
        let path = target_path(Path::new(&t.path));
        check_one(spec, &path, t.size_bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use Intent::{Read, RewriteFile, Write};

    fn facts(found: Found, link: bool) -> Facts {
        Facts { found, link }
    }

    /// Every case of docs/safety.md's rules 1 to 4, with what the user reads: `None` where the
    /// command goes on, else a phrase of the refusal (and whether it is a refusal to protect
    /// data, rather than a target that cannot work).
    #[test]
    fn every_rule_decides_as_docs_safety_says() {
        let file = |ours| Found::File { ours };
        let free = Found::Device { in_use: None };
        let mounted = Found::Device {
            in_use: Some("it is mounted on /data".into()),
        };
        #[rustfmt::skip]
        let table: Vec<(Found, bool, Intent, bool, Option<&str>)> = vec![
            // what is there, a link?, intent, --allow-overwrite, refusal
            (Found::Missing, false, Write, false, None),
            (Found::Missing, false, RewriteFile, false, None),
            (file(true), false, Write, false, None),
            (file(true), false, RewriteFile, false, None),
            (file(false), false, Read, false, None),
            (file(false), false, Write, false, Some("iocap did not create it. Writing would")),
            (file(false), false, Write, true, None),
            (file(false), false, RewriteFile, false, Some("did not create it. Verifying would")),
            (file(false), false, RewriteFile, true, None),
            (file(true), true, Read, false, None),
            (file(true), true, Write, false, Some("is a symbolic link")),
            (file(true), true, Write, true, Some("is a symbolic link")),
            (file(false), true, RewriteFile, true, Some("is a symbolic link")),
            (Found::Missing, true, Write, true, Some("is a symbolic link")),
            (free.clone(), false, Read, false, None),
            (free.clone(), false, Write, false, Some("its contents would be destroyed")),
            (free.clone(), false, Write, true, None),
            (free.clone(), false, RewriteFile, true, Some("takes only files")),
            (mounted.clone(), false, Read, false, None),
            (mounted.clone(), false, Write, true, Some("mounted on /data. iocap never writes")),
            (Found::Other("FIFO"), false, Read, false, Some("is a FIFO; iocap tests a regular")),
            (Found::Other("FIFO"), false, Write, true, Some("is a FIFO")),
            (Found::Other("directory"), false, RewriteFile, true, Some("not a regular file")),
        ];
        for (found, link, intent, allow, want) in table {
            let case = format!("{found:?}, link {link}, {intent:?}, allow {allow}");
            match (decide("/t", &facts(found, link), intent, allow), want) {
                (Ok(()), None) => {}
                (Err(e), Some(phrase)) => {
                    assert!(e.to_string().contains(phrase), "{case}: {e}");
                    assert!(e.to_string().starts_with("/t ") || e.to_string().contains(" /t"));
                }
                (got, want) => panic!("{case}: {got:?}, expected {want:?}"),
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn inspect_reads_the_facts_without_opening_a_fifo() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // an open of the FIFO would wait for a writer; inspect returns
        let seen = inspect(&fifo, Write).unwrap();
        assert_eq!(seen.facts, facts(Found::Other("FIFO (named pipe)"), false));

        let theirs = d.path().join("theirs");
        std::fs::write(&theirs, b"data").unwrap();
        let ours = d.path().join("ours");
        let f = std::fs::File::create(&ours).unwrap();
        let m = marker::Marker {
            complete: true,
            size: 4,
        };
        marker::write(&f, &ours, m).unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&ours, &link).unwrap();
        for (p, want) in [
            (theirs, facts(Found::File { ours: false }, false)),
            (ours, facts(Found::File { ours: true }, false)),
            (link, facts(Found::File { ours: true }, true)),
            (d.path().join("none"), facts(Found::Missing, false)),
        ] {
            let seen = inspect(&p, Write).unwrap();
            assert_eq!(seen.facts, want, "{}", p.display());
            assert_eq!(
                seen.file.is_some(),
                matches!(want.found, Found::File { .. })
            );
        }
    }

    /// A base offset past the end of a file iocap did not create is refused before anything
    /// is written; one inside it, or on a file of iocap's own (which is filled), goes on.
    #[test]
    fn a_region_past_the_end_of_a_foreign_file_is_refused_before_any_write() {
        let d = tempfile::tempdir().unwrap();
        let theirs = d.path().join("theirs");
        // the user's data: random, as nothing of theirs should be guessable or compressible
        let mut data = vec![0u8; 4 << 20];
        crate::stamp::fill_random(
            &mut data,
            &mut rand_xoshiro::rand_core::SeedableRng::seed_from_u64(27),
        );
        std::fs::write(&theirs, &data).unwrap();
        let mut spec = JobSpec {
            targets: vec![iocap_model::TargetSpec::new(theirs.display().to_string())],
            rw: iocap_model::RwMode::RandWrite,
            write_pct: 100,
            allow_overwrite: true,
            base_bytes: 3 << 20,
            ..JobSpec::default()
        };
        spec.targets[0].size_bytes = Some(1 << 20);
        check_targets(&spec).unwrap();
        spec.targets[0].size_bytes = Some(2 << 20);
        let e = check_targets(&spec).unwrap_err().to_string();
        assert!(
            e.contains("bytes 3145728 to 5242880") && e.contains("does not hold"),
            "{e}"
        );
        spec.targets[0].size_bytes = None;
        spec.base_bytes = 4 << 20;
        assert!(check_targets(&spec).is_err());
        // without --allow-overwrite the file is refused as ever, whatever the base
        spec.allow_overwrite = false;
        spec.base_bytes = 1 << 20;
        let e = check_targets(&spec).unwrap_err().to_string();
        assert!(e.contains("iocap did not create it"), "{e}");
        assert!(
            std::fs::read(&theirs).unwrap() == data,
            "their file changed"
        );
    }
}
