//! The working set: distinct bytes touched, at 4 KiB granularity, as a sparse bitmap (one
//! 256-bit word per 1 MiB region touched). Past [`MAX_REGIONS`] regions (1 TiB of regions
//! touched, ~48 MiB of map) new regions are no longer tracked and the figures are lower bounds.

use std::collections::HashMap;

use iocap_model::workload::WorkingSet as Summary;
use iocap_trace::{DevId, IoRecord, Op};

const BLOCK: u64 = 4096;
const REGION_BLOCKS: u64 = 256;
const MAX_REGIONS: usize = 1 << 20;
/// Points of the over-time series at most (beyond, every other is dropped).
const POINTS: usize = 60;

#[derive(Default)]
pub struct WorkingSet {
    regions: HashMap<(DevId, u64), [u64; 4]>,
    read: HashMap<(DevId, u64), [u64; 4]>,
    written: HashMap<(DevId, u64), [u64; 4]>,
    distinct: u64,
    read_bytes: u64,
    written_bytes: u64,
    capped: bool,
    over_time: Vec<(f64, u64)>,
    step_ns: u64,
}

/// Sets the bits of blocks [first, last] in `map`; how many were new.
fn mark(
    map: &mut HashMap<(DevId, u64), [u64; 4]>,
    dev: DevId,
    first: u64,
    last: u64,
    capped: &mut bool,
) -> u64 {
    let mut new = 0;
    let mut b = first;
    while b <= last {
        let region = b / REGION_BLOCKS;
        if map.len() >= MAX_REGIONS && !map.contains_key(&(dev, region)) {
            *capped = true;
            b = (region + 1) * REGION_BLOCKS;
            continue;
        }
        let words = map.entry((dev, region)).or_default();
        let bit = b % REGION_BLOCKS;
        let w = &mut words[(bit / 64) as usize];
        let m = 1u64 << (bit % 64);
        if *w & m == 0 {
            *w |= m;
            new += 1;
        }
        b += 1;
    }
    new
}

impl WorkingSet {
    /// `t`: ns since the first issue.
    pub fn push(&mut self, r: &IoRecord, t: u64) {
        if !matches!(r.op, Op::Read | Op::Write) || r.bytes == 0 {
            return;
        }
        let first = r.offset_bytes() / BLOCK;
        let last = (r.end_bytes() - 1) / BLOCK;
        let mut capped = self.capped;
        self.distinct += mark(&mut self.regions, r.dev, first, last, &mut capped) * BLOCK;
        if r.op == Op::Read {
            self.read_bytes += mark(&mut self.read, r.dev, first, last, &mut capped) * BLOCK;
        } else {
            self.written_bytes += mark(&mut self.written, r.dev, first, last, &mut capped) * BLOCK;
        }
        self.capped = capped;
        if self.step_ns == 0 {
            self.step_ns = 1_000_000_000;
        }
        let k = (t / self.step_ns) as usize;
        if k >= self.over_time.len() {
            if self.over_time.len() >= POINTS {
                self.over_time = self.over_time.iter().copied().skip(1).step_by(2).collect();
                self.step_ns *= 2;
            }
            self.over_time.push((t as f64 / 1e9, self.distinct));
        } else if let Some(p) = self.over_time.last_mut() {
            *p = (t as f64 / 1e9, self.distinct);
        }
    }

    pub fn finish(self) -> Summary {
        Summary {
            distinct_bytes: self.distinct,
            read_bytes: self.read_bytes,
            written_bytes: self.written_bytes,
            capped: self.capped,
            over_time: self.over_time,
            fits: None,
        }
    }
}
