//! The io_uring engine of the run: one ring per thread with `qd` page operations in flight, the
//! same mix and the same map protocol as the psync slots (a write holds its page's claim until
//! its completion is reaped; a read takes its snapshots before submission and judges them after
//! completion), with fewer threads.
//!
//! Buffer contract: every slot's buffers are allocated before the loop and live in `slots`,
//! which is never resized; the loop ends only when nothing is in flight, and if the ring fails
//! with I/O still queued the slots are leaked on purpose rather than freed under the kernel.

use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

use io_uring::{opcode, types, IoUring};
use iocap_model::VerifyCounts;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::file::now_ns;
use crate::map::Snapshot;
use crate::page;
use crate::run::{
    record_write_error, Shared, MAX_SCAN_PAGES, MIX_LOG_PCT, MIX_SCAN_PCT, MIX_UPDATE_PCT,
};
use crate::VerifyError;
use iocap_engine::buffers::AlignedBuf;

/// Whether a ring can be set up here (seccomp and `kernel.io_uring_disabled` forbid it).
pub fn probe() -> Result<(), String> {
    if std::env::var_os("IOCAP_TEST_NO_IO_URING").is_some() {
        return Err("disabled by IOCAP_TEST_NO_IO_URING".into());
    }
    IoUring::new(2).map(drop).map_err(|e| e.to_string())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Idle,
    Write { generation: u32, op: &'static str },
    Read { op: &'static str },
}

struct Slot {
    buf: AlignedBuf,
    snaps: [Snapshot; MAX_SCAN_PAGES],
    kind: Kind,
    start: u64,
    len: usize,
}

pub(crate) fn worker(sh: &Shared, thread: u64, qd: usize) -> Result<VerifyCounts, VerifyError> {
    let pb = sh.id.page_bytes;
    let io = |e: std::io::Error| VerifyError::Io {
        context: "io_uring".into(),
        source: e,
    };
    let mut ring = IoUring::new((qd as u32).next_power_of_two()).map_err(io)?;
    let mut slots = Vec::with_capacity(qd);
    for _ in 0..qd {
        slots.push(Slot {
            buf: AlignedBuf::new(pb * MAX_SCAN_PAGES).map_err(io)?,
            snaps: [Snapshot::default(); MAX_SCAN_PAGES],
            kind: Kind::Idle,
            start: 0,
            len: 0,
        });
    }
    let mut scratch = AlignedBuf::new(pb).map_err(io)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(
        sh.id.seed ^ (thread + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
    );
    let mut c = VerifyCounts::default();
    let fd = types::Fd(sh.f.as_raw_fd());
    let mut inflight = 0usize;
    loop {
        if !sh.halted() {
            for (i, s) in slots.iter_mut().enumerate() {
                if s.kind != Kind::Idle {
                    continue;
                }
                let Some(entry) = prepare(sh, s, &mut rng, &mut c, fd, pb) else {
                    continue;
                };
                // SAFETY: the entry points into `s.buf`, which lives in `slots` (never resized
                // or dropped while in flight, see the module contract) and is not touched until
                // this slot's completion is reaped.
                unsafe {
                    ring.submission()
                        .push(&entry.user_data(i as u64))
                        .expect("the queue holds qd entries");
                }
                inflight += 1;
            }
        }
        if inflight == 0 {
            if sh.halted() {
                break;
            }
            std::thread::yield_now();
            continue;
        }
        if let Err(e) = ring.submit_and_wait(1) {
            if e.raw_os_error() == Some(libc::EINTR) || e.raw_os_error() == Some(libc::EBUSY) {
                continue;
            }
            // the kernel may still use the buffers: never free them
            std::mem::forget(slots);
            return Err(io(e));
        }
        for cqe in ring.completion() {
            inflight -= 1;
            let s = &mut slots[cqe.user_data() as usize];
            complete(sh, s, cqe.result(), &mut scratch, &mut c, pb);
            s.kind = Kind::Idle;
        }
    }
    Ok(c)
}

/// Picks the slot's next operation; `None` if a page to write was busy.
fn prepare(
    sh: &Shared,
    s: &mut Slot,
    rng: &mut Xoshiro256PlusPlus,
    c: &mut VerifyCounts,
    fd: types::Fd,
    pb: usize,
) -> Option<io_uring::squeue::Entry> {
    let op = rng.next_u64() % 100;
    let write = |s: &mut Slot, p: u64, g: u32, dsync: bool, op: &'static str| {
        page::encode(
            &mut s.buf.as_mut_slice()[..pb],
            &sh.id,
            p,
            u64::from(g) + 1,
            now_ns(),
        );
        s.kind = Kind::Write { generation: g, op };
        s.start = p;
        s.len = 1;
        opcode::Write::new(fd, s.buf.as_slice().as_ptr(), pb as u32)
            .offset(p * pb as u64)
            .rw_flags(if dsync { libc::RWF_DSYNC } else { 0 })
            .build()
    };
    if op < MIX_UPDATE_PCT {
        let (p, g) = (0..8).find_map(|_| {
            let p = rng.next_u64() % sh.data_pages;
            sh.map.try_begin_write(p).map(|g| (p, g))
        })?;
        c.random_updates += 1;
        return Some(write(s, p, g, sh.dsync_all, "write"));
    }
    if op < MIX_UPDATE_PCT + MIX_LOG_PCT {
        let p = sh.data_pages + sh.log_cursor.fetch_add(1, Ordering::Relaxed) % sh.log_pages;
        let g = sh.map.try_begin_write(p)?;
        c.log_appends += 1;
        return Some(write(s, p, g, true, "log_append"));
    }
    let (start, len, op) = if op < MIX_UPDATE_PCT + MIX_LOG_PCT + MIX_SCAN_PCT {
        let len = (8 + rng.next_u64() % 57).min(sh.pages) as usize;
        c.scans += 1;
        (rng.next_u64() % (sh.pages - len as u64 + 1), len, "scan")
    } else {
        c.random_reads += 1;
        (rng.next_u64() % sh.pages, 1, "read")
    };
    for (i, snap) in s.snaps.iter_mut().enumerate().take(len) {
        *snap = sh.map.before_read(start + i as u64);
    }
    if len == 1 && s.snaps[0].busy() {
        c.reads_skipped += 1;
        return None;
    }
    s.kind = Kind::Read { op };
    s.start = start;
    s.len = len;
    Some(
        opcode::Read::new(fd, s.buf.as_mut_slice().as_mut_ptr(), (len * pb) as u32)
            .offset(start * pb as u64)
            .build(),
    )
}

fn complete(
    sh: &Shared,
    s: &mut Slot,
    res: i32,
    scratch: &mut AlignedBuf,
    c: &mut VerifyCounts,
    pb: usize,
) {
    let want = (s.len * pb) as i32;
    let err = || {
        if res < 0 {
            std::io::Error::from_raw_os_error(-res)
        } else {
            std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("short transfer: {res} of {want} B"),
            )
        }
    };
    match s.kind {
        Kind::Idle => {}
        Kind::Write { generation: g, op } => {
            if res == want {
                c.pages_written += 1;
                c.bytes_written += pb as u64;
                crate::run::acknowledge(sh, s.start, g, c);
            } else {
                record_write_error(sh, s.start, g, op, err());
            }
        }
        Kind::Read { op } => {
            if res != want {
                crate::run::read_failed(
                    sh,
                    s.start,
                    &s.snaps[..s.len],
                    op,
                    err(),
                    scratch.as_mut_slice(),
                    c,
                );
                return;
            }
            c.pages_read += s.len as u64;
            c.bytes_read += want as u64;
            crate::run::check_read(
                sh,
                s.start,
                &s.snaps[..s.len],
                s.buf.as_slice(),
                op,
                scratch.as_mut_slice(),
                c,
            );
        }
    }
}
