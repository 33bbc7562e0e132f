//! SQLIO parameter files (`-Fparam.txt`): one test file per line, all run together in one test.
//!
//! The format is SQLIO's: `<path> <threads> [<mask> [<size MB>]]`, fields separated by
//! whitespace, so paths cannot contain spaces. SQLIO lets the mask and size trail off, and so does
//! iocap, because real parameter files do; a missing size leaves the file at its current size (or
//! the job's default for a new file). Lines whose first non-blank character is `#` are comments.
//! Every error names `file:line`, since these files are edited by hand and often long.

use crate::{parse_digits, SqlioError};
use iocap_model::MAX_THREADS;

/// One test file of a parameter file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamLine {
    /// Line number in the file, from 1; 0 for a test file named on the command line.
    pub line: usize,
    pub path: String,
    /// Threads on this file, at least 1.
    pub threads: u32,
    /// CPU affinity mask; 0 for none.
    pub mask: u64,
    /// Size in MiB (2^20 bytes); 0 when the line gives none.
    pub size_mb: u64,
}

/// Parses the text of a parameter file; `origin` is its name for error messages.
pub fn parse_param_file(text: &str, origin: &str) -> Result<Vec<ParamLine>, SqlioError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |problem: String| SqlioError::BadParamLine {
            origin: origin.to_string(),
            line: idx + 1,
            problem,
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (path, threads, mask, size) = match fields[..] {
            [path, threads] => (path, threads, None, None),
            [path, threads, mask] => (path, threads, Some(mask), None),
            [path, threads, mask, size] => (path, threads, Some(mask), Some(size)),
            [_] => {
                return Err(bad(
                    "1 field, expected <path> <threads> [<mask> [<size MB>]]".into(),
                ))
            }
            _ => {
                return Err(bad(format!(
                    "{} fields, expected <path> <threads> [<mask> [<size MB>]] \
                     (paths cannot contain spaces)",
                    fields.len()
                )))
            }
        };
        let threads = match parse_digits(threads, 10) {
            Ok(0) => return Err(bad("thread count must be at least 1".into())),
            Ok(n) if n <= u64::from(MAX_THREADS) => n as u32,
            Ok(_) | Err(true) => {
                return Err(bad(format!(
                    "thread count {threads} is above {MAX_THREADS}"
                )))
            }
            Err(false) => {
                return Err(bad(format!(
                    "thread count '{threads}' is not a whole number"
                )))
            }
        };
        let mask = match mask {
            None => 0,
            Some(m) => parse_mask(m).ok_or_else(|| {
                bad(format!(
                    "mask '{m}' is neither hexadecimal (0x...) nor decimal, or is above 64 bits"
                ))
            })?,
        };
        let size_mb = match size.map(|s| (s, parse_digits(s, 10))) {
            None => 0,
            Some((_, Ok(0))) => return Err(bad("size must be at least 1 MB".into())),
            Some((s, Ok(n))) if n.checked_mul(1 << 20).is_none() => {
                return Err(bad(format!("size {s} MB is too large")))
            }
            Some((_, Ok(n))) => n,
            Some((s, Err(true))) => return Err(bad(format!("size {s} MB is too large"))),
            Some((s, Err(false))) => {
                return Err(bad(format!("size '{s}' is not a whole number of MB")))
            }
        };
        out.push(ParamLine {
            line: idx + 1,
            path: path.to_string(),
            threads,
            mask,
            size_mb,
        });
    }
    if out.is_empty() {
        return Err(SqlioError::EmptyParamFile {
            origin: origin.to_string(),
            problem: "names no test file (every line is blank or a # comment)".into(),
        });
    }
    Ok(out)
}

/// `0x`-prefixed hexadecimal or plain decimal, as SQLIO's `-a` and parameter files take it.
fn parse_mask(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => parse_digits(hex, 16).ok(),
        None => parse_digits(s, 10).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_param_file(text, "param.txt").unwrap_err().to_string()
    }

    #[test]
    fn two_files_with_comments_and_blank_lines() {
        let text = "# data volumes\r\n\
                    c:\\sqlio_test.dat 4 0x0 100\r\n\
                    \r\n\
                    \t# e:\\old.dat 2 0x0 100\r\n\
                    /mnt/d/sqlio_test.dat 2 0xF0 2048\r\n";
        let lines = parse_param_file(text, "param.txt").unwrap();
        assert_eq!(
            lines,
            vec![
                ParamLine {
                    line: 2,
                    path: "c:\\sqlio_test.dat".into(),
                    threads: 4,
                    mask: 0,
                    size_mb: 100
                },
                ParamLine {
                    line: 5,
                    path: "/mnt/d/sqlio_test.dat".into(),
                    threads: 2,
                    mask: 0xF0,
                    size_mb: 2048
                },
            ]
        );
    }

    #[test]
    fn mask_and_size_are_optional_and_mask_may_be_decimal() {
        let lines = parse_param_file("a.dat 1\nb.dat 3 12\nc.dat 2 0X1f 5", "p").unwrap();
        assert_eq!((lines[0].mask, lines[0].size_mb), (0, 0));
        assert_eq!(
            (lines[1].threads, lines[1].mask, lines[1].size_mb),
            (3, 12, 0)
        );
        assert_eq!((lines[2].mask, lines[2].size_mb), (0x1f, 5));
    }

    #[test]
    fn wrong_field_count_names_the_line() {
        assert_eq!(
            err("# x\nonly_a_path.dat\n"),
            "param.txt:2: 1 field, expected <path> <threads> [<mask> [<size MB>]]"
        );
        let e = err("a.dat 1 0x0 100\nc:\\my file.dat 4 0x0 100\n");
        assert!(e.starts_with("param.txt:2: 5 fields"), "{e}");
        assert!(e.contains("spaces"), "{e}");
    }

    #[test]
    fn bad_threads_names_the_line() {
        assert_eq!(
            err("a.dat 0 0x0 100"),
            "param.txt:1: thread count must be at least 1"
        );
        assert_eq!(
            err("\n\na.dat four 0x0 100"),
            "param.txt:3: thread count 'four' is not a whole number"
        );
        assert!(err("a.dat -1").contains("param.txt:1: thread count '-1'"));
        assert!(err("a.dat 5000").contains("param.txt:1: thread count 5000 is above"));
    }

    #[test]
    fn bad_mask_names_the_line() {
        for m in ["0xZZ", "0x", "ff", "-1", "0x10000000000000000"] {
            let e = err(&format!("a.dat 1 0x0 1\nb.dat 1 {m} 1"));
            assert!(e.starts_with(&format!("param.txt:2: mask '{m}'")), "{e}");
        }
    }

    #[test]
    fn bad_size_names_the_line() {
        assert_eq!(
            err("a.dat 1 0x0 0"),
            "param.txt:1: size must be at least 1 MB"
        );
        assert_eq!(
            err("a.dat 1 0x0 100MB"),
            "param.txt:1: size '100MB' is not a whole number of MB"
        );
        assert!(err("a.dat 1 0x0 99999999999999").contains("too large"));
        assert!(err("a.dat 1 0x0 99999999999999999999999").contains("too large"));
    }

    #[test]
    fn a_file_without_test_files_is_an_error() {
        for text in ["", "\n\n", "# c:\\a.dat 1 0x0 100\n   \n"] {
            assert_eq!(
                err(text),
                "param.txt: names no test file (every line is blank or a # comment)"
            );
        }
    }

    #[test]
    fn byte_order_mark_is_ignored() {
        let lines = parse_param_file("\u{feff}a.dat 1 0x0 1", "p").unwrap();
        assert_eq!(lines[0].path, "a.dat");
    }
}
