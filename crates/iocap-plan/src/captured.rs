//! A profile written from a recorded workload (`iocap characterise --as-profile FILE`), so that
//! `iocap suite run profile:FILE` measures the user's own mix on other storage. (`preflight
//! --profile` measures seven fixed capacity lines a database profile defines, which a trace's
//! workloads are not: it refuses such a profile and names `suite run`.)
//!
//! What it keeps: the read share, the sizes (a `bs_split` of the commonest sizes), random or
//! sequential (the majority), the queue depth most requests were issued at, the mean rate, the
//! bursts (`burst = { on, off }`), and durable writes (a log-like workload at queue depth 1 with
//! `write_through`, beside the mix, when the trace flushed or wrote FUA). What it cannot:
//! ordering, think time, locality beyond random/sequential (hot regions, strides), the exact
//! size mix beyond the sizes kept, and several streams' own patterns at once (one mix stands for
//! them). The file says so at its top.

use std::fmt::Write as _;

use iocap_model::format_bytes;
use iocap_model::request::Op;
use iocap_model::workload::{SizeCount, Workload};

use crate::captured_words::{one_line, rw_name, split_text, CAPTURED_FAMILY};

/// Sizes kept in the `bs_split`.
const SIZES_KEPT: usize = 6;

/// The profile TOML (the format of crates/iocap-plan/profiles, docs/profiles-and-suites.md):
/// one workload per stream when the workload has streams (every description since streams
/// exist), else one mix for all of it (a workload saved before).
pub fn profile_from_workload(w: &Workload, name: &str) -> String {
    match crate::streams::profile_from_streams(w, &clean_name(name)) {
        Some(toml) => toml,
        None => profile_from_mix(w, name),
    }
}

/// One mix for the whole workload (a workload described before streams existed).
fn profile_from_mix(w: &Workload, name: &str) -> String {
    let name = clean_name(name);
    let count = |op: Op| w.mix.iter().find(|m| m.op == op).map_or(0, |m| m.count);
    let (reads, writes) = (count(Op::Read), count(Op::Write));
    let write_pct = (writes * 100 + (reads + writes) / 2)
        .checked_div(reads + writes)
        .unwrap_or(0);
    let sequential = w.randomness.sequential_pct + w.randomness.near_pct > 50.0;
    let rw = rw_name(write_pct, sequential);
    let qd = w
        .queue_depth
        .as_ref()
        .map_or(16, |q| q.typical.clamp(1, 4096));
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Written by `iocap characterise --as-profile` from {} ({} requests, {:.0} s).\n\
         # It keeps the read share, the commonest sizes, random or sequential, the queue depth,\n\
         # the mean rate, the bursts and durable writes. It cannot carry the order of the\n\
         # requests, think time, locality beyond random/sequential (hot regions, strides), the\n\
         # sizes beyond the {SIZES_KEPT} kept, or several processes' own patterns at once.",
        one_line(&w.files.join(", ")),
        w.records,
        w.duration_s
    );
    let page = w
        .sizes
        .iter()
        .filter(|s| s.size_bytes > 0)
        .max_by_key(|s| s.count)
        .map_or(8192, |s| s.size_bytes.div_ceil(512) * 512);
    let _ = writeln!(
        o,
        "name = \"{name}\"\nfamily = \"{CAPTURED_FAMILY}\"\npage = \"{}\"",
        format_bytes(page)
    );
    let _ = writeln!(
        o,
        "description = \"Recorded workload: {write_pct} % writes, {}, qd {qd}, {:.0} IOPS mean\"",
        if sequential { "sequential" } else { "random" },
        w.rate.iops_mean
    );
    let _ = writeln!(o, "\n[defaults]\nduration = \"60s\"\nwarmup = \"5s\"\n");
    let _ = writeln!(o, "[[workload]]\nkey = \"captured-mix\"");
    let _ = writeln!(o, "title = \"The recorded mix: {write_pct} % writes at qd {qd}\"\nrole = \"data\"\nrw = \"{rw}\"");
    if !matches!(write_pct, 0 | 100) {
        let _ = writeln!(o, "write_pct = {write_pct}");
    }
    let _ = writeln!(o, "{}", sizes(w));
    let _ = writeln!(o, "qd = {qd}");
    if w.rate.iops_mean >= 1.0 {
        let _ = writeln!(o, "rate_iops = {:.0}", w.rate.iops_mean.max(1.0));
    }
    let b = &w.rate.bursts;
    if b.on_periods >= 2 && b.on_s_median >= 1.0 && b.off_s_median >= 1.0 {
        let _ = writeln!(
            o,
            "burst = {{ on = \"{:.0}s\", off = \"{:.0}s\" }}",
            b.on_s_median, b.off_s_median
        );
    }
    durable(&mut o, w);
    o
}

/// `bs = "8K"` or `bs_split = "8K:70,128K:30"` from the commonest read and write sizes.
fn sizes(w: &Workload) -> String {
    bs_text(&w.sizes, SIZES_KEPT)
}

/// `bs = "8K"` or `bs_split = "8K:70,128K:30"` from the `kept` commonest read and write sizes
/// of a size table (rounded up to 512 bytes, reads' and writes' counts added).
pub(crate) fn bs_text(sizes: &[SizeCount], kept: usize) -> String {
    let mut v: Vec<(u64, u64)> = vec![];
    for s in sizes
        .iter()
        .filter(|s| s.op.moves_data() && s.size_bytes > 0)
    {
        let size = s.size_bytes.div_ceil(512) * 512;
        match v.iter_mut().find(|x| x.0 == size) {
            Some(x) => x.1 += s.count,
            None => v.push((size, s.count)),
        }
    }
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(kept);
    let total: u64 = v.iter().map(|x| x.1).sum();
    let shares: Vec<(u64, u64)> = v
        .iter()
        .map(|&(s, c)| (s, (c * 100 + total / 2) / total.max(1)))
        .filter(|&(_, p)| p > 0)
        .collect();
    split_text(&shares)
}

/// A log-like workload beside the mix when the trace made writes durable.
fn durable(o: &mut String, w: &Workload) {
    let d = &w.durability;
    let per_s = d.flush_per_s + d.fua_per_s;
    if per_s < 0.5 || d.durable_writes == 0 {
        return;
    }
    let size = w
        .sizes
        .iter()
        .filter(|s| s.op == Op::Write && s.size_bytes > 0)
        .max_by_key(|s| s.count)
        .map_or(8192, |s| s.size_bytes.div_ceil(512) * 512);
    let _ = writeln!(
        o,
        "\n[[workload]]\nkey = \"captured-durable\"\n\
         title = \"Durable writes: {} at qd 1, {per_s:.0} per second (flushes and FUA)\"\n\
         role = \"log\"\nrw = \"write\"\nbs = \"{}\"\nqd = 1\nwrite_through = true\n\
         rate_iops = {:.0}\nconcurrent_with = \"captured-mix\"",
        format_bytes(size),
        format_bytes(size),
        per_s.max(1.0)
    );
}

pub(crate) fn clean_name(s: &str) -> String {
    let n: String = s
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
        .collect();
    if n.is_empty() {
        "captured".into()
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::workload::*;

    fn workload() -> Workload {
        Workload {
            files: vec!["prod.iotrace".into()],
            records: 100_000,
            duration_s: 90.0,
            mix: vec![
                OpShare {
                    op: iocap_model::request::Op::Read,
                    count: 70_000,
                    ..Default::default()
                },
                OpShare {
                    op: iocap_model::request::Op::Write,
                    count: 30_000,
                    ..Default::default()
                },
                OpShare {
                    op: iocap_model::request::Op::Flush,
                    count: 900,
                    ..Default::default()
                },
            ],
            sizes: vec![
                SizeCount {
                    op: iocap_model::request::Op::Read,
                    size_bytes: 8192,
                    count: 60_000,
                    pct: 86.0,
                },
                SizeCount {
                    op: iocap_model::request::Op::Read,
                    size_bytes: 131072,
                    count: 10_000,
                    pct: 14.0,
                },
                SizeCount {
                    op: iocap_model::request::Op::Write,
                    size_bytes: 8192,
                    count: 30_000,
                    pct: 100.0,
                },
            ],
            randomness: Randomness {
                sequential_pct: 10.0,
                near_pct: 5.0,
                far_pct: 85.0,
                ..Default::default()
            },
            queue_depth: Some(QueueDepth {
                typical: 6,
                ..Default::default()
            }),
            rate: Rate {
                iops_mean: 1111.0,
                bursts: Bursts {
                    on_periods: 3,
                    on_s_median: 10.0,
                    off_s_median: 20.0,
                    ..Default::default()
                },
                ..Default::default()
            },
            durability: Durability {
                flush_per_s: 10.0,
                durable_writes: 900,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn the_profile_reproduces_the_mix_and_loads_as_a_profile() {
        let text = profile_from_workload(&workload(), "prod-db");
        assert!(text.contains("cannot carry the order"), "{text}");
        let p = crate::parse_profile(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(p.name, "prod-db");
        let mix = p.workload("captured-mix").unwrap();
        assert_eq!(mix.spec.rw, iocap_model::RwMode::RandRw);
        assert_eq!(mix.spec.write_pct, 30);
        assert_eq!(mix.spec.qd, 6);
        assert_eq!(mix.spec.rate_iops, Some(1111.0));
        assert!(mix.spec.burst.is_some(), "{text}");
        assert!(text.contains("bs_split = \"8K:90,128K:10\""), "{text}");
        let log = p.workload("captured-durable").unwrap();
        assert!(log.spec.write_through);
        assert_eq!(
            (log.spec.qd, log.concurrent_with.as_deref()),
            (1, Some("captured-mix"))
        );
        // the expanded suite is what preflight --profile and suite run execute
        assert_eq!(p.suite().tests.len(), 1, "the log runs beside the mix");
    }

    #[test]
    fn a_pure_sequential_reader_without_flushes_is_one_read_workload() {
        let mut w = workload();
        w.mix.retain(|m| m.op == iocap_model::request::Op::Read);
        w.sizes
            .retain(|s| s.op == iocap_model::request::Op::Read && s.size_bytes == 131072);
        w.randomness.sequential_pct = 95.0;
        w.durability = Durability::default();
        w.rate.bursts = Bursts::default();
        let p = crate::parse_profile(&profile_from_workload(&w, "scan")).unwrap();
        assert_eq!(p.workloads.len(), 1);
        assert_eq!(p.workloads[0].spec.rw, iocap_model::RwMode::Read);
        assert_eq!(p.workloads[0].spec.bs_bytes, 131072);
    }
}
