//! `iocap sqlio` and `iocap sqlio-batch`: SQLIO's flags, parameter files and batch files on
//! iocap's engine, with SQLIO's summary followed by iocap's percentiles.

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use iocap_engine::stats::OpRecorder;
use iocap_model::parse_duration;
use iocap_sqlio::{parse_args, parse_batch, render_header, render_summary, SqlioCall};

use super::execute::{execute, finish};
use super::signals::interrupted;
use super::{print_stdout, Exit, OutputFormat};

#[derive(Args, Debug)]
pub struct BatchArgs {
    /// The batch file (.bat/.cmd) holding `sqlio` or `call sqlio` lines
    pub file: String,
    /// Run each test for this long instead of its -s value (e.g. 2s), for a quick trial
    #[arg(long, value_name = "DURATION")]
    pub seconds: Option<String>,
    /// Check every line and show the tests without running them
    #[arg(long)]
    pub dry_run: bool,
    /// Output format for each test
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

const SQLIO_HELP: &str = "\
iocap sqlio: run a test given in SQLIO's flags

usage: iocap sqlio [-kR|-kW] [-s<secs>] [-frandom|-fsequential] [-o<n>] [-b<KB>] [-t<n>]
                   [-LS|-LP] [-BN|-BY|-BH|-BS] [-F<paramfile> | PATH...]
                   [--allow-overwrite] [--engine auto|io_uring|psync] [--output text|json|csv]

Defaults are SQLIO's: -kR -t1 -s30 -b2 -BN, one outstanding I/O, testfile.dat.
Parameter files hold lines of `path threads mask size_MB`; `#` comments a line out.
";

/// Splits iocap's own `--output` and `--help` from the SQLIO flags.
fn split_output(args: &[String]) -> Result<(Vec<String>, OutputFormat, bool)> {
    let mut rest = Vec::new();
    let mut output = OutputFormat::Text;
    let mut help = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = if a == "--output" {
            Some(
                it.next()
                    .ok_or_else(|| anyhow!("--output needs a value: text, json or csv"))?
                    .clone(),
            )
        } else {
            a.strip_prefix("--output=").map(str::to_string)
        };
        if let Some(v) = value {
            output = match v.as_str() {
                "text" => OutputFormat::Text,
                "json" => OutputFormat::Json,
                "csv" => OutputFormat::Csv,
                _ => bail!("--output takes text, json or csv, not '{v}'"),
            };
        } else if a == "--help" || a == "-h" || a == "-?" {
            help = true;
        } else {
            rest.push(a.clone());
        }
    }
    Ok((rest, output, help))
}

fn parse_call(args: &[String]) -> Result<SqlioCall> {
    let call = parse_args(args, &|p| std::fs::read_to_string(p))?;
    call.spec.validate()?;
    Ok(call)
}

/// SQLIO's 1 ms latency buckets: [k, k+1) ms for k = 0..23, then 24 ms and more.
fn ms_buckets(total: &OpRecorder) -> [u64; 25] {
    let mut b = [0u64; 25];
    for (k, slot) in b.iter_mut().enumerate().take(24) {
        *slot = total.count_between(k as u64 * 1_000_000, (k as u64 + 1) * 1_000_000);
    }
    b[24] = total.count_between(24_000_000, u64::MAX);
    b
}

fn run_call(call: &SqlioCall, output: OutputFormat) -> Result<Exit> {
    if output == OutputFormat::Text {
        print_stdout(&render_header(call));
    }
    let done = execute(&call.spec)?;
    let result = &done.run.tests[0];
    let buckets = ms_buckets(&done.outcome.stats.total());
    Ok(finish(&done.run, output, || {
        let mut s = render_summary(call, result, &buckets);
        if !s.ends_with('\n') {
            s.push('\n');
        }
        for w in &result.warnings {
            s.push_str(&format!("warning: {w}\n"));
        }
        s
    }))
}

pub fn run(args: &[String]) -> Result<Exit> {
    let (rest, output, help) = split_output(args)?;
    if help {
        print_stdout(SQLIO_HELP);
        return Ok(Exit::Ok);
    }
    let call = parse_call(&rest)?;
    run_call(&call, output)
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
    let mut worst = Exit::Ok;
    for (l, call) in &calls {
        if args.output == OutputFormat::Text || args.dry_run {
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
        let code = run_call(call, args.output)?;
        if code != Exit::Ok {
            worst = code;
        }
        if interrupted() || code == Exit::Error {
            break;
        }
    }
    Ok(worst)
}
