//! The programs: one on `block_rq_issue`, one on `block_rq_complete`, biosnoop's shape, and
//! one on `block_rq_requeue`.
//!
//! At issue, a request with data is kept with its issue time, the running task's pid and name,
//! its size and `rwbs` (on raw tracepoints, the request's flags, made `rwbs` in user space:
//! [`crate::rawtp`]): in the tag table where the programs are typed and the request has a
//! place there ([`tags`]), else in an LRU hash map (key: device and sector). At completion it
//! is looked up, one ring-buffer record is written with both times, and the entry freed: one
//! event per I/O crosses to user space. A request without data (a flush, whose sector means
//! nothing and of which several may be in flight) is not kept in the map: its issue and its
//! completion each write a record of their own, which user space pairs in order per device. A
//! record is submitted without waking the reader (`BPF_RB_NO_WAKEUP`): the reader drains the
//! ring every 10 to 100 ms ([`crate::cadence`]), so a busy device costs no wake-up per I/O.
//!
//! The same bodies serve both ways in ([`Source`]): a tracepoint's formatted record (offsets
//! from tracefs), or a raw tracepoint's request read into a record of that shape on the stack.
//!
//! A completion with data whose issue is not in the map (a request in flight when the capture
//! began, or one whose issue the kernel did not run the program for) writes a record of its
//! own, as a request without data does, with its size: user space tells the two apart by
//! when it came ([`crate::decode`]). An issue that finds its key in the map already (the
//! completion of the request before it on that sector was not seen) counts it
//! ([`COUNTER_OVERWRITTEN`]) and takes the entry. A requeued request (the driver gave it back,
//! to be issued again) leaves the map, or, without data, writes a record that withdraws its
//! issue. A full ring buffer and a full map are counted too ([`COUNTER_RING_FULL`],
//! [`COUNTER_MAP_FULL`]): nothing is dropped without a count.

use crate::asm::{Asm, Cond, Label, Reg, Size, FP, R0, R1, R2, R3, R4, R6, R7, R8, R9};
use crate::format::{Event, Field};
use crate::rawtp::{Layout, Point, FIELDS};

pub mod tags;

/// The ring-buffer record, 72 bytes (see [`crate::decode`]).
pub const RECORD_BYTES: i32 = 72;
/// `kind`: both times; the issue of a request without data; a completion whose issue is not
/// in the map (a request without data, or one with data whose issue was not seen); a requeue
/// of a request without data.
pub const KIND_BOTH: u32 = 0;
pub const KIND_ISSUE: u32 = 1;
pub const KIND_COMPLETE: u32 = 2;
pub const KIND_REQUEUE: u32 = 3;
/// The in-flight map's key (dev, 0, sector) and value sizes.
pub const KEY_BYTES: u32 = 16;
pub const VALUE_BYTES: u32 = 48;
/// The in-flight map's value: issue_ns, pid, bytes, rwbs, comm, 8 bytes of padding.
pub mod value {
    pub const ISSUE_NS: usize = 0;
    pub const PID: usize = 8;
    pub const BYTES: usize = 12;
    pub const RWBS: usize = 16;
    pub const COMM: usize = 24;
}
/// The counters' slots.
pub const COUNTER_RING_FULL: i32 = 0;
pub const COUNTER_MAP_FULL: i32 = 1;
/// An issue found its key taken: the completion of the request before it was not seen.
pub const COUNTER_OVERWRITTEN: i32 = 2;
pub const COUNTERS: u32 = 3;

// helper ids (include/uapi/linux/bpf.h)
const MAP_LOOKUP: i32 = 1;
const MAP_UPDATE: i32 = 2;
const MAP_DELETE: i32 = 3;
const KTIME_GET_NS: i32 = 5;
const GET_CURRENT_PID_TGID: i32 = 14;
const GET_CURRENT_COMM: i32 = 16;
const RINGBUF_RESERVE: i32 = 131;
const RINGBUF_SUBMIT: i32 = 132;
const RB_NO_WAKEUP: i32 = 1;
/// `BPF_NOEXIST`: the update fails with `EEXIST` where the key is there.
const NOEXIST: i32 = 1;
const EEXIST: i32 = 17;

/// The maps' descriptors and the devices to keep.
#[derive(Clone, Debug)]
pub struct Maps {
    pub inflight: i32,
    pub ring: i32,
    pub counters: i32,
    /// The kernel's dev_t of each device recorded (empty: all).
    pub devs: Vec<u32>,
    /// The tag table ([`tags`]), for typed programs that read the requests' tags: an
    /// array of [`tags::PER_DEVICE`] entries for each device in `devs`, in that order.
    pub tags: Option<i32>,
}

/// The tag table, where the programs use one: typed, reading the tags.
fn tagged(src: Source, maps: &Maps) -> Option<i32> {
    match src {
        Source::Raw(layout) if layout.tagged() && !maps.devs.is_empty() => maps.tags,
        _ => None,
    }
}

/// The fields of one event the programs read.
pub(crate) struct Ctx {
    dev: Field,
    pub(crate) sector: Field,
    pub(crate) rwbs: Field,
    /// `bytes` at issue, `nr_sector` at completion.
    size: Field,
    error: Option<Field>,
}

/// Where a program's fields come from: a tracepoint's formatted record, whose layout tracefs
/// gives, or a raw tracepoint's arguments, read into a record of the same shape on the stack
/// ([`crate::rawtp`]).
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    Tracepoint(&'a Event),
    Raw(&'a Layout),
}

fn ctx(src: Source, name: &str, size: &str, error: bool) -> Result<Ctx, String> {
    let field = |f: &str| match src {
        Source::Tracepoint(ev) => ev.field(f, name),
        Source::Raw(_) => {
            let f = if f == "bytes" || f == "nr_sector" {
                "size"
            } else {
                f
            };
            let at = FIELDS.iter().find(|(n, _)| *n == f).expect("a stack field");
            Ok(Field {
                offset: at.1,
                size: 8,
            })
        }
    };
    Ok(Ctx {
        dev: field("dev")?,
        sector: field("sector")?,
        rwbs: field("rwbs")?,
        size: field(size)?,
        error: if error { Some(field("error")?) } else { None },
    })
}

pub(crate) fn off(f: Field) -> i16 {
    f.offset as i16
}

/// `dst` = the 8 bytes of `rwbs` (a tracepoint's context is read only at offsets aligned to the
/// access size, so two aligned words are read and shifted together); clobbers `tmp`.
pub(crate) fn load_rwbs(a: &mut Asm, dst: Reg, tmp: Reg, rwbs: Field) {
    let base = (rwbs.offset & !7) as i16;
    let shift = i32::from(rwbs.offset & 7) * 8;
    a.load(Size::DW, dst, R6, base);
    if shift != 0 {
        a.rsh_imm(dst, shift);
        a.load(Size::DW, tmp, R6, base + 8)
            .lsh_imm(tmp, 64 - shift)
            .or(dst, tmp);
    }
}

/// r6 = the fields (ctx, or the stack record), r7 = dev; leaves unless the device is one
/// recorded.
fn prologue(a: &mut Asm, src: Source, point: Point, c: &Ctx, maps: &Maps) {
    match src {
        Source::Tracepoint(_) => {
            a.mov(R6, R1).load(Size::W, R7, R6, off(c.dev));
        }
        Source::Raw(layout) => layout.device(a),
    }
    if !maps.devs.is_empty() {
        let keep = a.label();
        let tagged = tagged(src, maps).is_some();
        for (i, &d) in maps.devs.iter().enumerate() {
            if tagged {
                // the device's index among those recorded: its part of the tag table
                let next = a.label();
                a.jump_imm(Cond::Ne, R7, d as i32, next)
                    .store_imm(Size::W, FP, tags::DEVICE, i as i32)
                    .goto(keep);
                a.bind(next);
            } else {
                a.jump_imm(Cond::Eq, R7, d as i32, keep);
            }
        }
        a.mov_imm(R0, 0).exit();
        a.bind(keep);
    }
    if let Source::Raw(layout) = src {
        layout.fields(a, point);
    }
}

/// Adds one to counter `slot` (its index at fp-68).
pub(crate) fn count(a: &mut Asm, maps: &Maps, slot: i32) {
    let out = a.label();
    a.store_imm(Size::W, FP, -68, slot)
        .ld_map_fd(R1, maps.counters);
    a.mov(R2, FP).add_imm(R2, -68).call(MAP_LOOKUP);
    a.jump_imm(Cond::Eq, R0, 0, out)
        .mov_imm(R1, 1)
        .atomic_add64(R0, 0, R1);
    a.bind(out);
}

/// Adds one to counter `slot`, then exits.
fn count_and_exit(a: &mut Asm, maps: &Maps, slot: i32) {
    count(a, maps, slot);
    a.mov_imm(R0, 0).exit();
}

/// The key (dev, 0, sector) at fp-16.
fn key(a: &mut Asm, c: &Ctx) {
    a.store(Size::W, FP, -16, R7).store_imm(Size::W, FP, -12, 0);
    a.load(Size::DW, R1, R6, off(c.sector))
        .store(Size::DW, FP, -8, R1);
}

/// Reserves a record into r9, or counts a full ring and exits.
fn reserve(a: &mut Asm, maps: &Maps, full: Label) {
    a.ld_map_fd(R1, maps.ring)
        .mov_imm(R2, RECORD_BYTES)
        .mov_imm(R3, 0);
    a.call(RINGBUF_RESERVE)
        .jump_imm(Cond::Eq, R0, 0, full)
        .mov(R9, R0);
}

fn submit(a: &mut Asm, rec: Reg) {
    a.mov(R1, rec)
        .mov_imm(R2, RB_NO_WAKEUP)
        .call(RINGBUF_SUBMIT);
}

/// The value at fp-64 into the in-flight map under the key at fp-16, with `flags`.
fn update(a: &mut Asm, maps: &Maps, flags: i32) {
    a.ld_map_fd(R1, maps.inflight).mov(R2, FP).add_imm(R2, -16);
    a.mov(R3, FP)
        .add_imm(R3, -64)
        .mov_imm(R4, flags)
        .call(MAP_UPDATE);
}

/// `block_rq_issue`.
pub fn issue(src: Source, maps: &Maps) -> Result<Vec<crate::asm::Insn>, String> {
    let c = ctx(src, "block_rq_issue", "bytes", false)?;
    let mut a = Asm::default();
    let (no_data, map_full, ring_full, taken) = (a.label(), a.label(), a.label(), a.label());
    prologue(&mut a, src, Point::Issue, &c, maps);
    a.load(Size::W, R8, R6, off(c.size))
        .jump_imm(Cond::Eq, R8, 0, no_data);
    if let Some(table) = tagged(src, maps) {
        let hashed = tags::issue(&mut a, &c, maps, table);
        a.bind(hashed);
    }
    key(&mut a, &c);
    // the value at fp-64: issue_ns, pid, bytes, rwbs, comm, 8 bytes of padding
    a.call(KTIME_GET_NS).store(Size::DW, FP, -64, R0);
    a.call(GET_CURRENT_PID_TGID)
        .rsh_imm(R0, 32)
        .store(Size::W, FP, -56, R0);
    a.store(Size::W, FP, -52, R8);
    load_rwbs(&mut a, R1, R2, c.rwbs);
    a.store(Size::DW, FP, -48, R1);
    a.mov(R1, FP)
        .add_imm(R1, -40)
        .mov_imm(R2, 16)
        .call(GET_CURRENT_COMM);
    a.store_imm(Size::DW, FP, -24, 0);
    // a new entry only: an entry there already is a request whose completion was not seen
    update(&mut a, maps, NOEXIST);
    a.jump_imm(Cond::Eq, R0, -EEXIST, taken)
        .jump_imm(Cond::Slt, R0, 0, map_full)
        .mov_imm(R0, 0)
        .exit();
    a.bind(taken);
    count(&mut a, maps, COUNTER_OVERWRITTEN);
    update(&mut a, maps, 0);
    a.jump_imm(Cond::Slt, R0, 0, map_full).mov_imm(R0, 0).exit();
    a.bind(map_full);
    count_and_exit(&mut a, maps, COUNTER_MAP_FULL);
    // no data: a record of the issue alone
    a.bind(no_data);
    reserve(&mut a, maps, ring_full);
    a.call(KTIME_GET_NS)
        .store(Size::DW, R9, 0, R0)
        .store_imm(Size::DW, R9, 8, 0);
    a.load(Size::DW, R1, R6, off(c.sector))
        .store(Size::DW, R9, 16, R1);
    a.store(Size::W, R9, 24, R7).store_imm(Size::W, R9, 28, 0);
    a.call(GET_CURRENT_PID_TGID)
        .rsh_imm(R0, 32)
        .store(Size::W, R9, 32, R0);
    a.store_imm(Size::W, R9, 36, 0);
    load_rwbs(&mut a, R1, R2, c.rwbs);
    a.store(Size::DW, R9, 40, R1);
    a.mov(R1, R9)
        .add_imm(R1, 48)
        .mov_imm(R2, 16)
        .call(GET_CURRENT_COMM);
    a.store_imm(Size::W, R9, 64, KIND_ISSUE as i32)
        .store_imm(Size::W, R9, 68, 0);
    submit(&mut a, R9);
    a.mov_imm(R0, 0).exit();
    a.bind(ring_full);
    count_and_exit(&mut a, maps, COUNTER_RING_FULL);
    Ok(a.finish())
}

/// The record of a request with both its times, from its entry in r9 (the in-flight map's
/// value, or the tag table's), written and submitted; on to `full` where the ring is full.
fn both(a: &mut Asm, c: &Ctx, maps: &Maps, error: i16, full: Label) {
    a.call(KTIME_GET_NS).store(Size::DW, FP, -24, R0);
    a.ld_map_fd(R1, maps.ring)
        .mov_imm(R2, RECORD_BYTES)
        .mov_imm(R3, 0);
    a.call(RINGBUF_RESERVE)
        .jump_imm(Cond::Eq, R0, 0, full)
        .mov(R8, R0);
    a.load(Size::DW, R1, R9, 0).store(Size::DW, R8, 0, R1);
    a.load(Size::DW, R1, FP, -24).store(Size::DW, R8, 8, R1);
    a.load(Size::DW, R1, R6, off(c.sector))
        .store(Size::DW, R8, 16, R1);
    a.store(Size::W, R8, 24, R7);
    a.load(Size::W, R1, R9, 12).store(Size::W, R8, 28, R1);
    a.load(Size::W, R1, R9, 8).store(Size::W, R8, 32, R1);
    a.load(Size::W, R1, R6, error).store(Size::W, R8, 36, R1);
    for o in [16i16, 24, 32] {
        a.load(Size::DW, R1, R9, o).store(Size::DW, R8, o + 24, R1);
    }
    a.store_imm(Size::W, R8, 64, KIND_BOTH as i32)
        .store_imm(Size::W, R8, 68, 0);
    submit(a, R8);
}

/// `block_rq_complete`.
pub fn complete(src: Source, maps: &Maps) -> Result<Vec<crate::asm::Insn>, String> {
    let c = ctx(src, "block_rq_complete", "nr_sector", true)?;
    let error = off(c.error.expect("asked for"));
    let mut a = Asm::default();
    let (no_data, unmatched, full_del, delete, ring_full) =
        (a.label(), a.label(), a.label(), a.label(), a.label());
    prologue(&mut a, src, Point::Complete, &c, maps);
    key(&mut a, &c);
    a.load(Size::W, R8, R6, off(c.size))
        .jump_imm(Cond::Eq, R8, 0, no_data);
    if let Some(table) = tagged(src, maps) {
        let (full, free) = (a.label(), a.label());
        let hashed = tags::complete(&mut a, &c, table, unmatched);
        both(&mut a, &c, maps, error, full);
        a.bind(free);
        tags::free(&mut a);
        a.mov_imm(R0, 0).exit();
        // a full ring still frees the entry
        a.bind(full);
        count(&mut a, maps, COUNTER_RING_FULL);
        a.goto(free);
        a.bind(hashed);
    }
    a.ld_map_fd(R1, maps.inflight)
        .mov(R2, FP)
        .add_imm(R2, -16)
        .call(MAP_LOOKUP);
    a.jump_imm(Cond::Eq, R0, 0, unmatched).mov(R9, R0);
    both(&mut a, &c, maps, error, full_del);
    a.bind(delete);
    a.ld_map_fd(R1, maps.inflight)
        .mov(R2, FP)
        .add_imm(R2, -16)
        .call(MAP_DELETE);
    a.mov_imm(R0, 0).exit();
    a.bind(full_del);
    // a full ring still frees the entry: count it, then delete
    count(&mut a, maps, COUNTER_RING_FULL);
    a.goto(delete);
    // no data, or an issue not seen: a record of the completion alone, with its size (r8
    // holds the sectors still: calls keep r6 to r9)
    a.bind(no_data);
    a.bind(unmatched);
    reserve(&mut a, maps, ring_full);
    a.store_imm(Size::DW, R9, 0, 0)
        .call(KTIME_GET_NS)
        .store(Size::DW, R9, 8, R0);
    a.load(Size::DW, R1, R6, off(c.sector))
        .store(Size::DW, R9, 16, R1);
    a.mov(R1, R8).lsh_imm(R1, 9);
    a.store(Size::W, R9, 24, R7).store(Size::W, R9, 28, R1);
    a.store_imm(Size::W, R9, 32, 0);
    a.load(Size::W, R1, R6, error).store(Size::W, R9, 36, R1);
    load_rwbs(&mut a, R1, R2, c.rwbs);
    a.store(Size::DW, R9, 40, R1);
    a.store_imm(Size::DW, R9, 48, 0)
        .store_imm(Size::DW, R9, 56, 0);
    a.store_imm(Size::W, R9, 64, KIND_COMPLETE as i32)
        .store_imm(Size::W, R9, 68, 0);
    submit(&mut a, R9);
    a.mov_imm(R0, 0).exit();
    a.bind(ring_full);
    count_and_exit(&mut a, maps, COUNTER_RING_FULL);
    Ok(a.finish())
}

/// `block_rq_requeue`: the driver gave a request back, to be issued again. One with data
/// leaves the map (its next issue is its issue); one without writes a record that withdraws
/// its issue.
pub fn requeue(src: Source, maps: &Maps) -> Result<Vec<crate::asm::Insn>, String> {
    let c = ctx(src, "block_rq_requeue", "nr_sector", false)?;
    let mut a = Asm::default();
    let (no_data, ring_full) = (a.label(), a.label());
    prologue(&mut a, src, Point::Requeue, &c, maps);
    key(&mut a, &c);
    a.load(Size::W, R8, R6, off(c.size))
        .jump_imm(Cond::Eq, R8, 0, no_data);
    if let Some(table) = tagged(src, maps) {
        let hashed = tags::requeue(&mut a, &c, table);
        a.bind(hashed);
    }
    a.ld_map_fd(R1, maps.inflight)
        .mov(R2, FP)
        .add_imm(R2, -16)
        .call(MAP_DELETE);
    a.mov_imm(R0, 0).exit();
    a.bind(no_data);
    reserve(&mut a, maps, ring_full);
    a.store_imm(Size::DW, R9, 0, 0)
        .call(KTIME_GET_NS)
        .store(Size::DW, R9, 8, R0);
    a.load(Size::DW, R1, R6, off(c.sector))
        .store(Size::DW, R9, 16, R1);
    a.store(Size::W, R9, 24, R7).store_imm(Size::W, R9, 28, 0);
    a.store_imm(Size::W, R9, 32, 0)
        .store_imm(Size::W, R9, 36, 0);
    load_rwbs(&mut a, R1, R2, c.rwbs);
    a.store(Size::DW, R9, 40, R1);
    a.store_imm(Size::DW, R9, 48, 0)
        .store_imm(Size::DW, R9, 56, 0);
    a.store_imm(Size::W, R9, 64, KIND_REQUEUE as i32)
        .store_imm(Size::W, R9, 68, 0);
    submit(&mut a, R9);
    a.mov_imm(R0, 0).exit();
    a.bind(ring_full);
    count_and_exit(&mut a, maps, COUNTER_RING_FULL);
    Ok(a.finish())
}
