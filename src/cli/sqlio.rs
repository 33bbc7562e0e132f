//! `iocap sqlio` and `iocap sqlio-batch`: SQLIO's flags, parameter files and batch files on
//! iocap's engine, with SQLIO's summary followed by iocap's percentiles.

use anyhow::{bail, Context, Result};
use clap::Args;
use iocap_console::{claim, flags::Keeping};
use iocap_model::{parse_duration, RunCommand, RunResult};
use iocap_sqlio::{
    parse_args, parse_batch, render_header, render_result, split_own_flags, SqlioCall,
};

use super::execute::{finish, session};
use super::{print_stdout, Exit};
use iocap_console::interrupt::interrupted;
use iocap_flags::{OutputArg, OutputFormat, SaveArgs, StoreArg};

#[derive(Args, Debug)]
#[command(mut_arg("output", |a| a.help("Output format for each test")))]
pub struct BatchArgs {
    /// The batch file (.bat/.cmd) holding `sqlio` or `call sqlio` lines
    pub file: String,
    /// Run each test for this long instead of its -s value (e.g. 2s), for a quick trial
    #[arg(long, value_name = "DURATION")]
    pub seconds: Option<String>,
    /// Check every line and show the tests without running them
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArg,
    /// Each call is saved as its own run as soon as it ends; --html writes one report of all
    #[command(flatten)]
    pub save: SaveArgs,
}

/// iocap's own flags among SQLIO's: the output format and the store's flags.
fn own_flags(args: &[String]) -> Result<(Vec<String>, OutputFormat, bool, SaveArgs)> {
    let (rest, own) = split_own_flags(args)?;
    let output = match own.output.as_deref() {
        Some("json") => OutputFormat::Json,
        Some("csv") => OutputFormat::Csv,
        _ => OutputFormat::Text,
    };
    Ok((rest, output, own.help, save_args(own)))
}

/// The store's flags among SQLIO's or DiskSpd's, as every other command takes them.
pub fn save_args(own: iocap_sqlio::OwnFlags) -> SaveArgs {
    SaveArgs {
        store: StoreArg { db: own.db },
        no_save: own.no_save,
        label: own.label,
        tags: own.tags,
        note: own.note,
        html: own.html.map(Into::into),
    }
}

fn parse_call(args: &[String]) -> Result<SqlioCall> {
    let call = parse_args(args, &|p| iocap_engine::input::read_text(p.as_ref()))?;
    call.spec.validate()?;
    Ok(call)
}

/// Runs one call, prints it, saves it; returns the exit code and the run.
fn run_call(call: &SqlioCall, output: OutputFormat, save: &SaveArgs) -> Result<(Exit, RunResult)> {
    if output == OutputFormat::Text {
        print_stdout(&render_header(call));
    }
    let run = session(RunCommand::Sqlio, None, save, |s| {
        let r = s.exec.run(std::slice::from_ref(&call.spec))?;
        s.run.tests.extend(r);
        Ok(())
    })?;
    let code = finish(&run, output, || render_result(call, &run.tests[0]));
    save.save(&run)?;
    Ok((code, run))
}

pub fn run(args: &[String]) -> Result<Exit> {
    let (rest, output, help, save) = own_flags(args)?;
    if help {
        print_stdout(iocap_sqlio::HELP);
        return Ok(Exit::Ok);
    }
    let call = parse_call(&rest)?;
    save.claim(claim::tests([&call.spec]))?;
    let (code, run) = run_call(&call, output, &save)?;
    save.write_html(std::slice::from_ref(&run))?;
    Ok(code)
}

pub fn run_batch(args: BatchArgs) -> Result<Exit> {
    let text = iocap_engine::input::read_text(args.file.as_ref())
        .with_context(|| format!("cannot read batch file {}", args.file))?;
    let lines = parse_batch(&text).with_context(|| format!("in batch file {}", args.file))?;
    if lines.is_empty() {
        bail!("batch file {} holds no sqlio calls", args.file);
    }
    let seconds = args.seconds.as_deref().map(parse_duration).transpose()?;
    // check every line before running any, so a typo on line 14 does not surface an hour in
    let mut calls = Vec::new();
    for l in &lines {
        let mut call =
            parse_call(&l.args).with_context(|| format!("{}: line {}", args.file, l.line))?;
        if let Some(s) = seconds {
            call.spec.duration_s = s;
        }
        calls.push((l, call));
    }
    if !args.dry_run {
        args.save
            .claim(claim::tests(calls.iter().map(|(_, c)| &c.spec)))?;
    }
    let mut worst = Exit::Ok;
    let mut runs = Vec::new();
    for (l, call) in &calls {
        if args.output.is_text() || args.dry_run {
            eprintln!(
                "== {} line {}: sqlio {}",
                iocap_report::fmt::printable(&args.file),
                l.line,
                iocap_report::fmt::printable(&l.args.join(" "))
            );
        }
        if args.dry_run {
            print_stdout(&render_header(call));
            continue;
        }
        let (code, run) = run_call(call, args.output.output, &args.save)?;
        runs.push(run);
        if code != Exit::Ok {
            worst = code;
        }
        if interrupted() || code == Exit::Error {
            break;
        }
    }
    args.save.write_html(&runs)?;
    Ok(worst)
}
