//! `iocap capture` and `iocap characterise`: a device's requests recorded (eBPF), and any trace
//! described in the seed method's terms (docs/capture.md), placed on a saved saturate run's
//! curve with `--against` (`iocap_assess::headroom`). The recording loop and the reading are
//! `iocap-session`'s; this turns flags into a request and prints.

use iocap_console::flags::Keeping;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use iocap_console::claim::{Claim, Existing};
use iocap_console::interrupt::INTERRUPTED;
use iocap_console::progress::LiveLine;
use iocap_flags::{duration_arg, listed, OutputArg, SaveArgs};
use iocap_model::workload::Workload;
use iocap_model::Payload;
use iocap_model::RunCommand;
use iocap_report::workload::captured_line;
use iocap_session::CaptureRequest;
use iocap_trace::filemap::scan::DirSpec;

use super::execute::new_run;
use super::Exit;

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
    /// Only requests issued by processes of this name (e.g. postgres; the kernel keeps 15
    /// bytes of a name)
    #[arg(long, value_name = "NAME", value_parser = comm_arg)]
    pub comm: Option<String>,
    /// Only requests issued by this process id
    #[arg(long)]
    pub pid: Option<u32>,
    /// Attribute requests to the files under DIR (their extents go into the trace): the log,
    /// data, temp, doublewrite streams; ROLE=DIR gives every file under DIR that role
    #[arg(long, value_name = "DIR", num_args = 1.., value_parser = dir_spec)]
    pub files: Vec<DirSpec>,
    /// Also write a profile TOML that reproduces the mix (iocap suite run profile:FILE measures it)
    #[arg(long, value_name = "FILE")]
    pub as_profile: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub save: SaveArgs,
}

/// The bytes of a process's name the kernel keeps (`TASK_COMM_LEN`, 16 with its NUL).
const COMM_BYTES: usize = 15;

/// `--comm NAME`: a name longer than the kernel keeps would match no process, so it is refused
/// (a usage error, before any eBPF), naming the name the kernel would show.
fn comm_arg(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("a process name is needed".into());
    }
    if s.len() > COMM_BYTES {
        let mut cut = COMM_BYTES;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        // clap prints it after the value: short lines of their own
        return Err(format!(
            "{} bytes\n  is longer than the kernel keeps of a process's name ({COMM_BYTES} \
             bytes), so it\n  would match nothing; give the name as the kernel shows it (`ps \
             -o comm`):\n  {}",
            s.len(),
            iocap_report::fmt::printable(&s[..cut])
        ));
    }
    Ok(s.to_string())
}

pub fn capture(a: CaptureArgs) -> Result<Exit> {
    let claim = Claim::new(Existing::replace_if(a.force))
        .writes("-o", a.trace.as_deref())
        .writes("--as-profile", a.as_profile.as_deref());
    let claim = a.save.claim(claim)?;
    let req = CaptureRequest {
        target: a.target.clone(),
        duration_s: a.duration,
        out: a.trace.clone(),
        comm: a.comm.clone(),
        pid: a.pid,
        files: a.files.clone(),
    };
    let mut run = new_run(RunCommand::Capture);
    let mut line = LiveLine::new(&format!("iocap capture {}", a.target));
    let mut open = |p: &std::path::Path| Ok(claim.create(p)?);
    let outcome =
        iocap_session::capture(&req, &run.started_at, &INTERRUPTED, &mut open, &mut |t| {
            let lost = iocap_report::fmt::count(t.lost as f64);
            let n = iocap_report::fmt::count(t.records as f64);
            line.show(&format!("{:.0} s, {n} requests, {lost} lost", t.elapsed_s))
        });
    drop(line);
    let outcome = outcome?;
    // described from the file once it is complete: the capture's own CPU goes to recording,
    // and what is printed is what `iocap characterise FILE` says
    let w = iocap_session::characterise(std::slice::from_ref(&outcome.path), &[])?;
    let (s, path) = (&outcome.summary, outcome.path.display().to_string());
    let st = &outcome.stats;
    let (before, zero) = (st.before_start, st.zero_byte_completions);
    eprintln!(
        "iocap: {}",
        captured_line(&path, s.records, s.file_bytes, before, zero)
    );
    let code = if outcome.stopped && a.duration.is_some() {
        Exit::Interrupted
    } else {
        Exit::Ok
    };
    let profile = a.as_profile.as_ref();
    finish(&mut run, w, &a.output, &a.save, profile, &claim).map(|_| code)
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
    /// Attribute requests to the files under DIR as they lie now (for a trace recorded without
    /// --files, or to add directories); ROLE=DIR gives every file under DIR that role
    #[arg(long, value_name = "DIR", num_args = 1.., value_parser = dir_spec)]
    pub files: Vec<DirSpec>,
    /// Allow replacing an existing profile file (a regular file only)
    #[arg(long)]
    pub force: bool,
    /// Place the busiest seconds on a saved saturate run's curve (its id, a unique start of
    /// it, or `last`): the headroom, and what runs out first
    #[arg(long, value_name = "RUN")]
    pub against: Option<String>,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub save: SaveArgs,
}

pub fn characterise(a: CharacteriseArgs) -> Result<Exit> {
    // the profile is never written over the trace, by any name (issue 35)
    let claim = Claim::new(Existing::replace_if(a.force))
        .reads("the trace", &iocap_trace::trace_files(&a.inputs)?)
        .writes("--as-profile", a.as_profile.as_deref());
    let claim = a.save.claim(claim)?;
    // the curve is found before the trace is read: a long trace costs nothing on a typo
    let curve = match &a.against {
        Some(r) => Some(saturate_run(r, a.save.store.db.as_deref())?),
        None => None,
    };
    let mut w = iocap_session::characterise(&a.inputs, &a.files)?;
    if let Some(run) = &curve {
        w.headroom = Some(iocap_assess::headroom::place(&w, run)?);
    }
    // a damaged trace is described up to the damage, then named as the error it is
    let damaged = w.read_error.clone();
    let mut run = new_run(RunCommand::Characterise);
    let profile = a.as_profile.as_ref();
    finish(&mut run, w, &a.output, &a.save, profile, &claim)?;
    match damaged {
        Some(e) => {
            eprintln!("{}", iocap_report::fmt::error_line(&e));
            Ok(Exit::Error)
        }
        None => Ok(Exit::Ok),
    }
}

/// The saved run `what` names, which must hold a capacity curve.
fn saturate_run(what: &str, db: Option<&str>) -> Result<iocap_model::RunResult> {
    let run = iocap_console::keep::open_existing_store(db)?.load(what)?;
    iocap_assess::headroom::curve_of(&run)?;
    Ok(run)
}

/// `DIR` or `ROLE=DIR` for `--files`.
fn dir_spec(s: &str) -> Result<DirSpec, String> {
    DirSpec::parse(s)
}

/// Prints the workload, writes the profile if asked, saves the run.
fn finish(
    run: &mut iocap_model::RunResult,
    w: Workload,
    output: &OutputArg,
    save: &SaveArgs,
    profile: Option<&PathBuf>,
    claim: &Claim,
) -> Result<()> {
    save.stamp(run);
    let mut w = w;
    if let Some(scan) = iocap_console::keep::newest_cachescan(save.store.db.as_deref()) {
        let ws = w.working_set.distinct_bytes;
        w.working_set.fits = Some(iocap_assess::workload::place_in_caches(ws, &scan));
    }
    if let Some(p) = profile {
        let name = p
            .file_stem()
            .map_or("captured".into(), |s| s.to_string_lossy().into_owned());
        let toml = iocap_plan::profile_from_workload(&w, &name);
        claim.write(p, &toml)?;
        eprintln!(
            "iocap: profile written to {}: iocap suite run profile:{} measures it",
            iocap_report::fmt::printable(&p.display().to_string()),
            iocap_report::fmt::printable(&p.display().to_string())
        );
    }
    run.set(Payload::Workload(w));
    // the exit code is the caller's: a capture ended by Ctrl-C without --duration succeeded
    let _ = super::execute::finish(run, output.output, || iocap_report::run_text(run));
    save.keep(std::slice::from_ref(run))
}
