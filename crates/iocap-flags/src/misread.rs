//! Plain errors where clap's own would mislead. A negative number after a flag (`--qd -1`) is,
//! to clap, an unknown flag `-1`, and its tip (write `-- -1`) would make -1 a target path. No
//! value iocap takes is negative, so the error says that, naming the flag. (`--qd=-1` reaches
//! the flag's parser, whose own message names the range it takes.)

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// The error to print instead of clap's `e`, for the process's own arguments; `None` to print
/// clap's.
pub fn plain_error(e: &clap::Error) -> Option<String> {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    plain_error_in(e, &args)
}

/// [`plain_error`] for the command line `args` (the program name first).
pub fn plain_error_in(e: &clap::Error, args: &[String]) -> Option<String> {
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    // `--qd -1`: `-1` taken for a flag; the flag it followed, from the command line
    let Some(ContextValue::String(bad)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let at = args.iter().position(|a| a.starts_with(bad.as_str()))?;
    let value = &args[at];
    if !is_negative_number(value) {
        return None;
    }
    let flag = at
        .checked_sub(1)
        .map(|i| args[i].as_str())
        .filter(|b| b.starts_with('-'));
    Some(match flag {
        Some(flag) => format!(
            "iocap: error: {flag} {value}: the value must be positive; iocap takes no negative \
             numbers"
        ),
        None => format!(
            "iocap: error: '{value}' is a negative number; iocap takes no negative numbers, \
             and no flag is named -{}",
            &value[1..]
        ),
    })
}

/// `-1`, `-0.5`, `-8K`: a minus sign, then a digit or a decimal point and a digit.
fn is_negative_number(s: &str) -> bool {
    let rest = s.strip_prefix('-').unwrap_or("");
    let rest = rest.strip_prefix('.').unwrap_or(rest);
    rest.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cmd {
        #[arg(long, default_value_t = 16)]
        qd: u32,
        #[arg(long)]
        rate: Option<f64>,
        targets: Vec<String>,
    }

    fn error(args: &[&str]) -> Option<String> {
        let args: Vec<String> = std::iter::once("iocap")
            .chain(args.iter().copied())
            .map(String::from)
            .collect();
        let e = Cmd::try_parse_from(&args).unwrap_err();
        plain_error_in(&e, &args)
    }

    #[test]
    fn a_negative_value_is_refused_as_such_without_clap_s_tip() {
        let e = error(&["--qd", "-1", "t.dat"]).unwrap();
        assert_eq!(
            e,
            "iocap: error: --qd -1: the value must be positive; iocap takes no negative numbers"
        );
        assert!(!e.contains("-- -1"));
        let e = error(&["--rate", "-0.5"]).unwrap();
        assert!(e.starts_with("iocap: error: --rate -0.5:"), "{e}");
        // `--qd=-1` reaches the flag's parser, whose message names the range: it stands
        assert_eq!(error(&["--qd=-1"]), None);
        let e = error(&["-3"]).unwrap();
        assert!(e.contains("'-3' is a negative number"), "{e}");
    }

    #[test]
    fn other_errors_are_clap_s() {
        assert_eq!(error(&["--qd", "x"]), None);
        assert_eq!(error(&["--nope"]), None);
        assert_eq!(error(&["-x"]), None);
    }
}
