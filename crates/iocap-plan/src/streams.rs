//! A profile of streams (`characterise --as-profile`): one workload per recorded stream (two,
//! its reads and its writes, where each is at least 5 % of it), all run together, each at its own rate, depth, sizes, pattern and durability, so that
//! `suite run profile:FILE` sends the storage what the database sent it, stream by stream.
//!
//! Per stream ([`iocap_model::workload::Stream`]):
//! - role: the log's workload goes to `--log`, temp's to `--temp`, every other stream's to
//!   `--data`;
//! - rate: its IOPS over its busy seconds (`rate_iops`, raised by one in `fsync_every` where
//!   it flushes: the engine paces fsyncs as operations), spaced at random (`rate_process =
//!   "poisson"`) where its recorded gaps were as irregular as independent clients' (their
//!   coefficient of variation 0.7 or more), and its on/off cycle (`burst`) when it was busy for
//!   less than 85 % of the recording in two or more periods;
//! - depth: a ceiling (`qd`): the most of its requests the recording had in flight, or twice
//!   its mean depth if more (paced at the recorded rate on the same storage, the depth settles
//!   where it was, and the room keeps a slower moment from capping the rate); the log at 1;
//! - sizes: its commonest read and write sizes (`bs_split`, in hundredths of a per cent), the
//!   rest as one size of their mean, so its bytes per request are the recorded ones;
//! - pattern: sequential when most of its requests started where the previous one to the same
//!   file ended (or within 1 MiB), else random;
//! - durability: a flush after as many writes as each recorded flush made durable
//!   (`fsync_every`, by fdatasync: `datasync`), or every write durable (`write_through`) when most were FUA.
//!
//! What it cannot carry: the order of requests across streams, think time within a burst,
//! locality beyond random and sequential, sizes beyond the six kept, and files: each stream's
//! requests go to one test file of its role.

use std::fmt::Write as _;

use iocap_model::format_bytes;
use iocap_model::request::Op;
use iocap_model::workload::{Stream, StreamRole, Workload};

use crate::captured_words::{one_line, rw_name, split_text, CAPTURED_FAMILY};

/// Arrivals at least this irregular (the gaps' coefficient of variation) are spaced at random
/// (`rate_process = "poisson"`), as independent clients' are; more regular ones evenly.
const POISSON_CV: f64 = 0.7;
/// Reads and writes each at least this share of a stream are their own workloads.
const SPLIT_SHARE: f64 = 0.05;
/// Sizes kept per stream.
const SIZES_KEPT: usize = 6;
/// A stream with fewer reads and writes than this share of all is left out (its rate is
/// noise), unless it is the log.
const MIN_SHARE: f64 = 0.005;

/// The profile, or `None` when the workload has no stream with reads or writes (a description
/// saved before streams existed).
pub fn profile_from_streams(w: &Workload, name: &str) -> Option<String> {
    let total: u64 = w.streams.iter().map(|s| s.reads + s.writes).sum();
    let kept: Vec<&Stream> = w
        .streams
        .iter()
        .filter(|s| s.reads + s.writes > 0 && s.busy_s > 0.0)
        .filter(|s| {
            s.role == StreamRole::Log || (s.reads + s.writes) as f64 >= MIN_SHARE * total as f64
        })
        .collect();
    let lead = kept.first()?;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Written by `iocap characterise --as-profile` from {} ({} requests, {:.0} s).\n\
         # One workload per stream, run together, each at its recorded rate over its busy\n\
         # seconds, depth, sizes, pattern and flushes. It cannot carry the order of requests\n\
         # across streams, think time, locality beyond random/sequential, the sizes beyond\n\
         # the {SIZES_KEPT} kept per stream, or the files: each stream uses one test file.",
        one_line(&w.files.join(", ")),
        w.records,
        w.duration_s
    );
    if let Some(note) = &w.file_map_note {
        let _ = writeln!(o, "# {}", one_line(note));
    }
    let page = kept
        .iter()
        .find(|s| s.role == StreamRole::Data)
        .unwrap_or(lead)
        .size_mode_bytes;
    let page = if page == 0 {
        8192
    } else {
        page.div_ceil(512) * 512
    };
    let names: Vec<&str> = kept.iter().map(|s| s.role.name()).collect();
    let _ = writeln!(
        o,
        "name = \"{name}\"\nfamily = \"{CAPTURED_FAMILY}\"\npage = \"{}\"\n\
         description = \"Recorded workload, {} streams run together: {}\"",
        format_bytes(page),
        kept.len(),
        names.join(", ")
    );
    let secs = w.duration_s.round().clamp(10.0, 600.0);
    let _ = writeln!(
        o,
        "\n[defaults]\nduration = \"{secs:.0}s\"\nwarmup = \"2s\""
    );
    let all: Vec<Part> = kept.iter().flat_map(|s| parts(s)).collect();
    let lead_key = all.first()?.key.clone();
    for (i, p) in all.iter().enumerate() {
        let lead = (i > 0).then_some(lead_key.as_str());
        workload(&mut o, p, w.duration_s, lead);
    }
    Some(o)
}

/// One stream's `[[workload]]`.
/// One workload of a stream: all of it, or its reads or its writes alone.
struct Part<'a> {
    s: &'a Stream,
    /// `read`, `write`, or `None` for both.
    op: Option<Op>,
    key: String,
}

/// A stream's workloads: one, or its reads and its writes apart where each is at least
/// [`SPLIT_SHARE`] of it (a table's page reads and its write-back differ in size and timing,
/// and one size mix for both would give the writes the reads' read-ahead sizes).
fn parts(s: &Stream) -> Vec<Part<'_>> {
    let key = format!("stream-{}", s.role.name());
    let share = s.read_pct / 100.0;
    if share >= SPLIT_SHARE && 1.0 - share >= SPLIT_SHARE {
        [Op::Read, Op::Write]
            .into_iter()
            .map(|op| Part {
                s,
                op: Some(op),
                key: format!("{key}-{op}"),
            })
            .collect()
    } else {
        vec![Part { s, op: None, key }]
    }
}

fn workload(o: &mut String, p: &Part, duration_s: f64, lead: Option<&str>) {
    let s = p.s;
    let sequential = s.sequential_pct + s.near_pct >= 50.0;
    let write_pct = match p.op {
        Some(Op::Read) => 0,
        Some(_) => 100,
        None => (100.0 - s.read_pct).round().clamp(0.0, 100.0) as u8,
    };
    let rw = rw_name(u64::from(write_pct), sequential);
    let role = match s.role {
        StreamRole::Log => "log",
        StreamRole::Temp => "temp",
        _ => "data",
    };
    // a ceiling with room: paced at the recorded rate, the depth settles at rate × latency,
    // and a storage a little slower than at the recording needs a little more of it
    let qd = match (s.role, s.depth_max, s.depth_mean) {
        (StreamRole::Log, _, _) => 1,
        (_, 0, _) => 4,
        (_, d, mean) => d
            .max((2.0 * mean.unwrap_or(0.0)).ceil() as u64)
            .clamp(1, 256),
    };
    let writes = p.op != Some(Op::Read);
    let fsync_every = (writes && s.flushes > 0 && s.writes > 0 && s.writes_per_flush > 0.0)
        .then(|| s.writes_per_flush.round().max(1.0) as u64);
    let write_through = writes && s.writes > 0 && s.fua_writes * 2 > s.writes;
    let iops = match p.op {
        Some(Op::Read) => s.iops * s.read_pct / 100.0,
        Some(_) => s.iops * (1.0 - s.read_pct / 100.0),
        None => s.iops,
    };
    // the engine paces its fsyncs as operations: one after every `fsync_every` writes
    let rate = iops * (1.0 + fsync_every.map_or(0.0, |n| 1.0 / n as f64));
    let _ = writeln!(
        o,
        "\n[[workload]]\nkey = \"{}\"\ntitle = \"{}: {}, {} {}, {:.0} IOPS while busy, depth up to {qd}\"\n\
         role = \"{role}\"\nrw = \"{rw}\"",
        p.key,
        s.role.name(),
        mix_words(write_pct),
        format_bytes(s.size_mode_bytes.max(512)),
        if sequential { "sequential" } else { "random" },
        iops,
    );
    if let Some(l) = lead {
        let _ = writeln!(o, "concurrent_with = \"{l}\"");
    }
    if !matches!(write_pct, 0 | 100) {
        let _ = writeln!(o, "write_pct = {write_pct}");
    }
    let bs = sizes_text(s, p.op);
    let _ = writeln!(o, "{bs}\nqd = {qd}\nrate_iops = {:.0}", rate.max(1.0));
    // independent clients arrive at random, and queue behind each other as they did
    if s.arrival_cv.is_some_and(|cv| cv >= POISSON_CV) {
        let _ = writeln!(o, "rate_process = \"poisson\"");
    }
    if let Some(n) = fsync_every {
        // a recorded flush is a bare cache flush: fdatasync's, not fsync's journal commit
        let _ = writeln!(o, "fsync_every = {n}\ndatasync = true");
    }
    if write_through {
        let _ = writeln!(o, "write_through = true");
    }
    let b = &s.bursts;
    if s.busy_s < 0.85 * duration_s && b.on_periods >= 2 && b.on_s_median >= 1.0 {
        let _ = writeln!(
            o,
            "burst = {{ on = \"{:.0}s\", off = \"{:.0}s\" }}",
            b.on_s_median,
            b.off_s_median.max(1.0)
        );
    }
}

/// `bs = "8K"` or `bs_split = "8K:5400,24K:2600,...,448K:120"`: the stream's commonest read and
/// write sizes by count, in hundredths of a per cent, and the rest as one size of their mean
/// (to the nearest 512 B, the sector the recorded sizes are counted in), so that its bytes per
/// request are the recorded ones: a WAL's rare 256 KiB segment fills are few requests but much
/// of its bytes. (Rounded up to 4 KiB, InnoDB's redo log, whose 42 % of writes beyond the five
/// commonest sizes averaged 9.6 KiB, ran 12 KiB and wrote 19 % more bytes than recorded; a
/// device with larger blocks has the sizes rounded up to them when the profile runs.)
fn sizes_text(s: &Stream, op: Option<Op>) -> String {
    let mut v: Vec<(u64, u64)> = vec![];
    let wanted = |o: Op| op.map_or(o.moves_data(), |w| w == o);
    for c in s.sizes.iter().filter(|c| wanted(c.op) && c.size_bytes > 0) {
        match v.iter_mut().find(|x| x.0 == c.size_bytes) {
            Some(x) => x.1 += c.count,
            None => v.push((c.size_bytes, c.count)),
        }
    }
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(SIZES_KEPT - 1);
    let (total, bytes) = match op {
        Some(Op::Read) => (s.reads, s.read_bytes),
        Some(_) => (s.writes, s.write_bytes),
        None => (s.reads + s.writes, s.read_bytes + s.write_bytes),
    };
    let kept: u64 = v.iter().map(|x| x.1).sum();
    let kept_bytes: u64 = v.iter().map(|x| x.0 * x.1).sum();
    let rest_bytes = bytes.saturating_sub(kept_bytes);
    let rest = total.saturating_sub(kept);
    if rest > 0 && rest_bytes > 0 {
        let mean = ((rest_bytes / rest + 256) / 512).clamp(1, 128 * 1024) * 512;
        match v.iter_mut().find(|x| x.0 == mean) {
            Some(x) => x.1 += rest,
            None => v.push((mean, rest)),
        }
    }
    let all: u64 = v.iter().map(|x| x.1).sum();
    let shares: Vec<(u64, u64)> = v
        .iter()
        .map(|&(size, c)| {
            (
                size.div_ceil(512) * 512,
                (c * 10_000 + all / 2) / all.max(1),
            )
        })
        .filter(|&(_, w)| w > 0)
        .collect();
    split_text(&shares)
}

fn mix_words(write_pct: u8) -> String {
    match write_pct {
        0 => "reads".into(),
        100 => "writes".into(),
        p => format!("{p} % writes"),
    }
}

#[cfg(test)]
mod tests;
