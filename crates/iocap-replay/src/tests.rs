//! The replay loop on a mock device and a mock clock: the schedule, the lag accounting, the
//! queue an open loop builds, fast mode's depth, and what is skipped.

use std::sync::atomic::AtomicBool;

use iocap_engine::backend::{Backend, Completion, Io, Op as EOp};
use iocap_engine::{IoQueue, SlotBuffers};
use iocap_trace::{DevId, IoFlags, IoRecord, Op};

use crate::clock::{Clock, MockClock};
use crate::drive::{Driver, Plan};
use crate::map::{MapMode, Mapper};
use crate::schedule::Timing;
use crate::stats::{Stats, READ};
use crate::verdict::{replayed_side, verdict, Ran};

const MS: u64 = 1_000_000;

pub fn record(op: Op, offset: u64, bytes: u32) -> IoRecord {
    IoRecord {
        issue_ns: 0,
        complete_ns: None,
        dev: DevId::default(),
        sector: offset / 512,
        bytes,
        op,
        flags: IoFlags::default(),
        error: 0,
        pid: 0,
        comm: [0; 16],
    }
}

/// `n` 4 KiB reads, `gap_ns` apart, at distinct offsets.
fn reads(n: u64, gap_ns: u64) -> Vec<IoRecord> {
    (0..n)
        .map(|i| IoRecord {
            issue_ns: 5 * MS + i * gap_ns,
            ..record(Op::Read, i * 8192, 4096)
        })
        .collect()
}

/// A device on the mock clock: each I/O takes `service_ns`, one at a time (`serial`) or all
/// at once. It logs what it was sent and when.
struct MockDevice<'c> {
    clock: &'c MockClock,
    service_ns: u64,
    serial: bool,
    busy_until: u64,
    queued: Vec<Io>,
    flight: Vec<(u32, u64, i32)>,
    done: Vec<Completion>,
    max_seen: usize,
    log: Vec<(u64, EOp, u64, u32)>,
    /// A request at this offset fails with EIO.
    fail_offset: Option<u64>,
}

impl<'c> MockDevice<'c> {
    fn new(clock: &'c MockClock, service_ns: u64, serial: bool) -> Self {
        Self {
            clock,
            service_ns,
            serial,
            busy_until: 0,
            queued: vec![],
            flight: vec![],
            done: vec![],
            max_seen: 0,
            log: vec![],
            fail_offset: None,
        }
    }
}

impl Backend for MockDevice<'_> {
    unsafe fn queue(&mut self, io: Io) {
        self.queued.push(io);
    }

    fn submit_and_wait(&mut self, min: u32, deadline_ns: Option<u64>) -> std::io::Result<()> {
        let now = self.clock.now_ns();
        for io in self.queued.drain(..) {
            let start = if self.serial {
                now.max(self.busy_until)
            } else {
                now
            };
            self.busy_until = start + self.service_ns;
            let result = match self.fail_offset {
                Some(o) if o == io.offset && io.op != EOp::Fsync => -libc::EIO,
                _ => io.len as i32,
            };
            self.flight.push((io.slot, self.busy_until, result));
            self.log.push((now, io.op, io.offset, io.len));
        }
        self.max_seen = self.max_seen.max(self.flight.len());
        let next = self.flight.iter().map(|f| f.1).min();
        if let Some(next) = next.filter(|n| min > 0 && *n > now) {
            self.clock.set(deadline_ns.map_or(next, |d| d.min(next)));
        }
        let t = self.clock.now_ns();
        let (done, left): (Vec<_>, Vec<_>) = self.flight.iter().partition(|f| f.1 <= t);
        self.flight = left;
        self.done.extend(
            done.into_iter()
                .map(|(slot, _, result)| Completion { slot, result }),
        );
        Ok(())
    }

    fn reap(&mut self, mut f: impl FnMut(Completion)) {
        for c in self.done.drain(..) {
            f(c);
        }
    }
}

struct Outcome {
    stats: Stats,
    log: Vec<(u64, EOp, u64, u32)>,
    max_seen: usize,
    notes: Vec<String>,
}

fn plan(timing: Timing, max_inflight: usize) -> Plan {
    Plan {
        timing,
        max_inflight,
        fast_depth: 3,
        discard: false,
    }
}

fn replay(recs: &[IoRecord], dev: (u64, bool), p: Plan, map: Option<MapMode>) -> Outcome {
    replay_failing(recs, dev, p, map, None)
}

fn replay_failing(
    recs: &[IoRecord],
    dev: (u64, bool),
    p: Plan,
    map: Option<MapMode>,
    fail_offset: Option<u64>,
) -> Outcome {
    let clock = MockClock::new(MS);
    let mut b = MockDevice::new(&clock, dev.0, dev.1);
    b.fail_offset = fail_offset;
    let mut bufs = SlotBuffers::new(p.max_inflight, 65536, 1).unwrap();
    let span = recs.iter().map(|r| r.end_bytes()).max().unwrap();
    let range = if map.is_some() { span / 2 } else { span };
    let mapper = Mapper::new(map, span, range.max(4096), 4096, "t").unwrap();
    let mut unsupported =
        |_: u64, _: u64| Err(std::io::Error::from(std::io::ErrorKind::Unsupported));
    let mut d = Driver::new(IoQueue::new(&mut b, &mut bufs), &clock, mapper, p);
    d.run(
        recs.iter().copied(),
        &AtomicBool::new(false),
        &mut unsupported,
        &mut |_| {},
    )
    .unwrap();
    let (stats, notes) = (std::mem::take(&mut d.stats), std::mem::take(&mut d.notes));
    drop(d);
    Outcome {
        stats,
        log: b.log,
        max_seen: b.max_seen,
        notes,
    }
}

#[test]
fn an_open_loop_replay_issues_at_the_recorded_times() {
    let o = replay(
        &reads(100, MS),
        (100_000, false),
        plan(Timing::Recorded { speed: 1.0 }, 16),
        None,
    );
    assert_eq!(o.log.len(), 100);
    for (i, (t, op, off, len)) in o.log.iter().enumerate() {
        assert_eq!(
            (*t, *op, *off, *len),
            (MS + i as u64 * MS, EOp::Read, i as u64 * 8192, 4096)
        );
    }
    let lag = o.stats.lag_figures();
    assert!(lag.max_us < 1.0 && lag.late_1ms == 0, "{lag:?}");
    let side = replayed_side(&o.stats);
    assert_eq!(side.ios, 100);
    // from the first issue to the last completion: 99 gaps and one service time
    assert!(
        (side.duration_s - 0.0991).abs() < 1e-9,
        "{}",
        side.duration_s
    );
    assert!((side.latency[0].latency.p50_us - 100.0).abs() < 1.0);
}

#[test]
fn a_slower_device_builds_a_queue_not_a_delay() {
    // 1,000 IOPS offered to a device that does 333: open loop keeps the times, the queue grows
    let o = replay(
        &reads(100, MS),
        (3 * MS, true),
        plan(Timing::Recorded { speed: 1.0 }, 256),
        None,
    );
    let lag = o.stats.lag_figures();
    assert_eq!(lag.late_1ms, 0, "{lag:?}");
    assert_eq!(o.log[99].0, MS + 99 * MS);
    assert!(o.max_seen >= 60, "queue {}", o.max_seen);
    let side = replayed_side(&o.stats);
    assert!(
        side.qd_max.unwrap() >= 60 && side.qd_mean.unwrap() > 20.0,
        "{side:?}"
    );
    // the last waits for the 99 before it: about 300 ms minus its 99 ms offset
    assert!(side.latency[0].latency.max_us > 190_000.0, "{side:?}");
}

#[test]
fn a_full_queue_is_lag_and_the_verdict_says_it_fell_behind() {
    let p = plan(Timing::Recorded { speed: 1.0 }, 4);
    let o = replay(&reads(100, MS), (3 * MS, true), p, None);
    let lag = o.stats.lag_figures();
    assert!(lag.waited_for_slot > 80, "{lag:?}");
    assert!(lag.late_1ms_pct > 80.0 && lag.p99_us > 100_000.0, "{lag:?}");
    assert!(o.max_seen <= 4);
    let side = replayed_side(&o.stats);
    let ran = Ran {
        timing: p.timing,
        max_inflight: 4,
        fast_depth: None,
        interrupted: false,
    };
    let v = verdict(ran, &lag, &side, &side);
    assert!(!v.kept_up);
    assert!(
        v.text.starts_with("fell behind: lag p99 ") && v.text.contains("at 4 in flight"),
        "{}",
        v.text
    );
}

#[test]
fn speed_divides_the_gaps() {
    let o = replay(
        &reads(10, MS),
        (10_000, false),
        plan(Timing::Recorded { speed: 4.0 }, 16),
        None,
    );
    let times: Vec<u64> = o.log.iter().map(|l| l.0 - MS).collect();
    assert_eq!(times, (0..10).map(|i| i * MS / 4).collect::<Vec<_>>());
}

#[test]
fn fast_mode_keeps_the_recorded_depth() {
    // pairs in flight in the recording: each request overlaps the one before it only
    let recs: Vec<IoRecord> = (0..50)
        .map(|i| IoRecord {
            issue_ns: i * MS,
            complete_ns: Some(i * MS + MS + MS / 2),
            ..record(Op::Read, i * 4096, 4096)
        })
        .collect();
    let o = replay(&recs, (100_000, true), plan(Timing::Fast, 64), None);
    assert_eq!(o.max_seen, 2);
    assert_eq!(o.log.len(), 50);
    // 50 requests of 100 µs, one at a time: far faster than the 50 ms recorded
    assert!(replayed_side(&o.stats).duration_s < 0.006);
    assert_eq!(
        o.stats.lag.len(),
        0,
        "fast mode has no schedule to lag behind"
    );
}

#[test]
fn fast_mode_without_completions_keeps_the_fixed_depth() {
    let o = replay(
        &reads(40, MS),
        (100_000, false),
        plan(Timing::Fast, 64),
        None,
    );
    assert_eq!(o.max_seen, 3);
}

#[test]
fn flushes_fua_and_discards_go_as_they_should() {
    let mut fua = record(Op::Write, 8192, 4096);
    fua.flags = IoFlags(IoFlags::FUA);
    let recs = [
        record(Op::Write, 0, 4096),
        fua,
        record(Op::Flush, 0, 0),
        record(Op::Discard, 0, 1 << 20),
        record(Op::Other, 0, 4096),
        record(Op::Read, 4 << 20, 512),
    ];
    let mut p = plan(Timing::Fast, 8);
    let o = replay(&recs, (1000, false), p, None);
    let ops: Vec<EOp> = o.log.iter().map(|l| l.1).collect();
    assert_eq!(ops, [EOp::Write, EOp::WriteDsync, EOp::Fsync, EOp::Read]);
    // a 512 B read is aligned up to 4 KiB
    assert_eq!(o.log[3].3, 4096);
    let rows = o.stats.op_rows();
    let row = |op: Op| rows.iter().find(|r| r.op == op).unwrap().clone();
    assert_eq!((row(Op::Write).replayed, row(Op::Write).durable), (2, 1));
    assert_eq!((row(Op::Discard).skipped, row(Op::Other).skipped), (1, 1));
    // asked for, on a target without discard: skipped, and said once
    p.discard = true;
    let o = replay(&recs, (1000, false), p, None);
    assert_eq!(
        o.stats
            .op_rows()
            .iter()
            .find(|r| r.op == Op::Discard)
            .unwrap()
            .skipped,
        1
    );
    assert!(
        o.notes[0].contains("does not take discards"),
        "{:?}",
        o.notes
    );
}

#[test]
fn offsets_are_mapped_into_the_target() {
    let recs = [
        record(Op::Read, 0, 4096),
        record(Op::Read, 3 << 20, 4096),
        record(Op::Read, (4 << 20) - 4096, 4096),
    ];
    let o = replay(
        &recs,
        (1000, false),
        plan(Timing::Fast, 8),
        Some(MapMode::Wrap),
    );
    let offs: Vec<u64> = o.log.iter().map(|l| l.2).collect();
    assert_eq!(offs, [0, 1 << 20, (2 << 20) - 4096]);
    let o = replay(
        &recs,
        (1000, false),
        plan(Timing::Fast, 8),
        Some(MapMode::Scale),
    );
    let offs: Vec<u64> = o.log.iter().map(|l| l.2).collect();
    assert_eq!(offs, [0, 3 << 19, (2 << 20) - 4096]);
}

#[test]
fn a_failed_request_is_counted_and_the_first_kept_with_its_offset() {
    let recs = reads(10, MS);
    let out = replay_failing(
        &recs,
        (100_000, false),
        plan(Timing::Recorded { speed: 1.0 }, 8),
        None,
        Some(3 * 8192),
    );
    let reads = out.stats.ops[Op::Read as usize];
    assert_eq!((reads.replayed, reads.errors), (10, 1));
    let f = out.stats.first_fault.expect("the failed read is kept");
    assert_eq!(
        (f.kind, f.offset, f.len, f.result),
        (READ, 3 * 8192, 4096, -libc::EIO)
    );
}

/// A mock clock that raises the stop flag (Ctrl-C) once it reaches `stop_at_ns`, and keeps
/// the longest single sleep.
struct InterruptingClock<'a> {
    inner: &'a MockClock,
    stop: &'a AtomicBool,
    stop_at_ns: u64,
    longest_sleep_ns: std::cell::Cell<u64>,
}

impl Clock for InterruptingClock<'_> {
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn sleep_until(&self, deadline_ns: u64) {
        let slept = deadline_ns.saturating_sub(self.inner.now_ns());
        self.longest_sleep_ns
            .set(self.longest_sleep_ns.get().max(slept));
        self.inner.sleep_until(deadline_ns);
        if self.inner.now_ns() >= self.stop_at_ns {
            self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    fn spin_until(&self, deadline_ns: u64) {
        self.inner.spin_until(deadline_ns)
    }
}

/// Ctrl-C during an hour's idle gap of a recorded trace stops the replay within 0.1 s of the
/// signal, not at the end of the gap: no single sleep is longer, and the request after the
/// gap is never issued.
#[test]
fn ctrl_c_in_a_long_idle_gap_stops_the_replay_at_once() {
    const HOUR_NS: u64 = 3_600_000_000_000;
    let recs = [
        crate::tests::record(Op::Read, 0, 4096),
        IoRecord {
            issue_ns: HOUR_NS,
            ..crate::tests::record(Op::Read, 8192, 4096)
        },
    ];
    let mock = MockClock::new(MS);
    let stop = AtomicBool::new(false);
    let clock = InterruptingClock {
        inner: &mock,
        stop: &stop,
        stop_at_ns: MS + 1_000_000_000,
        longest_sleep_ns: std::cell::Cell::new(0),
    };
    let mut b = MockDevice::new(&mock, 100_000, false);
    let p = plan(Timing::Recorded { speed: 1.0 }, 4);
    let mut bufs = SlotBuffers::new(p.max_inflight, 65536, 1).unwrap();
    let mapper = Mapper::new(None, 12288, 12288, 4096, "t").unwrap();
    let mut unsupported =
        |_: u64, _: u64| Err(std::io::Error::from(std::io::ErrorKind::Unsupported));
    let mut d = Driver::new(IoQueue::new(&mut b, &mut bufs), &clock, mapper, p);
    d.run(recs.iter().copied(), &stop, &mut unsupported, &mut |_| {})
        .unwrap();
    drop(d);
    assert_eq!(
        b.log.len(),
        1,
        "only the request before the gap: {:?}",
        b.log
    );
    assert!(
        clock.longest_sleep_ns.get() <= crate::drive::STOP_CHECK_NS,
        "a sleep of {} ns",
        clock.longest_sleep_ns.get()
    );
    assert!(
        mock.now_ns() < MS + 1_200_000_000,
        "stopped at {} ns",
        mock.now_ns()
    );
}
