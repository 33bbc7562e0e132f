//! The partition table as it is on the device: MBR and GPT read and parsed by iocap itself.
//!
//! The kernel's view (`/sys/class/block/<part>/start`) exists only when the kernel scanned the
//! device (a loop device attached without `-P` has none) and the device nodes exist only when
//! udev made them (containers often have none). A misaligned partition is costly whatever the
//! kernel scanned, so when a whole device is audited its first sectors are read and parsed
//! here, with a few kilobytes of direct reads. Logical partitions inside an MBR extended partition are not followed (the extended
//! container itself is listed).

use std::path::Path;

/// One partition of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartEntry {
    /// 1-based, as `fdisk` and the kernel number them.
    pub number: u32,
    /// First logical block, in units of `lba_bytes`.
    pub start_lba: u64,
    /// Length in logical blocks.
    pub blocks: u64,
    /// The logical block size the table counts in.
    pub lba_bytes: u64,
    /// `MBR` or `GPT`.
    pub scheme: &'static str,
}

impl PartEntry {
    pub fn start_bytes(&self) -> u64 {
        self.start_lba.saturating_mul(self.lba_bytes)
    }
}

fn u32_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from(u32::from_le_bytes(
        b.get(at..at + 4)?.try_into().ok()?,
    )))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Parses the table in the first bytes of a device (`head`: at least the first two logical
/// blocks and, for GPT, the entry array). `Ok(empty)`: no partition table. Never panics.
pub fn parse(head: &[u8], lba_bytes: u64) -> Result<Vec<PartEntry>, String> {
    if head.len() < 512 || head[510] != 0x55 || head[511] != 0xAA {
        return Ok(Vec::new());
    }
    let primaries: Vec<(u32, u8, u64, u64)> = (0..4)
        .filter_map(|i| {
            let e = 446 + 16 * i;
            let kind = head[e + 4];
            let start = u32_at(head, e + 8)?;
            let len = u32_at(head, e + 12)?;
            (kind != 0 && len > 0).then_some((i as u32 + 1, kind, start, len))
        })
        .collect();
    if !primaries.iter().any(|p| p.1 == 0xEE) {
        return Ok(primaries
            .into_iter()
            .map(|(number, _, start, len)| PartEntry {
                number,
                start_lba: start,
                blocks: len,
                lba_bytes: 512,
                scheme: "MBR",
            })
            .collect());
    }
    // protective MBR: the GPT header is in logical block 1
    let lb = usize::try_from(lba_bytes).map_err(|_| "logical block too large".to_string())?;
    let hdr = head
        .get(lb..lb + 92)
        .ok_or("the GPT header lies beyond what was read")?;
    if &hdr[..8] != b"EFI PART" {
        return Err(format!(
            "a protective MBR but no GPT header signature in logical block 1 ({lba_bytes} B blocks)"
        ));
    }
    let entries_lba = u64_at(hdr, 72).unwrap_or(0);
    let count = u32_at(hdr, 80).unwrap_or(0).min(1024);
    let size = u32_at(hdr, 84).unwrap_or(0);
    if size < 128 || entries_lba == 0 {
        return Err(format!(
            "GPT header with entry size {size} at logical block {entries_lba}: not a valid table"
        ));
    }
    let mut out = Vec::new();
    for i in 0..count {
        let at = entries_lba
            .checked_mul(lba_bytes)
            .and_then(|b| b.checked_add(i * size))
            .and_then(|b| usize::try_from(b).ok())
            .ok_or("GPT entry offset overflows")?;
        let Some(e) = head.get(at..at + 128) else {
            return Err(format!("GPT entry {} lies beyond what was read", i + 1));
        };
        if e[..16].iter().all(|b| *b == 0) {
            continue;
        }
        let (first, last) = (u64_at(e, 32).unwrap_or(0), u64_at(e, 40).unwrap_or(0));
        out.push(PartEntry {
            number: i as u32 + 1,
            start_lba: first,
            blocks: last.saturating_sub(first).saturating_add(1),
            lba_bytes,
            scheme: "GPT",
        });
    }
    Ok(out)
}

/// Reads the first two logical blocks of a device and, for a GPT, as far as its entry array
/// ends (about 20 KiB for the usual 128 entries), and parses the table. The reads bypass the
/// page cache (O_DIRECT where the device takes it): no readahead, so auditing a device costs it
/// a few kilobytes of reads and leaves its counters and cache almost as they were.
#[cfg(target_os = "linux")]
pub fn read(dev: &Path, lba_bytes: u64) -> Result<Vec<PartEntry>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let open = |flags: i32| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(dev)
    };
    let f = open(libc::O_DIRECT)
        .or_else(|_| open(0))
        .map_err(|e| format!("cannot open {}: {e}", dev.display()))?;
    let head = read_head(&f, (2 * lba_bytes).max(4096))
        .map_err(|e| format!("cannot read {}: {e}", dev.display()))?;
    let Some(end) = gpt_end(&head, lba_bytes) else {
        return parse(&head, lba_bytes);
    };
    let end = end.min(1 << 20);
    let all = read_head(&f, end).map_err(|e| format!("cannot read {}: {e}", dev.display()))?;
    parse(&all, lba_bytes)
}

/// Reading a device node is Linux's here (Windows has its own layout ioctl, read by the engine).
#[cfg(not(target_os = "linux"))]
pub fn read(dev: &Path, _lba_bytes: u64) -> Result<Vec<PartEntry>, String> {
    Err(format!(
        "cannot read the partition table of {}: device nodes are Linux's",
        dev.display()
    ))
}

/// Where a GPT's entry array ends, from its header in `head` (`None`: no GPT header there).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn gpt_end(head: &[u8], lba_bytes: u64) -> Option<u64> {
    let lb = usize::try_from(lba_bytes).ok()?;
    let hdr = head.get(lb..lb + 92)?;
    if &hdr[..8] != b"EFI PART" {
        return None;
    }
    let entries = u64_at(hdr, 72)?.checked_mul(lba_bytes)?;
    let len = u32_at(hdr, 80)?.min(1024) * u32_at(hdr, 84)?.min(4096);
    entries.checked_add(len)
}

/// The first `len` bytes (rounded up to 4 KiB) of `f`, read into a 4 KiB-aligned buffer as
/// O_DIRECT needs; a device shorter than that gives what it has.
#[cfg(target_os = "linux")]
fn read_head(f: &std::fs::File, len: u64) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    const ALIGN: usize = 4096;
    let len = usize::try_from(len.div_ceil(ALIGN as u64) * ALIGN as u64)
        .map_err(|_| std::io::Error::other("too long"))?;
    let mut raw = vec![0u8; len + ALIGN];
    let skip = raw.as_ptr().align_offset(ALIGN);
    let buf = &mut raw[skip..skip + len];
    let mut got = 0;
    while got < len {
        match f.read_at(&mut buf[got..], got as u64)? {
            0 => break,
            n => got += n,
        }
    }
    Ok(buf[..got].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mbr(parts: &[(u8, u32, u32)]) -> Vec<u8> {
        let mut b = vec![0u8; 1 << 16];
        for (i, (kind, start, len)) in parts.iter().enumerate() {
            let e = 446 + 16 * i;
            b[e + 4] = *kind;
            b[e + 8..e + 12].copy_from_slice(&start.to_le_bytes());
            b[e + 12..e + 16].copy_from_slice(&len.to_le_bytes());
        }
        b[510] = 0x55;
        b[511] = 0xAA;
        b
    }

    #[test]
    fn mbr_partitions_with_their_starts() {
        let t = parse(&mbr(&[(0x83, 63, 1000), (0x83, 2048, 4096)]), 512).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].number, t[0].start_bytes()), (1, 63 * 512));
        assert_eq!(
            (t[1].number, t[1].start_bytes(), t[1].scheme),
            (2, 1 << 20, "MBR")
        );
        assert!(parse(&vec![0u8; 4096], 512).unwrap().is_empty(), "no table");
    }

    #[test]
    fn gpt_entries_in_512_and_4k_blocks() {
        for lb in [512usize, 4096] {
            let mut b = mbr(&[(0xEE, 1, 100_000)]);
            b.resize(64 * 1024, 0);
            let h = lb;
            b[h..h + 8].copy_from_slice(b"EFI PART");
            b[h + 72..h + 80].copy_from_slice(&2u64.to_le_bytes());
            b[h + 80..h + 84].copy_from_slice(&128u32.to_le_bytes());
            b[h + 84..h + 88].copy_from_slice(&128u32.to_le_bytes());
            let e = 2 * lb + 128; // entry 2; entry 1 unused
            b[e] = 0xAF;
            let start = if lb == 512 { 2048u64 } else { 256 };
            b[e + 32..e + 40].copy_from_slice(&start.to_le_bytes());
            b[e + 40..e + 48].copy_from_slice(&(start + 99).to_le_bytes());
            let t = parse(&b, lb as u64).unwrap();
            assert_eq!(t.len(), 1, "{t:?}");
            assert_eq!((t[0].number, t[0].blocks, t[0].scheme), (2, 100, "GPT"));
            assert_eq!(t[0].start_bytes(), 1 << 20);
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut b = mbr(&[(0xEE, 1, 1)]);
        assert!(parse(&b, 512).is_err(), "protective MBR without a header");
        b[512..520].copy_from_slice(b"EFI PART");
        b[512 + 72..512 + 80].copy_from_slice(&u64::MAX.to_le_bytes());
        b[512 + 80..512 + 84].copy_from_slice(&5u32.to_le_bytes());
        b[512 + 84..512 + 88].copy_from_slice(&128u32.to_le_bytes());
        assert!(parse(&b, 512).is_err());
        assert!(parse(&b[..600], 4096).is_err());
        assert!(parse(&b[..100], 512).unwrap().is_empty());
    }
}
