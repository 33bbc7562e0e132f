//! Just enough of an XML reader for DiskSpd's output: elements, attributes, text, comments.

use std::collections::BTreeSet;

/// One element: its path from the root (`Results/TimeSpan/ThreadCount`), attributes and text.
#[derive(Debug)]
pub struct Element {
    pub path: String,
    pub attrs: Vec<(String, String)>,
    pub text: String,
}

/// Just enough XML: elements, attributes in double quotes, text, comments, the five entities.
pub fn read(xml: &str) -> Vec<Element> {
    let (mut out, mut stack, mut open) = (
        Vec::<Element>::new(),
        Vec::<String>::new(),
        Vec::<usize>::new(),
    );
    let mut rest = xml;
    while let Some(lt) = rest.find('<') {
        if let Some(&i) = open.last() {
            out[i].text.push_str(&decode(&rest[..lt]));
        }
        rest = &rest[lt..];
        if let Some(comment) = rest.strip_prefix("<!--") {
            rest = &comment[comment.find("-->").expect("comment closed") + 3..];
            continue;
        }
        let gt = rest.find('>').expect("tag closed");
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "nesting");
            open.pop();
            continue;
        }
        let empty = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let (name, attr_text) = tag.split_once(' ').unwrap_or((tag, ""));
        stack.push(name.to_string());
        out.push(Element {
            path: stack.join("/"),
            attrs: attrs(attr_text),
            text: String::new(),
        });
        if empty {
            stack.pop();
        } else {
            open.push(out.len() - 1);
        }
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert!(rest.trim().is_empty(), "text after the root: {rest:?}");
    for e in &mut out {
        e.text = e.text.trim().to_string();
    }
    out
}

pub fn attrs(mut s: &str) -> Vec<(String, String)> {
    let mut out = vec![];
    while let Some(eq) = s.find("=\"") {
        let name = s[..eq].trim().to_string();
        let value = &s[eq + 2..];
        let end = value.find('"').expect("attribute closed");
        out.push((name, decode(&value[..end])));
        s = &value[end + 1..];
    }
    out
}

pub fn decode(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

pub fn paths(elements: &[Element]) -> BTreeSet<&str> {
    elements.iter().map(|e| e.path.as_str()).collect()
}

/// Distinct paths in the order they first appear.
pub fn first_seen(elements: &[Element]) -> Vec<&str> {
    let mut seen = BTreeSet::new();
    let all = elements.iter().map(|e| e.path.as_str());
    all.filter(|p| seen.insert(*p)).collect()
}

pub fn text<'a>(elements: &'a [Element], path: &str) -> Vec<&'a str> {
    let found = elements.iter().filter(|e| e.path == path);
    found.map(|e| e.text.as_str()).collect()
}
