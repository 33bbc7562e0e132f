//! The trace file's size per record and the writer's speed on one core, on synthetic streams
//! shaped like real ones:
//!
//!     cargo run --release -p iocap-trace --example trace_bench [RECORDS]
//!
//! - `8k-randread-qd4`: 8 KiB random reads over 64 GiB by one process, closed loop at queue
//!   depth 4, latencies 60 µs + an exponential tail of mean 25 µs, 1 % between 1 and 5 ms;
//! - `wal-128k-seq`: 128 KiB sequential writes with a flush after every 8 (a log);
//! - `mixed-4procs`: 70/30 reads and writes of 4 to 64 KiB from four processes on two devices.
//!
//! It writes each stream to a temporary file (push for every record, flush_chunk each simulated
//! second, finish), then reads it back and checks every record.

use std::time::Instant;

use iocap_trace::{DevId, IoFlags, IoRecord, Op, TraceMeta, TraceReader, TraceWriter};

/// xorshift64*: enough randomness for a synthetic stream, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn exp_ns(&mut self, mean_ns: f64) -> u64 {
        (-(1.0 - self.unit()).ln() * mean_ns) as u64
    }
}

fn record(issue_ns: u64, lat_ns: u64, sector: u64, bytes: u32, op: Op, comm: &str) -> IoRecord {
    IoRecord {
        issue_ns,
        complete_ns: Some(issue_ns + lat_ns),
        dev: DevId {
            major: 259,
            minor: 0,
        },
        sector,
        bytes,
        op,
        flags: IoFlags(0),
        error: 0,
        pid: 4242,
        comm: IoRecord::comm_from(comm),
    }
}

fn random_reads(n: usize) -> Vec<IoRecord> {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut slots = [0u64; 4];
    let span_8k = (64u64 << 30) / 8192;
    (0..n)
        .map(|_| {
            let (i, &free) = slots
                .iter()
                .enumerate()
                .min_by_key(|s| s.1)
                .unwrap_or((0, &0));
            let issue = free + rng.next() % 2000;
            let lat = match rng.next() % 100 {
                0 => 1_000_000 + rng.next() % 4_000_000,
                _ => 60_000 + rng.exp_ns(25_000.0),
            };
            slots[i] = issue + lat;
            record(
                issue,
                lat,
                rng.next() % span_8k * 16,
                8192,
                Op::Read,
                "postgres",
            )
        })
        .collect()
}

fn wal(n: usize) -> Vec<IoRecord> {
    let mut rng = Rng(7);
    let (mut t, mut sector) = (0u64, 1u64 << 20);
    (0..n)
        .map(|i| {
            t += 20_000 + rng.next() % 30_000;
            let lat = 30_000 + rng.exp_ns(10_000.0);
            if i % 9 == 8 {
                let mut r = record(t, lat, 0, 0, Op::Flush, "walwriter");
                r.flags = IoFlags(IoFlags::SYNC);
                return r;
            }
            let r = record(t, lat, sector, 128 << 10, Op::Write, "walwriter");
            sector += 256;
            r
        })
        .collect()
}

fn mixed(n: usize) -> Vec<IoRecord> {
    let mut rng = Rng(99);
    let names = ["postgres", "checkpointer", "autovacuum", "bgwriter"];
    let mut t = 0u64;
    (0..n)
        .map(|_| {
            t += rng.exp_ns(10_000.0);
            let p = (rng.next() % 4) as usize;
            let op = if rng.next() % 10 < 7 {
                Op::Read
            } else {
                Op::Write
            };
            let bytes = 4096 << (rng.next() % 5);
            let mut r = record(t, 50_000 + rng.exp_ns(40_000.0), 0, bytes, op, names[p]);
            r.sector = rng.next() % (1 << 27) * 8;
            r.pid = 1000 + p as u32;
            r.dev.minor = (rng.next() % 2) as u32;
            r
        })
        .collect()
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let dir = tempfile::tempdir().expect("a temporary directory");
    println!("{n} records a stream; the writer and the reader on one core");
    println!(
        "{:<16} {:>9} {:>12} {:>12}",
        "stream", "B/record", "write rec/s", "read rec/s"
    );
    for (name, recs) in [
        ("8k-randread-qd4", random_reads(n)),
        ("wal-128k-seq", wal(n)),
        ("mixed-4procs", mixed(n)),
    ] {
        let path = dir.path().join(format!("{name}.iocap"));
        let start = Instant::now();
        let mut w = TraceWriter::create_new(&path, &TraceMeta::default()).expect("create");
        let mut next_second = 1_000_000_000;
        for r in &recs {
            if r.issue_ns >= next_second {
                w.flush_chunk().expect("flush");
                next_second += 1_000_000_000;
            }
            w.push(r).expect("push");
        }
        let summary = w.finish().expect("finish");
        let write_s = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let mut count = 0;
        for (got, want) in TraceReader::open(&path).expect("open").zip(&recs) {
            assert_eq!(got.expect("a record"), *want);
            count += 1;
        }
        let read_s = start.elapsed().as_secs_f64();
        assert_eq!(count, recs.len());
        println!(
            "{name:<16} {:>9.2} {:>12.0} {:>12.0}",
            summary.file_bytes as f64 / n as f64,
            n as f64 / write_s,
            n as f64 / read_s
        );
    }
}
