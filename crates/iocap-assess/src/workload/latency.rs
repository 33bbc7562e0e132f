//! Latency percentiles per operation and size class, with a few points of each CDF.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use iocap_model::workload::LatencyRow;
use iocap_trace::{IoRecord, Op};

use super::durable::percentiles;

const CLASSES: [(&str, u32); 5] = [
    ("<=4K", 4 << 10),
    ("<=16K", 16 << 10),
    ("<=64K", 64 << 10),
    ("<=256K", 256 << 10),
    (">256K", u32::MAX),
];
/// The quantiles of each CDF drawn.
const CDF: [f64; 13] = [
    0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999, 1.0,
];

#[derive(Default)]
pub struct Latencies {
    /// (op, class index; 255 for the operation as a whole)
    hists: BTreeMap<(u8, u8), Histogram<u64>>,
}

impl Latencies {
    pub fn push(&mut self, r: &IoRecord) {
        let Some(l) = r.latency_ns() else {
            return;
        };
        let class = if r.op == Op::Flush {
            255
        } else {
            CLASSES
                .iter()
                .position(|&(_, lim)| r.bytes <= lim)
                .unwrap_or(4) as u8
        };
        for key in [(r.op as u8, class), (r.op as u8, 255)] {
            let h = self.hists.entry(key).or_insert_with(|| {
                Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds")
            });
            h.saturating_record(l.max(1));
            if class == 255 {
                break;
            }
        }
    }

    pub fn finish(self) -> Vec<LatencyRow> {
        self.hists
            .iter()
            .map(|(&(op, class), h)| LatencyRow {
                op: Op::from_u8(op).unwrap_or(Op::Other),
                size_class: if class == 255 {
                    "all".into()
                } else {
                    CLASSES[class as usize].0.into()
                },
                count: h.len(),
                latency: percentiles(h),
                cdf: CDF
                    .iter()
                    .map(|&q| (h.value_at_quantile(q) as f64 / 1000.0, q * 100.0))
                    .collect(),
            })
            .collect()
    }
}
