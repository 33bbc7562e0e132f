//! Each stream of a workload (`workload.streams`: the log, the data files, temp, ...) on the
//! curve, alone: its busiest second's reads and writes against the knee, and against the curve
//! at the depth it ran at. The log is judged at queue depth 1 whatever it recorded: its writer
//! waits on each flush, so its rate is what one request at a time allows. A curve measures
//! one workload (8K random reads, say); where the stream's is another (a log's sequential
//! durable writes), the figures are given and a note says that the curve cannot speak for it.

use iocap_model::workload::{Stream, StreamHeadroom, StreamRole};
use iocap_model::JobSpec;

use super::curve::{self, Step};
use super::{least, ratio, verdict};

/// What the curve measured, as far as a stream's shape goes.
pub(super) struct CurveShape {
    random: bool,
    /// Writes among its requests, in percent.
    write_pct: f64,
    /// Whether its writes were made durable (`--fsync-every`, write-through).
    durable: bool,
    bs_bytes: u64,
}

impl CurveShape {
    pub(super) fn of(s: &JobSpec) -> CurveShape {
        CurveShape {
            random: s.rw.is_random(),
            write_pct: f64::from(s.rw.write_pct(s.write_pct)),
            durable: s.writes() && (s.fsync_every > 0 || s.write_through),
            bs_bytes: s.bs_bytes,
        }
    }

    fn words(&self) -> String {
        shape_words(self.random, self.write_pct, self.durable)
    }
}

/// `random reads`, `sequential durable writes`, `random reads and writes`.
fn shape_words(random: bool, write_pct: f64, durable: bool) -> String {
    let pattern = if random { "random" } else { "sequential" };
    let durable = if durable { "durable " } else { "" };
    if write_pct <= 20.0 {
        format!("{pattern} reads")
    } else if write_pct >= 80.0 {
        format!("{pattern} {durable}writes")
    } else {
        format!("{pattern} reads and {durable}writes")
    }
}

/// Whether a stream's writes are made durable: it flushes, or writes with FUA.
fn durable(s: &Stream) -> bool {
    s.writes > 0 && (s.flushes > 0 || s.fua_writes > 0 || s.flushes_per_s > 0.0)
}

/// The depth a stream is judged at, and why: a log at 1, else its busiest second's mean depth,
/// else its mean depth; `None` without either (no completion times).
fn depth(s: &Stream) -> Option<(f64, &'static str)> {
    let ok = |d: f64| d.is_finite() && d > 0.0;
    if s.role == StreamRole::Log {
        Some((1.0, "log"))
    } else if ok(s.peak_depth) {
        Some((s.peak_depth, "stream_peak"))
    } else {
        s.depth_mean.filter(|d| ok(*d)).map(|d| (d, "stream_mean"))
    }
}

/// The stream `s` on the curve whose whole steps are `steps` and whose knee is `knee`.
pub(super) fn place(
    s: &Stream,
    steps: &[Step],
    knee: &Step,
    curve: Option<&CurveShape>,
    lower_bound: bool,
) -> StreamHeadroom {
    let fin = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
    let need = fin(s.peak_iops);
    let n = s.reads + s.writes;
    let bytes = if n > 0 {
        (s.read_bytes + s.write_bytes) as f64 / n as f64
    } else {
        s.size_mode_bytes as f64
    };
    let mb_s = need * bytes / 1e6;
    let judged = depth(s);
    let at = judged.map(|(d, why)| curve::at_depth(steps, d, need, why));
    let depth_headroom = at.as_ref().and_then(|a| {
        least([("iops", ratio(a.iops, need)), ("mb_s", ratio(a.mb_s, mb_s))]).map(|(_, h)| h)
    });
    let (iops_headroom, mb_s_headroom) = (ratio(knee.iops, need), ratio(knee.mb_s, mb_s));
    let first = least([
        ("iops", iops_headroom),
        ("mb_s", mb_s_headroom),
        ("latency", depth_headroom),
    ]);
    let mut h = StreamHeadroom {
        role: s.role,
        iops: need,
        mb_s,
        size_bytes: s.size_mode_bytes,
        depth: at.as_ref().map(|a| a.depth),
        depth_source: judged.map_or("", |j| j.1).into(),
        curve_iops: at.as_ref().map(|a| a.iops),
        curve_mb_s: at.as_ref().map(|a| a.mb_s),
        curve_lat_us_p50: at.as_ref().and_then(|a| a.lat_us_p50),
        curve_lat_us_p99: at.as_ref().and_then(|a| a.lat_us_p99),
        outside_curve: at.as_ref().is_some_and(|a| a.outside_curve),
        iops_headroom,
        mb_s_headroom,
        depth_headroom,
        limit: first.map_or("", |f| f.0).into(),
        headroom: first.map(|f| f.1),
        verdict: first.map_or("", |f| verdict(f.1, lower_bound)).into(),
        curve_matches: true,
        notes: vec![],
    };
    if need <= 0.0 {
        h.notes
            .push("no reads or writes: nothing of it to place on the curve".into());
        return h;
    }
    if let Some(c) = curve {
        let random = s.sequential_pct < 50.0;
        let write_pct = 100.0 - s.read_pct;
        let differs = random != c.random
            || (write_pct - c.write_pct).abs() >= 20.0
            || (durable(s) && !c.durable);
        let size = iocap_model::format_bytes;
        if differs {
            h.curve_matches = false;
            let fsync = if s.role == StreamRole::Log && durable(s) {
                "; `iocap fsync` measures a log's writes and flushes at queue depth 1"
            } else {
                ""
            };
            h.notes.push(format!(
                "the curve is {}, the {} stream {}: the curve cannot speak for it{fsync}",
                c.words(),
                s.role,
                shape_words(random, write_pct, durable(s))
            ));
        } else if s.size_mode_bytes > 0 && c.bs_bytes > 0 && s.size_mode_bytes != c.bs_bytes {
            h.notes.push(format!(
                "the {} stream's commonest requests are {}, the curve's {}: IOPS held against \
                 IOPS and MB/s against MB/s, the lesser standing",
                s.role,
                size(s.size_mode_bytes),
                size(c.bs_bytes)
            ));
        }
    }
    h
}
