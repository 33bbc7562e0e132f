//! The block tracepoints as this kernel lays them out: each event's id and its fields' offsets,
//! read from tracefs (`events/block/<event>/format`), so the programs read the right bytes on
//! any kernel version without BTF relocations.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where tracefs is, in the order tried.
pub const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// One field of an event's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: u16,
    pub size: u16,
}

/// An event: its id (perf's `config`) and its fields by name.
#[derive(Clone, Debug, Default)]
pub struct Event {
    pub id: u64,
    pub fields: HashMap<String, Field>,
}

impl Event {
    /// A field the program needs, or what is missing.
    pub fn field(&self, name: &str, event: &str) -> Result<Field, String> {
        self.fields
            .get(name)
            .copied()
            .ok_or_else(|| format!("the tracepoint block:{event} has no field `{name}` here"))
    }
}

/// Parses a `format` file (`ID: 2104`, then `field:TYPE NAME; offset:N; size:M; ...` lines).
pub fn parse(text: &str) -> Result<Event, String> {
    let mut ev = Event::default();
    for line in text.lines() {
        let line = line.trim();
        if let Some(id) = line.strip_prefix("ID:") {
            ev.id = id
                .trim()
                .parse()
                .map_err(|_| format!("bad ID line `{line}`"))?;
        }
        let Some(rest) = line.strip_prefix("field:") else {
            continue;
        };
        let mut parts = rest.split(';').map(str::trim);
        let decl = parts.next().unwrap_or("");
        let name = decl.split_whitespace().last().unwrap_or("");
        let name = name.split('[').next().unwrap_or(name);
        let mut field = Field {
            offset: u16::MAX,
            size: 0,
        };
        for p in parts {
            if let Some(v) = p.strip_prefix("offset:") {
                field.offset = v.parse().map_err(|_| format!("bad offset in `{line}`"))?;
            } else if let Some(v) = p.strip_prefix("size:") {
                field.size = v.parse().map_err(|_| format!("bad size in `{line}`"))?;
            }
        }
        if !name.is_empty() && field.offset != u16::MAX {
            ev.fields.insert(name.to_string(), field);
        }
    }
    if ev.id == 0 {
        return Err("no ID line".into());
    }
    Ok(ev)
}

/// tracefs's directory, mounting it when it is not (root only; a failure is left to the
/// caller's error, which says how to mount it).
pub fn tracefs() -> Option<PathBuf> {
    let found = || {
        TRACEFS
            .iter()
            .map(PathBuf::from)
            .find(|p| p.join("events/block").is_dir())
    };
    if let Some(p) = found() {
        return Some(p);
    }
    #[cfg(target_os = "linux")]
    {
        let target = c"/sys/kernel/tracing";
        let fstype = c"tracefs";
        // SAFETY: every pointer is a NUL-terminated string that lives across the call; the
        // data argument may be null.
        unsafe {
            libc::mount(
                fstype.as_ptr(),
                target.as_ptr(),
                fstype.as_ptr(),
                0,
                std::ptr::null(),
            );
        }
    }
    found()
}

/// Reads `block/<event>`'s format under `root`.
pub fn read_event(root: &Path, event: &str) -> Result<Event, String> {
    let p = root.join("events/block").join(event).join("format");
    let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    // kernel 6.18's block_rq_issue, as tracefs prints it
    const ISSUE: &str = "name: block_rq_issue
ID: 2104
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;
\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;
\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;

print fmt: \"%d,%d %s %u (%s) %llu + %u %s,%u,%u [%s]\", REC->comm
";

    #[test]
    fn the_kernels_format_file_gives_each_fields_place() {
        let ev = parse(ISSUE).unwrap();
        assert_eq!(ev.id, 2104);
        assert_eq!(ev.field("dev", "x").unwrap(), Field { offset: 8, size: 4 });
        assert_eq!(
            ev.field("sector", "x").unwrap(),
            Field {
                offset: 16,
                size: 8
            }
        );
        assert_eq!(
            ev.field("bytes", "x").unwrap(),
            Field {
                offset: 28,
                size: 4
            }
        );
        assert_eq!(
            ev.field("rwbs", "x").unwrap(),
            Field {
                offset: 34,
                size: 10
            }
        );
        assert_eq!(
            ev.field("comm", "x").unwrap(),
            Field {
                offset: 44,
                size: 16
            }
        );
        let e = ev.field("error", "block_rq_issue").unwrap_err();
        assert!(
            e.contains("block:block_rq_issue has no field `error`"),
            "{e}"
        );
    }

    #[test]
    fn a_file_without_an_id_is_refused() {
        assert!(parse("name: x\nformat:\n").is_err());
    }
}
