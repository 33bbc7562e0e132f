//! An error as the user reads it: the message and each cause once. Error types that print
//! their source in their own message (`"{context}: {source}"`) and also report it as the source
//! are not repeated. Here with the other ways text is written for a terminal, so every front
//! end words its errors alike. An error may quote what a user's file holds (a suite parse error
//! shows the bad line): its control characters read escaped, as [`super::printable_lines`]
//! shows them.

use std::error::Error;

/// `iocap: error: ` and the message with its causes, terminal controls escaped.
pub fn error_text(e: &(dyn Error + 'static)) -> String {
    let mut msg = format!("iocap: error: {e}");
    let mut cause = e.source();
    while let Some(c) = cause {
        let c_text = c.to_string();
        if !msg.ends_with(&c_text) {
            msg.push_str(": ");
            msg.push_str(&c_text);
        }
        cause = c.source();
    }
    super::printable_lines(&msg).into_owned()
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
    fn what_an_error_quotes_reads_escaped() {
        let e = anyhow::anyhow!("line 2:\n  | rw \x1b[2J\u{202e}");
        assert_eq!(
            super::error_text(e.as_ref()),
            "iocap: error: line 2:\n  | rw \\e[2J\\u{202e}"
        );
    }
}
