//! From ring-buffer records to [`IoRecord`]s in issue order: decoding, pairing the issues and
//! completions of requests without data (flushes) per device in order, the `--comm`/`--pid`
//! filters, and a reorder window (records arrive in completion order; a trace is in issue
//! order). Pure: tested on constructed bytes.
//!
//! The record the programs write (little-endian, 72 bytes):
//!
//! ```text
//!  0 u64 issue_ns (kernel monotonic; 0 in a completion-only record)
//!  8 u64 complete_ns (0 in an issue-only record)
//! 16 u64 sector
//! 24 u32 dev (the kernel's dev_t)
//! 28 u32 bytes
//! 32 u32 pid (the issuing task's process id; 0 in a completion-only record)
//! 36 i32 error
//! 40 [8] rwbs
//! 48 [16] comm
//! 64 u32 kind: 0 both times, 1 issue only, 2 completion only
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use iocap_trace::{DevId, IoRecord, Op};

use crate::program::{KIND_BOTH, KIND_COMPLETE, KIND_ISSUE};

/// One ring-buffer record, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raw {
    pub issue_ns: u64,
    pub complete_ns: u64,
    pub sector: u64,
    pub dev: u32,
    pub bytes: u32,
    pub pid: u32,
    pub error: i32,
    pub rwbs: [u8; 8],
    pub comm: [u8; 16],
    pub kind: u32,
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}

/// Decodes a record; `None` for one shorter than the layout.
pub fn decode(b: &[u8]) -> Option<Raw> {
    if b.len() < 68 {
        return None;
    }
    Some(Raw {
        issue_ns: u64_at(b, 0),
        complete_ns: u64_at(b, 8),
        sector: u64_at(b, 16),
        dev: u32_at(b, 24),
        bytes: u32_at(b, 28),
        pid: u32_at(b, 32),
        error: u32_at(b, 36) as i32,
        rwbs: b[40..48].try_into().expect("8 bytes"),
        comm: b[48..64].try_into().expect("16 bytes"),
        kind: u32_at(b, 64),
    })
}

/// A record waiting in the window, ordered by issue time, then arrival.
struct Held(u64, u64, IoRecord);

impl PartialEq for Held {
    fn eq(&self, o: &Held) -> bool {
        (self.0, self.1) == (o.0, o.1)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Held) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Held) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(o.0, o.1))
    }
}

/// Who to keep.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub comm: Option<String>,
    pub pid: Option<u32>,
}

impl Filter {
    fn keeps(&self, r: &IoRecord) -> bool {
        self.pid.is_none_or(|p| p == r.pid)
            && self
                .comm
                .as_ref()
                .is_none_or(|c| IoRecord::comm_from(c) == r.comm)
    }
}

/// Turns records into a trace: ns since `t0`, flushes paired, filtered, in issue order.
pub struct Assembler {
    t0: u64,
    window_ns: u64,
    filter: Filter,
    /// Issues of requests without data waiting for their completion, per device.
    pending: HashMap<u32, VecDeque<IoRecord>>,
    heap: BinaryHeap<Reverse<Held>>,
    seq: u64,
    newest_ns: u64,
    pub filtered_out: u64,
    pub unmatched: u64,
    pub records: u64,
}

impl Assembler {
    /// `t0`: the capture's start on the kernel's monotonic clock; a record waits until the
    /// newest completion is `window_ns` past its issue.
    pub fn new(t0: u64, window_ns: u64, filter: Filter) -> Assembler {
        Assembler {
            t0,
            window_ns,
            filter,
            pending: HashMap::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            newest_ns: 0,
            filtered_out: 0,
            unmatched: 0,
            records: 0,
        }
    }

    fn record(&self, r: &Raw) -> IoRecord {
        let (op, flags) = IoRecord::parse_rwbs(&r.rwbs);
        let rel = |t: u64| t.saturating_sub(self.t0);
        IoRecord {
            issue_ns: rel(r.issue_ns),
            complete_ns: (r.complete_ns != 0).then(|| rel(r.complete_ns)),
            dev: DevId::from_kernel(r.dev),
            sector: if op == Op::Flush { 0 } else { r.sector },
            bytes: r.bytes,
            op,
            flags,
            error: r.error,
            pid: r.pid,
            comm: r.comm,
        }
    }

    /// Takes one ring-buffer record; releases what the window lets out to `sink`.
    pub fn push(&mut self, r: &Raw, sink: &mut dyn FnMut(&IoRecord)) {
        match r.kind {
            KIND_ISSUE => {
                let rec = self.record(r);
                self.pending.entry(r.dev).or_default().push_back(rec);
            }
            KIND_COMPLETE => {
                let done = self.record(r).complete_ns;
                match self.pending.get_mut(&r.dev).and_then(VecDeque::pop_front) {
                    Some(mut rec) => {
                        rec.complete_ns = done;
                        rec.error = r.error;
                        self.hold(rec);
                    }
                    None => self.unmatched += 1,
                }
            }
            KIND_BOTH => {
                let rec = self.record(r);
                self.hold(rec);
            }
            _ => self.unmatched += 1,
        }
        self.release(Release::Due, sink);
    }

    fn hold(&mut self, rec: IoRecord) {
        if !self.filter.keeps(&rec) {
            self.filtered_out += 1;
            return;
        }
        self.newest_ns = self.newest_ns.max(rec.complete_ns.unwrap_or(rec.issue_ns));
        self.seq += 1;
        self.heap.push(Reverse(Held(rec.issue_ns, self.seq, rec)));
    }

    /// The clock moved to `now` (the kernel's monotonic ns) with nothing completing: records
    /// issued a window before it are let out, so a quiet device does not hold the last
    /// seconds back (a capture killed then would lose them).
    pub fn tick(&mut self, now: u64, sink: &mut dyn FnMut(&IoRecord)) {
        self.newest_ns = self.newest_ns.max(now.saturating_sub(self.t0));
        self.release(Release::Due, sink);
    }

    /// Lets out the records the window no longer holds back, or all of them.
    fn release(&mut self, which: Release, sink: &mut dyn FnMut(&IoRecord)) {
        while let Some(Reverse(held)) = self.heap.peek() {
            if which == Release::Due && held.0.saturating_add(self.window_ns) > self.newest_ns {
                break;
            }
            if let Some(Reverse(Held(_, _, rec))) = self.heap.pop() {
                self.records += 1;
                sink(&rec);
            }
        }
    }

    /// At the end: issues still waiting for their completion go out without one.
    pub fn finish(&mut self, sink: &mut dyn FnMut(&IoRecord)) {
        let waiting: Vec<IoRecord> = self.pending.drain().flat_map(|(_, q)| q).collect();
        for rec in waiting {
            self.hold(rec);
        }
        self.release(Release::All, sink);
    }
}

/// Which held records [`Assembler::release`] lets out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Release {
    /// Those issued a window before the newest time seen.
    Due,
    /// Every one (at the end).
    All,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(issue: u64, done: u64, sector: u64, rwbs: &[u8], kind: u32) -> Raw {
        let mut w = [0u8; 8];
        w[..rwbs.len()].copy_from_slice(rwbs);
        Raw {
            issue_ns: issue,
            complete_ns: done,
            sector,
            dev: (7 << 20) | 1,
            bytes: if kind == KIND_BOTH { 8192 } else { 0 },
            pid: 42,
            error: 0,
            rwbs: w,
            comm: IoRecord::comm_from("postgres"),
            kind,
        }
    }

    fn encode(r: &Raw) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&r.issue_ns.to_le_bytes());
        b.extend_from_slice(&r.complete_ns.to_le_bytes());
        b.extend_from_slice(&r.sector.to_le_bytes());
        b.extend_from_slice(&r.dev.to_le_bytes());
        b.extend_from_slice(&r.bytes.to_le_bytes());
        b.extend_from_slice(&r.pid.to_le_bytes());
        b.extend_from_slice(&r.error.to_le_bytes());
        b.extend_from_slice(&r.rwbs);
        b.extend_from_slice(&r.comm);
        b.extend_from_slice(&r.kind.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b
    }

    #[test]
    fn a_record_decodes_field_by_field() {
        let r = raw(1000, 5000, 16, b"WFS", KIND_BOTH);
        let b = encode(&r);
        assert_eq!(b.len(), 72);
        assert_eq!(decode(&b), Some(r));
        assert_eq!(decode(&b[..40]), None);
    }

    #[test]
    fn completions_out_of_order_come_out_in_issue_order_after_the_window() {
        let mut a = Assembler::new(1000, 100, Filter::default());
        let mut out = vec![];
        let mut sink = |r: &IoRecord| out.push(r.issue_ns);
        a.push(&raw(1030, 1050, 8, b"R", KIND_BOTH), &mut sink);
        a.push(&raw(1010, 1060, 24, b"R", KIND_BOTH), &mut sink);
        // newest completion 60 ns in: nothing is 100 ns old yet
        a.push(&raw(1200, 1250, 40, b"R", KIND_BOTH), &mut sink);
        a.finish(&mut sink);
        assert_eq!(out, [10, 30, 200]);
        assert_eq!(a.records, 3);
    }

    #[test]
    fn a_quiet_device_does_not_hold_its_last_records_back() {
        let mut a = Assembler::new(1000, 100, Filter::default());
        let mut out = vec![];
        a.push(&raw(1010, 1020, 8, b"R", KIND_BOTH), &mut |r| {
            out.push(r.issue_ns)
        });
        assert!(out.is_empty(), "within the window");
        a.tick(1000 + 200, &mut |r| out.push(r.issue_ns));
        assert_eq!(
            out,
            [10],
            "the clock passed the window with nothing completing"
        );
    }

    #[test]
    fn flushes_pair_in_order_per_device_and_a_lone_one_stays_open() {
        let mut a = Assembler::new(0, 0, Filter::default());
        let mut out: Vec<IoRecord> = vec![];
        let mut sink = |r: &IoRecord| out.push(*r);
        a.push(&raw(100, 0, 0, b"FF", KIND_ISSUE), &mut sink);
        a.push(&raw(150, 0, 0, b"FF", KIND_ISSUE), &mut sink);
        a.push(&raw(0, 400, 0, b"FF", KIND_COMPLETE), &mut sink);
        a.push(&raw(0, 500, 0, b"FF", KIND_COMPLETE), &mut sink);
        a.push(&raw(0, 600, 0, b"FF", KIND_COMPLETE), &mut sink);
        a.push(&raw(700, 0, 0, b"FF", KIND_ISSUE), &mut sink);
        a.finish(&mut sink);
        let got: Vec<_> = out
            .iter()
            .map(|r| (r.op, r.issue_ns, r.latency_ns()))
            .collect();
        assert_eq!(
            got,
            [
                (Op::Flush, 100, Some(300)),
                (Op::Flush, 150, Some(350)),
                (Op::Flush, 700, None)
            ]
        );
        assert_eq!(a.unmatched, 1, "the third completion had no issue");
    }

    #[test]
    fn the_filters_keep_one_process() {
        let f = Filter {
            comm: Some("postgres".into()),
            pid: None,
        };
        let mut a = Assembler::new(0, 0, f);
        let mut n = 0;
        let mut other = raw(10, 20, 8, b"R", KIND_BOTH);
        other.comm = IoRecord::comm_from("kworker/1:1");
        a.push(&raw(0, 20, 0, b"R", KIND_BOTH), &mut |_| n += 1);
        a.push(&other, &mut |_| n += 1);
        assert_eq!((n, a.filtered_out), (1, 1));
        let f = Filter {
            comm: None,
            pid: Some(7),
        };
        let mut a = Assembler::new(0, 0, f);
        a.push(&raw(0, 20, 0, b"R", KIND_BOTH), &mut |_| n += 1);
        assert_eq!(a.filtered_out, 1);
    }
}
