//! A trace described in the seed method's terms (`iocap characterise`): one pass over its
//! records in issue order, each subject kept by its own accumulator with bounded memory, then
//! [`Characteriser::finish`] into an [`iocap_model::workload::Workload`].
//!
//! Memory, whatever the trace's length: the requests in flight (queue depth), one entry per
//! stream (device and pid), per process name (at most 256 kept by name), per size (at most
//! 4,096 distinct sizes), writes awaiting a flush (at most 65,536 per device), one bit per
//! 4 KiB touched (capped, see [`wset`]), 3,600 rate points and a 64 × 64 heat map.

mod depth;
mod durable;
mod latency;
mod mix;
mod rate;
mod seq;
mod streams;
#[cfg(test)]
mod tests;
mod wset;

use iocap_model::cachescan::CacheScan;
use iocap_model::workload::{FileMapInfo, RoleCount, StreamRole, Workload};
use iocap_trace::{FileIndex, FileMap, IoRecord, Op};

pub use streams::role_of;

/// What the trace says of itself, for the description's head.
#[derive(Debug, Clone, Default)]
pub struct TraceFacts {
    pub source: String,
    pub files: Vec<String>,
    pub devices: Vec<String>,
    pub target: String,
    pub filters: Vec<String>,
    pub complete: bool,
    pub read_error: Option<String>,
    pub lost_ring_full: u64,
    pub lost_other: u64,
    /// How the file map was read (`capture`, `characterise`), when the trace has one.
    pub file_map_read_by: Option<String>,
    /// Why there is no file map, when there is none.
    pub file_map_note: Option<String>,
    /// The recording's length when the trace knows it (a capture's trailer).
    pub duration_s: Option<f64>,
}

/// The accumulators.
#[derive(Default)]
pub struct Characteriser {
    first_ns: Option<u64>,
    last_ns: u64,
    records: u64,
    has_completions: bool,
    max_end_bytes: u64,
    mix: mix::Mix,
    seq: seq::Sequentiality,
    depth: depth::Depth,
    rate: rate::RateSeries,
    durable: durable::Durable,
    latency: latency::Latencies,
    wset: wset::WorkingSet,
    streams: streams::Streams,
    files: Option<(FileIndex, FileMapInfo)>,
    mapped: u64,
    data_requests: u64,
}

impl Characteriser {
    pub fn new() -> Characteriser {
        Characteriser::default()
    }

    /// Requests are attributed to the files of `map` (their roles, their own sequential runs).
    pub fn with_files(map: &FileMap) -> Characteriser {
        let index = FileIndex::new(map);
        let mut per_role: std::collections::BTreeMap<StreamRole, u64> = Default::default();
        for f in &map.files {
            *per_role.entry(f.role()).or_default() += 1;
        }
        let info = FileMapInfo {
            read_by: String::new(),
            dirs: map.dirs.iter().map(|d| d.path.clone()).collect(),
            files: map.files.len() as u64,
            extents: map.extents(),
            files_per_role: per_role
                .into_iter()
                .map(|(r, n)| RoleCount {
                    role: r.name().into(),
                    count: n,
                })
                .collect(),
            mapped_pct: 0.0,
        };
        Characteriser {
            files: Some((index, info)),
            ..Characteriser::default()
        }
    }

    /// Takes the next record (in issue order; a little disorder is tolerated).
    pub fn push(&mut self, r: &IoRecord) {
        let first = *self.first_ns.get_or_insert(r.issue_ns);
        let t = r.issue_ns.saturating_sub(first);
        self.records += 1;
        self.last_ns = self
            .last_ns
            .max(r.complete_ns.unwrap_or(r.issue_ns).saturating_sub(first));
        self.has_completions |= r.complete_ns.is_some();
        self.max_end_bytes = self.max_end_bytes.max(r.end_bytes());
        self.mix.push(r);
        let file = match &self.files {
            Some((ix, _)) if r.bytes > 0 && r.op != Op::Flush => {
                ix.file_at(r.dev, r.offset_bytes())
            }
            _ => None,
        };
        let seq = self.seq.push(r, file);
        if matches!(r.op, Op::Read | Op::Write) {
            self.data_requests += 1;
            self.mapped += u64::from(file.is_some());
        }
        let file_role = match (&self.files, file) {
            (Some((ix, _)), Some(f)) => Some(ix.role(f)),
            _ => None,
        };
        self.streams.push(r, t, role_of(r, file_role), file, seq);
        self.depth.push(r, first);
        self.rate.push(r, t);
        self.durable.push(r);
        self.latency.push(r);
        self.wset.push(r, t);
    }

    /// The description.
    pub fn finish(self, facts: TraceFacts) -> Workload {
        let duration_s = facts
            .duration_s
            .filter(|d| *d > 0.0)
            .unwrap_or(self.last_ns as f64 / 1e9)
            .max(self.last_ns as f64 / 1e9);
        let has = self.has_completions;
        let rate = self.rate.finish(duration_s, self.max_end_bytes);
        let file_map = self.files.map(|(_, mut info)| {
            info.read_by = facts.file_map_read_by.clone().unwrap_or_default();
            info.mapped_pct = pct(self.mapped, self.data_requests);
            info
        });
        let file_map_note = match &file_map {
            Some(_) => None,
            None => Some(facts.file_map_note.clone().unwrap_or_else(|| {
                "no file map: requests are not attributed to files (give `--files DIR` to \
                 capture or characterise)"
                    .into()
            })),
        };
        Workload {
            source: facts.source,
            files: facts.files,
            devices: facts.devices,
            target: facts.target,
            filters: facts.filters,
            complete: facts.complete,
            read_error: facts.read_error,
            lost_ring_full: facts.lost_ring_full,
            lost_other: facts.lost_other,
            records: self.records,
            duration_s,
            has_completions: has,
            mix: self.mix.shares(),
            sizes: self.mix.sizes(),
            randomness: self.seq.finish(),
            queue_depth: has.then(|| self.depth.finish(rate.0.bucket_s, rate.0.per_second.len())),
            durability: self.durable.finish(duration_s),
            latency: if has { self.latency.finish() } else { vec![] },
            working_set: self.wset.finish(),
            processes: self.mix.processes(),
            rate: rate.0,
            heatmap: rate.1,
            file_map,
            file_map_note,
            streams: self.streams.finish(duration_s),
            headroom: None,
        }
    }
}

/// Which cache found by a cache scan the working set fits in: the smallest level whose
/// measured fitting size holds it, or `None` when it fits none (or no level was found).
pub fn fits_in_cache(working_set_bytes: u64, scan: &CacheScan) -> Option<String> {
    scan.levels
        .iter()
        .enumerate()
        .find(|(_, l)| working_set_bytes <= l.fits_bytes)
        .map(|(i, l)| {
            format!(
                "cache level {} (holds at least {} MiB)",
                i + 1,
                l.fits_bytes >> 20
            )
        })
}

/// The hasher of the accumulators' maps: their keys are small integers iocap made (a device, a
/// region, a pid, a size), not input an attacker picks for collisions, so a multiply-rotate hash
/// (FxHash's) serves at a fraction of SipHash's cost per record.
#[derive(Clone, Copy, Default)]
pub(crate) struct Fast;

impl std::hash::BuildHasher for Fast {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher(0)
    }
}

pub(crate) struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
}

/// Where the working set stands against a cache scan, in words: the level it fits in, or that
/// it fits none of them.
pub fn place_in_caches(working_set_bytes: u64, scan: &CacheScan) -> String {
    fits_in_cache(working_set_bytes, scan).unwrap_or_else(|| {
        format!(
            "none of the {} cache levels this host's last scan found",
            scan.levels.len()
        )
    })
}

/// The share `part` is of `whole`, in per cent (0 for an empty whole).
fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}
