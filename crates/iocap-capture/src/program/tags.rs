//! The tag table: where a typed program keeps a request in flight, in an array indexed by the
//! request's place (its device among those recorded, its hardware queue, its tag) instead of
//! the hash map keyed by device and sector.
//!
//! Why: the in-flight hash map was most of what the programs cost. On this project's VM, with
//! fio reading a loop device at qd 16, an LRU hash update at issue and a lookup and a delete
//! at completion took about 430 ns a request, of about 620 for all the typed programs' work
//! (the kernel's own count, `kernel.bpf_stats_enabled`), and each nanosecond on the requests'
//! path costs fio's IOPS (docs/capture.md, "Overhead"). A tag is unique among a hardware
//! queue's requests in flight and is given back only after the request's completion has run
//! the program, so it is a key that needs no hashing: the verifier turns the array's lookup
//! into a few instructions, and freeing an entry is one store.
//!
//! An entry is the in-flight map's value (issue time, pid, bytes, `rwbs`, name) with the
//! request's sector in its last 8 bytes. Its issue time is written last and is 0 while the
//! entry is free, so an entry is in flight once its issue time is set; a completion checks the
//! sector too, so it is never paired with another request's issue (one whose completion the
//! kernel did not run the program for). A request without such a place (a tag of 1,024 or
//! more, a queue past the 64th, more devices than [`MAX_DEVICES`]) goes to the hash map as
//! before, and so does every request on the ways in that cannot read a tag.

use super::{self as program, value, Ctx};
use crate::asm::{Asm, Cond, Label, Size, FP, R0, R1, R2, R6, R8, R9};
use crate::rawtp::{SLOT, SLOT_MAX};

/// Entries per device: 64 hardware queues of 1,024 tags.
pub const PER_DEVICE: u32 = 1 << 16;
/// The most devices one table holds (3 MiB each); a capture of more keeps the hash map alone.
pub const MAX_DEVICES: usize = 16;
/// The entry's sector, in what is padding in the hash map's value.
pub const SECTOR: usize = 40;
/// The stack slots: the device's index among those recorded (written by the prologue), and
/// the table's key.
pub const DEVICE: i16 = -72;
const KEY: i16 = -76;

const MAP_LOOKUP: i32 = 1;
const KTIME_GET_NS: i32 = 5;
const GET_CURRENT_PID_TGID: i32 = 14;
const GET_CURRENT_COMM: i32 = 16;

/// r9 = the request's entry (r6: the stack record), or on to `hashed` where it has no place.
fn lookup(a: &mut Asm, table: i32, hashed: Label) {
    a.load(Size::W, R1, R6, SLOT)
        .jump_imm(Cond::Gt, R1, SLOT_MAX, hashed);
    a.load(Size::W, R2, FP, DEVICE).lsh_imm(R2, 16).or(R1, R2);
    a.store(Size::W, FP, KEY, R1);
    a.ld_map_fd(R1, table)
        .mov(R2, FP)
        .add_imm(R2, i32::from(KEY))
        .call(MAP_LOOKUP);
    a.jump_imm(Cond::Eq, R0, 0, hashed).mov(R9, R0);
}

/// At issue, r8 holding the bytes: the request into its entry and exit, counting an entry
/// still in flight as a completion not seen; else on to the label returned (the hash map).
pub(crate) fn issue(a: &mut Asm, c: &Ctx, maps: &program::Maps, table: i32) -> Label {
    let (hashed, free) = (a.label(), a.label());
    lookup(a, table, hashed);
    a.load(Size::DW, R1, R9, value::ISSUE_NS as i16)
        .jump_imm(Cond::Eq, R1, 0, free);
    program::count(a, maps, program::COUNTER_OVERWRITTEN);
    a.bind(free);
    a.call(GET_CURRENT_PID_TGID)
        .rsh_imm(R0, 32)
        .store(Size::W, R9, value::PID as i16, R0);
    a.store(Size::W, R9, value::BYTES as i16, R8);
    program::load_rwbs(a, R1, R2, c.rwbs);
    a.store(Size::DW, R9, value::RWBS as i16, R1);
    a.mov(R1, R9)
        .add_imm(R1, value::COMM as i32)
        .mov_imm(R2, 16)
        .call(GET_CURRENT_COMM);
    a.load(Size::DW, R1, R6, program::off(c.sector))
        .store(Size::DW, R9, SECTOR as i16, R1);
    // the issue time last: the entry is in flight from here
    a.call(KTIME_GET_NS)
        .store(Size::DW, R9, value::ISSUE_NS as i16, R0);
    a.mov_imm(R0, 0).exit();
    hashed
}

/// At completion: r9 = the request's entry, on to `unmatched` where the entry is free or
/// holds another sector's request, or on to the label returned where the request has no
/// place (the hash map).
pub(crate) fn complete(a: &mut Asm, c: &Ctx, table: i32, unmatched: Label) -> Label {
    let hashed = a.label();
    lookup(a, table, hashed);
    a.load(Size::DW, R1, R9, value::ISSUE_NS as i16)
        .jump_imm(Cond::Eq, R1, 0, unmatched);
    a.load(Size::DW, R1, R9, SECTOR as i16)
        .load(Size::DW, R2, R6, program::off(c.sector))
        .jump_reg(Cond::Ne, R1, R2, unmatched);
    hashed
}

/// Frees the entry in r9.
pub(crate) fn free(a: &mut Asm) {
    a.store_imm(Size::DW, R9, value::ISSUE_NS as i16, 0);
}

/// At a requeue: frees the request's entry and exits; on to the label returned where the
/// request has no place (the hash map).
pub(crate) fn requeue(a: &mut Asm, c: &Ctx, table: i32) -> Label {
    let (hashed, other) = (a.label(), a.label());
    lookup(a, table, hashed);
    a.load(Size::DW, R1, R9, SECTOR as i16)
        .load(Size::DW, R2, R6, program::off(c.sector))
        .jump_reg(Cond::Ne, R1, R2, other);
    free(a);
    a.bind(other);
    a.mov_imm(R0, 0).exit();
    hashed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_slots_lie_between_the_programs_own_and_the_raw_record() {
        // the programs' own slots end at fp-68 (the counter's index); the raw record starts
        // at fp-128
        for slot in [DEVICE, KEY] {
            assert!((-128 + 40..=-68 - 4).contains(&slot), "{slot}");
        }
        assert_ne!(DEVICE, KEY);
        assert_eq!(SECTOR + 8, program::VALUE_BYTES as usize);
        assert_eq!(PER_DEVICE, SLOT_MAX as u32 + 1);
    }
}
