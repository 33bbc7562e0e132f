//! SQLIO's command line. Parsing is one pass over the arguments into an `Options` record, then
//! one step that turns the record into a [`JobSpec`]; keeping the two apart means every default
//! and every mapping rule lives in exactly one place (`Options::into_call`).

use crate::{parse_digits, parse_param_file, ParamLine, SqlioCall, SqlioError};
use iocap_model::{EngineChoice, JobSpec, RwMode, TargetSpec, MAX_BS_BYTES, MAX_QD, MAX_THREADS};

/// The test file SQLIO uses when none is named.
pub(crate) const SQLIO_DEFAULT_FILE: &str = "testfile.dat";
/// Size at which missing test files are created, as in SQLIO's usual 100 MB test files.
pub(crate) const SQLIO_FILE_BYTES: u64 = 100 << 20;

const DEFAULT_SECS: u32 = 30;
const DEFAULT_KB: u64 = 2;
const MAX_KB: u64 = MAX_BS_BYTES >> 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    Random,
    Sequential,
}

#[derive(Debug, Default)]
struct Options {
    write: Option<bool>,
    secs: Option<u32>,
    pattern: Option<Pattern>,
    qd: Option<u32>,
    kb: Option<u64>,
    threads: Option<u32>,
    timer: Option<char>,
    buffering: Option<char>,
    param_file: Option<String>,
    paths: Vec<String>,
    allow_overwrite: bool,
    engine: Option<EngineChoice>,
}

/// Parses the arguments of one SQLIO call (without the program name). `read_file` returns the
/// text of the `-F` parameter file; it is called at most once.
pub fn parse_args<S: AsRef<str>>(
    args: &[S],
    read_file: &dyn Fn(&str) -> std::io::Result<String>,
) -> Result<SqlioCall, SqlioError> {
    let mut o = Options::default();
    let mut rest = args.iter().map(AsRef::as_ref);
    while let Some(raw) = rest.next() {
        let arg = normalize_dashes(raw);
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            match name {
                "allow-overwrite" if inline.is_none() => o.allow_overwrite = true,
                "allow-overwrite" => return Err(bad(raw, "takes no value")),
                "engine" => {
                    let Some(value) = inline.or_else(|| rest.next()) else {
                        let names = iocap_model::System::HOST.engine_names();
                        return Err(bad(raw, format!("needs a value: {names}")));
                    };
                    o.engine = Some(EngineChoice::parse(value).map_err(|e| bad(raw, e))?);
                }
                _ => return Err(bad(raw, "unknown option")),
            }
        } else if let Some(flag) = arg.strip_prefix('-') {
            parse_flag(&mut o, raw, flag)?;
        } else if arg.is_empty() {
            return Err(SqlioError::Usage(
                "an empty argument is not a test file name".into(),
            ));
        } else {
            o.paths.push(arg);
        }
    }
    o.into_call(read_file)
}

/// Replaces a leading EN DASH or EM DASH (one or two of them) by `-`.
fn normalize_dashes(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len());
    let mut chars = arg.chars().peekable();
    for _ in 0..2 {
        match chars.peek() {
            Some('\u{2013}' | '\u{2014}') => {
                chars.next();
                out.push('-');
            }
            Some('-') => {
                chars.next();
                out.push('-');
            }
            _ => break,
        }
    }
    out.extend(chars);
    out
}

fn bad(flag: &str, problem: impl Into<String>) -> SqlioError {
    SqlioError::BadFlag {
        flag: flag.to_string(),
        problem: problem.into(),
    }
}

/// One single-dash flag; `flag` is what follows the dash, `raw` the argument as typed.
fn parse_flag(o: &mut Options, raw: &str, flag: &str) -> Result<(), SqlioError> {
    let mut chars = flag.chars();
    let Some(letter) = chars.next() else {
        return Err(bad(raw, "a lone dash is neither an option nor a file name"));
    };
    let value = chars.as_str();
    match letter {
        'k' => {
            o.write = Some(pick(
                raw,
                value,
                &[("R", false), ("W", true)],
                "R (read) or W (write)",
            )?)
        }
        's' => o.secs = Some(number(raw, value, "number of seconds", 1, u32::MAX.into())? as u32),
        'f' if value.len() > 1 && value.chars().all(|c| c.is_ascii_digit()) => {
            return Err(bad(
                raw,
                "iocap has no stride pattern (-f<blocks>); use -frandom or -fsequential",
            ))
        }
        'f' => {
            let choices = [
                ("random", Pattern::Random),
                ("sequential", Pattern::Sequential),
                ("1", Pattern::Sequential),
            ];
            o.pattern = Some(pick(raw, value, &choices, "random or sequential")?);
        }
        'o' => {
            o.qd = Some(number(raw, value, "number of outstanding I/Os", 1, MAX_QD.into())? as u32)
        }
        'b' => o.kb = Some(number(raw, value, "block size in KB", 1, MAX_KB)?),
        't' => {
            o.threads = Some(number(raw, value, "number of threads", 1, MAX_THREADS.into())? as u32)
        }
        'L' => {
            let choices = [("S", 'S'), ("P", 'P')];
            o.timer = Some(pick(
                raw,
                value,
                &choices,
                "S (system timer) or P (processor timer)",
            )?);
        }
        'B' => {
            let choices = [("N", 'N'), ("Y", 'Y'), ("H", 'H'), ("S", 'S')];
            let usage = "N (no cache), Y (all caches), H (device cache) or S (OS cache)";
            o.buffering = Some(pick(raw, value, &choices, usage)?);
        }
        'F' if value.is_empty() => return Err(bad(raw, "needs a file name attached: -Fparam.txt")),
        'F' => o.param_file = Some(value.to_string()),
        'd' | 'R' | 'p' | 'a' | 'i' | 'm' | 'U' | 'S' | 'v' | 'D' | '6' => {
            return Err(bad(
                raw,
                format!("SQLIO's -{letter} is not supported by iocap"),
            ))
        }
        _ => return Err(bad(raw, "unknown option")),
    }
    Ok(())
}

/// One of a few words attached to a flag, in any case.
fn pick<T: Copy>(
    raw: &str,
    value: &str,
    choices: &[(&str, T)],
    usage: &str,
) -> Result<T, SqlioError> {
    match choices
        .iter()
        .find(|(word, _)| word.eq_ignore_ascii_case(value))
    {
        Some(&(_, v)) => Ok(v),
        None if value.is_empty() => Err(bad(raw, format!("needs {usage} attached"))),
        None => Err(bad(raw, format!("takes {usage}, not '{value}'"))),
    }
}

/// A whole number in `min..=max` attached to a flag.
fn number(raw: &str, value: &str, what: &str, min: u64, max: u64) -> Result<u64, SqlioError> {
    let n = match parse_digits(value, 10) {
        _ if value.is_empty() => {
            return Err(bad(raw, format!("needs the {what} attached, e.g. {raw}8")))
        }
        Ok(n) => n,
        Err(true) => u64::MAX,
        Err(false) => {
            return Err(bad(
                raw,
                format!("the {what} must be a whole number, not '{value}'"),
            ))
        }
    };
    if n < min {
        return Err(bad(raw, format!("the {what} must be at least {min}")));
    }
    if n > max {
        return Err(bad(raw, format!("the {what} must be at most {max}")));
    }
    Ok(n)
}

impl Options {
    fn into_call(
        self,
        read_file: &dyn Fn(&str) -> std::io::Result<String>,
    ) -> Result<SqlioCall, SqlioError> {
        let mut notes = Vec::new();
        let write = self.write.unwrap_or(false);
        let pattern = self.pattern.unwrap_or_else(|| {
            notes.push(
                "no -f given: SQLIO would stride 64 blocks at a time; iocap runs random I/O".into(),
            );
            Pattern::Random
        });
        let qd = self.qd.unwrap_or(1);
        let kb = self.kb.unwrap_or(DEFAULT_KB);
        let threads = self.threads.unwrap_or(1);
        let buffering = self.buffering.unwrap_or('N');

        let targets = match (&self.param_file, self.paths.is_empty()) {
            (Some(_), false) => {
                return Err(SqlioError::Usage(format!(
                    "name test files either with -F or on the command line, not both (got {})",
                    self.paths.join(" ")
                )))
            }
            (Some(file), true) => {
                let text = read_file(file).map_err(|e| SqlioError::ReadParamFile {
                    path: file.clone(),
                    reason: e.to_string(),
                })?;
                if self.threads.is_some() {
                    notes.push(format!(
                        "-t{threads} applies to no file: each line of {file} gives its own thread count"
                    ));
                }
                parse_param_file(&text, file)?
            }
            (None, _) => {
                let paths = if self.paths.is_empty() {
                    vec![SQLIO_DEFAULT_FILE.to_string()]
                } else {
                    self.paths
                };
                paths
                    .into_iter()
                    .map(|path| ParamLine {
                        line: 0,
                        path,
                        threads,
                        mask: 0,
                        size_mb: 0,
                    })
                    .collect()
            }
        };

        let rw = match (pattern, write) {
            (Pattern::Random, false) => RwMode::RandRead,
            (Pattern::Random, true) => RwMode::RandWrite,
            (Pattern::Sequential, false) => RwMode::Read,
            (Pattern::Sequential, true) => RwMode::Write,
        };
        let name = format!(
            "sqlio -k{} -f{} -b{kb} -o{qd}",
            if write { 'W' } else { 'R' },
            if pattern == Pattern::Random {
                "random"
            } else {
                "sequential"
            },
        );
        let bs_bytes = kb << 10;
        let spec = JobSpec {
            name,
            targets: targets.iter().map(target_spec).collect(),
            rw,
            write_pct: if write { 100 } else { 0 },
            bs_bytes,
            qd,
            threads,
            size_bytes: SQLIO_FILE_BYTES,
            duration_s: f64::from(self.secs.unwrap_or(DEFAULT_SECS)),
            warmup_s: 0.0,
            cooldown_s: 0.0,
            align_bytes: bs_bytes,
            direct: matches!(buffering, 'N' | 'H'),
            write_through: matches!(buffering, 'N' | 'S'),
            engine: self.engine.unwrap_or_default(),
            allow_overwrite: self.allow_overwrite,
            ..JobSpec::default()
        };
        Ok(SqlioCall {
            spec,
            latency_timer: self.timer,
            buffering,
            param_file: self.param_file,
            targets,
            notes,
        })
    }
}

/// A target as the engine sees it. Command-line targets (line 0) take the job's thread count
/// and size; parameter file lines carry their own, and a size of 0 means none was given.
fn target_spec(p: &ParamLine) -> TargetSpec {
    let from_file = p.line > 0;
    TargetSpec {
        path: p.path.clone(),
        size_bytes: (p.size_mb > 0).then_some(p.size_mb << 20),
        threads: from_file.then_some(p.threads),
        cpu_mask: (p.mask != 0).then_some(p.mask),
    }
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
