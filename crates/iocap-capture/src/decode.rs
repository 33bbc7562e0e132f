//! From ring-buffer records to [`IoRecord`]s in issue order: decoding, pairing the issues and
//! completions of requests without data (flushes) per device and operation in order, the
//! `--comm`/`--pid` filters, a reorder window (records arrive in completion order; a trace is
//! in issue order), and what the completions without an issue mean. Pure: tested on
//! constructed bytes.
//!
//! A completion whose issue was not seen is one of three things, told apart here:
//! - with data, in the first window after the start: a request issued before the start
//!   ([`Assembler::before_start`]);
//! - with data, later: a request whose issue the kernel did not run the program for, lost
//!   ([`Assembler::missed_issues`]);
//! - without data: a zero-byte completion ([`Assembler::zero_byte`]). The block layer's flush
//!   machinery ends a write that asked for a preflush or FUA (an fsync's empty flush among
//!   them) with a completion of 0 bytes of the original request, after its flush (issued and
//!   completed as a request of its own) and its data have completed: it is no request of its
//!   own and pairs with no issue. A flush's completion whose issue was not seen is counted
//!   here too.
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
//! 64 u32 kind: 0 both times, 1 issue only, 2 completion only, 3 requeue (no data)
//! ```

use std::collections::{HashMap, VecDeque};

use iocap_trace::{DevId, IoRecord, Op};

use crate::program::{KIND_BOTH, KIND_COMPLETE, KIND_ISSUE, KIND_REQUEUE};

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

/// A request still in the in-flight map, from its key (dev, 0, sector) and value (see
/// [`crate::program::value`]), as a record of its issue alone.
pub fn in_flight(key: &[u8; 16], value: &[u8; 48]) -> Raw {
    use crate::program::value::*;
    Raw {
        issue_ns: u64_at(value, ISSUE_NS),
        complete_ns: 0,
        sector: u64_at(key, 8),
        dev: u32_at(key, 0),
        bytes: u32_at(value, BYTES),
        pid: u32_at(value, PID),
        error: 0,
        rwbs: value[RWBS..RWBS + 8].try_into().expect("8 bytes"),
        comm: value[COMM..COMM + 16].try_into().expect("16 bytes"),
        kind: KIND_ISSUE,
    }
}

/// Who to keep.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub comm: Option<String>,
    pub pid: Option<u32>,
}

impl Filter {
    pub fn keeps(&self, r: &IoRecord) -> bool {
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
    /// The records held back, in issue order (then arrival): records arrive in completion
    /// order, near issue order, so each is put in place from the back in a step or two.
    held: VecDeque<IoRecord>,
    newest_ns: u64,
    pub filtered_out: u64,
    /// Devices on which the filters kept a write since the device's last flush.
    wrote: std::collections::HashSet<DevId>,
    /// Completions with data and no issue in the first window after the start.
    pub before_start: u64,
    /// Completions with data and no issue after it: requests whose issue was not seen.
    pub missed_issues: u64,
    /// Completions without data and no issue.
    pub zero_byte: u64,
    /// Issues without data withdrawn by a requeue.
    pub requeued: u64,
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
            held: VecDeque::new(),
            newest_ns: 0,
            filtered_out: 0,
            wrote: Default::default(),
            before_start: 0,
            missed_issues: 0,
            zero_byte: 0,
            requeued: 0,
            records: 0,
        }
    }

    /// `r` as a record: ns since the start, its operation and flags.
    pub fn record(&self, r: &Raw) -> IoRecord {
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
            KIND_COMPLETE if r.bytes > 0 => {
                let done = r.complete_ns.saturating_sub(self.t0);
                match done < self.window_ns {
                    true => self.before_start += 1,
                    false => self.missed_issues += 1,
                }
            }
            KIND_COMPLETE => self.complete_no_data(r),
            KIND_REQUEUE => {
                let op = self.record(r).op;
                let queue = self.pending.get_mut(&r.dev);
                // the latest issue of that operation is the one given back
                if let Some(q) = queue {
                    if let Some(i) = q.iter().rposition(|p| p.op == op) {
                        q.remove(i);
                        self.requeued += 1;
                    }
                }
            }
            KIND_BOTH => {
                let rec = self.record(r);
                self.hold(rec);
            }
            _ => {} // the programs write no other kind
        }
        self.release(Release::Due, sink);
    }

    /// A completion without data pairs with the first issue of the same operation on its
    /// device still waiting (a write's second end pairs with no flush). An issue waiting a
    /// window longer than that completion's time lost its own completion: it goes out
    /// without one.
    fn complete_no_data(&mut self, r: &Raw) {
        let mut rec = self.record(r);
        let done = rec.complete_ns.unwrap_or(0);
        let Some(q) = self.pending.get_mut(&r.dev) else {
            self.zero_byte += 1;
            return;
        };
        let mut stale = Vec::new();
        let mut paired = None;
        let mut i = 0;
        while i < q.len() {
            if q[i].op != rec.op {
                i += 1;
                continue;
            }
            if q[i].issue_ns.saturating_add(self.window_ns) < done {
                stale.extend(q.remove(i));
                continue;
            }
            paired = q.remove(i);
            break;
        }
        for old in stale {
            self.hold(old);
        }
        match paired {
            Some(mut issue) => {
                issue.complete_ns = rec.complete_ns;
                issue.error = rec.error;
                rec = issue;
                self.hold(rec);
            }
            None => self.zero_byte += 1,
        }
    }

    fn hold(&mut self, rec: IoRecord) {
        if !self.passes(&rec) {
            self.filtered_out += 1;
            return;
        }
        self.newest_ns = self.newest_ns.max(rec.complete_ns.unwrap_or(rec.issue_ns));
        let at = match self.held.back() {
            Some(last) if last.issue_ns > rec.issue_ns => {
                self.held.partition_point(|h| h.issue_ns <= rec.issue_ns)
            }
            _ => self.held.len(),
        };
        self.held.insert(at, rec);
    }

    /// The clock moved to `now` (the kernel's monotonic ns) with nothing completing: records
    /// issued a window before it are let out, so a quiet device does not hold the last
    /// seconds back (a capture killed then would lose them).
    pub fn tick(&mut self, now: u64, sink: &mut dyn FnMut(&IoRecord)) {
        self.newest_ns = self.newest_ns.max(now.saturating_sub(self.t0));
        self.release(Release::Due, sink);
    }

    /// The records held back, in issue order: every one issued after every record let out
    /// so far (a record arriving after its window is let out at once).
    pub fn held(&mut self) -> &[IoRecord] {
        self.held.make_contiguous()
    }

    /// A request seen issued and still in flight at the end (`complete_ns` `None`): put in
    /// issue order with the rest (the filters apply).
    pub fn add_unfinished(&mut self, rec: IoRecord) {
        self.hold(rec);
    }

    /// Whether `rec` passes the `--comm`/`--pid` filters.
    pub fn keeps(&self, rec: &IoRecord) -> bool {
        self.filter.keeps(rec)
    }

    /// The filters, with one exception: the block layer's own worker (`kworker/`, kblockd)
    /// sends every cache flush on, whoever's fdatasync asked for it, so a bare flush from it
    /// passes when the filters kept a write on its device since that device's last flush: it
    /// is the flush those writes waited for. (Another process's fdatasync right after a kept
    /// write is taken for the kept one's: the kernel does not say whose a flush is.)
    fn passes(&mut self, rec: &IoRecord) -> bool {
        if self.filter.comm.is_none() && self.filter.pid.is_none() {
            return true;
        }
        let kept = self.filter.keeps(rec);
        match rec.op {
            Op::Write if kept => {
                self.wrote.insert(rec.dev);
            }
            Op::Flush if !kept && rec.comm.starts_with(b"kworker/") => {
                return self.wrote.remove(&rec.dev);
            }
            Op::Flush if kept => {
                self.wrote.remove(&rec.dev);
            }
            _ => {}
        }
        kept
    }

    /// Lets out the records the window no longer holds back, or all of them.
    fn release(&mut self, which: Release, sink: &mut dyn FnMut(&IoRecord)) {
        while let Some(first) = self.held.front() {
            if which == Release::Due
                && first.issue_ns.saturating_add(self.window_ns) > self.newest_ns
            {
                break;
            }
            if let Some(rec) = self.held.pop_front() {
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
    fn an_in_flight_entry_decodes_as_its_issue() {
        let mut key = [0u8; 16];
        key[0..4].copy_from_slice(&((7u32 << 20) | 1).to_le_bytes());
        key[8..16].copy_from_slice(&4096u64.to_le_bytes());
        let mut value = [0u8; 48];
        value[0..8].copy_from_slice(&1500u64.to_le_bytes());
        value[8..12].copy_from_slice(&42u32.to_le_bytes());
        value[12..16].copy_from_slice(&8192u32.to_le_bytes());
        value[16..18].copy_from_slice(b"WS");
        value[24..32].copy_from_slice(b"postgres");
        let raw = in_flight(&key, &value);
        let rec = Assembler::new(1000, 0, Filter::default()).record(&raw);
        assert_eq!(
            (
                rec.issue_ns,
                rec.complete_ns,
                rec.sector,
                rec.bytes,
                rec.op,
                rec.pid
            ),
            (500, None, 4096, 8192, Op::Write, 42)
        );
        assert_eq!((rec.dev.major, rec.dev.minor), (7, 1));
        assert_eq!(rec.comm_str(), "postgres");
    }

    #[test]
    fn a_kernel_workers_flush_after_a_kept_write_is_kept_and_others_are_not() {
        let filter = Filter {
            comm: Some("postgres".into()),
            pid: None,
        };
        let mut a = Assembler::new(0, 10, filter);
        let mut out: Vec<IoRecord> = vec![];
        let mut sink = |r: &IoRecord| out.push(*r);
        let kblockd = |mut r: Raw| {
            r.comm = IoRecord::comm_from("kworker/1:1H");
            r
        };
        // the WAL write, then the flush its fdatasync asked kblockd to send
        a.push(&raw(100, 200, 8, b"WS", KIND_BOTH), &mut sink);
        a.push(&kblockd(raw(300, 400, 0, b"FF", KIND_BOTH)), &mut sink);
        // a second flush with no kept write before it: someone else's
        a.push(&kblockd(raw(500, 600, 0, b"FF", KIND_BOTH)), &mut sink);
        // another process's write is left out, and so is the flush after it
        a.push(&kblockd(raw(700, 800, 16, b"WS", KIND_BOTH)), &mut sink);
        a.push(&kblockd(raw(900, 1000, 0, b"FF", KIND_BOTH)), &mut sink);
        a.finish(&mut sink);
        let got: Vec<(u64, Op)> = out.iter().map(|r| (r.issue_ns, r.op)).collect();
        assert_eq!(got, [(100, Op::Write), (300, Op::Flush)]);
        assert_eq!(a.filtered_out, 3);
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
        let mut a = Assembler::new(0, 1000, Filter::default());
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
        assert_eq!(a.zero_byte, 1, "the third completion had no issue");
    }

    #[test]
    fn a_writes_zero_byte_second_end_pairs_with_no_flush_and_is_counted_as_what_it_is() {
        // fsync on a disk with a write cache: the flush is issued and completes, then the
        // empty preflush write it stood for completes with 0 bytes ("FWS"), while the next
        // fsync's flush is already waiting
        let mut a = Assembler::new(0, 1000, Filter::default());
        let mut out: Vec<IoRecord> = vec![];
        let mut sink = |r: &IoRecord| out.push(*r);
        a.push(&raw(100, 0, 0, b"FF", KIND_ISSUE), &mut sink);
        a.push(&raw(0, 150, 0, b"FF", KIND_COMPLETE), &mut sink);
        a.push(&raw(160, 0, 0, b"FF", KIND_ISSUE), &mut sink);
        a.push(&raw(0, 170, 0, b"FWS", KIND_COMPLETE), &mut sink);
        a.push(&raw(0, 210, 0, b"FF", KIND_COMPLETE), &mut sink);
        a.push(&raw(0, 220, 0, b"FWS", KIND_COMPLETE), &mut sink);
        a.finish(&mut sink);
        let got: Vec<_> = out
            .iter()
            .map(|r| (r.op, r.issue_ns, r.latency_ns()))
            .collect();
        assert_eq!(
            got,
            [(Op::Flush, 100, Some(50)), (Op::Flush, 160, Some(50))]
        );
        assert_eq!((a.zero_byte, a.before_start, a.missed_issues), (2, 0, 0));
    }

    #[test]
    fn a_completion_with_data_and_no_issue_is_from_before_the_start_only_in_the_first_window() {
        let mut a = Assembler::new(1000, 500, Filter::default());
        let mut n = 0;
        let mut lone = raw(0, 1400, 64, b"R", KIND_COMPLETE);
        lone.bytes = 4096;
        a.push(&lone, &mut |_| n += 1);
        lone.complete_ns = 1600;
        a.push(&lone, &mut |_| n += 1);
        a.push(&lone, &mut |_| n += 1);
        assert_eq!(n, 0, "nothing to write without an issue");
        assert_eq!((a.before_start, a.missed_issues, a.zero_byte), (1, 2, 0));
    }

    #[test]
    fn a_requeue_withdraws_the_latest_issue_and_a_flush_waiting_too_long_goes_out_alone() {
        let mut a = Assembler::new(0, 1000, Filter::default());
        let mut out: Vec<IoRecord> = vec![];
        let mut sink = |r: &IoRecord| out.push(*r);
        a.push(&raw(100, 0, 0, b"FF", KIND_ISSUE), &mut sink);
        a.push(&raw(0, 0, 0, b"FF", KIND_REQUEUE), &mut sink);
        a.push(&raw(120, 0, 0, b"FF", KIND_ISSUE), &mut sink);
        a.push(&raw(0, 180, 0, b"FF", KIND_COMPLETE), &mut sink);
        assert_eq!(a.requeued, 1);
        // an issue whose completion the kernel skipped, then one much later
        a.push(&raw(200, 0, 0, b"FF", KIND_ISSUE), &mut sink);
        a.push(&raw(5000, 0, 0, b"FF", KIND_ISSUE), &mut sink);
        a.push(&raw(0, 5100, 0, b"FF", KIND_COMPLETE), &mut sink);
        a.finish(&mut sink);
        let got: Vec<_> = out.iter().map(|r| (r.issue_ns, r.latency_ns())).collect();
        assert_eq!(got, [(120, Some(60)), (200, None), (5000, Some(100))]);
        assert_eq!(a.zero_byte, 0);
    }

    #[test]
    fn the_window_is_every_record_held_in_issue_order_after_every_one_let_out() {
        let mut a = Assembler::new(0, 1000, Filter::default());
        let mut out: Vec<u64> = vec![];
        // completion order, issue order shuffled by latency
        let reqs = [
            (10, 50),
            (5, 60),
            (30, 70),
            (20, 900),
            (1200, 1300),
            (1100, 1400),
        ];
        for (i, &(issue, done)) in reqs.iter().enumerate() {
            a.push(&raw(issue, done, 8 * i as u64, b"R", KIND_BOTH), &mut |r| {
                out.push(r.issue_ns)
            });
        }
        assert_eq!(out, [5, 10, 20, 30], "a window after each");
        let held: Vec<u64> = a.held().iter().map(|r| r.issue_ns).collect();
        assert_eq!(held, [1100, 1200]);
        // one arriving after its window goes out at once, out of order
        a.push(&raw(40, 2000, 99, b"R", KIND_BOTH), &mut |r| {
            out.push(r.issue_ns)
        });
        assert_eq!(out, [5, 10, 20, 30, 40]);
        assert_eq!(a.held().len(), 2);
        a.finish(&mut |r| out.push(r.issue_ns));
        assert_eq!(out, [5, 10, 20, 30, 40, 1100, 1200]);
        assert!(a.held().is_empty());
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
