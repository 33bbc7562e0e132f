//! The operation mix by count and bytes, the size distribution per operation, and the
//! breakdown by process name.

use std::collections::HashMap;

use iocap_model::workload::{OpShare, ProcessRow, SizeCount};
use iocap_trace::{IoRecord, Op};

use super::pct;

/// Sizes kept per operation in the view; the rest are one `other` row.
const TOP_SIZES: usize = 8;
/// Distinct sizes counted at most per operation (beyond, counted as `other`).
const MAX_SIZES: usize = 4096;
/// Process names kept by name at most; beyond, counted as `others`.
const MAX_PROCS: usize = 256;
/// Process rows shown.
const TOP_PROCS: usize = 10;

#[derive(Default)]
struct Count {
    count: u64,
    bytes: u64,
    reads: u64,
}

#[derive(Default)]
pub struct Mix {
    ops: [Count; 6],
    sizes: [HashMap<u32, u64, super::Fast>; 6],
    size_overflow: [u64; 6],
    procs: HashMap<[u8; 16], Count, super::Fast>,
    proc_overflow: Count,
}

impl Mix {
    pub fn push(&mut self, r: &IoRecord) {
        let i = r.op as usize;
        self.ops[i].count += 1;
        self.ops[i].bytes += u64::from(r.bytes);
        if r.op != Op::Flush {
            let sizes = &mut self.sizes[i];
            if sizes.len() < MAX_SIZES || sizes.contains_key(&r.bytes) {
                *sizes.entry(r.bytes).or_default() += 1;
            } else {
                self.size_overflow[i] += 1;
            }
        }
        let full = self.procs.len() >= MAX_PROCS && !self.procs.contains_key(&r.comm);
        let c = if full {
            &mut self.proc_overflow
        } else {
            self.procs.entry(r.comm).or_default()
        };
        c.count += 1;
        c.bytes += u64::from(r.bytes);
        c.reads += u64::from(r.op == Op::Read);
    }

    pub fn shares(&self) -> Vec<OpShare> {
        let n: u64 = self.ops.iter().map(|c| c.count).sum();
        let b: u64 = self.ops.iter().map(|c| c.bytes).sum();
        Op::ALL
            .iter()
            .zip(&self.ops)
            .filter(|(_, c)| c.count > 0)
            .map(|(op, c)| OpShare {
                op: *op,
                count: c.count,
                bytes: c.bytes,
                count_pct: pct(c.count, n),
                bytes_pct: pct(c.bytes, b),
            })
            .collect()
    }

    pub fn sizes(&self) -> Vec<SizeCount> {
        let mut out = Vec::new();
        for (i, op) in Op::ALL.iter().enumerate() {
            let total: u64 = self.sizes[i].values().sum::<u64>() + self.size_overflow[i];
            if total == 0 {
                continue;
            }
            let mut v: Vec<(u32, u64)> = self.sizes[i].iter().map(|(&s, &c)| (s, c)).collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let rest: u64 =
                v.iter().skip(TOP_SIZES).map(|x| x.1).sum::<u64>() + self.size_overflow[i];
            for &(s, c) in v.iter().take(TOP_SIZES) {
                out.push(SizeCount {
                    op: *op,
                    size_bytes: s.into(),
                    count: c,
                    pct: pct(c, total),
                });
            }
            if rest > 0 {
                out.push(SizeCount {
                    op: *op,
                    size_bytes: 0,
                    count: rest,
                    pct: pct(rest, total),
                });
            }
        }
        out
    }

    pub fn processes(&self) -> Vec<ProcessRow> {
        let row = |name: String, c: &Count| ProcessRow {
            comm: name,
            count: c.count,
            bytes: c.bytes,
            read_pct: pct(c.reads, c.count),
        };
        let mut v: Vec<ProcessRow> = self
            .procs
            .iter()
            .map(|(comm, c)| {
                let end = comm.iter().position(|&b| b == 0).unwrap_or(16);
                let name = String::from_utf8_lossy(&comm[..end]).into_owned();
                row(
                    if name.is_empty() {
                        "(unknown)".into()
                    } else {
                        name
                    },
                    c,
                )
            })
            .collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then(a.comm.cmp(&b.comm)));
        let mut others = Count {
            count: self.proc_overflow.count,
            bytes: self.proc_overflow.bytes,
            reads: self.proc_overflow.reads,
        };
        for r in v.iter().skip(TOP_PROCS) {
            others.count += r.count;
            others.bytes += r.bytes;
            others.reads += (r.read_pct * r.count as f64 / 100.0).round() as u64;
        }
        v.truncate(TOP_PROCS);
        if others.count > 0 {
            v.push(row("others".into(), &others));
        }
        v
    }
}
