//! A chunk's records, as the uncompressed payload holds them: two small tables, then one packed
//! column per field ([`super::pack`]).
//!
//! ```text
//! varint K, then K kinds (varint op | flags << 3 | has_completion << 11)
//! varint D, then D devices (varint major, varint minor)        the chunk's device table
//! varint C, then C names (one byte length <= 16, the bytes)    the chunk's process names
//! column kind      index into the kind table
//! column bytes
//! column issue     issue_ns - the previous record's (the first: - the chunk's first_issue_ns)
//! column sector    sector - the previous record's end sector (sector + bytes / 512; first:
//!                  0); a record without data (a flush) keeps its sector as it is, usually 0,
//!                  and leaves the previous end where it was
//! column latency   complete_ns - issue_ns (0 without a completion)
//! column error     the completion's errno (negative) or 0
//! column dev       index into the device table
//! column pid
//! column comm      index into the name table (a name without its trailing NULs)
//! ```
//!
//! Columns rather than records one after another: a field that does not change (op, size,
//! device, pid, name in a one-process stream) then costs almost nothing, and the fields that do
//! (offsets, times) are packed near their entropy. Differences (issue times, offsets from the
//! previous end) make a sequential stream's sectors and a steady stream's times small. Each
//! chunk starts afresh, so it is read without the ones before it.

use std::collections::HashMap;

use super::pack::{pack_column, put_varint, Cursor};
use crate::record::{DevId, IoFlags, IoRecord, Op, COMM_LEN};

/// Encodes chunks; its buffers are kept from one chunk to the next.
#[derive(Default)]
pub struct Encoder {
    col: Vec<i64>,
    kinds: Vec<u16>,
    kind_idx: Vec<u32>,
    devs: Vec<DevId>,
    dev_idx: Vec<u32>,
    comms: HashMap<[u8; COMM_LEN], u32>,
    comm_list: Vec<[u8; COMM_LEN]>,
    comm_idx: Vec<u32>,
}

fn kind(r: &IoRecord) -> u16 {
    r.op as u16 | u16::from(r.flags.0) << 3 | u16::from(r.complete_ns.is_some()) << 11
}

/// `v`'s index in `table`, appended when new; `last` is the previous lookup, the usual answer.
fn index_of<T: PartialEq + Copy>(table: &mut Vec<T>, last: &mut Option<(T, u32)>, v: T) -> u32 {
    let i = match *last {
        Some((w, i)) if w == v => i,
        _ => match table.iter().position(|&w| w == v) {
            Some(i) => i as u32,
            None => {
                table.push(v);
                table.len() as u32 - 1
            }
        },
    };
    *last = Some((v, i));
    i
}

fn comm_len(c: &[u8; COMM_LEN]) -> usize {
    c.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1)
}

fn put(col: &mut Vec<i64>, out: &mut Vec<u8>, vals: impl Iterator<Item = i64>) {
    col.clear();
    col.extend(vals);
    pack_column(col, out);
}

impl Encoder {
    /// `recs` as a payload in `out` (cleared first).
    pub fn encode(&mut self, recs: &[IoRecord], first_issue_ns: u64, out: &mut Vec<u8>) {
        out.clear();
        self.tables(recs);
        put_varint(out, self.kinds.len() as u64);
        for &k in &self.kinds {
            put_varint(out, u64::from(k));
        }
        put_varint(out, self.devs.len() as u64);
        for d in &self.devs {
            put_varint(out, u64::from(d.major));
            put_varint(out, u64::from(d.minor));
        }
        put_varint(out, self.comm_list.len() as u64);
        for c in &self.comm_list {
            let n = comm_len(c);
            out.push(n as u8);
            out.extend_from_slice(&c[..n]);
        }
        let col = &mut self.col;
        put(col, out, self.kind_idx.iter().map(|&i| i64::from(i)));
        put(col, out, recs.iter().map(|r| i64::from(r.bytes)));
        let mut prev = first_issue_ns;
        put(
            col,
            out,
            recs.iter().map(|r| {
                let d = r.issue_ns.wrapping_sub(prev) as i64;
                prev = r.issue_ns;
                d
            }),
        );
        let mut end = 0u64;
        put(
            col,
            out,
            recs.iter().map(|r| {
                if r.bytes == 0 {
                    return r.sector as i64;
                }
                let d = r.sector.wrapping_sub(end) as i64;
                end = r.sector.wrapping_add(u64::from(r.bytes >> 9));
                d
            }),
        );
        let latency = |r: &IoRecord| r.complete_ns.map_or(0, |c| c.wrapping_sub(r.issue_ns));
        put(col, out, recs.iter().map(|r| latency(r) as i64));
        put(col, out, recs.iter().map(|r| i64::from(r.error)));
        put(col, out, self.dev_idx.iter().map(|&i| i64::from(i)));
        put(col, out, recs.iter().map(|r| i64::from(r.pid)));
        put(col, out, self.comm_idx.iter().map(|&i| i64::from(i)));
    }

    fn tables(&mut self, recs: &[IoRecord]) {
        self.kinds.clear();
        self.kind_idx.clear();
        self.devs.clear();
        self.dev_idx.clear();
        self.comms.clear();
        self.comm_list.clear();
        self.comm_idx.clear();
        let (mut last_kind, mut last_dev) = (None, None);
        let mut last_comm: Option<([u8; COMM_LEN], u32)> = None;
        for r in recs {
            let k = index_of(&mut self.kinds, &mut last_kind, kind(r));
            self.kind_idx.push(k);
            let d = index_of(&mut self.devs, &mut last_dev, r.dev);
            self.dev_idx.push(d);
            // the previous record's name is the usual answer: no hashing then
            let c = match last_comm {
                Some((name, i)) if name == r.comm => i,
                _ => {
                    let next = self.comm_list.len() as u32;
                    let c = *self.comms.entry(r.comm).or_insert(next);
                    if c == next {
                        self.comm_list.push(r.comm);
                    }
                    c
                }
            };
            last_comm = Some((r.comm, c));
            self.comm_idx.push(c);
        }
    }
}

fn blank() -> IoRecord {
    IoRecord {
        issue_ns: 0,
        complete_ns: None,
        dev: DevId::default(),
        sector: 0,
        bytes: 0,
        op: Op::Read,
        flags: IoFlags(0),
        error: 0,
        pid: 0,
        comm: [0; COMM_LEN],
    }
}

fn narrow<T: TryFrom<i64>>(v: i64, what: &str) -> Result<T, String> {
    T::try_from(v).map_err(|_| format!("{what} {v} is out of range"))
}

/// The chunk's tables, decoded.
type Kind = (Op, IoFlags, Option<u64>);

struct Tables {
    kinds: Vec<Kind>,
    devs: Vec<DevId>,
    comms: Vec<[u8; COMM_LEN]>,
}

fn read_tables(c: &mut Cursor, n: usize) -> Result<Tables, String> {
    let mut t = Tables {
        kinds: Vec::new(),
        devs: Vec::new(),
        comms: Vec::new(),
    };
    for _ in 0..table_len(c, n, "kinds")? {
        let k = c.varint()?;
        if k >= 1 << 12 {
            return Err(format!("record kind {k:#x} is unknown"));
        }
        let op = Op::from_u8((k & 7) as u8).ok_or(format!("operation {} is unknown", k & 7))?;
        t.kinds
            .push((op, IoFlags((k >> 3) as u8), (k >> 11 == 1).then_some(0)));
    }
    for _ in 0..table_len(c, n, "devices")? {
        let major = narrow(c.varint()? as i64, "a device major")?;
        let minor = narrow(c.varint()? as i64, "a device minor")?;
        t.devs.push(DevId { major, minor });
    }
    for _ in 0..table_len(c, n, "process names")? {
        let len = usize::from(c.byte()?);
        let mut comm = [0u8; COMM_LEN];
        let name = c.take(len).ok().filter(|_| len <= COMM_LEN);
        comm[..len.min(COMM_LEN)].copy_from_slice(name.ok_or("a process name is too long")?);
        t.comms.push(comm);
    }
    Ok(t)
}

fn lookup<T: Copy>(table: &[T], v: i64, what: &str) -> Result<T, String> {
    let found = usize::try_from(v).ok().and_then(|i| table.get(i));
    found
        .copied()
        .ok_or(format!("{what} index {v} is not in the chunk's table"))
}

/// Reads the next column and gives each value to its record.
fn each(
    c: &mut Cursor,
    col: &mut Vec<i64>,
    out: &mut [IoRecord],
    mut set: impl FnMut(&mut IoRecord, i64) -> Result<(), String>,
) -> Result<(), String> {
    c.column(out.len(), col)?;
    out.iter_mut()
        .zip(col.iter())
        .try_for_each(|(r, &v)| set(r, v))
}

/// Decodes a payload of `n` records into `out` (cleared first). `col` is scratch.
pub fn decode(
    raw: &[u8],
    n: usize,
    first_issue_ns: u64,
    col: &mut Vec<i64>,
    out: &mut Vec<IoRecord>,
) -> Result<(), String> {
    let mut c = Cursor::new(raw);
    let t = read_tables(&mut c, n)?;
    out.clear();
    out.resize(n, blank());
    each(&mut c, col, out, |r, v| {
        (r.op, r.flags, r.complete_ns) = lookup(&t.kinds, v, "kind")?;
        Ok(())
    })?;
    each(&mut c, col, out, |r, v| {
        narrow(v, "a size").map(|x| r.bytes = x)
    })?;
    let mut prev = first_issue_ns;
    each(&mut c, col, out, |r, v| {
        prev = prev.wrapping_add(v as u64);
        r.issue_ns = prev;
        Ok(())
    })?;
    let mut end = 0u64;
    each(&mut c, col, out, |r, v| {
        if r.bytes == 0 {
            r.sector = v as u64;
        } else {
            r.sector = end.wrapping_add(v as u64);
            end = r.sector.wrapping_add(u64::from(r.bytes >> 9));
        }
        Ok(())
    })?;
    each(&mut c, col, out, |r, v| {
        r.complete_ns = r.complete_ns.map(|_| r.issue_ns.wrapping_add(v as u64));
        Ok(())
    })?;
    each(&mut c, col, out, |r, v| {
        narrow(v, "an error").map(|x| r.error = x)
    })?;
    each(&mut c, col, out, |r, v| {
        lookup(&t.devs, v, "device").map(|x| r.dev = x)
    })?;
    each(&mut c, col, out, |r, v| {
        narrow(v, "a pid").map(|x| r.pid = x)
    })?;
    each(&mut c, col, out, |r, v| {
        lookup(&t.comms, v, "name").map(|x| r.comm = x)
    })?;
    if !c.at_end() {
        return Err("the payload holds more than its records".into());
    }
    Ok(())
}

fn table_len(c: &mut Cursor, n: usize, what: &str) -> Result<u64, String> {
    let len = c.varint()?;
    if len > n as u64 {
        return Err(format!("{len} {what} for {n} records"));
    }
    Ok(len)
}
