//! `iocap verify`: does the storage give back what was written, and keep what it acknowledged?
//! Flags in, an [`iocap_verify::VerifyConfig`] or [`iocap_verify::CheckConfig`] out; the
//! result is a run like any other (saved, shown, exported), with its findings in `verify`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use iocap_model::{format_bytes, EngineChoice, FailureClass, Verify};
use iocap_verify::{CheckConfig, VerifyConfig, VerifyError};

use super::args::{duration_arg, engine_arg, size_arg};
use super::execute::new_run;
use super::save::SaveArgs;
use super::signals::INTERRUPTED;
use super::{print_stdout, Exit};

/// The default verify file, in the current directory or the directory given.
pub const DEFAULT_VERIFY_TARGET: &str = "iocap-verify.testfile";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum VerifyOutput {
    /// A summary and the first failures, for people.
    #[default]
    Text,
    /// The JSON result contract, alone on stdout.
    Json,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The file to verify (created by iocap); a directory means DIR/iocap-verify.testfile.
    /// With --check: the file to check [default: the one the journal names]
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,

    /// Time of the concurrent phase, between the initial fill and the final pass
    #[arg(long, default_value = "10s", value_parser = duration_arg)]
    pub duration: f64,

    /// Size of the verify file
    #[arg(long, default_value = "256M", value_parser = size_arg)]
    pub size: u64,

    /// Threads; each keeps --qd I/Os in flight
    #[arg(long, default_value_t = 2)]
    pub threads: u32,

    /// In-flight I/Os per thread (with psync, each a thread of its own)
    #[arg(long, default_value_t = 4)]
    pub qd: u32,

    /// Seed of the page contents
    #[arg(long, default_value_t = 0x10CAFE)]
    pub seed: u64,

    /// Page size: a power of two from 4K to 64K
    #[arg(long, default_value = "8K", value_parser = size_arg)]
    pub page_size: u64,

    /// Record every acknowledged (durable) write in FILE, a new file, for a later --check
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,

    /// Check the file against the journal's acknowledged writes instead of running (after a
    /// crash or power cut); needs --journal
    #[arg(long, requires = "journal")]
    pub check: bool,

    /// With --check: the write unit the storage keeps whole; a page torn between acknowledged
    /// and newer writes at this boundary is accepted
    #[arg(long, default_value = "4K", value_parser = size_arg)]
    pub atomic_unit: u64,

    /// Where to write expected and actual bytes of failed pages [default: TARGET.dumps]
    #[arg(long, value_name = "DIR")]
    pub dump_dir: Option<PathBuf>,

    /// Permit rewriting a file iocap did not create (destroys its contents)
    #[arg(long)]
    pub allow_overwrite: bool,

    /// I/O engine: auto (io_uring, else psync), io_uring (threads rings of qd I/Os) or psync
    /// (threads × qd synchronous threads)
    #[arg(long, default_value = "auto", value_parser = engine_arg)]
    pub engine: EngineChoice,

    /// Use the page cache instead of O_DIRECT (reads may then come from memory)
    #[arg(long)]
    pub buffered: bool,

    /// Output format; json goes to stdout alone
    #[arg(long, value_enum, default_value_t = VerifyOutput::Text)]
    pub output: VerifyOutput,

    #[command(flatten)]
    pub save: SaveArgs,
}

fn target_path(t: Option<&str>) -> PathBuf {
    let mut p = PathBuf::from(t.unwrap_or(DEFAULT_VERIFY_TARGET));
    if p.is_dir() {
        p.push(DEFAULT_VERIFY_TARGET);
    }
    p
}

pub fn verify(args: VerifyArgs) -> Result<Exit> {
    if !args.check && args.size < args.page_size.saturating_mul(16) {
        bail!(
            "--size {} holds fewer than 16 pages of {}",
            format_bytes(args.size),
            format_bytes(args.page_size)
        );
    }
    args.save.check()?;
    let mut run = new_run("verify");
    let res = if args.check {
        let journal = args.journal.clone().expect("clap requires --journal");
        let cfg = CheckConfig {
            target: args.target.as_deref().map(|t| target_path(Some(t))),
            atomic_unit: args.atomic_unit as usize,
            dump_dir: args.dump_dir.clone(),
            direct: !args.buffered,
            ..CheckConfig::new(journal)
        };
        iocap_verify::check(&cfg, &INTERRUPTED).map(|o| o.verify)
    } else {
        let cfg = VerifyConfig {
            target: target_path(args.target.as_deref()),
            size_bytes: args.size,
            page_bytes: args.page_size as usize,
            threads: args.threads,
            qd: args.qd,
            seed: args.seed,
            duration: Duration::from_secs_f64(args.duration),
            direct: !args.buffered,
            journal: args.journal.clone(),
            dump_dir: args.dump_dir.clone(),
            allow_overwrite: args.allow_overwrite,
            engine: args.engine,
        };
        cfg.validate()?;
        if args.output == VerifyOutput::Text {
            eprintln!(
                "iocap: verifying {} ({}): fill, {:.1} s of mixed I/O, then every page once more",
                cfg.target.display(),
                format_bytes(cfg.size_bytes),
                args.duration
            );
        }
        iocap_verify::run(&cfg, &INTERRUPTED).map(|o| o.verify)
    };
    let v = match res {
        Ok(v) => v,
        Err(VerifyError::Interrupted(what)) => {
            eprintln!("iocap: interrupted while filling {what}; nothing was verified");
            return Ok(Exit::Interrupted);
        }
        Err(e) => return Err(e.into()),
    };
    let code = if v.interrupted {
        Exit::Interrupted
    } else if v.passed {
        Exit::Ok
    } else {
        Exit::CheckFailed
    };
    run.verify = Some(v);
    args.save.stamp(&mut run);
    let v = run.verify.as_ref().expect("just set");
    match args.output {
        VerifyOutput::Text => print_stdout(&render(v)),
        VerifyOutput::Json => print_stdout(&iocap_report::json(&run)),
    }
    args.save.keep(std::slice::from_ref(&run))?;
    Ok(code)
}

/// Failures listed in the text view (all of them are in the JSON).
const SHOWN_FAILURES: usize = 20;

/// The text view of a verify run or check.
pub fn render(v: &Verify) -> String {
    let mut o = String::new();
    let verdict = if v.passed { "PASS" } else { "FAIL" };
    let line = |o: &mut String, k: &str, val: String| o.push_str(&format!("  {k:<15} {val}\n"));
    if let Some(c) = &v.check {
        o.push_str(&format!("iocap verify --check: {}\n", v.target));
        line(
            &mut o,
            "journal",
            format!(
                "{}: {} acknowledged writes on {} pages{}",
                c.journal,
                c.records,
                c.pages_journaled,
                if c.torn_tail_bytes > 0 {
                    format!(", torn tail of {} B ignored", c.torn_tail_bytes)
                } else {
                    String::new()
                }
            ),
        );
        line(
            &mut o,
            "pages checked",
            format!(
                "{} of {} ({} each, {})",
                v.counts.pages_checked,
                v.pages,
                format_bytes(v.page_bytes),
                if v.direct { "O_DIRECT" } else { "buffered" }
            ),
        );
        line(
            &mut o,
            "allowed",
            format!(
                "{} pages newer than acknowledged, {} torn at {} boundaries between \
                 acknowledged and newer writes",
                c.pages_newer,
                c.pages_torn_allowed,
                format_bytes(v.atomic_unit_bytes)
            ),
        );
        let lost = if c.lost_pages.is_empty() {
            "none".to_string()
        } else {
            let shown: Vec<String> = c.lost_pages.iter().take(50).map(u64::to_string).collect();
            format!(
                "{} pages: {}{}",
                c.lost_pages.len(),
                shown.join(", "),
                if c.lost_pages.len() > 50 { ", ..." } else { "" }
            )
        };
        line(&mut o, "lost writes", lost);
    } else {
        o.push_str(&format!("iocap verify: {}\n", v.target));
        line(
            &mut o,
            "file",
            format!(
                "{}, {} pages of {}, file id {:016x}, seed {}",
                format_bytes(v.size_bytes),
                v.pages,
                format_bytes(v.page_bytes),
                v.file_id,
                v.seed
            ),
        );
        line(
            &mut o,
            "I/O",
            format!(
                "{}, {}, {} threads × qd {}, {:.1} s mixed, {:.1} s in all",
                if v.direct {
                    "O_DIRECT"
                } else {
                    "buffered (page cache)"
                },
                v.io_engine,
                v.threads,
                v.qd,
                v.duration_s,
                v.elapsed_s
            ),
        );
        let c = &v.counts;
        line(
            &mut o,
            "pages checked",
            format!(
                "{} ({:.0}/s over the {:.1} s of the run)",
                c.pages_checked,
                c.pages_checked as f64 / v.elapsed_s.max(1e-9),
                v.elapsed_s
            ),
        );
        line(
            &mut o,
            "writes",
            format!(
                "{} random page updates, {} durable log appends{}",
                c.random_updates,
                c.log_appends,
                if v.journal.is_some() {
                    format!(", {} journaled", c.journal_records)
                } else {
                    String::new()
                }
            ),
        );
        line(
            &mut o,
            "reads",
            format!(
                "{} read-ahead scans, {} random page reads; {} reads overlapped a write and \
                 were not judged",
                c.scans, c.random_reads, c.reads_skipped
            ),
        );
    }
    let classes: Vec<String> = FailureClass::ALL
        .iter()
        .filter(|k| v.classes.get(**k) > 0)
        .map(|k| format!("{} {}", k.name(), v.classes.get(*k)))
        .collect();
    line(
        &mut o,
        "failures",
        if classes.is_empty() {
            "none".into()
        } else {
            format!(
                "{} ({} transient: read back right later)",
                classes.join(", "),
                v.classes.transient
            )
        },
    );
    let words = match (v.passed, v.interrupted, v.check.is_some()) {
        (_, true, _) => "interrupted: not every page was checked".to_string(),
        (true, _, false) => "every page read back as written".into(),
        (true, _, true) => "every acknowledged write is there".into(),
        (false, _, false) => "the storage did not give back what was written".into(),
        (false, _, true) => "acknowledged writes were lost or damaged".into(),
    };
    line(&mut o, "verdict", format!("{verdict}: {words}"));
    for w in &v.warnings {
        o.push_str(&format!("  warning: {w}\n"));
    }
    if !v.failures.is_empty() {
        o.push_str(&format!(
            "\nFirst failures ({} of {}):\n",
            v.failures.len().min(SHOWN_FAILURES),
            v.classes.total()
        ));
        for f in v.failures.iter().take(SHOWN_FAILURES) {
            o.push_str(&format!(
                "  page {} at {} B: {} during {}, expected generation {}, found {}{}{}\n    {}\n",
                f.page,
                f.offset_bytes,
                f.class.name(),
                f.op,
                f.expected_generation,
                f.found_generation
                    .map_or_else(|| "-".to_string(), |g| g.to_string()),
                if f.sectors_512_differing.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; 512 B sectors {:?}, 4 KiB sectors {:?} differ",
                        f.sectors_512_differing, f.sectors_4k_differing
                    )
                },
                if f.transient {
                    "; transient (a re-read was right)"
                } else if f.rereads > 0 {
                    "; persistent over re-reads"
                } else {
                    ""
                },
                f.message
            ));
            if let Some(d) = &f.dump {
                o.push_str(&format!("    dump: {d}\n"));
            }
        }
    }
    o
}
