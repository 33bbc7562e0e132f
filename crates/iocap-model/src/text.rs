//! Stored strings shown in a terminal, a CSV cell or JSON (docs/safety.md, rule 7). A label,
//! tag, note, target path or hostname comes from whoever saved the run, perhaps another user
//! of a shared store, and a trace's process names and a file's first bytes come from whoever
//! wrote them; printed raw, an escape
//! sequence in it (`\e[2J`, `\e]0;title\a`) would clear or retitle the reader's terminal. The
//! text views show every control character escaped, and so do CSV and Markdown, which people
//! open in a terminal, an editor or a spreadsheet. JSON stays exact: [`json_escaped`] writes
//! the same characters as JSON's own `\uXXXX` escapes, which every reader turns back into them.

use std::borrow::Cow;

/// `s` for one line of text: every control character escaped, line breaks too. C0 and DEL
/// read `\e`, `\a`, `\n`, `\r`, `\t` or `\xNN`; C1 (U+0080 to U+009F) and the bidirectional
/// overrides, which reorder what follows them, read `\u{NN}`.
pub fn printable(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// [`printable`] for text of several lines (a note, a whole view): line breaks and tabs stay.
pub fn printable_lines(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// Whether `c` acts on a terminal or reorders the text after it: a C0 or C1 control, DEL, or a
/// bidirectional embedding, override or isolate.
pub fn acts_on_terminal(c: char) -> bool {
    match c {
        c if c.is_control() => true, // C0, DEL and C1
        // bidirectional embeddings, overrides and isolates
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

fn unsafe_char(c: char, keep_lines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_lines,
        c => acts_on_terminal(c),
    }
}

/// `c` as [`printable`] shows it (`\e`, `\xNN`, `\u{NN}`), for a character that
/// [`acts_on_terminal`].
pub fn push_escaped(out: &mut String, c: char) {
    match c {
        '\x1b' => out.push_str("\\e"),
        '\x07' => out.push_str("\\a"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// A JSON text with every character that [`acts_on_terminal`] written as a `\uXXXX` escape:
/// the same document to any JSON reader. serde_json escapes C0 itself; DEL, C1 and the
/// bidirectional controls it writes raw. Outside strings a JSON text holds none of them, so
/// each one found is inside a string, where the escape means the character itself.
pub fn json_escaped(json: String) -> String {
    if !json.chars().any(|c| unsafe_char(c, true)) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if unsafe_char(c, true) {
            // every such character is in the Basic Multilingual Plane: one \uXXXX
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Bytes that may not be text (a file's first bytes, a field of a foreign log) as one safe,
/// quotable line: printable ASCII as it is, `"` and `\\` escaped, any other byte as `\xNN`.
pub fn printable_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// A CSV text cell (RFC 4180) that is safe to open: controls escaped as in
/// [`printable_lines`], a cell a spreadsheet would take for a formula neutralised with a
/// leading `'`, then quoted when it holds a comma, a quote or a line break. Every CSV iocap
/// writes (the run export, a trace's export) goes through it.
pub fn csv_cell(s: &str) -> String {
    let s = printable_lines(s);
    let s = if starts_formula(&s) {
        format!("'{s}")
    } else {
        s.into_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// Whether a spreadsheet would take `s` as a formula (OWASP's list: `=`, `+`, `-`, `@`, tab,
/// CR first) rather than a number such as `-1.5` or `+3e2`.
fn starts_formula(s: &str) -> bool {
    let number = s.parse::<f64>().is_ok_and(f64::is_finite)
        && s.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c));
    s.starts_with(['=', '+', '-', '@', '\t', '\r']) && !number
}

fn escape(s: &str, keep_lines: bool) -> Cow<'_, str> {
    if !s.chars().any(|c| unsafe_char(c, keep_lines)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c, keep_lines) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `head` then `body` wrapped at `width` columns (a word longer than a line stands alone on
/// its line), later lines indented by `indent` spaces; one newline at the end. The one wrap of
/// every text view: the reports' and DiskSpd's notes.
pub fn wrap_indented(head: &str, body: &str, width: usize, indent: usize) -> String {
    let mut out = head.to_string();
    let mut col = head.chars().count();
    for (k, word) in body.split_whitespace().enumerate() {
        let n = word.chars().count();
        if k > 0 && col + 1 + n > width {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            col = indent;
        } else if k > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += n;
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_are_escaped() {
        assert_eq!(printable("\x1b[2J\x1b]0;X\x07"), "\\e[2J\\e]0;X\\a");
        assert_eq!(printable("a\u{9b}31m\x7f\x00b"), "a\\u{9b}31m\\x7f\\x00b");
        assert_eq!(printable("two\nlines\r\t"), "two\\nlines\\r\\t");
        assert_eq!(printable("abc\u{202e}cba"), "abc\\u{202e}cba");
    }

    #[test]
    fn raw_bytes_show_as_one_quotable_line() {
        assert_eq!(
            printable_bytes(b"PK\x03\x04\x1b[2J\"a\\\xff\n"),
            "PK\\x03\\x04\\x1b[2J\\\"a\\\\\\xff\\x0a"
        );
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for s in ["san-a raid10 → 7.2", "/data/ü.dat", "µs ±3 %", ""] {
            assert!(matches!(printable(s), Cow::Borrowed(t) if t == s), "{s}");
        }
    }

    #[test]
    fn json_escapes_read_back_exactly() {
        let s = "a\u{202e}b\u{7f}\u{9b}\u{2066}\x1b\n\tü";
        let json = json_escaped(serde_json::to_string_pretty(&[s]).unwrap());
        assert!(
            !json.chars().any(|c| acts_on_terminal(c) && c != '\n'),
            "{json}"
        );
        assert!(
            json.contains("a\\u202eb\\u007f\\u009b\\u2066\\u001b\\n\\tü"),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Vec<String>>(&json).unwrap(), [s]);
    }

    #[test]
    fn lines_keep_their_breaks_but_lose_escapes() {
        assert_eq!(
            printable_lines("note:\n\tline \x1b[1mbold\x1b[0m\r\n"),
            "note:\n\tline \\e[1mbold\\e[0m\\r\n"
        );
    }
}
