//! How many places a random test can go in a range. A "random" test whose block size and
//! alignment leave one offset in the range (`--align 128M` on 64 MiB, `--size 8K` with 8K
//! blocks) reads or writes the same block over and over: whatever cache is in front of the
//! device answers, and the figures say nothing of random I/O. Such a test is refused; one with
//! fewer offsets than I/Os in flight is run with a warning, since I/Os then overlap on the same
//! blocks. The rule is the model's, applied twice: by [`crate::JobSpec::validate`] where a
//! target's range is given, and by the engine once it knows the range of an existing file or
//! device.

use crate::{format_bytes, JobSpec, SpecError};

/// The aligned offsets in `range` where a `len`-byte I/O fits (0 when none does): the places a
/// random I/O draws from, here and in the engine's offset generator.
pub fn aligned_positions(range: u64, len: u64, align: u64) -> u64 {
    if range < len || align == 0 {
        return 0;
    }
    (range - len) / align + 1
}

/// A random test needs at least this many offsets to be one.
pub const MIN_RANDOM_OFFSETS: u64 = 2;

impl JobSpec {
    /// The distinct offsets a random I/O of this test can start at in `range_bytes`: the
    /// aligned positions where its smallest size fits (a larger size of a mix has some of the
    /// same ones). 0 when no I/O fits.
    pub fn random_offsets(&self, range_bytes: u64) -> u64 {
        let smallest = self
            .bs_split
            .iter()
            .map(|b| b.bs_bytes)
            .min()
            .unwrap_or(self.bs_bytes);
        aligned_positions(range_bytes, smallest, self.align_bytes)
    }

    /// Refuses a random test over `range_bytes` of `target` that holds fewer than
    /// [`MIN_RANDOM_OFFSETS`] offsets; a sequential test, or a range no block fits (refused
    /// elsewhere), passes.
    pub fn check_random_range(&self, range_bytes: u64, target: &str) -> Result<(), SpecError> {
        let n = self.random_offsets(range_bytes);
        if !self.rw.is_random() || n == 0 || n >= MIN_RANDOM_OFFSETS {
            return Ok(());
        }
        Err(SpecError::Invalid(format!(
            "target {target}: a random test needs at least {MIN_RANDOM_OFFSETS} offsets, but \
             {} I/Os aligned to {} fit its {} range at {n} only, so every I/O would hit the \
             same block; use a smaller --align, a larger --size, or a sequential workload",
            format_bytes(self.bs_bytes),
            format_bytes(self.align_bytes),
            format_bytes(range_bytes),
        )))
    }

    /// A warning when a random test over `range_bytes` of `target`, with `threads` threads on
    /// it, has fewer offsets than I/Os in flight: they then overlap on the same blocks.
    pub fn few_random_offsets(
        &self,
        range_bytes: u64,
        target: &str,
        threads: u32,
    ) -> Option<String> {
        let n = self.random_offsets(range_bytes);
        let in_flight = u64::from(self.qd) * u64::from(threads.max(1));
        (self.rw.is_random() && n >= MIN_RANDOM_OFFSETS && n < in_flight).then(|| {
            format!(
                "{target}: only {n} offsets for {in_flight} I/Os in flight, so they overlap on \
                 the same blocks and a cache in front of the device may answer them"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{BsWeight, JobSpec, RwMode, TargetSpec};

    fn random(bs: u64, align: u64) -> JobSpec {
        JobSpec {
            bs_bytes: bs,
            align_bytes: align,
            ..JobSpec::default()
        }
    }

    #[test]
    fn an_alignment_past_the_range_leaves_one_offset_and_is_refused() {
        let s = random(8 << 10, 128 << 20);
        assert_eq!(s.random_offsets(64 << 20), 1);
        let e = s
            .check_random_range(64 << 20, "t.dat")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.dat") && e.contains("aligned to 128M") && e.contains("64M range at 1"),
            "{e}"
        );
        // the same alignment on a range that holds two offsets runs
        assert_eq!(s.random_offsets(128 << 20 | 8 << 10), 2);
        assert!(s.check_random_range(128 << 20 | 8 << 10, "t.dat").is_ok());
    }

    #[test]
    fn a_range_of_one_block_is_refused_by_validate_when_given() {
        let s = JobSpec {
            targets: vec![TargetSpec {
                size_bytes: Some(8 << 10),
                ..TargetSpec::new("t.dat")
            }],
            threads: 4,
            ..random(8 << 10, 8 << 10)
        };
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("random test needs at least 2 offsets"), "{e}");
        // sequential over one block is what it says
        let seq = JobSpec {
            rw: RwMode::Read,
            ..s
        };
        seq.validate().unwrap();
    }

    #[test]
    fn a_mix_counts_the_offsets_of_its_smallest_size() {
        let s = JobSpec {
            bs_split: vec![
                BsWeight {
                    bs_bytes: 8 << 10,
                    weight: 1,
                },
                BsWeight {
                    bs_bytes: 64 << 10,
                    weight: 1,
                },
            ],
            ..random(64 << 10, 8 << 10)
        };
        assert_eq!(s.random_offsets(64 << 10), 8);
        assert!(s.check_random_range(64 << 10, "t").is_ok());
    }

    #[test]
    fn fewer_offsets_than_ios_in_flight_is_a_warning() {
        let s = JobSpec {
            qd: 16,
            ..random(8 << 10, 8 << 10)
        };
        let w = s.few_random_offsets(64 << 10, "t.dat", 2).unwrap();
        assert!(w.contains("only 8 offsets for 32 I/Os in flight"), "{w}");
        assert_eq!(s.few_random_offsets(1 << 20, "t.dat", 2), None);
        assert_eq!(
            s.few_random_offsets(8 << 10, "t.dat", 2),
            None,
            "refused instead"
        );
    }
}
