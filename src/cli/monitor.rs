//! `iocap monitor [DEV...]`: the kernel's own disk counters, live, like `iostat -x 1`; the
//! figures practitioners check every benchmark against. On Windows, the physical disks'
//! counters as perfmon's PhysicalDisk object shows them. `--output json` prints one JSON array
//! of samples per interval, for scripts.

use anyhow::{bail, Result};
use clap::Args;
use iocap_report::monitor::render_for;

use super::{print_stdout, Exit};
use iocap_console::interrupt::{interrupted, pause};
use iocap_flags::{duration_arg, listed, OutputArg};

#[derive(Args, Debug)]
#[command(mut_arg("output", listed))]
pub struct MonitorArgs {
    /// Block devices by name (vda, nvme0n1, dm-0; on Windows physical disks: 2, PhysicalDrive2)
    /// [default: every device with I/O]
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
    let mut watch = iocap_monitor::system_watch(&a.devices)?;
    let mut reports = 0u64;
    while a.count.is_none_or(|c| reports < c) {
        if pause(a.interval) {
            break;
        }
        let samples = watch.sample()?;
        reports += 1;
        if a.output.is_text() {
            print_stdout(&(render_for(watch.source_name(), &samples) + "\n"));
        } else {
            print_stdout(&(serde_json::to_string(&samples)? + "\n"));
        }
        if interrupted() {
            break;
        }
    }
    Ok(Exit::Ok)
}
