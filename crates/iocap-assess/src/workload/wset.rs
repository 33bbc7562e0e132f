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
    /// per region: the blocks touched, read, written (4 words each)
    regions: HashMap<(DevId, u64), [u64; 12], super::Fast>,
    distinct: u64,
    read_bytes: u64,
    written_bytes: u64,
    capped: bool,
    over_time: Vec<(f64, u64)>,
    step_ns: u64,
}

/// Sets the bits of blocks [first, last] in the touched set and in the read (`rw` 1) or
/// written (`rw` 2) set; how many blocks were new to each.
fn mark(
    map: &mut HashMap<(DevId, u64), [u64; 12], super::Fast>,
    dev: DevId,
    (first, last): (u64, u64),
    rw: usize,
    capped: &mut bool,
) -> (u64, u64) {
    let (mut new_any, mut new_rw) = (0, 0);
    let mut b = first;
    while b <= last {
        let region = b / REGION_BLOCKS;
        if map.len() >= MAX_REGIONS && !map.contains_key(&(dev, region)) {
            *capped = true;
            b = (region + 1) * REGION_BLOCKS;
            continue;
        }
        let words = map.entry((dev, region)).or_insert([0; 12]);
        // the blocks of this region in the request, one word at a time
        while b <= last && b / REGION_BLOCKS == region {
            let bit = b % REGION_BLOCKS;
            let w = (bit / 64) as usize;
            let m = 1u64 << (bit % 64);
            new_any += u64::from(words[w] & m == 0);
            new_rw += u64::from(words[4 * rw + w] & m == 0);
            words[w] |= m;
            words[4 * rw + w] |= m;
            b += 1;
        }
    }
    (new_any, new_rw)
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
        let rw = if r.op == Op::Read { 1 } else { 2 };
        let (any, mine) = mark(&mut self.regions, r.dev, (first, last), rw, &mut capped);
        self.distinct += any * BLOCK;
        if rw == 1 {
            self.read_bytes += mine * BLOCK;
        } else {
            self.written_bytes += mine * BLOCK;
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
