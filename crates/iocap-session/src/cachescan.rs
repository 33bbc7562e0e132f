//! The cache scan: find the caches below the OS by measurement (a working-set sweep of O_DIRECT
//! random reads, and a read-after-write check), so that a test file can be made larger than
//! every cache in the path. `preflight` runs a short scan ([`preflight_scan`]) to size its
//! files. The rules that read the sweep live in `iocap_assess::cachescan`.

use std::time::Instant;

use anyhow::Result;
use iocap_assess::cachescan::{holds_recent_writes, levels_at, scan_notes, working_sets};
use iocap_model::Payload;
use iocap_model::{
    format_bytes, CacheScan, CacheStep, EngineChoice, JobSpec, ReadAfterWrite, Role, RwMode,
    SubmitMode, TargetSpec, TestResult,
};

use crate::session::Session;

mod recheck;

/// What a sweep is asked to do; `preflight` fills one in for its short scan.
#[derive(Debug, Clone)]
pub struct ScanConfig {
    pub target: String,
    /// Size at which a missing test file is created.
    pub size_bytes: u64,
    pub max_bytes: Option<u64>,
    pub bs_bytes: u64,
    pub step_s: f64,
    pub budget_s: Option<f64>,
    pub write_check: bool,
    pub engine: EngineChoice,
    pub allow_overwrite: bool,
}

/// Pages the read-after-write check writes, and its longest time.
const RAW_SAMPLES: u32 = 400;
const RAW_MAX_S: f64 = 5.0;
/// The share of the qd 1 reads the level rule averages: the slowest 2 % are stalls.
const TRIM_KEEP: f64 = 0.98;

pub fn read_spec(c: &ScanConfig, name: String, ws: Option<u64>, qd: u32) -> JobSpec {
    JobSpec {
        name,
        targets: vec![TargetSpec {
            size_bytes: ws,
            ..TargetSpec::new(c.target.clone())
        }],
        rw: RwMode::RandRead,
        write_pct: 0,
        bs_bytes: c.bs_bytes,
        align_bytes: c.bs_bytes,
        qd,
        size_bytes: c.size_bytes,
        duration_s: c.step_s,
        warmup_s: if qd > 1 { 0.5 } else { 0.0 },
        // each test its own offsets: with one seed, the qd 1 test would re-read what the qd 32
        // test just read, and find it in any cache however small
        seed: JobSpec::default().seed ^ ws.unwrap_or(0).rotate_left(17) ^ u64::from(qd),
        engine: c.engine,
        submit: SubmitMode::Batch,
        allow_overwrite: c.allow_overwrite,
        ..JobSpec::default()
    }
}

/// Runs one read test of the sweep and adds it to `run`; its index.
fn measure(s: &mut Session, spec: &JobSpec) -> Result<u32> {
    s.exec.label(&format!("cachescan: {}", spec.name));
    let out = s.exec.run(std::slice::from_ref(spec))?;
    s.run.tests.extend(out);
    Ok((s.run.tests.len() - 1) as u32)
}

fn stopped(s: &Session, t: &TestResult) -> bool {
    t.error.is_some() || t.interrupted || s.exec.interrupted()
}

/// One working set: warm it, then qd 32 and qd 1 random reads over it. `None` when a test
/// failed or was interrupted (its result is in `run`). `again` names a recheck's tests.
fn step(s: &mut Session, c: &ScanConfig, ws: u64, again: bool) -> Result<Option<CacheStep>> {
    let what = format!(
        "{}{} random read over {}",
        if again { "again: " } else { "" },
        format_bytes(c.bs_bytes),
        format_bytes(ws)
    );
    s.exec.say(&format!(
        "cachescan: warming the first {}",
        format_bytes(ws)
    ));
    let Some(warm_s) = s
        .exec
        .probe()
        .warm(&read_spec(c, "cachescan".into(), None, 1), ws)?
    else {
        return Ok(None);
    };
    let q32 = measure(s, &read_spec(c, format!("{what}, qd 32"), Some(ws), 32))?;
    if stopped(s, &s.run.tests[q32 as usize]) {
        return Ok(None);
    }
    let q1 = measure(s, &read_spec(c, format!("{what}, qd 1"), Some(ws), 1))?;
    let one = &s.run.tests[q1 as usize];
    if stopped(s, one) {
        return Ok(None);
    }
    let lat = one.total.lat_us.clone().unwrap_or_default();
    let trimmed = one
        .total
        .lat_hist_ns
        .as_deref()
        .and_then(|h| iocap_model::hist::decode_hist(h).ok())
        .map_or(lat.mean, |h| {
            iocap_model::hist::trimmed_mean_us(&h, TRIM_KEEP)
        });
    Ok(Some(CacheStep {
        working_set_bytes: ws,
        warm_s,
        qd32_test_idx: q32,
        qd1_test_idx: q1,
        lat_us_trim_mean: trimmed,
        lat_us_p50: lat.p50,
        lat_us_p99: lat.p99,
        iops_qd32: s.run.tests[q32 as usize].total.iops,
    }))
}

/// The median of nanosecond samples, in µs; NaN for none.
fn median_us(ns: &[u64]) -> f64 {
    let mut v = ns.to_vec();
    v.sort_unstable();
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2] as f64 / 1e3,
        n => (v[n / 2 - 1] + v[n / 2]) as f64 / 2e3,
    }
}

/// The read-after-write check, or a note on why it did not run.
fn write_check(
    s: &mut Session,
    c: &ScanConfig,
) -> Result<std::result::Result<ReadAfterWrite, String>> {
    let spec = JobSpec {
        rw: RwMode::RandWrite,
        write_pct: 100,
        ..read_spec(c, "read-after-write".into(), None, 1)
    };
    let s = match s
        .exec
        .probe()
        .read_after_write(&spec, RAW_SAMPLES, RAW_MAX_S)?
    {
        Ok(s) => s,
        Err(why) => return Ok(Err(why)),
    };
    let p50 = |v: &[u64]| median_us(v);
    let (fresh, old) = (p50(&s.fresh_read_ns), p50(&s.old_read_ns));
    Ok(Ok(ReadAfterWrite {
        samples: s.fresh_read_ns.len() as u32,
        block_bytes: c.bs_bytes,
        fresh_lat_us_p50: fresh,
        old_lat_us_p50: old,
        write_lat_us_p50: p50(&s.write_ns),
        holds_recent_writes: holds_recent_writes(fresh, old),
    }))
}

/// The sweep: the read-after-write check first (before the sweep's reads fill a cache with
/// old data), then each working set in turn until the largest, the budget, an error or Ctrl-C.
/// Every test is added to `run`.
pub fn scan(s: &mut Session, c: &ScanConfig) -> Result<CacheScan> {
    let started = Instant::now();
    let range = s
        .exec
        .probe()
        .range(&read_spec(c, "cachescan".into(), None, 1))?;
    let mut notes = Vec::new();
    let raw = if c.write_check {
        write_check(s, c)?.map_err(|n| notes.push(n)).ok()
    } else {
        None
    };
    let max = c.max_bytes.unwrap_or(range).min(range);
    let sets = working_sets(max);
    let mut steps: Vec<CacheStep> = Vec::new();
    let mut stop_reason = format!(
        "reached the largest working set, {}",
        iocap_model::human_bytes(sets.last().copied().unwrap_or(max))
    );
    for (i, &ws) in sets.iter().enumerate() {
        if let (Some(b), Some(last)) = (c.budget_s, steps.last()) {
            // the next step warms twice as much and measures as long
            let next = 2.0 * last.warm_s + 2.0 * (c.step_s + 0.5);
            if started.elapsed().as_secs_f64() + next > b {
                stop_reason =
                    format!("the time budget ({b:.0} s) would have run out in the next step");
                break;
            }
        }
        s.exec.say(&format!(
            "cachescan: step {} of {} on {}",
            i + 1,
            sets.len(),
            c.target
        ));
        match step(s, c, ws, false)? {
            Some(s) => steps.push(s),
            None => {
                stop_reason = match s.exec.stopped_by() {
                    Some(by) if by != "stop" => format!("interrupted by {by}"),
                    Some(_) => "interrupted".into(),
                    None => "stopped by an error".into(),
                };
                break;
            }
        }
    }
    let (edges, rechecks) = recheck::confirmed_edges(s, c, &steps, &mut notes)?;
    let mut scan = CacheScan {
        target: c.target.clone(),
        block_bytes: c.bs_bytes,
        levels: levels_at(&steps, &edges),
        tried_up_to_bytes: steps.last().map_or(0, |s| s.working_set_bytes),
        steps,
        stop_reason,
        read_after_write: raw,
        rechecks,
        notes,
    };
    let mut more = scan_notes(&scan);
    scan.notes.append(&mut more);
    Ok(scan)
}

/// What `preflight` asks of its short scan.
#[derive(Debug, Clone)]
pub struct PreflightScan {
    /// The largest working set, and the size of the data file the scan creates.
    pub max_bytes: u64,
    pub step_s: f64,
    pub budget_s: f64,
    /// Test files the preflight will place (data, log, backup, temp), for the space per file.
    pub files: usize,
    /// Time allowed for writing the test files, for the largest size worth making.
    pub fill_budget_s: f64,
    pub allow_overwrite: bool,
}

/// Scans the data role's target (creating its file at `max_bytes`, bounded by a third of the
/// free space), tags the scan's tests with the role `cachescan`, keeps the scan in
/// `run.cachescan` and returns the test files' size: 4 times the largest cache found, at least
/// the scanned size, at most what the free space and the fill time allow.
pub fn preflight_scan(
    s: &mut Session,
    target: &str,
    p: &PreflightScan,
) -> Result<iocap_assess::cachescan::FileSizing> {
    use iocap_assess::cachescan::{size_files, SizeLimits};
    let path = std::path::Path::new(target);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    // a new file is bounded by the free space; an existing file or a device is read as it is
    let exists = s.exec.facts().file_len(path).is_some() || s.exec.facts().is_device(target);
    let free = s.exec.facts().free_bytes(&dir).unwrap_or(u64::MAX / 4);
    let max = if exists {
        p.max_bytes
    } else {
        p.max_bytes.min(((free / 3) >> 20) << 20).max(FIRST_SET)
    };
    let c = ScanConfig {
        target: target.to_string(),
        size_bytes: max,
        max_bytes: Some(max),
        bs_bytes: 8 << 10,
        step_s: p.step_s,
        budget_s: Some(p.budget_s),
        write_check: true,
        engine: EngineChoice::Auto,
        allow_overwrite: p.allow_overwrite,
    };
    let first = s.run.tests.len();
    let mut scan = scan(s, &c)?;
    for t in &mut s.run.tests[first..] {
        t.role = Some(Role::Cachescan);
    }
    let scanned = s.exec.facts().file_len(path).unwrap_or(max);
    let free = s.exec.facts().free_bytes(&dir).unwrap_or(u64::MAX / 4);
    let files = p.files.max(1) as u64;
    let rate = scan
        .steps
        .last()
        .filter(|s| s.warm_s > 0.0)
        .map_or(f64::INFINITY, |s| s.working_set_bytes as f64 / s.warm_s);
    let z = size_files(
        &scan,
        SizeLimits {
            default_bytes: scanned,
            space_bytes: (free.saturating_add(scanned) / 10 * 9) / files,
            time_bytes: (rate * p.fill_budget_s / files as f64).min(u64::MAX as f64 / 2.0) as u64,
        },
    );
    scan.notes.push(z.sentence.clone());
    s.run.set(Payload::Cachescan(scan));
    Ok(z)
}

/// The smallest working set: a scan file is never made smaller.
const FIRST_SET: u64 = iocap_assess::cachescan::FIRST_WORKING_SET_BYTES;

/// The cache scan as a command: the sweep into the session's run, in `run.cachescan`.
pub fn cachescan(s: &mut Session, c: &ScanConfig) -> Result<()> {
    let scan = scan(s, c)?;
    s.run.set(Payload::Cachescan(scan));
    Ok(())
}
