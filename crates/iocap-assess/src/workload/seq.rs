//! Random or sequential: each request's distance from where the previous request of its stream
//! ended. A stream is a file when the trace has a file map (a WAL is sequential however many
//! processes write it), else a device and a process (pid).

use std::collections::HashMap;

use iocap_model::workload::{DistanceClass, Randomness};
use iocap_trace::{DevId, IoRecord, Op};

use super::pct;

const CLASSES: [(&str, u64); 6] = [
    ("0", 0),
    ("<64K", 64 << 10),
    ("<1M", 1 << 20),
    ("<64M", 64 << 20),
    ("<1G", 1 << 30),
    (">=1G", u64::MAX),
];
/// Streams remembered at most (beyond, a new stream's first request counts as far).
const MAX_STREAMS: usize = 65_536;

#[derive(Default)]
pub struct Sequentiality {
    last_end: HashMap<(DevId, u64), u64, super::Fast>,
    classes: [u64; 6],
}

impl Sequentiality {
    /// The request's class: 0 sequential, 1 near (within 1 MiB), 2 far. `file`: the mapped
    /// file it fell in, if any (else its process is its stream).
    pub fn push(&mut self, r: &IoRecord, file: Option<u32>) -> usize {
        if r.op == Op::Flush || r.bytes == 0 {
            return 2;
        }
        let key = (
            r.dev,
            file.map_or(u64::from(r.pid), |f| (1 << 32) | u64::from(f)),
        );
        let start = r.offset_bytes();
        let full = self.last_end.len() >= MAX_STREAMS;
        let prev = match self.last_end.get_mut(&key) {
            Some(e) => Some(std::mem::replace(e, r.end_bytes())),
            None => {
                if !full {
                    self.last_end.insert(key, r.end_bytes());
                }
                None
            }
        };
        // a stream's first request has no distance: it is counted as far
        let d = prev.map_or(u64::MAX, |e| start.abs_diff(e));
        let class = if d == 0 {
            0
        } else {
            CLASSES
                .iter()
                .skip(1)
                .position(|&(_, lim)| d < lim)
                .map_or(5, |i| i + 1)
        };
        self.classes[class] += 1;
        match class {
            0 => 0,
            1 | 2 => 1,
            _ => 2,
        }
    }

    pub fn finish(self) -> Randomness {
        let n: u64 = self.classes.iter().sum();
        let near: u64 = self.classes[1..3].iter().sum();
        Randomness {
            sequential_pct: pct(self.classes[0], n),
            near_pct: pct(near, n),
            far_pct: pct(n - self.classes[0] - near, n),
            streams: self.last_end.len() as u64,
            distance: CLASSES
                .iter()
                .zip(self.classes)
                .map(|(&(c, _), count)| DistanceClass {
                    class: c.into(),
                    count,
                })
                .collect(),
        }
    }
}
