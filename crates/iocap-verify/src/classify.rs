//! Telling faults apart from the bytes alone: what a page read back is, given the generation it
//! should hold. Pure (no I/O), so every class is unit-tested on constructed pages.
//!
//! The page checksum says whether the page is whole; the header says whose page it is and which
//! write made it; the per-sector stamps say, for a page that is not whole, which write each
//! 512 B piece came from. Together they separate a lost write (a whole, older page) from a torn
//! one (whole sectors of two writes) from damage (sectors that are no write's).

use iocap_model::FailureClass;

use crate::page::{self, FileIdent, SECTOR};

/// What a page must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// During a run: exactly the generation the map holds.
    Exact(u64),
    /// After a crash: the acknowledged generation or a later one; a page torn between such
    /// generations is accepted if each `atomic_unit` bytes come from one write.
    AtLeast { generation: u64, atomic_unit: usize },
}

impl Expect {
    pub fn generation(self) -> u64 {
        match self {
            Expect::Exact(g) => g,
            Expect::AtLeast { generation, .. } => generation,
        }
    }
}

/// The verdict on one page. An ok finding allocates nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Finding {
    /// `None`: the page is what it should be.
    pub class: Option<FailureClass>,
    pub found_generation: Option<u64>,
    pub found_page: Option<u64>,
    pub found_file_id: Option<u64>,
    pub sectors_512: Vec<u32>,
    pub sectors_4k: Vec<u32>,
    pub message: String,
    /// Ok, but newer than the acknowledged generation (a write that landed unacknowledged).
    pub newer: bool,
    /// Ok, torn between acceptable generations at atomic-unit boundaries.
    pub torn_allowed: bool,
}

impl Finding {
    pub fn ok(&self) -> bool {
        self.class.is_none()
    }

    fn fail(class: FailureClass, message: String) -> Self {
        Finding {
            class: Some(class),
            message,
            ..Default::default()
        }
    }

    fn found(mut self, generation: Option<u64>) -> Self {
        self.found_generation = generation;
        self
    }

    fn with_sectors(mut self, sectors: impl Iterator<Item = usize>) -> Self {
        for s in sectors {
            self.sectors_512.push(s as u32);
            let k = (s * SECTOR / 4096) as u32;
            if self.sectors_4k.last() != Some(&k) {
                self.sectors_4k.push(k);
            }
        }
        self
    }
}

/// Most sectors a page has (64 KiB / 512 B).
const MAX_SECTORS: usize = 128;

/// Classifies `data`, read at page `page` of the file `id`, against `expect`.
pub fn classify(data: &[u8], id: &FileIdent, page: u64, expect: Expect) -> Finding {
    let nsec = data.len() / SECTOR;
    debug_assert!(nsec <= MAX_SECTORS && data.len() == id.page_bytes);
    if data.iter().all(|b| *b == 0) {
        return Finding::fail(
            FailureClass::NeverWritten,
            format!(
                "the page reads as zeros; generation {} was written",
                expect.generation()
            ),
        );
    }
    let mut gens = [None; MAX_SECTORS];
    for (s, g) in gens.iter_mut().enumerate().take(nsec) {
        *g = page::sector_generation(&data[s * SECTOR..], id, page, s);
    }
    let gens = &gens[..nsec];
    if page::checksum_ok(data) {
        let h = page::header(data).expect("a valid checksum implies a header");
        return whole_page(&h, gens, id, page, expect);
    }
    if gens.iter().all(Option::is_some) {
        return every_sector_a_write(gens, expect);
    }
    let good = |s: &Option<u64>| match expect {
        Expect::Exact(g) => *s == Some(g),
        Expect::AtLeast { generation, .. } => s.is_some_and(|x| x >= generation),
    };
    Finding::fail(
        FailureClass::Corrupt,
        format!(
            "checksum mismatch: {} of {nsec} sectors are no write's bytes",
            gens.iter().filter(|s| s.is_none()).count()
        ),
    )
    .with_sectors((0..nsec).filter(|s| !good(&gens[*s])))
    .found(gens[0])
}

/// A page whose checksum is valid (header `h`, sector generations `gens`): another page's, not
/// its own generation's bytes, or its generation held to `expect`.
fn whole_page(
    h: &page::Header,
    gens: &[Option<u64>],
    id: &FileIdent,
    page: u64,
    expect: Expect,
) -> Finding {
    if h.file_id != id.file_id || h.page != page {
        return misdirected(h, id, page);
    }
    let (found, g) = (h.generation, expect.generation());
    if gens.iter().any(|s| *s != Some(found)) {
        // a valid checksum over bytes that are not that write's: a writer bug, or a CRC
        // collision; either way not the data written
        return Finding::fail(
            FailureClass::Corrupt,
            format!("checksum valid but the bytes are not generation {found}'s"),
        )
        .with_sectors((0..gens.len()).filter(|s| gens[*s] != Some(found)))
        .found(Some(found));
    }
    let ok = match expect {
        Expect::Exact(_) => found == g,
        Expect::AtLeast { .. } => found >= g,
    };
    if ok {
        return Finding {
            found_generation: Some(found),
            newer: found > g,
            ..Default::default()
        };
    }
    let f = if found < g {
        Finding::fail(
            FailureClass::Stale,
            format!("a whole, valid page of generation {found}; {g} was written: a lost write or stale read"),
        )
    } else {
        Finding::fail(
            FailureClass::Corrupt,
            format!("generation {found} is newer than the last write made ({g})"),
        )
    };
    f.found(Some(found))
}

/// A whole page of another page or file (header `h`) where page `page` of `id` should be.
fn misdirected(h: &page::Header, id: &FileIdent, page: u64) -> Finding {
    let other_file = h.file_id != id.file_id;
    let message = if other_file {
        format!(
            "holds page {} of another file (id {:016x}), generation {}",
            h.page, h.file_id, h.generation
        )
    } else {
        format!(
            "holds page {} (generation {}) instead of page {page}",
            h.page, h.generation
        )
    };
    let mut f = Finding::fail(FailureClass::Misdirected, message).found(Some(h.generation));
    f.found_page = Some(h.page);
    f.found_file_id = other_file.then_some(h.file_id);
    f
}

/// A page that fails its checksum though every sector is whole and names a write of it
/// (`gens`): torn between writes, or one write's sectors under a damaged header.
fn every_sector_a_write(gens: &[Option<u64>], expect: Expect) -> Finding {
    let first = gens[0].unwrap_or(0);
    if gens.iter().all(|s| *s == Some(first)) {
        return Finding::fail(
            FailureClass::Corrupt,
            format!(
                "every sector is generation {first}'s but the page checksum or timestamp is damaged"
            ),
        )
        .with_sectors(std::iter::once(0))
        .found(Some(first));
    }
    let mut list: Vec<u64> = gens.iter().flatten().copied().collect();
    list.sort_unstable();
    list.dedup();
    let names = list
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let g = expect.generation();
    if let Expect::AtLeast { atomic_unit, .. } = expect {
        return torn_at_units(gens, g, atomic_unit, &names);
    }
    Finding::fail(
        FailureClass::Torn,
        format!("torn: whole sectors of generations {names}; generation {g} was written"),
    )
    .with_sectors((0..gens.len()).filter(|s| gens[*s] != Some(g)))
    .found(gens[0])
}

/// A page torn between the writes `names` (sector generations `gens`), after a crash: allowed
/// when each `atomic_unit` comes whole from one write of generation `g` or later.
fn torn_at_units(gens: &[Option<u64>], g: u64, atomic_unit: usize, names: &str) -> Finding {
    let per = (atomic_unit / SECTOR).clamp(1, gens.len());
    let unit_ok = |u: &[Option<u64>]| u.iter().all(|s| *s == u[0]) && u[0].is_some_and(|x| x >= g);
    if gens.chunks(per).all(unit_ok) {
        return Finding {
            found_generation: gens[0],
            torn_allowed: true,
            newer: true,
            ..Default::default()
        };
    }
    let bad: Vec<usize> = gens
        .chunks(per)
        .enumerate()
        .filter(|(_, u)| !unit_ok(u))
        .flat_map(|(i, u)| (i * per..i * per + u.len()).collect::<Vec<_>>())
        .collect();
    Finding::fail(
        FailureClass::Torn,
        format!(
            "torn between generations {names}: some {atomic_unit} B units are older than the \
             acknowledged generation {g} or mix two writes"
        ),
    )
    .with_sectors(bad.into_iter())
    .found(gens[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::encode;

    const ID: FileIdent = FileIdent {
        file_id: 0xABCD,
        seed: 7,
        page_bytes: 8192,
    };

    fn pg(page: u64, generation: u64) -> Vec<u8> {
        let mut p = vec![0u8; 8192];
        encode(&mut p, &ID, page, generation, 1_000 + generation);
        p
    }

    fn class(f: &Finding) -> Option<&'static str> {
        f.class.map(|c| c.name())
    }

    #[test]
    fn ok_page() {
        let f = classify(&pg(3, 5), &ID, 3, Expect::Exact(5));
        assert!(f.ok(), "{f:?}");
        assert!(f.sectors_512.capacity() == 0 && f.message.capacity() == 0);
    }

    #[test]
    fn zeros_are_never_written() {
        let f = classify(&[0u8; 8192], &ID, 3, Expect::Exact(1));
        assert_eq!(class(&f), Some("never_written"));
    }

    #[test]
    fn another_page_is_misdirected() {
        let f = classify(&pg(9, 2), &ID, 3, Expect::Exact(2));
        assert_eq!(class(&f), Some("misdirected"));
        assert_eq!((f.found_page, f.found_file_id), (Some(9), None));
        let other = FileIdent {
            file_id: 0x1234,
            ..ID
        };
        let mut p = vec![0u8; 8192];
        encode(&mut p, &other, 3, 2, 0);
        let f = classify(&p, &ID, 3, Expect::Exact(2));
        assert_eq!(class(&f), Some("misdirected"));
        assert_eq!(f.found_file_id, Some(0x1234));
    }

    #[test]
    fn an_older_whole_page_is_stale() {
        let f = classify(&pg(3, 4), &ID, 3, Expect::Exact(6));
        assert_eq!(class(&f), Some("stale"));
        assert_eq!(f.found_generation, Some(4));
    }

    #[test]
    fn sectors_of_two_writes_are_torn() {
        // the first 4 KiB of the new write landed, the rest is the old page
        let mut p = pg(3, 6);
        p[4096..].copy_from_slice(&pg(3, 5)[4096..]);
        let f = classify(&p, &ID, 3, Expect::Exact(6));
        assert_eq!(class(&f), Some("torn"), "{f:?}");
        assert_eq!(f.sectors_512, (8..16).collect::<Vec<u32>>());
        assert_eq!(f.sectors_4k, vec![1]);
        // torn at 512 B inside the first 4 KiB
        let mut p = pg(3, 6);
        p[1024..1536].copy_from_slice(&pg(3, 5)[1024..1536]);
        let f = classify(&p, &ID, 3, Expect::Exact(6));
        assert_eq!(class(&f), Some("torn"));
        assert_eq!((f.sectors_512, f.sectors_4k), (vec![2], vec![0]));
    }

    #[test]
    fn damaged_bytes_are_corrupt() {
        let mut p = pg(3, 6);
        p[5000] ^= 0x40;
        let f = classify(&p, &ID, 3, Expect::Exact(6));
        assert_eq!(class(&f), Some("corrupt"));
        assert_eq!((f.sectors_512, f.sectors_4k), (vec![9], vec![1]));
        // zeros over part of the page
        let mut p = pg(3, 6);
        p[512..1024].fill(0);
        let f = classify(&p, &ID, 3, Expect::Exact(6));
        assert_eq!(class(&f), Some("corrupt"));
        assert_eq!(f.sectors_512, vec![1]);
        // a damaged header
        let mut p = pg(3, 6);
        p[0] = b'X';
        let f = classify(&p, &ID, 3, Expect::Exact(6));
        assert_eq!(class(&f), Some("corrupt"));
        assert_eq!(f.sectors_512, vec![0]);
    }

    #[test]
    fn after_a_crash_newer_and_unit_torn_pages_pass() {
        let at = |g| Expect::AtLeast {
            generation: g,
            atomic_unit: 4096,
        };
        let f = classify(&pg(3, 7), &ID, 3, at(6));
        assert!(f.ok() && f.newer);
        assert_eq!(class(&classify(&pg(3, 5), &ID, 3, at(6))), Some("stale"));
        // torn at the 4 KiB boundary between acknowledged 6 and unacknowledged 7: allowed
        let mut p = pg(3, 7);
        p[4096..].copy_from_slice(&pg(3, 6)[4096..]);
        let f = classify(&p, &ID, 3, at(6));
        assert!(f.ok() && f.torn_allowed, "{f:?}");
        // torn inside a 4 KiB unit: a fail
        let mut p = pg(3, 7);
        p[1024..].copy_from_slice(&pg(3, 6)[1024..]);
        let f = classify(&p, &ID, 3, at(6));
        assert_eq!(class(&f), Some("torn"));
        assert_eq!(f.sectors_4k, vec![0]);
        // ... unless the storage promises 512 B atomicity
        let f = classify(
            &p,
            &ID,
            3,
            Expect::AtLeast {
                generation: 6,
                atomic_unit: 512,
            },
        );
        assert!(f.ok());
        // a unit older than the acknowledged generation: a fail
        let mut p = pg(3, 7);
        p[4096..].copy_from_slice(&pg(3, 5)[4096..]);
        let f = classify(&p, &ID, 3, at(6));
        assert_eq!(class(&f), Some("torn"));
        assert_eq!(f.sectors_4k, vec![1]);
    }
}
