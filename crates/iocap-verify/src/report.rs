//! What happens once a page does not read back right: re-read it before concluding (through the
//! same O_DIRECT descriptor, so the page cache is not what answers), decide whether the fault was
//! transient, write the expected and actual bytes to a dump, and keep the failure. All of this
//! is off the I/O path's fast case; the one lock here is taken only when something failed.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use iocap_model::{ClassCounts, FailureClass, VerifyFailure};

use crate::classify::{classify, Expect, Finding};
use crate::file::pread_exact;
use crate::map::GenMap;
use crate::page::{self, FileIdent};

/// Failures kept in full detail; every one is counted.
pub const MAX_FAILURES: usize = 1000;
/// Dumps written per run, so a dying disk does not fill the dump directory.
pub const MAX_DUMPS: u32 = 100;
/// Re-reads of a failed page before concluding.
pub const REREADS: u32 = 3;

#[derive(Default)]
struct Inner {
    failures: Vec<VerifyFailure>,
    classes: ClassCounts,
    dumps: u32,
    dump_used: bool,
    dump_error: Option<String>,
}

/// Collects the failures of a run or check, from any thread.
pub struct Sink {
    path: String,
    dump_dir: PathBuf,
    inner: Mutex<Inner>,
}

/// A failure as first seen: the class, or the I/O error.
pub enum First<'a> {
    Bad(&'a [u8], Finding),
    Io(io::Error),
}

pub struct Collected {
    pub failures: Vec<VerifyFailure>,
    pub classes: ClassCounts,
    pub dump_dir: Option<String>,
    pub dump_error: Option<String>,
}

impl Sink {
    pub fn new(path: &Path, dump_dir: PathBuf) -> Self {
        Self {
            path: path.display().to_string(),
            dump_dir,
            inner: Mutex::new(Inner::default()),
        }
    }

    pub fn path(&self) -> String {
        self.path.clone()
    }

    pub fn count(&self) -> u64 {
        self.lock().classes.total()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Re-reads page `page` (held still through `map` if there is one), then records the
    /// failure. `scratch` is a page-sized aligned buffer for the re-reads.
    #[allow(clippy::too_many_arguments)]
    pub fn failed(
        &self,
        f: &File,
        id: &FileIdent,
        map: Option<&GenMap>,
        page: u64,
        op: &str,
        expect: Expect,
        first: First<'_>,
        scratch: &mut [u8],
    ) {
        let pb = id.page_bytes;
        let offset = page * pb as u64;
        // hold the page still: no writer may change it between our re-reads
        let mut held = None;
        if let Some(m) = map {
            for _ in 0..10_000 {
                if let Some(g) = m.try_begin_write(page) {
                    held = Some(g);
                    break;
                }
                std::thread::yield_now();
            }
        }
        let re_expect = match (held, expect) {
            (Some(g), Expect::Exact(_)) => Expect::Exact(u64::from(g)),
            _ => expect,
        };
        let mut rereads = 0;
        let mut transient = false;
        if map.is_none() || held.is_some() {
            for _ in 0..REREADS {
                rereads += 1;
                let buf = &mut scratch[..pb];
                if pread_exact(f, buf, offset).is_ok() && classify(buf, id, page, re_expect).ok() {
                    transient = true;
                    break;
                }
            }
        }
        if let (Some(m), Some(g)) = (map, held) {
            m.end_write(page, g);
        }
        let g = expect.generation();
        let mut rec = VerifyFailure {
            class: FailureClass::IoError,
            path: self.path.clone(),
            page,
            offset_bytes: offset,
            len_bytes: pb as u64,
            op: op.to_string(),
            expected_generation: g,
            found_generation: None,
            found_page: None,
            found_file_id: None,
            sectors_512_differing: vec![],
            sectors_4k_differing: vec![],
            transient,
            rereads,
            dump: None,
            errno: None,
            message: String::new(),
        };
        let actual = match first {
            First::Io(e) => {
                rec.errno = e.raw_os_error();
                rec.message = format!("{op} at offset {offset} failed: {e}");
                None
            }
            First::Bad(data, fd) => {
                rec.class = fd.class.unwrap_or(FailureClass::Corrupt);
                rec.found_generation = fd.found_generation;
                rec.found_page = fd.found_page;
                rec.found_file_id = fd.found_file_id;
                rec.sectors_512_differing = fd.sectors_512;
                rec.sectors_4k_differing = fd.sectors_4k;
                rec.message = fd.message;
                Some(data)
            }
        };
        let mut inner = self.lock();
        inner.classes.add(rec.class);
        if transient {
            inner.classes.transient += 1;
        }
        if inner.failures.len() >= MAX_FAILURES {
            return;
        }
        if let Some(data) = actual {
            if inner.dumps < MAX_DUMPS {
                inner.dumps += 1;
                inner.dump_used = true;
                match self.dump(id, &rec, data) {
                    Ok(p) => rec.dump = Some(p.display().to_string()),
                    Err(e) => {
                        inner.dump_error.get_or_insert_with(|| {
                            format!("cannot write dumps in {}: {e}", self.dump_dir.display())
                        });
                    }
                }
            }
        }
        inner.failures.push(rec);
    }

    /// Records a failure that has no page bytes to re-read (a failed write).
    pub fn io_failure(&self, rec: VerifyFailure) {
        let mut inner = self.lock();
        inner.classes.add(rec.class);
        if rec.transient {
            inner.classes.transient += 1;
        }
        if inner.failures.len() < MAX_FAILURES {
            inner.failures.push(rec);
        }
    }

    /// Writes `page-<N>.txt`, `page-<N>-expected.bin` and `page-<N>-actual.bin` (with a
    /// `-2`, `-3` ... suffix when a name is taken: dumps never overwrite a file).
    fn dump(&self, id: &FileIdent, rec: &VerifyFailure, actual: &[u8]) -> io::Result<PathBuf> {
        std::fs::create_dir_all(&self.dump_dir)?;
        let mut expected = vec![0u8; id.page_bytes];
        page::encode(
            &mut expected,
            id,
            rec.page,
            rec.expected_generation,
            page::header(actual).map_or(0, |h| h.timestamp_ns),
        );
        for n in 1..10_000u32 {
            let stem = if n == 1 {
                format!("page-{}", rec.page)
            } else {
                format!("page-{}-{n}", rec.page)
            };
            let txt = self.dump_dir.join(format!("{stem}.txt"));
            let mut t = match new_file(&txt) {
                Ok(t) => t,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            };
            new_file(&self.dump_dir.join(format!("{stem}-expected.bin")))?.write_all(&expected)?;
            new_file(&self.dump_dir.join(format!("{stem}-actual.bin")))?.write_all(actual)?;
            writeln!(
                t,
                "iocap verify dump\nfile: {}\nfile id: {:016x}\nseed: {}\npage: {} (offset {} B, \
                 {} B)\nop: {}\nclass: {}\nexpected generation: {}\nfound generation: {}\n\
                 found page: {}\n512 B sectors differing: {:?}\n4 KiB sectors differing: {:?}\n\
                 transient: {} (re-reads: {})\n{}\n\nexpected.bin is regenerated from the seed; \
                 its timestamp is the one found in actual.bin, and its checksum matches that.",
                rec.path,
                id.file_id,
                id.seed,
                rec.page,
                rec.offset_bytes,
                rec.len_bytes,
                rec.op,
                rec.class.name(),
                rec.expected_generation,
                opt(rec.found_generation),
                opt(rec.found_page),
                rec.sectors_512_differing,
                rec.sectors_4k_differing,
                rec.transient,
                rec.rereads,
                rec.message
            )?;
            return Ok(txt);
        }
        Err(io::Error::other("too many dumps of one page"))
    }

    pub fn finish(self) -> Collected {
        let inner = self.inner.into_inner().unwrap_or_else(|p| p.into_inner());
        Collected {
            failures: inner.failures,
            classes: inner.classes,
            dump_dir: inner.dump_used.then(|| self.dump_dir.display().to_string()),
            dump_error: inner.dump_error,
        }
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn new_file(p: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(p)
}

/// The default dump directory: `<target>.dumps` beside the target.
pub fn default_dump_dir(target: &Path) -> PathBuf {
    let mut s = target.as_os_str().to_owned();
    s.push(".dumps");
    PathBuf::from(s)
}
