//! `iocap convert`: a trace written in another format (docs/capture.md). `capture` and
//! `characterise` are in `capture.rs`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use iocap_console::claim::{Claim, Existing};
use iocap_flags::choices;
use iocap_trace::ExportFormat;

use super::Exit;

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The trace: iocap's file, fio's iolog (v2 or v3), or blktrace's per-CPU files (or
    /// their base name, `sda` for sda.blktrace.*)
    #[arg(value_name = "TRACE", required = true)]
    pub inputs: Vec<PathBuf>,
    /// The format to write
    #[arg(long, value_parser = choices(ExportFormat::CHOICES, ExportFormat::parse))]
    pub to: ExportFormat,
    /// The new file to write
    #[arg(short, long, visible_alias = "out", value_name = "FILE")]
    pub output: PathBuf,
    /// Allow replacing an existing file (a regular file only)
    #[arg(long)]
    pub force: bool,
    /// For --to fio: the file or device fio's iolog names [default: /dev/ and the trace's
    /// first device]
    #[arg(long, value_name = "PATH")]
    pub filename: Option<String>,
}

pub fn convert(a: ConvertArgs) -> Result<Exit> {
    // the inputs are checked before the output exists, and never written over by it: every
    // file read, blktrace's found from a base name too (issue 35)
    iocap_trace::open_trace(&a.inputs)?;
    let claim = Claim::new(Existing::replace_if(a.force))
        .reads("the trace", &iocap_trace::trace_files(&a.inputs)?)
        .writes("-o", Some(&a.output))
        .check()?;
    let file = claim.create(&a.output)?;
    let c = iocap_trace::convert(&a.inputs, a.to, (file, &a.output), a.filename.as_deref())?;
    let skipped = match c.written.skipped {
        0 => String::new(),
        n => format!(" ({n} requests fio's iolog cannot hold were left out)"),
    };
    eprintln!(
        "iocap: {} requests of the {} written to {}{skipped}",
        iocap_report::fmt::count(c.written.records as f64),
        c.from,
        iocap_report::fmt::printable(&c.out.display().to_string()),
    );
    Ok(Exit::Ok)
}
