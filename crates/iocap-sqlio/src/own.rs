//! iocap's own flags given among SQLIO's on `iocap sqlio`'s line: the output format, help and
//! the store's flags. SQLIO's flags all start with a single dash, iocap's with two, so they are
//! told apart before SQLIO's parser sees the rest. The usage text is here too, with the flags it
//! names.

use crate::SqlioError;

/// `iocap sqlio --help`.
pub const HELP: &str = "\
iocap sqlio: run a test given in SQLIO's flags

usage: iocap sqlio [-kR|-kW] [-s<secs>] [-frandom|-fsequential] [-o<n>] [-b<KB>]
                   [-t<n>] [-LS|-LP] [-BN|-BY|-BH|-BS] [-F<paramfile> | PATH...]
                   [--allow-overwrite] [--engine auto|io_uring|psync]
                   [--output text|json|csv] [--db PATH|URL] [--no-save]
                   [--label L] [--tag T]... [--note N] [--html FILE]

Defaults are SQLIO's: -kR -t1 -s30 -b2 -BN, one outstanding I/O, testfile.dat.
Parameter files hold lines of `path threads mask size_MB`; `#` comments a line
out.
";

/// The output formats `--output` takes here.
pub const OUTPUTS: [&str; 3] = ["text", "json", "csv"];

/// iocap's own flags, as given (unset ones at their defaults).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OwnFlags {
    /// One of [`OUTPUTS`]; `text` unless given.
    pub output: Option<String>,
    pub help: bool,
    pub no_save: bool,
    pub db: Option<String>,
    pub label: Option<String>,
    pub tags: Vec<String>,
    pub note: Option<String>,
    pub html: Option<String>,
}

/// The flags that take a value, as `--flag VALUE` or `--flag=VALUE`.
const WITH_VALUE: [&str; 6] = ["--output", "--db", "--label", "--tag", "--note", "--html"];

/// Splits iocap's own long flags from SQLIO's: SQLIO's (in order), then iocap's.
pub fn split_own_flags(args: &[String]) -> Result<(Vec<String>, OwnFlags), SqlioError> {
    let mut rest = Vec::new();
    let mut own = OwnFlags::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--help" | "-h" | "-?" => own.help = true,
            "--no-save" => own.no_save = true,
            _ => match with_value(a) {
                None => rest.push(a.clone()),
                Some((name, inline)) => {
                    let v = match inline {
                        Some(v) => v,
                        None => it
                            .next()
                            .ok_or_else(|| SqlioError::Usage(format!("{name} needs a value")))?
                            .clone(),
                    };
                    own.set(name, v)?;
                }
            },
        }
    }
    Ok((rest, own))
}

/// `a` as one of [`WITH_VALUE`], with its `=VALUE` if it has one.
fn with_value(a: &str) -> Option<(&'static str, Option<String>)> {
    WITH_VALUE.iter().find_map(|n| {
        if a == *n {
            Some((*n, None))
        } else {
            a.strip_prefix(n)
                .and_then(|r| r.strip_prefix('='))
                .map(|v| (*n, Some(v.to_string())))
        }
    })
}

impl OwnFlags {
    fn set(&mut self, name: &str, v: String) -> Result<(), SqlioError> {
        match name {
            "--output" if !OUTPUTS.contains(&v.as_str()) => {
                return Err(SqlioError::Usage(format!(
                    "--output takes text, json or csv, not '{v}'"
                )))
            }
            "--output" => self.output = Some(v),
            "--db" => self.db = Some(v),
            "--label" => self.label = Some(v),
            "--tag" => self.tags.push(v),
            "--note" => self.note = Some(v),
            _ => self.html = Some(v),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(args: &[&str]) -> Result<(Vec<String>, OwnFlags), SqlioError> {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        split_own_flags(&v)
    }

    #[test]
    fn own_flags_are_taken_out_and_sqlio_flags_kept_in_order() {
        let (rest, own) = split(&[
            "-kW",
            "--output=json",
            "-s5",
            "--tag",
            "a",
            "--tag=b",
            "--no-save",
            "f.dat",
        ])
        .unwrap();
        assert_eq!(rest, ["-kW", "-s5", "f.dat"]);
        assert_eq!(own.output.as_deref(), Some("json"));
        assert_eq!(own.tags, ["a", "b"]);
        assert!(own.no_save && !own.help);
        assert!(split(&["-?"]).unwrap().1.help);
    }

    #[test]
    fn a_missing_value_or_an_unknown_format_is_refused() {
        let e = split(&["--db"]).unwrap_err().to_string();
        assert_eq!(e, "--db needs a value");
        let e = split(&["--output", "xml"]).unwrap_err().to_string();
        assert_eq!(e, "--output takes text, json or csv, not 'xml'");
    }
}
