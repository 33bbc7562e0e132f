//! Issues paired with their completions, and records let out in issue order.
//!
//! An issue (`D`) opens a record; the first completion (`C`) on the same device and sector
//! closes the oldest one open there (flushes, whose sector means nothing, in the order they
//! were issued; pass-through commands likewise). A requeue (`R`) withdraws the open issue: the
//! request is issued again later, and that `D` is the one kept. Records wait in issue order
//! until the oldest is closed; an issue still open when [`WINDOW`] later ones wait behind it is
//! let out without a completion (`complete_ns` `None`), as is every one still open at the end.
//! Memory: the window (records of ~80 bytes), the open-issue index, and one name per pid seen.

use std::collections::{BTreeSet, HashMap, VecDeque};

use super::event::RawEvent;
use super::*;
use crate::record::{DevId, IoFlags, IoRecord, Op, COMM_LEN};

/// Records waiting behind an open issue at most: ~20 MiB, 2.6 s at 100K IOPS.
pub const WINDOW: usize = 1 << 18;
const FLUSH_KEY: u64 = u64::MAX;
const PASSTHROUGH_KEY: u64 = u64::MAX - 1;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Closed,
    Requeued,
}

struct Slot {
    rec: IoRecord,
    key: (u32, u64),
    state: State,
}

pub struct Pairer {
    base_ns: u64,
    /// [`WINDOW`], smaller in tests.
    pub window: usize,
    slots: VecDeque<Slot>,
    /// The sequence number of `slots[0]`.
    first_seq: u64,
    /// (device, key, sequence) of every open issue.
    open: BTreeSet<(u32, u64, u64)>,
    comms: HashMap<u32, [u8; COMM_LEN]>,
    /// Completions with no issue in the trace (issued before it started).
    pub unmatched: u64,
}

/// The operation, flags and matching key of an issue or completion, from its categories.
pub fn classify(ev: &RawEvent) -> (Op, IoFlags, u64) {
    let cat = ev.action >> 16;
    let mut flags = 0;
    for (tc, flag) in [
        (TC_SYNC, IoFlags::SYNC),
        (TC_AHEAD, IoFlags::AHEAD),
        (TC_META, IoFlags::META),
        (TC_FUA, IoFlags::FUA),
    ] {
        if cat & tc != 0 {
            flags |= flag;
        }
    }
    let (op, key) = if cat & TC_PC != 0 {
        (Op::Other, PASSTHROUGH_KEY)
    } else if cat & TC_DISCARD != 0 {
        (Op::Discard, ev.sector)
    } else if cat & TC_WRITE_ZEROES != 0 {
        (Op::WriteZeroes, ev.sector)
    } else if cat & TC_ZONE_MGMT != 0 {
        (Op::Other, ev.sector)
    } else if cat & TC_FLUSH != 0 && ev.bytes == 0 {
        (Op::Flush, FLUSH_KEY)
    } else {
        if cat & TC_FLUSH != 0 {
            flags |= IoFlags::PREFLUSH;
        }
        let op = if cat & TC_WRITE != 0 {
            Op::Write
        } else {
            Op::Read
        };
        (op, ev.sector)
    };
    (op, IoFlags(flags), key)
}

impl Pairer {
    pub fn new(base_ns: u64) -> Pairer {
        Pairer {
            base_ns,
            window: WINDOW,
            slots: VecDeque::new(),
            first_seq: 0,
            open: BTreeSet::new(),
            comms: HashMap::new(),
            unmatched: 0,
        }
    }

    pub fn feed(&mut self, ev: &RawEvent, pdu: &[u8]) {
        let action = ev.action & 0xff;
        if (ev.action >> 16) & TC_NOTIFY != 0 {
            if action == TN_PROCESS {
                let mut comm = [0u8; COMM_LEN];
                let n = pdu.len().min(COMM_LEN - 1);
                comm[..n].copy_from_slice(&pdu[..n]);
                if let Some(nul) = comm.iter().position(|&b| b == 0) {
                    comm[nul..].fill(0);
                }
                self.comms.insert(ev.pid, comm);
            }
            return;
        }
        match action {
            TA_ISSUE => self.issue(ev),
            TA_COMPLETE => {
                let t = ev.time_ns.saturating_sub(self.base_ns);
                match self.take_open(ev, State::Closed) {
                    Some(rec) => {
                        rec.complete_ns = Some(t);
                        rec.error = i32::from(ev.error as i16);
                    }
                    None => self.unmatched += 1,
                }
            }
            TA_REQUEUE => {
                self.take_open(ev, State::Requeued);
            }
            _ => {}
        }
    }

    fn issue(&mut self, ev: &RawEvent) {
        let (op, flags, key) = classify(ev);
        let seq = self.first_seq + self.slots.len() as u64;
        let rec = IoRecord {
            issue_ns: ev.time_ns.saturating_sub(self.base_ns),
            complete_ns: None,
            dev: DevId::from_kernel(ev.device),
            sector: ev.sector,
            bytes: ev.bytes,
            op,
            flags,
            error: 0,
            pid: ev.pid,
            comm: self.comms.get(&ev.pid).copied().unwrap_or_default(),
        };
        self.open.insert((ev.device, key, seq));
        let key = (ev.device, key);
        self.slots.push_back(Slot {
            rec,
            key,
            state: State::Open,
        });
    }

    /// The oldest open issue that `ev` answers, now in `state`.
    fn take_open(&mut self, ev: &RawEvent, state: State) -> Option<&mut IoRecord> {
        let (_, _, key) = classify(ev);
        let range = (ev.device, key, 0)..=(ev.device, key, u64::MAX);
        let found = *self.open.range(range).next()?;
        self.open.remove(&found);
        let slot = self.slots.get_mut((found.2 - self.first_seq) as usize)?;
        slot.state = state;
        Some(&mut slot.rec)
    }

    /// The next record in issue order, when it is closed or the window is full; at the end of
    /// the events (`end`), every record in turn.
    pub fn pop(&mut self, end: bool) -> Option<IoRecord> {
        loop {
            let front = self.slots.front()?;
            if front.state == State::Open {
                if !end && self.slots.len() <= self.window {
                    return None;
                }
                self.open
                    .remove(&(front.key.0, front.key.1, self.first_seq));
            }
            let slot = self.slots.pop_front()?;
            self.first_seq += 1;
            if slot.state != State::Requeued {
                return Some(slot.rec);
            }
        }
    }
}
