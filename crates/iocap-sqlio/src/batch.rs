//! SQLIO batch files (`.bat` / `.cmd`): the form in which DBAs keep their test plans.
//!
//! iocap reads such a file instead of handing it to a shell, so only what a test plan needs is
//! understood: comments (`::`, `rem`), `echo` lines, and one sqlio call per line, with or
//! without `call`, `@` and a path to the executable (quoted if it holds spaces, as under
//! `Program Files`). Anything else is refused with its line number rather than skipped, so a
//! plan never runs with a step missing. Output redirection (`> out.txt`, `2>&1`) is dropped:
//! iocap keeps every result and its own output can be redirected as a whole. Pipes and `&`
//! chains are refused. `%VAR%` is expanded from the environment, as cmd.exe does
//! ([`crate::batchvars`]).

use crate::batchvars;
use crate::SqlioError;

/// One sqlio call of a batch file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchLine {
    /// Line number in the file, from 1.
    pub line: usize,
    /// The arguments after the program name, as written (dashes not yet normalised).
    pub args: Vec<String>,
}

/// Parses a Windows batch file of sqlio calls, its `%VAR%` read from this process's
/// environment. Handles CRLF line ends and a byte-order mark.
pub fn parse_batch(text: &str) -> Result<Vec<BatchLine>, SqlioError> {
    parse_batch_in(text, &batchvars::process_env)
}

/// [`parse_batch`] with the variables `env` gives.
pub fn parse_batch_in(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<BatchLine>, SqlioError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let bad = |problem: String| SqlioError::BadBatchLine {
            line: idx + 1,
            problem,
        };
        let line = raw.trim();
        let line = line.strip_prefix('@').unwrap_or(line).trim_start();
        if line.is_empty() || line.starts_with("::") {
            continue;
        }
        let tokens = tokenize(line).map_err(bad)?;
        let Some((first, _)) = tokens.first() else {
            continue;
        };
        if is_comment_or_echo(first) {
            continue;
        }
        let tokens = tokenize(&batchvars::expand(line, env).map_err(bad)?).map_err(bad)?;
        let mut rest = &tokens[..];
        if first.eq_ignore_ascii_case("call") {
            rest = &rest[1..];
        }
        let program = rest.first().map(|(t, _)| basename(t).to_ascii_lowercase());
        let args = match program.as_deref() {
            Some("sqlio" | "sqlio.exe") => &rest[1..],
            Some("iocap" | "iocap.exe")
                if rest
                    .get(1)
                    .is_some_and(|(t, _)| t.eq_ignore_ascii_case("sqlio")) =>
            {
                &rest[2..]
            }
            _ => {
                return Err(bad(format!(
                    "'{line}' is not a sqlio call (expected sqlio, sqlio.exe or iocap sqlio, \
                     optionally after call)"
                )))
            }
        };
        out.push(BatchLine {
            line: idx + 1,
            args: drop_redirections(args).map_err(bad)?,
        });
    }
    Ok(out)
}

/// `rem`, `echo` and their `echo.` / `echo:` variants, in any case.
fn is_comment_or_echo(token: &str) -> bool {
    let t = token.to_ascii_lowercase();
    t == "rem"
        || t == "echo"
        || ["echo.", "echo:", "echo(", "echo/"]
            .iter()
            .any(|p| t.starts_with(p))
}

/// The last component of a Windows or Unix path.
fn basename(path: &str) -> &str {
    path.rsplit(['\\', '/']).next().unwrap_or(path)
}

/// Splits on whitespace; double quotes group and are removed. Each token says whether any of
/// it was quoted, since quoted text is never a redirection or a pipe.
fn tokenize(line: &str) -> Result<Vec<(String, bool)>, String> {
    let mut tokens = Vec::new();
    let mut current: Option<(String, bool)> = None;
    let mut in_quotes = false;
    for c in line.chars() {
        match c {
            '"' => {
                in_quotes = !in_quotes;
                current.get_or_insert_with(|| (String::new(), true)).1 = true;
            }
            c if c.is_whitespace() && !in_quotes => tokens.extend(current.take()),
            c => current
                .get_or_insert_with(|| (String::new(), false))
                .0
                .push(c),
        }
    }
    if in_quotes {
        return Err("a double quote is not closed".into());
    }
    tokens.extend(current);
    Ok(tokens)
}

/// Removes `>file`, `> file`, `>>file`, `2>&1`, `<file` and the like; refuses `|` and `&`.
fn drop_redirections(tokens: &[(String, bool)]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut skip_target = false;
    for (token, quoted) in tokens {
        if std::mem::take(&mut skip_target) {
            continue;
        }
        if *quoted {
            out.push(token.clone());
            continue;
        }
        if let Some(pos) = token.find(['>', '<']) {
            let (before, redirect) = token.split_at(pos);
            if !before.is_empty() && before != "1" && before != "2" {
                out.push(before.to_string());
            }
            skip_target = redirect.trim_start_matches(['>', '<']).is_empty();
            continue;
        }
        if token.contains(['|', '&']) {
            return Err(format!(
                "'{token}': pipes and command chains are not supported; put one sqlio call per line"
            ));
        }
        out.push(token.clone());
    }
    if skip_target {
        return Err("a redirection has no file name after it".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<Vec<String>> {
        parse_batch(text)
            .unwrap()
            .into_iter()
            .map(|b| b.args)
            .collect()
    }

    #[test]
    fn skips_comments_echo_and_blank_lines() {
        let text = "@echo off\r\nREM plan for the SAN\r\nrem\r\n:: comment\r\n  \r\n\
                    echo starting\r\necho.\r\nsqlio -kR -s10\r\n";
        let lines = parse_batch(text).unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].line, 8);
        assert_eq!(lines[0].args, ["-kR", "-s10"]);
    }

    #[test]
    fn accepts_every_spelling_of_the_program() {
        let text = "sqlio -kR\nSQLIO.EXE -kR\nCALL sqlio -kR\ncall C:\\tools\\sqlio.exe -kR\n\
                    @call \"C:\\Program Files (x86)\\SQLIO\\sqlio.exe\" -kR\n\
                    iocap sqlio -kR\ncall /usr/bin/iocap SQLIO -kR\n./sqlio -kR\n";
        assert_eq!(args(text), vec![vec!["-kR".to_string()]; 8]);
    }

    #[test]
    fn other_commands_are_errors_naming_the_line() {
        for (text, line) in [
            ("sqlio -kR\ntimeout /T 60\n", 2),
            ("copy a b", 1),
            (":: x\r\n\r\ncall other.exe -kR\r\n", 3),
            ("call\n", 1),
            ("iocap run -kR\n", 1),
        ] {
            let e = parse_batch(text).unwrap_err();
            assert!(
                matches!(e, SqlioError::BadBatchLine { line: l, .. } if l == line),
                "{text:?}: {e}"
            );
            assert!(e
                .to_string()
                .starts_with(&format!("batch file line {line}: ")));
        }
    }

    #[test]
    fn keeps_en_dashes_and_quoted_arguments() {
        assert_eq!(
            args("sqlio \u{2013}b8 -F\"my params.txt\""),
            vec![vec![
                "\u{2013}b8".to_string(),
                "-Fmy params.txt".to_string()
            ]]
        );
    }

    #[test]
    fn drops_output_redirection() {
        let expected = vec![vec!["-kR".to_string(), "-s5".to_string()]];
        for text in [
            "sqlio -kR -s5 > out.txt",
            "sqlio -kR -s5 >>out.txt 2>&1",
            "sqlio -kR -s5> out.txt",
            "sqlio -kR 1>out.txt -s5",
        ] {
            assert_eq!(args(text), expected, "{text}");
        }
    }

    #[test]
    fn variables_are_expanded_before_the_line_is_split() {
        let env = |k: &str| match k {
            "DATA" => Some(r"E:\my data".to_string()),
            "SQLIO" => Some(r"C:\tools\sqlio.exe".to_string()),
            _ => None,
        };
        let text = "rem %UNSET% in a comment is left alone\n\
                    %SQLIO% -kR -s10 \"%DATA%\\t.dat\"\n";
        let lines = parse_batch_in(text, &env).unwrap();
        assert_eq!(lines[0].args, ["-kR", "-s10", r"E:\my data\t.dat"]);
        let e = parse_batch_in("sqlio -kR\nsqlio -kW %LOGDIR%\\t.dat\n", &env).unwrap_err();
        assert_eq!(
            e.to_string(),
            "batch file line 2: %LOGDIR% is not set in the environment; set LOGDIR or write \
             its value in the file"
        );
    }

    #[test]
    fn refuses_pipes_chains_and_broken_quotes() {
        for text in [
            "sqlio -kR | find \"IOs\"",
            "sqlio -kR && sqlio -kW",
            "sqlio -kR >",
            "sqlio \"-kR",
        ] {
            let e = parse_batch(text).unwrap_err().to_string();
            assert!(e.starts_with("batch file line 1: "), "{text}: {e}");
        }
    }
}
