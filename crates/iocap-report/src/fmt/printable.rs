//! Stored strings shown in a terminal. A label, tag, note, target path or hostname comes from
//! whoever saved the run, perhaps another user of a shared store; printed raw, an escape
//! sequence in it (`\e[2J`, `\e]0;title\a`) would clear or retitle the reader's terminal. The
//! text views show every control character escaped; JSON stays exact (serde escapes it).

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

fn unsafe_char(c: char, keep_lines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_lines,
        c if c.is_control() => true, // C0, DEL and C1
        // bidirectional embeddings, overrides and isolates
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

fn escape(s: &str, keep_lines: bool) -> Cow<'_, str> {
    if !s.chars().any(|c| unsafe_char(c, keep_lines)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !unsafe_char(c, keep_lines) {
            out.push(c);
            continue;
        }
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
    Cow::Owned(out)
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
    fn plain_text_is_borrowed_unchanged() {
        for s in ["san-a raid10 → 7.2", "/data/ü.dat", "µs ±3 %", ""] {
            assert!(matches!(printable(s), Cow::Borrowed(t) if t == s), "{s}");
        }
    }

    #[test]
    fn lines_keep_their_breaks_but_lose_escapes() {
        assert_eq!(
            printable_lines("note:\n\tline \x1b[1mbold\x1b[0m\r\n"),
            "note:\n\tline \\e[1mbold\\e[0m\\r\n"
        );
    }
}
