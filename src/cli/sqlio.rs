//! `iocap sqlio` and `iocap sqlio-batch`: SQLIO's flags, parameter files and batch files on
//! iocap's engine, with SQLIO's summary followed by iocap's percentiles.

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use iocap_model::{parse_duration, RunResult};
use iocap_sqlio::{ms_buckets, parse_args, parse_batch, render_header, render_summary, SqlioCall};

use super::execute::{finish, session};
use super::flags::{OutputArg, OutputFormat};
use super::save::SaveArgs;
use super::signals::interrupted;
use super::{print_stdout, Exit};

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

const SQLIO_HELP: &str = "\
iocap sqlio: run a test given in SQLIO's flags

usage: iocap sqlio [-kR|-kW] [-s<secs>] [-frandom|-fsequential] [-o<n>] [-b<KB>] [-t<n>]
                   [-LS|-LP] [-BN|-BY|-BH|-BS] [-F<paramfile> | PATH...]
                   [--allow-overwrite] [--engine auto|io_uring|psync] [--output text|json|csv]
                   [--db PATH|URL] [--no-save] [--label L] [--tag T]... [--note N] [--html FILE]

Defaults are SQLIO's: -kR -t1 -s30 -b2 -BN, one outstanding I/O, testfile.dat.
Parameter files hold lines of `path threads mask size_MB`; `#` comments a line out.
";

/// iocap's own flags, given among SQLIO's.
struct OwnFlags {
    output: OutputFormat,
    help: bool,
    save: SaveArgs,
}

/// Splits iocap's own long flags (`--output`, `--help`, the store flags) from the SQLIO flags,
/// which all start with a single dash.
fn split_own_flags(args: &[String]) -> Result<(Vec<String>, OwnFlags)> {
    let mut rest = Vec::new();
    let mut own = OwnFlags {
        output: OutputFormat::Text,
        help: false,
        save: SaveArgs::default(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--help" || a == "-h" || a == "-?" {
            own.help = true;
            continue;
        }
        if a == "--no-save" {
            own.save.no_save = true;
            continue;
        }
        let with_value = ["--output", "--db", "--label", "--tag", "--note", "--html"];
        let Some((name, inline)) = with_value.iter().find_map(|n| {
            if a == n {
                Some((*n, None))
            } else {
                a.strip_prefix(n)
                    .and_then(|r| r.strip_prefix('='))
                    .map(|v| (*n, Some(v.to_string())))
            }
        }) else {
            rest.push(a.clone());
            continue;
        };
        let v = match inline {
            Some(v) => v,
            None => it
                .next()
                .ok_or_else(|| anyhow!("{name} needs a value"))?
                .clone(),
        };
        match name {
            "--output" => {
                own.output = match v.as_str() {
                    "text" => OutputFormat::Text,
                    "json" => OutputFormat::Json,
                    "csv" => OutputFormat::Csv,
                    _ => bail!("--output takes text, json or csv, not '{v}'"),
                }
            }
            "--db" => own.save.store.db = Some(v),
            "--label" => own.save.label = Some(v),
            "--tag" => own.save.tags.push(v),
            "--note" => own.save.note = Some(v),
            _ => own.save.html = Some(v.into()),
        }
    }
    Ok((rest, own))
}

fn parse_call(args: &[String]) -> Result<SqlioCall> {
    let call = parse_args(args, &|p| std::fs::read_to_string(p))?;
    call.spec.validate()?;
    Ok(call)
}

/// Runs one call, prints it, saves it; returns the exit code and the run.
fn run_call(call: &SqlioCall, output: OutputFormat, save: &SaveArgs) -> Result<(Exit, RunResult)> {
    if output == OutputFormat::Text {
        print_stdout(&render_header(call));
    }
    let run = session("sqlio", None, save, |s| {
        let r = s.exec.run(std::slice::from_ref(&call.spec))?;
        s.run.tests.extend(r);
        Ok(())
    })?;
    let result = &run.tests[0];
    let buckets = ms_buckets(result);
    let code = finish(&run, output, || {
        let mut s = render_summary(call, result, &buckets);
        if !s.ends_with('\n') {
            s.push('\n');
        }
        for w in &result.warnings {
            s.push_str(&format!("warning: {w}\n"));
        }
        s
    });
    save.save(&run)?;
    Ok((code, run))
}

pub fn run(args: &[String]) -> Result<Exit> {
    let (rest, own) = split_own_flags(args)?;
    if own.help {
        print_stdout(SQLIO_HELP);
        return Ok(Exit::Ok);
    }
    let call = parse_call(&rest)?;
    own.save.check()?;
    let (code, run) = run_call(&call, own.output, &own.save)?;
    own.save.write_html(std::slice::from_ref(&run))?;
    Ok(code)
}

pub fn run_batch(args: BatchArgs) -> Result<Exit> {
    let text = std::fs::read_to_string(&args.file)
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
        args.save.check()?;
    }
    let mut worst = Exit::Ok;
    let mut runs = Vec::new();
    for (l, call) in &calls {
        if args.output.is_text() || args.dry_run {
            eprintln!(
                "== {} line {}: sqlio {}",
                args.file,
                l.line,
                l.args.join(" ")
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
