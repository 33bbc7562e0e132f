//! What happens once a page does not read back right: re-read it before concluding (through the
//! same O_DIRECT descriptor, so the page cache is not what answers), decide whether the fault was
//! transient, write the expected and actual bytes to a dump, and keep the failure. All of this
//! is off the I/O path's fast case; the one lock here is taken only when something failed.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use iocap_model::{ClassCounts, FailureClass, VerifyFailure, VerifyOp};

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

    /// A failure of `op` on `pages` (first page, count) of `page_bytes` each, which were to
    /// hold `expected_generation`: an I/O error with nothing found, until the caller says more.
    pub fn record(
        &self,
        (page, pages): (u64, usize),
        page_bytes: usize,
        op: VerifyOp,
        expected_generation: u64,
    ) -> VerifyFailure {
        VerifyFailure {
            class: FailureClass::IoError,
            path: self.path.clone(),
            page,
            offset_bytes: page * page_bytes as u64,
            len_bytes: (pages * page_bytes) as u64,
            op,
            expected_generation,
            found_generation: None,
            found_page: None,
            found_file_id: None,
            sectors_512_differing: vec![],
            sectors_4k_differing: vec![],
            transient: false,
            rereads: 0,
            dump: None,
            errno: None,
            message: String::new(),
        }
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
        op: VerifyOp,
        expect: Expect,
        first: First<'_>,
        scratch: &mut [u8],
    ) {
        // hold the page still: no writer may change it between our re-reads
        let held = map.and_then(|m| hold(m, page));
        let (rereads, transient) = match (map, held, expect) {
            // writers held it all along: not re-read
            (Some(_), None, _) => (0, false),
            // held: it must still hold the generation the map has now
            (_, Some(g), Expect::Exact(_)) => {
                reread(f, id, page, Expect::Exact(u64::from(g)), scratch)
            }
            _ => reread(f, id, page, expect, scratch),
        };
        if let (Some(m), Some(g)) = (map, held) {
            m.end_write(page, g);
        }
        let rec = VerifyFailure {
            transient,
            rereads,
            ..self.record((page, 1), id.page_bytes, op, expect.generation())
        };
        match first {
            First::Io(e) => {
                let message = format!("{op} at offset {} failed: {e}", rec.offset_bytes);
                let errno = e.raw_os_error();
                let rec = VerifyFailure {
                    errno,
                    message,
                    ..rec
                };
                self.keep(rec, None)
            }
            First::Bad(data, fd) => self.keep(found(rec, fd), Some((id, data))),
        }
    }

    /// Records a failure that has no page bytes to re-read (a failed write).
    pub fn io_failure(&self, rec: VerifyFailure) {
        self.keep(rec, None);
    }

    /// Counts `rec` and keeps it while there is room, with a dump of the bytes `actual` read
    /// (of the file `id`) if there are some and dumps are left.
    fn keep(&self, mut rec: VerifyFailure, actual: Option<(&FileIdent, &[u8])>) {
        let mut inner = self.lock();
        inner.classes.add(rec.class);
        if rec.transient {
            inner.classes.transient += 1;
        }
        if inner.failures.len() >= MAX_FAILURES {
            return;
        }
        if let Some((id, data)) = actual.filter(|_| inner.dumps < MAX_DUMPS) {
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
        inner.failures.push(rec);
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

/// Claims `page` in `map`, so no writer changes it between re-reads; `None` if writers held it
/// through 10,000 tries.
fn hold(map: &GenMap, page: u64) -> Option<u32> {
    for _ in 0..10_000 {
        if let Some(g) = map.try_begin_write(page) {
            return Some(g);
        }
        std::thread::yield_now();
    }
    None
}

/// Reads `page` again, up to [`REREADS`] times, into `scratch`; returns how many re-reads were
/// made and whether one read back as `expect` wants (the fault was transient).
fn reread(f: &File, id: &FileIdent, page: u64, expect: Expect, scratch: &mut [u8]) -> (u32, bool) {
    let buf = &mut scratch[..id.page_bytes];
    let offset = page * id.page_bytes as u64;
    for n in 1..=REREADS {
        if pread_exact(f, buf, offset).is_ok() && classify(buf, id, page, expect).ok() {
            return (n, true);
        }
    }
    (REREADS, false)
}

/// `rec` with what the classification `fd` found.
fn found(rec: VerifyFailure, fd: Finding) -> VerifyFailure {
    VerifyFailure {
        class: fd.class.unwrap_or(FailureClass::Corrupt),
        found_generation: fd.found_generation,
        found_page: fd.found_page,
        found_file_id: fd.found_file_id,
        sectors_512_differing: fd.sectors_512,
        sectors_4k_differing: fd.sectors_4k,
        message: fd.message,
        ..rec
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn new_file(p: &Path) -> io::Result<File> {
    iocap_engine::safety::no_follow(OpenOptions::new().write(true).create_new(true), false).open(p)
}

/// The default dump directory: `<target>.dumps` beside the target.
pub fn default_dump_dir(target: &Path) -> PathBuf {
    let mut s = target.as_os_str().to_owned();
    s.push(".dumps");
    PathBuf::from(s)
}
