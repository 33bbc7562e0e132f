//! The raw-tracepoint way in: the programs attached to `block_rq_issue`, `block_rq_complete`
//! and `block_rq_requeue` as raw tracepoints get the kernel's arguments (`struct request *`,
//! and at completion the status and the bytes done), and read the few fields they need from
//! the request themselves, at offsets the kernel's BTF gives ([`crate::btf`]).
//!
//! Why: a perf-event tracepoint formats its whole record (device, sector, sizes, the `rwbs`
//! text, the command bytes, the task's name) into a per-CPU buffer for every request of every
//! device before the program runs, and runs no tracing program nested in another on a CPU.
//! On a loop device at qd 16, with fio reading, a program that only counted cost fio 10 % of
//! its IOPS that way (bench/capture-overhead.py). A raw tracepoint formats nothing, and skips
//! a run only when the same program is already running on that CPU.
//!
//! The prologue reads the request's device first ([`Layout::device`]: a request of a device
//! not recorded is left after three reads), then the other fields ([`Layout::fields`], one
//! read where they lie within 64 bytes) into a record on the stack laid out like a
//! tracepoint's ([`FIELDS`]); the programs' bodies ([`crate::program`]) are then the same for
//! both ways in. Two things differ, and [`Layout::fix`] turns them back in user space
//! into what the tracepoint would have written: the `rwbs` slot holds the request's
//! `cmd_flags` (the text is made from them as the kernel's `blk_fill_rwbs` makes it), and the
//! completion's `error` is the block layer's status (made a negative errno as
//! `blk_status_to_errno` makes it).

use crate::asm::{Asm, Cond, Size, FP, R1, R2, R3, R6, R7, R8, R9};
use crate::btf::Btf;

/// `bpf_probe_read_kernel`.
const PROBE_READ_KERNEL: i32 = 113;

/// Where the stack record starts (below the programs' own slots, which end at fp-68), and a
/// scratch slot below it for the pointers followed.
const BASE: i16 = -128;
const SCRATCH: i16 = -144;
/// Where the request's span of sector, size and flags is read to, and its most bytes.
const SPAN: i16 = -224;
const SPAN_BYTES: u32 = 64;

fn width(s: Size) -> u32 {
    match s {
        Size::DW => 8,
        _ => 4,
    }
}

/// The stack record's fields (offsets from [`BASE`]), as [`crate::program`]'s context: dev,
/// error, sector, size (bytes at issue, sectors at completion and requeue), rwbs, and for a
/// typed program the request's place in its device's part of the tag table ([`SLOT`]).
pub const FIELDS: [(&str, u16); 6] = [
    ("dev", 0),
    ("error", 4),
    ("sector", 8),
    ("size", 16),
    ("rwbs", 24),
    ("slot", 32),
];
/// The record's `slot`: the request's hardware queue number (below 64) times 1,024, plus its
/// tag (below 1,024); anything over [`SLOT_MAX`] where the request has no such place (a
/// larger tag or queue number), whose entry then goes to the in-flight hash map.
pub const SLOT: i16 = 32;
pub const SLOT_MAX: i32 = 0xffff;
const TAG_BITS: i32 = 10;
const QUEUES: i32 = 64;

/// Which tracepoint a prologue is for: what its arguments are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Point {
    Issue,
    Complete,
    Requeue,
}

/// The running kernel's offsets and flag bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    q: u32,
    sector: u32,
    data_len: u32,
    cmd_flags: u32,
    disk: u32,
    major: u32,
    first_minor: u32,
    flags: Flags,
    /// Where a request's tag (`request.tag`), its hardware queue (`request.mq_hctx`) and that
    /// queue's number (`blk_mq_hw_ctx.queue_num`) lie: a typed program keys the requests in
    /// flight by them ([`crate::program`]'s tag table); `None` on a kernel without them.
    tags: Option<(u32, u32, u32)>,
    /// Whether the programs are typed raw tracepoints (`tp_btf`), which load the request's
    /// fields themselves, or plain ones, which copy them with `bpf_probe_read_kernel`.
    pub typed: bool,
}

/// `cmd_flags`' operation bits and the flags `rwbs` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flags {
    op_mask: u32,
    read: u32,
    write: u32,
    flush: u32,
    discard: u32,
    secure_erase: u32,
    preflush: u32,
    fua: u32,
    rahead: u32,
    sync: u32,
    meta: u32,
    atomic: u32,
}

impl Layout {
    /// The layout from the kernel's BTF; what is missing, for a kernel without it.
    pub fn from_btf(btf: &Btf) -> Result<Layout, String> {
        let at = |s: &str, m: &str, size: u32| -> Result<u32, String> {
            let (off, got) = btf.member(s, m)?;
            match got == size {
                true => Ok(off),
                false => Err(format!("{s}.{m} is {got} bytes, not {size}")),
            }
        };
        let e = |name: &str| {
            btf.enumerator(name)
                .map(|v| v as u32)
                .ok_or_else(|| format!("the kernel's BTF has no {name}"))
        };
        let bit = |name: &str| e(name).map(|b| 1u32 << b);
        let flags = Flags {
            // the flag bits start where the operation's end (REQ_OP_BITS)
            op_mask: (1 << e("__REQ_FAILFAST_DEV")?) - 1,
            read: e("REQ_OP_READ")?,
            write: e("REQ_OP_WRITE")?,
            flush: e("REQ_OP_FLUSH")?,
            discard: e("REQ_OP_DISCARD")?,
            secure_erase: e("REQ_OP_SECURE_ERASE")?,
            preflush: bit("__REQ_PREFLUSH")?,
            fua: bit("__REQ_FUA")?,
            rahead: bit("__REQ_RAHEAD")?,
            sync: bit("__REQ_SYNC")?,
            meta: bit("__REQ_META")?,
            atomic: bit("__REQ_ATOMIC").unwrap_or(0),
        };
        Ok(Layout {
            q: at("request", "q", 8)?,
            sector: at("request", "__sector", 8)?,
            data_len: at("request", "__data_len", 4)?,
            cmd_flags: at("request", "cmd_flags", 4)?,
            disk: at("request_queue", "disk", 8)?,
            major: at("gendisk", "major", 4)?,
            first_minor: at("gendisk", "first_minor", 4)?,
            flags,
            tags: match (
                at("request", "tag", 4),
                at("request", "mq_hctx", 8),
                at("blk_mq_hw_ctx", "queue_num", 4),
            ) {
                (Ok(t), Ok(h), Ok(q)) => Some((t, h, q)),
                _ => None,
            },
            typed: false,
        })
    }

    /// Reads `len` bytes at `r8 + off` into the stack at `to` (zeroed by the kernel where the
    /// read fails).
    fn read(a: &mut Asm, to: i16, len: i32, off: u32) {
        a.mov(R1, FP).add_imm(R1, i32::from(to)).mov_imm(R2, len);
        a.mov(R3, R8)
            .add_imm(R3, off as i32)
            .call(PROBE_READ_KERNEL);
    }

    /// Zeroes the stack record, keeps the arguments (r1) in r9 and reads the request's device
    /// into the record and r7: `rq->q->disk`'s major and first minor, as the kernel's dev_t
    /// (0 without a disk). The first thing read, so a request of a device not recorded costs
    /// three reads and no more.
    pub fn device(&self, a: &mut Asm) {
        if self.typed {
            return self.device_typed(a);
        }
        let no_disk = a.label();
        a.mov(R9, R1);
        for o in (SCRATCH..BASE + 32).step_by(8) {
            a.store_imm(Size::DW, FP, o, 0);
        }
        a.load(Size::DW, R8, R9, 0); // the request
        Self::read(a, SCRATCH, 8, self.q);
        a.load(Size::DW, R8, FP, SCRATCH)
            .jump_imm(Cond::Eq, R8, 0, no_disk);
        Self::read(a, SCRATCH, 8, self.disk);
        a.load(Size::DW, R8, FP, SCRATCH)
            .jump_imm(Cond::Eq, R8, 0, no_disk);
        if self.first_minor == self.major + 4 {
            Self::read(a, SCRATCH, 8, self.major);
        } else {
            Self::read(a, SCRATCH, 4, self.major);
            Self::read(a, SCRATCH + 4, 4, self.first_minor);
        }
        a.load(Size::W, R1, FP, SCRATCH).lsh_imm(R1, 20);
        a.load(Size::W, R2, FP, SCRATCH + 4).or(R1, R2);
        a.store(Size::W, FP, BASE, R1);
        a.bind(no_disk);
        a.load(Size::W, R7, FP, BASE);
    }

    /// [`Layout::device`] for a typed program: the request and the pointers from it are
    /// loaded directly (the verifier knows their types from BTF, and a load through a pointer
    /// that is not there reads 0 instead of faulting), which costs a few nanoseconds where each
    /// `bpf_probe_read_kernel` costs tens (on this project's VM, the plain prologue took about
    /// 100 ns a run).
    fn device_typed(&self, a: &mut Asm) {
        let no_disk = a.label();
        a.mov(R9, R1);
        for o in (BASE..BASE + 40).step_by(8) {
            a.store_imm(Size::DW, FP, o, 0);
        }
        a.load(Size::DW, R8, R9, 0); // the request
        a.load(Size::DW, R1, R8, self.q as i16)
            .jump_imm(Cond::Eq, R1, 0, no_disk);
        a.load(Size::DW, R1, R1, self.disk as i16)
            .jump_imm(Cond::Eq, R1, 0, no_disk);
        a.load(Size::W, R2, R1, self.major as i16).lsh_imm(R2, 20);
        a.load(Size::W, R3, R1, self.first_minor as i16).or(R2, R3);
        a.store(Size::W, FP, BASE, R2);
        a.bind(no_disk);
        a.load(Size::W, R7, FP, BASE);
    }

    /// The record's `slot` from the request in r8 (typed only): its queue number and tag,
    /// or past [`SLOT_MAX`] where either is out of range or unknown.
    fn slot(&self, a: &mut Asm) {
        let Some((tag, hctx, queue_num)) = self.tags else {
            a.store_imm(Size::W, FP, BASE + SLOT, -1);
            return;
        };
        let (none, done) = (a.label(), a.label());
        // a tag below 0 reads as a large unsigned number, and is out of range too
        a.load(Size::W, R1, R8, tag as i16)
            .jump_imm(Cond::Gt, R1, (1 << TAG_BITS) - 1, none);
        a.load(Size::DW, R2, R8, hctx as i16)
            .jump_imm(Cond::Eq, R2, 0, none);
        a.load(Size::W, R2, R2, queue_num as i16)
            .jump_imm(Cond::Gt, R2, QUEUES - 1, none);
        a.lsh_imm(R2, TAG_BITS).or(R2, R1);
        a.store(Size::W, FP, BASE + SLOT, R2).goto(done);
        a.bind(none);
        a.store_imm(Size::W, FP, BASE + SLOT, -1);
        a.bind(done);
    }

    /// Whether the programs key the requests in flight by their tags: typed, on a kernel
    /// whose BTF places them.
    pub fn tagged(&self) -> bool {
        self.typed && self.tags.is_some()
    }

    /// Reads the rest of the record (sector, size, flags; at completion the status and the
    /// bytes done) and leaves r6 pointing at it, as a tracepoint's context would be.
    pub fn fields(&self, a: &mut Asm, point: Point) {
        a.load(Size::DW, R8, R9, 0);
        let fields = [
            (self.sector, Size::DW, BASE + 8),
            (self.data_len, Size::W, BASE + 16),
            (self.cmd_flags, Size::W, BASE + 24),
        ];
        // from an 8-byte boundary, so each field keeps its natural alignment on the stack
        let lo = fields.iter().map(|f| f.0).min().expect("three") & !7;
        let hi = fields
            .iter()
            .map(|f| f.0 + width(f.1))
            .max()
            .expect("three");
        if self.typed {
            for (off, size, to) in fields {
                a.load(size, R1, R8, off as i16).store(size, FP, to, R1);
            }
            self.slot(a);
        } else if hi - lo <= SPAN_BYTES {
            // one read of the span that holds all three, then each copied out of it
            Self::read(a, SPAN, (hi - lo) as i32, lo);
            for (off, size, to) in fields {
                a.load(size, R1, FP, SPAN + (off - lo) as i16)
                    .store(size, FP, to, R1);
            }
        } else {
            for (off, size, to) in fields {
                Self::read(a, to, width(size) as i32, off);
            }
        }
        match point {
            Point::Issue => {}
            Point::Complete => {
                // (rq, status, nr_bytes): the status, and the bytes done as sectors
                a.load(Size::DW, R1, R9, 8).store(Size::W, FP, BASE + 4, R1);
                a.load(Size::DW, R1, R9, 16).rsh_imm(R1, 9);
                a.store(Size::W, FP, BASE + 16, R1);
            }
            Point::Requeue => {
                a.load(Size::W, R1, FP, BASE + 16).rsh_imm(R1, 9);
                a.store(Size::W, FP, BASE + 16, R1);
            }
        }
        a.mov(R6, FP).add_imm(R6, i32::from(BASE));
    }

    /// Turns a record's `rwbs` and `error`, written through this way in, into what the
    /// tracepoint would have written: the text from the flags, the status as a negative errno.
    pub fn fix(&self, rwbs: &mut [u8; 8], error: &mut i32) {
        let flags = u32::from_le_bytes(rwbs[..4].try_into().expect("4 bytes"));
        *rwbs = self.flags.rwbs(flags);
        *error = status_errno(*error as u32 as u8);
    }
}

impl Flags {
    /// The kernel's `blk_fill_rwbs`.
    fn rwbs(&self, opf: u32) -> [u8; 8] {
        let mut s = [0u8; 8];
        let mut i = 0;
        let mut put = |c: u8| {
            if i < 7 {
                s[i] = c;
                i += 1;
            }
        };
        if opf & self.preflush != 0 {
            put(b'F');
        }
        match opf & self.op_mask {
            op if op == self.write => put(b'W'),
            op if op == self.discard => put(b'D'),
            op if op == self.secure_erase => {
                put(b'D');
                put(b'E');
            }
            op if op == self.flush => put(b'F'),
            op if op == self.read => put(b'R'),
            _ => put(b'N'),
        }
        for (bit, c) in [
            (self.fua, b'F'),
            (self.rahead, b'A'),
            (self.sync, b'S'),
            (self.meta, b'M'),
            (self.atomic, b'U'),
        ] {
            if bit != 0 && opf & bit != 0 {
                put(c);
            }
        }
        s
    }
}

/// The kernel's `blk_status_to_errno` (include/linux/blk_types.h's statuses, block/blk-core.c's
/// table, Linux's errno numbers); an unknown status is EIO, as there.
fn status_errno(status: u8) -> i32 {
    const EIO: i32 = 5;
    let errno = match status {
        0 => return 0,
        1 => 95,   // EOPNOTSUPP
        2 => 110,  // ETIMEDOUT
        3 => 28,   // ENOSPC
        4 => 67,   // ENOLINK
        5 => 121,  // EREMOTEIO
        6 => 52,   // EBADE
        7 => 61,   // ENODATA
        8 => 84,   // EILSEQ
        9 => 12,   // ENOMEM
        11 => 78,  // EREMCHG
        12 => 11,  // EAGAIN
        13 => 16,  // EBUSY
        14 => 109, // ETOOMANYREFS
        15 => 75,  // EOVERFLOW
        16 => 19,  // ENODEV
        17 => 62,  // ETIME
        19 => 22,  // EINVAL
        _ => EIO,
    };
    -errno
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags() -> Flags {
        // Linux 6.x: REQ_OP_BITS 8; FAILFAST_DEV.. then SYNC 11, META 12, PRIO 13, ..., FUA 17,
        // PREFLUSH 18, RAHEAD 19
        Flags {
            op_mask: 0xff,
            read: 0,
            write: 1,
            flush: 2,
            discard: 3,
            secure_erase: 5,
            preflush: 1 << 18,
            fua: 1 << 17,
            rahead: 1 << 19,
            sync: 1 << 11,
            meta: 1 << 12,
            atomic: 0,
        }
    }

    fn text(b: [u8; 8]) -> String {
        String::from_utf8(b.iter().take_while(|&&c| c != 0).copied().collect()).unwrap()
    }

    #[test]
    fn rwbs_is_made_as_the_kernel_makes_it() {
        let f = flags();
        assert_eq!(text(f.rwbs(0)), "R");
        assert_eq!(text(f.rwbs(1 | 1 << 11)), "WS");
        assert_eq!(text(f.rwbs(1 | 1 << 18 | 1 << 17 | 1 << 11)), "FWFS");
        assert_eq!(text(f.rwbs(2)), "F");
        assert_eq!(text(f.rwbs(5)), "DE");
        assert_eq!(text(f.rwbs(9)), "N");
        assert_eq!(text(f.rwbs(1 << 19 | 1 << 12)), "RAM");
    }

    #[test]
    fn a_status_is_the_errno_the_tracepoint_shows() {
        assert_eq!(status_errno(0), 0);
        assert_eq!(status_errno(10), -5);
        assert_eq!(status_errno(3), -28);
        assert_eq!(status_errno(200), -5);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_running_kernel_s_layout_is_read_where_it_has_btf() {
        let Some(btf) = Btf::kernel_for_test() else {
            return;
        };
        let l = Layout::from_btf(&btf).unwrap();
        assert_eq!((l.flags.read, l.flags.write), (0, 1));
        assert_eq!(text(l.flags.rwbs(1 | l.flags.sync)), "WS");
    }
}
