//! `iocap capture` and `iocap characterise`: a device's requests recorded (eBPF), and any trace
//! described in the seed method's terms (docs/capture.md). The recording loop and the reading
//! are `iocap-session`'s; this turns flags into a request and prints.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use iocap_console::interrupt::INTERRUPTED;
use iocap_flags::{duration_arg, listed, OutputArg, SaveArgs};
use iocap_model::workload::Workload;
use iocap_session::{CaptureRequest, CaptureTick};

use super::execute::new_run;
use super::{print_stdout, Exit};

#[derive(Args, Debug)]
#[command(mut_arg("output", |a| listed(a).long("format").visible_alias(None)))]
pub struct CaptureArgs {
    /// A block device (/dev/nvme0n1, /dev/mapper/vg-lv) or a path on one (its disks are
    /// recorded: a partition's, a volume's underlying disks)
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// How long to record [default: until Ctrl-C]
    #[arg(long, value_parser = duration_arg)]
    pub duration: Option<f64>,
    /// The trace file to write [default: iocap-DEV-YYYYMMDD-HHMMSS.iotrace here]
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "out",
        value_name = "FILE"
    )]
    pub trace: Option<PathBuf>,
    /// Allow replacing an existing trace or profile file (a regular file only)
    #[arg(long)]
    pub force: bool,
    /// Only requests issued by processes of this name (e.g. postgres)
    #[arg(long, value_name = "NAME")]
    pub comm: Option<String>,
    /// Only requests issued by this process id
    #[arg(long)]
    pub pid: Option<u32>,
    /// Also write a profile TOML that reproduces the mix (iocap suite run profile:FILE measures it)
    #[arg(long, value_name = "FILE")]
    pub as_profile: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub save: SaveArgs,
}

pub fn capture(a: CaptureArgs) -> Result<Exit> {
    a.save.check()?;
    refuse_existing_profile(a.as_profile.as_ref(), a.force)?;
    let req = CaptureRequest {
        target: a.target.clone(),
        duration_s: a.duration,
        out: a.trace.clone(),
        force: a.force,
        comm: a.comm.clone(),
        pid: a.pid,
    };
    let mut run = new_run("capture");
    let stamp: String = run
        .started_at
        .chars()
        .filter(char::is_ascii_digit)
        .take(14)
        .collect();
    let stamp = format!(
        "{}-{}",
        &stamp[..8.min(stamp.len())],
        &stamp[8.min(stamp.len())..]
    );
    let mut line = Live::new(&a.target);
    let outcome = iocap_session::capture(&req, &run.started_at, &stamp, &INTERRUPTED, &mut |t| {
        line.tick(t)
    });
    drop(line);
    let outcome = outcome?;
    // described from the file once it is complete: the capture's own CPU goes to recording,
    // and what is printed is what `iocap characterise FILE` says
    let w = iocap_session::characterise(std::slice::from_ref(&outcome.path))?;
    eprintln!(
        "iocap: {} requests written to {} ({} bytes, {:.1} per request){}",
        iocap_report::fmt::count(outcome.summary.records as f64),
        iocap_report::fmt::printable(&outcome.path.display().to_string()),
        iocap_report::fmt::count(outcome.summary.file_bytes as f64),
        outcome.summary.file_bytes as f64 / outcome.summary.records.max(1) as f64,
        match outcome.stats.unmatched_completions {
            0 => String::new(),
            n => format!("; {n} completions of requests issued before the start left out"),
        }
    );
    let code = if outcome.stopped && a.duration.is_some() {
        Exit::Interrupted
    } else {
        Exit::Ok
    };
    finish(
        &mut run,
        w,
        &a.output,
        &a.save,
        a.as_profile.as_ref(),
        a.force,
    )
    .map(|_| code)
}

#[derive(Args, Debug)]
#[command(mut_arg("output", |a| listed(a).long("format").visible_alias(None)))]
pub struct CharacteriseArgs {
    /// The trace: iocap's file, fio's iolog (v2 or v3), or blktrace's per-CPU files (or
    /// their base name, `sda` for sda.blktrace.*)
    #[arg(value_name = "TRACE", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Also write a profile TOML that reproduces the mix (iocap suite run profile:FILE measures it)
    #[arg(long, value_name = "FILE")]
    pub as_profile: Option<PathBuf>,
    /// Allow replacing an existing profile file (a regular file only)
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub save: SaveArgs,
}

pub fn characterise(a: CharacteriseArgs) -> Result<Exit> {
    a.save.check()?;
    refuse_existing_profile(a.as_profile.as_ref(), a.force)?;
    let w = iocap_session::characterise(&a.inputs)?;
    // a damaged trace is described up to the damage, then named as the error it is
    let damaged = w.read_error.clone();
    let mut run = new_run("characterise");
    let profile = a.as_profile.as_ref();
    finish(&mut run, w, &a.output, &a.save, profile, a.force)?;
    match damaged {
        Some(e) => {
            eprintln!("iocap: error: {}", iocap_report::fmt::printable(&e));
            Ok(Exit::Error)
        }
        None => Ok(Exit::Ok),
    }
}

fn refuse_existing_profile(p: Option<&PathBuf>, force: bool) -> Result<()> {
    match p {
        Some(p) if !force => iocap_console::files::refuse_existing(p),
        _ => Ok(()),
    }
}

/// Prints the workload, writes the profile if asked, saves the run.
fn finish(
    run: &mut iocap_model::RunResult,
    w: Workload,
    output: &OutputArg,
    save: &SaveArgs,
    profile: Option<&PathBuf>,
    force: bool,
) -> Result<()> {
    save.stamp(run);
    let mut w = w;
    if let Some(scan) = iocap_console::keep::newest_cachescan(save.store.db.as_deref()) {
        w.working_set.fits = Some(
            iocap_assess::workload::fits_in_cache(w.working_set.distinct_bytes, &scan)
                .unwrap_or_else(|| {
                    format!(
                        "none of the {} cache levels this host's last scan found",
                        scan.levels.len()
                    )
                }),
        );
    }
    if let Some(p) = profile {
        let name = p
            .file_stem()
            .map_or("captured".into(), |s| s.to_string_lossy().into_owned());
        let toml = iocap_plan::profile_from_workload(&w, &name);
        iocap_console::files::write_new_file(p, &toml, force)?;
        eprintln!(
            "iocap: profile written to {}: iocap suite run profile:{} measures it",
            iocap_report::fmt::printable(&p.display().to_string()),
            iocap_report::fmt::printable(&p.display().to_string())
        );
    }
    run.workload = Some(w);
    if output.is_text() {
        print_stdout(&iocap_report::fmt::printable_lines(
            &iocap_report::run_text(run),
        ));
    } else {
        print_stdout(&iocap_report::json(run));
    }
    save.keep(std::slice::from_ref(run))
}

/// The capture's line on the terminal, once a second.
struct Live {
    tty: bool,
    target: String,
}

impl Live {
    fn new(target: &str) -> Live {
        Live {
            tty: iocap_console::progress::stderr_is_terminal(),
            target: target.into(),
        }
    }
    fn tick(&mut self, t: &CaptureTick) {
        if self.tty {
            let line = format!(
                "iocap capture {}: {:.0} s, {} requests, {} lost",
                self.target,
                t.elapsed_s,
                iocap_report::fmt::count(t.records as f64),
                t.lost
            );
            let w = iocap_report::terminal::columns().saturating_sub(1);
            eprint!(
                "\r\x1b[2K{}",
                iocap_report::terminal::fit(&iocap_report::fmt::printable(&line), w)
            );
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if self.tty {
            eprint!("\r\x1b[2K");
        }
    }
}
