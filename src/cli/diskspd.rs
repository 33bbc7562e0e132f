//! `iocap diskspd`: a DiskSpd command line, run unchanged on iocap's engine and printed in
//! DiskSpd's text (`-Rtext`) or XML (`-Rxml`) layout; iocap's own long flags (`--output json`,
//! the store's flags) may be mixed in. The translation lives in `iocap-diskspd`
//! (docs/diskspd.md); the run is saved like any other.

use anyhow::{bail, Result};
use iocap_console::{claim, flags::Keeping};
use iocap_diskspd::{
    is_device_path, map_targets, parse, render_text, render_xml, Output, TargetOs,
};
use iocap_model::RunCommand;

use super::execute::{finish, session};
use super::{print_stdout, Exit};
use iocap_flags::{OutputFormat, SaveArgs};

/// DiskSpd's `-h` (the same as `-Sh`) is not iocap's help here: only `--help` and `-?` are.
const DISKSPD_H: &str = "\u{1}-h";

const HELP: &str = "\
iocap diskspd: run a test given in DiskSpd's flags

usage: iocap diskspd [-b<size>] [-d<secs>] [-W<secs>] [-C<secs>] [-o<n>]
                     [-t<n>|-F<n>] [-r[align]|-s[i][stride]] [-w<pct>]
                     [-c<size>] [-S[bhuw]|-h] [-L] [-D] [-g<bytes/ms>]
                     [-z[seed]] [-Z...] [-Rtext|-Rxml] TARGET...
                     [--output json|csv] [--db PATH|URL] [--no-save]
                     [--label L] [--tag T]...

Flags, their mapping and every difference from DiskSpd: docs/diskspd.md.
";

/// iocap's own flags among DiskSpd's: `--output json|csv` (else DiskSpd's own layout), whether
/// help was asked, and the store's flags.
fn own_flags(args: &[String]) -> Result<(Vec<String>, Option<OutputFormat>, bool, SaveArgs)> {
    let kept: Vec<String> = args
        .iter()
        .map(|a| {
            if a == "-h" {
                DISKSPD_H.into()
            } else {
                a.clone()
            }
        })
        .collect();
    let (rest, own) = iocap_sqlio::split_own_flags(&kept)?;
    let rest = rest
        .into_iter()
        .map(|a| if a == DISKSPD_H { "-h".into() } else { a })
        .collect();
    let output = match own.output.as_deref() {
        None | Some("text") => None,
        Some("json") => Some(OutputFormat::Json),
        Some("csv") => Some(OutputFormat::Csv),
        Some(o) => bail!("--output takes text, json or csv, not '{o}'"),
    };
    let help = own.help;
    Ok((rest, output, help, super::sqlio::save_args(own)))
}

pub fn run(args: &[String]) -> Result<Exit> {
    let (rest, output, help, save) = own_flags(args)?;
    if help || rest.iter().any(|a| a == "-?") {
        print_stdout(HELP);
        return Ok(Exit::Ok);
    }
    let mut d = parse(&rest)?;
    map_targets(&mut d, TargetOs::current())?;
    if d.create_bytes.is_none() {
        for t in d.specs.iter().flat_map(|s| &s.targets) {
            if !is_device_path(&t.path) && !std::path::Path::new(&t.path).exists() {
                bail!(
                    "{} does not exist: give -c<size> to create it, as DiskSpd asks",
                    t.path
                );
            }
        }
    }
    if d.seed_from_clock {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        let seed = now.map_or(1, |t| t.as_nanos() as u64);
        d.specs.iter_mut().for_each(|s| s.seed = seed);
    }
    save.claim(claim::tests(&d.specs))?;
    let mut run = session(RunCommand::Diskspd, None, &save, |s| {
        for spec in &d.specs {
            let r = s.exec.run(std::slice::from_ref(spec))?;
            s.run.tests.extend(r);
        }
        Ok(())
    })?;
    run.note = Some(d.note(run.note.as_deref()));
    let code = match output {
        Some(o) => finish(&run, o, String::new),
        None => finish(&run, OutputFormat::Text, || match d.output {
            Output::Text => render_text(&run, &d),
            Output::Xml => render_xml(&run, &d),
        }),
    };
    save.keep(std::slice::from_ref(&run))?;
    Ok(code)
}
