//! The XML writer both halves of the `-Rxml` document use: DiskSpd's two-space indent, and
//! escaping, the one thing a library would add.

use std::fmt::{Display, Write};

/// An indenting writer: two spaces a level, as DiskSpd indents.
pub(crate) struct Xml {
    pub out: String,
    pub depth: usize,
}

impl Xml {
    pub fn indent(&mut self) {
        self.out.extend(std::iter::repeat_n(' ', 2 * self.depth));
    }
    pub fn open(&mut self, tag: &str) {
        self.open_with(tag, &[]);
    }
    /// An element with attributes, its children to follow.
    pub fn open_with(&mut self, tag: &str, attrs: &[(&str, String)]) {
        self.indent();
        let _ = write!(self.out, "<{tag}");
        self.attrs(attrs);
        self.out.push_str(">\n");
        self.depth += 1;
    }
    fn attrs(&mut self, attrs: &[(&str, String)]) {
        for (name, value) in attrs {
            let _ = write!(self.out, " {name}=\"{}\"", escape(value));
        }
    }
    pub fn close(&mut self, tag: &str) {
        self.depth -= 1;
        self.indent();
        let _ = writeln!(self.out, "</{tag}>");
    }
    pub fn leaf(&mut self, tag: &str, value: impl Display) {
        self.indent();
        let _ = writeln!(self.out, "<{tag}>{}</{tag}>", escape(&value.to_string()));
    }
    pub fn empty(&mut self, tag: &str, attrs: &[(&str, String)]) {
        self.indent();
        let _ = write!(self.out, "<{tag}");
        self.attrs(attrs);
        self.out.push_str("/>\n");
    }
    /// A comment: markup is not read inside one, but `--` may not occur, so it is split.
    pub fn comment(&mut self, text: &str) {
        self.indent();
        let clean: String = text
            .chars()
            .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
            .collect();
        let mut body = clean;
        while body.contains("--") {
            body = body.replace("--", "- -");
        }
        let _ = writeln!(self.out, "<!-- {body} -->");
    }
}

/// Text and attribute values: the five markup characters as entities; control characters XML
/// 1.0 cannot carry at all become U+FFFD.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}
