//! An error as the user reads it: the message and each cause once. Error types that print
//! their source in their own message (`"{context}: {source}"`) and also report it as the source
//! are not repeated. Here with the other ways text is written for a terminal, so every front
//! end words its errors alike. An error may quote what a user's file holds (a suite parse error
//! shows the bad line): its control characters read escaped, as [`super::printable_lines`]
//! shows them. A refusal by the system's permissions ("os error 13") comes with a hint of what
//! to do, since the number alone tells a new user nothing.

use std::error::Error;

/// The hint after an error the system's permissions caused.
pub const PERMISSION_HINT: &str =
    "iocap: hint: run iocap as a user who may use that path (as root for a device)";

/// `iocap: error: ` and the message with its causes, terminal controls escaped, and a hint on
/// a line of its own where the cause is a refused permission. On a terminal it is wrapped to
/// the width ([`crate::width`]), a long line continued two columns in; off one (a log, a pipe,
/// a script searching stderr for its words) each line stays whole.
pub fn error_text(e: &(dyn Error + 'static)) -> String {
    let mut msg = format!("iocap: error: {e}");
    let mut denied = is_denied(e);
    let mut cause = e.source();
    while let Some(c) = cause {
        let c_text = c.to_string();
        if !msg.ends_with(&c_text) {
            msg.push_str(": ");
            msg.push_str(&c_text);
        }
        denied |= is_denied(c);
        cause = c.source();
    }
    // errors that carry the system's error as text only
    denied |= [
        "Permission denied (os error 13)",
        "Operation not permitted (os error 1)",
    ]
    .iter()
    .any(|t| msg.contains(t));
    if denied {
        msg.push('\n');
        msg.push_str(PERMISSION_HINT);
    }
    for_stderr(&super::printable_lines(&msg))
}

/// `iocap: error: MESSAGE` for an error a command prints itself (a damaged trace, a replay's
/// failed request): escaped and wrapped as [`error_text`] is.
pub fn error_line(msg: &str) -> String {
    for_stderr(&super::printable_lines(&format!("iocap: error: {msg}")))
}

/// `iocap: MESSAGE`, a line a command says on stderr (`iocap: verifying PATH ...`): escaped and
/// wrapped as [`error_text`] is.
pub fn note_line(msg: &str) -> String {
    for_stderr(&super::printable_lines(&format!("iocap: {msg}")))
}

/// `text` for stderr: wrapped to the width on a terminal, whole off one.
fn for_stderr(text: &str) -> String {
    use std::io::IsTerminal;
    match std::io::stderr().is_terminal() {
        true => wrapped(text, crate::width()),
        false => text.to_string(),
    }
}

/// Each line of `text` longer than `width` wrapped at spaces, continued two columns further
/// in than it starts; shorter lines (a quoted line of a suite file) as they are.
fn wrapped(text: &str, width: usize) -> String {
    let width = width.max(40);
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if l.chars().count() <= width {
                return l.to_string();
            }
            let lead = l.len() - l.trim_start().len();
            let w = super::wrap_indented(&l[..lead], &l[lead..], width, lead + 2);
            w.trim_end_matches('\n').to_string()
        })
        .collect();
    lines.join("\n")
}

/// Whether `e` is the system refusing a permission (EACCES, EPERM; Windows' access denied).
fn is_denied(e: &(dyn Error + 'static)) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::PermissionDenied)
}

#[cfg(test)]
mod tests {
    /// As `#[error("cannot open /x: {source}")]` with `#[source]` writes it.
    #[derive(Debug)]
    struct Twice {
        source: std::io::Error,
    }

    impl std::fmt::Display for Twice {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "cannot open /x: {}", self.source)
        }
    }

    impl std::error::Error for Twice {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn a_refused_permission_comes_with_a_hint() {
        let e = anyhow::Error::new(std::io::Error::from_raw_os_error(13))
            .context("cannot open /data/t.dat");
        let t = super::error_text(e.as_ref());
        assert_eq!(
            t,
            format!(
                "iocap: error: cannot open /data/t.dat: Permission denied (os error 13)\n{}",
                super::PERMISSION_HINT
            )
        );
        assert!(super::PERMISSION_HINT.chars().count() <= 80);
        // an error that holds the system's as text only
        let e = anyhow::anyhow!("store: unable to open: Permission denied (os error 13)");
        assert!(super::error_text(e.as_ref()).ends_with(super::PERMISSION_HINT));
        // other errors have none
        let e = anyhow::Error::new(std::io::Error::from_raw_os_error(2)).context("reading /y");
        assert!(!super::error_text(e.as_ref()).contains("hint"));
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let e = anyhow::Error::new(Twice {
            source: std::io::Error::from_raw_os_error(2),
        });
        let t = super::error_text(e.as_ref());
        assert_eq!(t.matches("os error 2").count(), 1, "{t}");
        let e = anyhow::Error::new(std::io::Error::from_raw_os_error(2)).context("reading /y");
        assert_eq!(
            super::error_text(e.as_ref()),
            "iocap: error: reading /y: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn a_long_error_wraps_to_the_width() {
        let e = anyhow::anyhow!(
            "/data/db/iocap.testfile is in use: process 4242 (iocap) holds its lock, filling \
             or testing it. iocap runs one test at a time on a file; wait for that run to end, \
             or give another file"
        );
        let t = super::wrapped(&format!("iocap: error: {e}"), 80);
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        assert!(t.lines().skip(1).all(|l| l.starts_with("  ")), "{t}");
        let words: Vec<&str> = t.split_whitespace().collect();
        assert_eq!(words.join(" "), format!("iocap: error: {e}"));
        // a short line, and a quoted one, as they are
        let quoted = "iocap: error: line 2:\n  | rw  =  1";
        assert_eq!(super::wrapped(quoted, 80), quoted);
    }

    #[test]
    fn what_an_error_quotes_reads_escaped() {
        let e = anyhow::anyhow!("line 2:\n  | rw \x1b[2J\u{202e}");
        assert_eq!(
            super::error_text(e.as_ref()),
            "iocap: error: line 2:\n  | rw \\e[2J\\u{202e}"
        );
    }
}
