//! Which points `iocap cost` runs. The whole matrix is engines × block sizes × read and write ×
//! cache modes × queue depth 1 and concurrent; three named subsets pick from it:
//!
//! - `quick` (a smoke set, about 30 s at the default 2 s per point): psync and registered
//!   io_uring, 4K, 64K and 1M, read and write, O_DIRECT, concurrent: 12 points;
//! - `default`: every engine and size, read and write, O_DIRECT, concurrent (30 points, a model
//!   per engine and direction); queue depth 1 for 4K, 8K and 64K reads on every engine (9
//!   points, the synchronous model); buffered cache hit and miss reads at 8K, 64K and 1M on psync
//!   and registered io_uring (12 points): 51 points, about 2.5 min;
//! - `full`: everything, 150 points.
//!
//! Buffered writes are measured as `hit` only: a whole-page write never reads the page, so a
//! "miss" would only change whether the page cache allocates a page, and the write-back happens
//! later in kernel flusher threads either way (docs/cost.md).
//!
//! On Windows the engines are sync and IOCP, and there are no cache-miss points: Windows has no
//! call that drops one file's pages from the system cache (only the whole standby list, for
//! every process, with a privilege), so a miss could not be made; the plan says so in a note.

use iocap_model::{
    format_bytes, CacheMode, CostMatrix, EngineChoice, IoDirection, JobSpec, RwMode, System,
};

/// The engines compared on Linux, by the names `--engine` takes: psync, io_uring without and
/// with its file and buffers registered (`io_uring`, as tests run it).
pub const ENGINES: [EngineChoice; 3] = [
    EngineChoice::Psync,
    EngineChoice::IoUringUnregistered,
    EngineChoice::IoUring,
];

/// The engines compared on Windows: sync (positioned ReadFile/WriteFile) and IOCP (`auto`).
pub const WINDOWS_ENGINES: [EngineChoice; 2] = [EngineChoice::Psync, EngineChoice::Auto];

/// What a system's matrix is made of: every engine, the two the smaller subsets compare (the
/// synchronous one and the fastest asynchronous one), and the cache modes of a read.
struct Axes {
    engines: &'static [EngineChoice],
    pair: [EngineChoice; 2],
    buffered_reads: &'static [CacheMode],
}

fn axes(system: System) -> Axes {
    match system {
        System::Linux => Axes {
            engines: &ENGINES,
            pair: [ENGINES[0], ENGINES[2]],
            buffered_reads: &[CacheMode::Hit, CacheMode::Miss],
        },
        System::Windows => Axes {
            engines: &WINDOWS_ENGINES,
            pair: WINDOWS_ENGINES,
            buffered_reads: &[CacheMode::Hit],
        },
    }
}

/// The block sizes of the matrix.
pub const SIZES: [u64; 5] = [4 << 10, 8 << 10, 64 << 10, 256 << 10, 1 << 20];

/// One point to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedPoint {
    pub engine: EngineChoice,
    pub write: bool,
    pub bs_bytes: u64,
    pub cache: CacheMode,
    pub qd: u32,
}

impl PlannedPoint {
    pub fn direction(&self) -> IoDirection {
        if self.write {
            IoDirection::Write
        } else {
            IoDirection::Read
        }
    }

    /// `io_uring read 8K direct qd 16`.
    pub fn label(&self) -> String {
        format!(
            "{} {} {} {} qd {}",
            self.engine.name_on(System::HOST),
            self.direction(),
            format_bytes(self.bs_bytes),
            self.cache.name(),
            self.qd
        )
    }

    /// The engine's spec for this point: `base` (targets, size, duration, seed, safety flags)
    /// with this point's workload. Random offsets aligned to the block size; psync runs `qd`
    /// threads of one I/O each (the engine's own mapping of a queue depth onto psync).
    pub fn spec(&self, base: &JobSpec) -> JobSpec {
        let rw = if self.write {
            RwMode::RandWrite
        } else {
            RwMode::RandRead
        };
        JobSpec {
            name: format!("cost {}", self.label()),
            rw,
            write_pct: rw.write_pct(0),
            bs_bytes: self.bs_bytes,
            align_bytes: self.bs_bytes,
            qd: self.qd,
            threads: 1,
            direct: self.cache == CacheMode::Direct,
            engine: self.engine,
            // a miss must not warm the cache before the window opens
            warmup_s: if self.cache == CacheMode::Miss {
                0.0
            } else {
                base.warmup_s
            },
            bs_split: vec![],
            burst: None,
            rate_iops: None,
            rate_mb_s: None,
            fsync_every: 0,
            write_through: false,
            ..base.clone()
        }
    }
}

/// The points of `m` with concurrency `qd` on this system, and notes on what was left out.
pub fn plan(m: CostMatrix, qd: u32) -> (Vec<PlannedPoint>, Vec<String>) {
    plan_for(System::HOST, m, qd)
}

/// The points of `m` with concurrency `qd` on `system`, and notes on what was left out.
pub fn plan_for(system: System, m: CostMatrix, qd: u32) -> (Vec<PlannedPoint>, Vec<String>) {
    let a = axes(system);
    let mut out = Vec::new();
    let mut push = |e: EngineChoice, write: bool, bs: u64, cache: CacheMode, q: u32| {
        out.push(PlannedPoint {
            engine: e,
            write,
            bs_bytes: bs,
            cache,
            qd: q,
        })
    };
    let mut notes = vec![format!(
        "buffered writes are measured with the file's pages in the cache (hit) only: a \
         whole-page write never reads the page, so a miss changes only the page allocation, and \
         the write-back runs later in kernel flusher threads either way (matrix: {})",
        m.name()
    )];
    if system == System::Windows && m != CostMatrix::Quick {
        notes.push(
            "no cache-miss points on Windows: it has no call that drops one file's pages from \
             the system cache (only the whole standby list, for every process, with a \
             privilege), so a miss cannot be made; hits are warmed by reading the file, and \
             how much of it stayed cached cannot be read"
                .into(),
        );
    }
    match m {
        CostMatrix::Quick => {
            for e in a.pair {
                for write in [false, true] {
                    for bs in [4 << 10, 64 << 10, 1 << 20] {
                        push(e, write, bs, CacheMode::Direct, qd);
                    }
                }
            }
        }
        CostMatrix::Default => {
            for &e in a.engines {
                for write in [false, true] {
                    for bs in SIZES {
                        push(e, write, bs, CacheMode::Direct, qd);
                    }
                }
            }
            if qd != 1 {
                for &e in a.engines {
                    for bs in [4 << 10, 8 << 10, 64 << 10] {
                        push(e, false, bs, CacheMode::Direct, 1);
                    }
                }
            }
            for e in a.pair {
                for &cache in a.buffered_reads {
                    for bs in [8 << 10, 64 << 10, 1 << 20] {
                        push(e, false, bs, cache, qd);
                    }
                }
            }
        }
        CostMatrix::Full => {
            let mut qds = vec![1];
            if qd != 1 {
                qds.push(qd);
            }
            let caches: Vec<CacheMode> = std::iter::once(CacheMode::Direct)
                .chain(a.buffered_reads.iter().copied())
                .collect();
            for &e in a.engines {
                for write in [false, true] {
                    for &cache in &caches {
                        if write && cache == CacheMode::Miss {
                            continue;
                        }
                        for &q in &qds {
                            for bs in SIZES {
                                push(e, write, bs, cache, q);
                            }
                        }
                    }
                }
            }
        }
    }
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subset_sizes() {
        let linux = |m, qd| plan_for(System::Linux, m, qd).0.len();
        assert_eq!(linux(CostMatrix::Quick, 16), 12);
        assert_eq!(linux(CostMatrix::Default, 16), 51);
        assert_eq!(linux(CostMatrix::Full, 16), 150);
        assert_eq!(linux(CostMatrix::Full, 1), 75);
        let (full, _) = plan_for(System::Linux, CostMatrix::Full, 16);
        assert!(!full.iter().any(|p| p.write && p.cache == CacheMode::Miss));
    }

    /// Windows compares sync with IOCP, and has no cache-miss point (it cannot drop one
    /// file's pages); the notes say why.
    #[test]
    fn windows_runs_its_own_engines_and_no_miss() {
        let (quick, _) = plan_for(System::Windows, CostMatrix::Quick, 16);
        assert_eq!(quick.len(), 12);
        let (default, notes) = plan_for(System::Windows, CostMatrix::Default, 16);
        // 2 engines x 2 directions x 5 sizes, qd 1 reads 2 x 3, hits 2 x 3
        assert_eq!(default.len(), 20 + 6 + 6);
        let (full, _) = plan_for(System::Windows, CostMatrix::Full, 16);
        // 2 engines x (read: direct, hit; write: direct, hit) x 2 qds x 5 sizes
        assert_eq!(full.len(), 80);
        for p in default.iter().chain(&full).chain(&quick) {
            assert!(WINDOWS_ENGINES.contains(&p.engine), "{}", p.label());
            assert_ne!(p.cache, CacheMode::Miss, "{}", p.label());
        }
        assert!(notes
            .iter()
            .any(|n| n.contains("no cache-miss points on Windows")));
    }

    #[test]
    fn specs_follow_the_point() {
        let base = JobSpec {
            warmup_s: 0.5,
            duration_s: 2.0,
            ..JobSpec::default()
        };
        let (pts, _) = plan(CostMatrix::Default, 16);
        for p in &pts {
            let s = p.spec(&base);
            s.validate().unwrap();
            assert_eq!(s.direct, p.cache == CacheMode::Direct);
            assert_eq!(s.writes(), p.write);
            assert_eq!(s.warmup_s == 0.0, p.cache == CacheMode::Miss);
        }
    }
}
