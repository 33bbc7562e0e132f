//! One block request as the device saw it: issued by the driver (after the block layer's
//! merges) and completed.

/// A block device's number, as the kernel names it (`major:minor`, e.g. `259:0`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevId {
    pub major: u32,
    pub minor: u32,
}

impl DevId {
    /// From the kernel's internal `dev_t` (the tracepoints' `dev`): major in the bits above 20.
    pub fn from_kernel(dev: u32) -> DevId {
        DevId {
            major: dev >> 20,
            minor: dev & ((1 << 20) - 1),
        }
    }

    /// To the kernel's internal `dev_t`.
    pub fn to_kernel(self) -> u32 {
        (self.major << 20) | (self.minor & ((1 << 20) - 1))
    }
}

impl std::fmt::Display for DevId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

pub use iocap_model::request::Op;

/// A request's flags, as the kernel's `rwbs` string shows them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IoFlags(pub u8);

impl IoFlags {
    /// `S`: synchronous (REQ_SYNC).
    pub const SYNC: u8 = 1;
    /// `F` after the operation: force unit access (REQ_FUA).
    pub const FUA: u8 = 2;
    /// `F` before the operation: a cache flush before the data (REQ_PREFLUSH).
    pub const PREFLUSH: u8 = 4;
    /// `M`: file-system metadata (REQ_META).
    pub const META: u8 = 8;
    /// `A`: read-ahead (REQ_RAHEAD).
    pub const AHEAD: u8 = 16;

    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// The most bytes of a process name the kernel keeps (`TASK_COMM_LEN`).
pub const COMM_LEN: usize = 16;

/// One request. Times are ns since the trace's start on one monotonic clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRecord {
    /// When the driver was given the request (`block_rq_issue`; blktrace's `D`).
    pub issue_ns: u64,
    /// When it completed (`block_rq_complete`; blktrace's `C`); `None` where the trace does
    /// not know (fio's iolog, or a request still in flight when the capture ended).
    pub complete_ns: Option<u64>,
    pub dev: DevId,
    /// The first 512-byte sector.
    pub sector: u64,
    pub bytes: u32,
    pub op: Op,
    pub flags: IoFlags,
    /// The completion's error (a negative errno), 0 for success or when unknown.
    pub error: i32,
    /// The process that submitted the request; 0 where unknown.
    pub pid: u32,
    /// Its name, NUL-padded (`comm`); all zeros where unknown.
    pub comm: [u8; COMM_LEN],
}

impl IoRecord {
    /// The byte offset on the device.
    pub fn offset_bytes(&self) -> u64 {
        self.sector.saturating_mul(512)
    }

    /// The byte offset just past the request's data.
    pub fn end_bytes(&self) -> u64 {
        self.offset_bytes().saturating_add(self.bytes as u64)
    }

    /// Issue to completion, when both are known.
    pub fn latency_ns(&self) -> Option<u64> {
        self.complete_ns.map(|c| c.saturating_sub(self.issue_ns))
    }

    /// The process name, lossily decoded, without its padding.
    pub fn comm_str(&self) -> String {
        let end = self.comm.iter().position(|&b| b == 0).unwrap_or(COMM_LEN);
        String::from_utf8_lossy(&self.comm[..end]).into_owned()
    }

    /// A process name as the kernel would keep it: its first 15 bytes, NUL-padded.
    pub fn comm_from(name: &str) -> [u8; COMM_LEN] {
        let mut comm = [0u8; COMM_LEN];
        let n = name.len().min(COMM_LEN - 1);
        comm[..n].copy_from_slice(&name.as_bytes()[..n]);
        comm
    }

    /// Decodes the kernel's `rwbs` string (`blk_fill_rwbs`: an optional `F` for a preflush,
    /// the operation `W`/`R`/`D`/`DE`/`F`/`N`, then `F` for FUA, `A`, `S`, `M`) into an
    /// operation and flags. The kernel writes write-zeroes as `N`, so a capture sees it as
    /// [`Op::Other`]; a flush's own preflush bit is implied, not kept.
    pub fn parse_rwbs(rwbs: &[u8]) -> (Op, IoFlags) {
        let end = rwbs.iter().position(|&c| c == 0).unwrap_or(rwbs.len());
        let s = &rwbs[..end];
        let mut flags = 0u8;
        let mut i = 0;
        if s.len() >= 2 && s[0] == b'F' && matches!(s[1], b'W' | b'R' | b'D' | b'N' | b'F') {
            flags |= IoFlags::PREFLUSH;
            i = 1;
        }
        let op = match s.get(i) {
            Some(b'W') => Op::Write,
            Some(b'R') => Op::Read,
            Some(b'D') if s.get(i + 1) == Some(&b'E') => {
                i += 1;
                Op::Other
            }
            Some(b'D') => Op::Discard,
            Some(b'F') => Op::Flush,
            Some(b'N') => Op::Other,
            _ => return (Op::Other, IoFlags(flags)),
        };
        for &c in &s[i + 1..] {
            flags |= match c {
                b'F' => IoFlags::FUA,
                b'A' => IoFlags::AHEAD,
                b'S' => IoFlags::SYNC,
                b'M' => IoFlags::META,
                _ => 0,
            };
        }
        if op == Op::Flush {
            flags &= !IoFlags::PREFLUSH;
        }
        (op, IoFlags(flags))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rwbs_strings_decode_as_the_kernel_writes_them() {
        assert_eq!(IoRecord::parse_rwbs(b"R"), (Op::Read, IoFlags(0)));
        assert_eq!(
            IoRecord::parse_rwbs(b"RA\0\0"),
            (Op::Read, IoFlags(IoFlags::AHEAD))
        );
        assert_eq!(
            IoRecord::parse_rwbs(b"WS"),
            (Op::Write, IoFlags(IoFlags::SYNC))
        );
        assert_eq!(
            IoRecord::parse_rwbs(b"FWFS"),
            (
                Op::Write,
                IoFlags(IoFlags::PREFLUSH | IoFlags::FUA | IoFlags::SYNC)
            )
        );
        assert_eq!(
            IoRecord::parse_rwbs(b"WFS"),
            (Op::Write, IoFlags(IoFlags::FUA | IoFlags::SYNC))
        );
        assert_eq!(IoRecord::parse_rwbs(b"FF"), (Op::Flush, IoFlags(0)));
        assert_eq!(IoRecord::parse_rwbs(b"F"), (Op::Flush, IoFlags(0)));
        assert_eq!(
            IoRecord::parse_rwbs(b"FS"),
            (Op::Flush, IoFlags(IoFlags::SYNC))
        );
        assert_eq!(IoRecord::parse_rwbs(b"DE").0, Op::Other);
        assert_eq!(IoRecord::parse_rwbs(b"D"), (Op::Discard, IoFlags(0)));
        assert_eq!(
            IoRecord::parse_rwbs(b"WM"),
            (Op::Write, IoFlags(IoFlags::META))
        );
        assert_eq!(IoRecord::parse_rwbs(b"N").0, Op::Other);
    }

    #[test]
    fn dev_numbers_round_trip_the_kernel_encoding() {
        let d = DevId {
            major: 259,
            minor: 3,
        };
        assert_eq!(DevId::from_kernel(d.to_kernel()), d);
        assert_eq!(d.to_string(), "259:3");
    }

    #[test]
    fn a_long_process_name_keeps_fifteen_bytes() {
        let c = IoRecord::comm_from("postgres: checkpointer");
        let r = IoRecord {
            issue_ns: 0,
            complete_ns: Some(1500),
            dev: DevId::default(),
            sector: 8,
            bytes: 8192,
            op: Op::Read,
            flags: IoFlags(0),
            error: 0,
            pid: 1,
            comm: c,
        };
        assert_eq!(r.comm_str(), "postgres: check");
        assert_eq!(r.offset_bytes(), 4096);
        assert_eq!(r.end_bytes(), 4096 + 8192);
        assert_eq!(r.latency_ns(), Some(1500));
    }
}
