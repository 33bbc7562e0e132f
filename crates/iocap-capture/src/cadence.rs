//! How often user space drains the ring buffer. Each drain wakes the capture, and on a host
//! whose CPUs the workload keeps busy a wake-up takes a CPU from the workload's threads (on a
//! loop device at qd 16, two sets of windows minutes apart gave fio 0.82 and 0.89 of its IOPS
//! with drains every 10 and every 200 ms; the paired windows of bench/capture-overhead.py found
//! the whole change within the noise). So the capture drains as seldom as the ring allows:
//! often enough that, at the rate records came since the last drain, the ring is at most an
//! eighth full by the next, within 10 to 100 ms. At 100 ms a 16 MiB ring overflows only past
//! about 2 million requests a second arriving at once from quiet. Pure: tested here.

/// The shortest and the longest wait between drains.
pub const MIN_NS: u64 = 10_000_000;
pub const MAX_NS: u64 = 100_000_000;

/// The wait between drains, set from what each drain found.
#[derive(Clone, Copy, Debug)]
pub struct Cadence {
    ring_bytes: u64,
    every_ns: u64,
}

impl Cadence {
    /// For a ring of `ring_bytes`; the first wait is the shortest.
    pub fn new(ring_bytes: u64) -> Cadence {
        Cadence {
            ring_bytes,
            every_ns: MIN_NS,
        }
    }

    /// The wait before the next drain.
    pub fn every_ns(&self) -> u64 {
        self.every_ns
    }

    /// A drain found `bytes` written over the `since_ns` since the one before.
    pub fn drained(&mut self, bytes: u64, since_ns: u64) {
        let eighth = self.ring_bytes / 8;
        let fills_ns = match bytes {
            0 => MAX_NS,
            _ => (eighth as u128 * since_ns.max(1) as u128 / bytes as u128) as u64,
        };
        self.every_ns = fills_ns.clamp(MIN_NS, MAX_NS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RING: u64 = 16 << 20;

    #[test]
    fn a_quiet_ring_is_drained_seldom_and_a_busy_one_often() {
        let mut c = Cadence::new(RING);
        assert_eq!(c.every_ns(), MIN_NS);
        c.drained(0, 10_000_000);
        assert_eq!(c.every_ns(), MAX_NS);
        // 60K requests a second of 80 B: an eighth of the ring lasts 0.44 s
        c.drained(60_000 * 80 / 10, 100_000_000);
        assert_eq!(c.every_ns(), MAX_NS);
        // 2M a second: an eighth lasts 13 ms
        c.drained(2_000_000 * 80 / 10, 100_000_000);
        assert!(
            (12_000_000..14_000_000).contains(&c.every_ns()),
            "{}",
            c.every_ns()
        );
        // beyond what 10 ms can keep up with, the shortest wait
        c.drained(RING, 10_000_000);
        assert_eq!(c.every_ns(), MIN_NS);
    }
}
