//! `iocap monitor [DEV...]`: the kernel's own disk counters, live, like `iostat -x 1`; the
//! figures practitioners check every benchmark against. `--output json` prints one JSON array
//! of samples per interval, for scripts.

use anyhow::{bail, Result};
use clap::Args;
use iocap_monitor::{delta, snapshot, PROC_DISKSTATS};
use iocap_report::monitor::render_iostat_like;

use super::args::duration_arg;
use super::flags::{listed, OutputArg};
use super::signals::{interrupted, pause};
use super::{print_stdout, Exit};

#[derive(Args, Debug)]
#[command(mut_arg("output", listed))]
pub struct MonitorArgs {
    /// Block devices by name (vda, nvme0n1, dm-0) [default: every device with I/O]
    #[arg(value_name = "DEV")]
    pub devices: Vec<String>,
    /// Time between reports
    #[arg(long, default_value = "1s", value_parser = duration_arg)]
    pub interval: f64,
    /// Stop after this many reports [default: until Ctrl-C]
    #[arg(long)]
    pub count: Option<u64>,
    #[command(flatten)]
    pub output: OutputArg,
}

pub fn monitor(a: MonitorArgs) -> Result<Exit> {
    if !(0.01..=3600.0).contains(&a.interval) {
        bail!("--interval must be from 10 ms to 1 h");
    }
    let mut prev = snapshot(PROC_DISKSTATS)?;
    for d in &a.devices {
        let d = d.trim_start_matches("/dev/");
        if !prev.iter().any(|(n, _)| n == d) {
            bail!("no block device '{d}' in {PROC_DISKSTATS}");
        }
    }
    let wanted: Vec<String> = a
        .devices
        .iter()
        .map(|d| d.trim_start_matches("/dev/").to_string())
        .collect();
    let mut last = std::time::Instant::now();
    let mut reports = 0u64;
    while a.count.is_none_or(|c| reports < c) {
        if pause(a.interval) {
            break;
        }
        let cur = snapshot(PROC_DISKSTATS)?;
        let secs = last.elapsed().as_secs_f64();
        last = std::time::Instant::now();
        let mut samples = Vec::new();
        for (name, c) in &cur {
            let shown = if wanted.is_empty() {
                !name.starts_with("loop") && !name.starts_with("ram")
            } else {
                wanted.contains(name)
            };
            if let (true, Some((_, p))) = (shown, prev.iter().find(|(n, _)| n == name)) {
                let mut s = delta(p, c, secs);
                s.device = name.clone();
                if !wanted.is_empty() || s.r_s + s.w_s > 0.0 {
                    samples.push(s);
                }
            }
        }
        prev = cur;
        reports += 1;
        if a.output.is_text() {
            print_stdout(&(render_iostat_like(&samples) + "\n"));
        } else {
            print_stdout(&(serde_json::to_string(&samples)? + "\n"));
        }
        if interrupted() {
            break;
        }
    }
    Ok(Exit::Ok)
}
