//! The decoders on byte fixtures laid out by hand from the SDK's structure definitions (the
//! offsets in `decode`'s module doc), not captured on a Windows host.

use super::*;

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// The GPT basic data type GUID as Windows stores it.
const BASIC_DATA: [u8; 16] = [
    0xa2, 0xa0, 0xd0, 0xeb, 0xe5, 0xb9, 0x33, 0x44, 0x87, 0xc0, 0x68, 0xb6, 0xb7, 0x26, 0x99, 0xc7,
];

/// A `PARTITION_INFORMATION_EX`: `style` 0 MBR (type 0x07) or 1 GPT (basic data).
pub fn partition_fixture(style: u32, offset: u64, length: u64, number: u32) -> Vec<u8> {
    let mut b = vec![0u8; PARTITION_INFORMATION_EX_SIZE];
    put32(&mut b, 0, style);
    put64(&mut b, 8, offset);
    put64(&mut b, 16, length);
    put32(&mut b, 24, number);
    if style == 0 {
        b[32] = 0x07;
    } else {
        b[32..48].copy_from_slice(&BASIC_DATA);
    }
    b
}

/// A `VOLUME_DISK_EXTENTS` of (disk, offset, length).
pub fn extents_fixture(ext: &[(u32, u64, u64)]) -> Vec<u8> {
    let mut b = vec![0u8; 8 + ext.len() * DISK_EXTENT_SIZE];
    put32(&mut b, 0, ext.len() as u32);
    for (i, (d, o, l)) in ext.iter().enumerate() {
        let at = 8 + i * DISK_EXTENT_SIZE;
        put32(&mut b, at, *d);
        put64(&mut b, at + 8, *o);
        put64(&mut b, at + 16, *l);
    }
    b
}

/// A `DISK_CACHE_INFORMATION` with the read and write caches as given.
pub fn cache_fixture(read: bool, write: bool) -> Vec<u8> {
    let mut b = vec![0u8; DISK_CACHE_INFORMATION_SIZE];
    b[0] = 1;
    b[1] = read as u8;
    b[2] = write as u8;
    b
}

/// A `STORAGE_WRITE_CACHE_PROPERTY`: type, enabled (1 off, 2 on), user-defined protection.
pub fn write_cache_fixture(cache_type: u32, enabled: u32, user_protected: bool) -> Vec<u8> {
    let mut b = vec![0u8; STORAGE_WRITE_CACHE_PROPERTY_SIZE];
    put32(&mut b, 0, 28);
    put32(&mut b, 4, 28);
    put32(&mut b, 8, cache_type);
    put32(&mut b, 12, enabled);
    put32(&mut b, 16, 2);
    put32(&mut b, 20, 2);
    b[24] = 1;
    b[25] = user_protected as u8;
    b
}

/// A `DEVICE_TRIM_DESCRIPTOR` or `DEVICE_SEEK_PENALTY_DESCRIPTOR`.
pub fn boolean_fixture(v: bool) -> Vec<u8> {
    let mut b = vec![0u8; DEVICE_BOOLEAN_DESCRIPTOR_SIZE];
    put32(&mut b, 0, 12);
    put32(&mut b, 4, 12);
    b[8] = v as u8;
    b
}

/// A `STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR`.
pub fn alignment_fixture(logical: u32, physical: u32) -> Vec<u8> {
    let mut b = vec![0u8; STORAGE_ACCESS_ALIGNMENT_SIZE];
    put32(&mut b, 0, 28);
    put32(&mut b, 4, 28);
    put32(&mut b, 16, logical);
    put32(&mut b, 20, physical);
    b
}

/// A `STORAGE_DEVICE_DESCRIPTOR` with its vendor and product strings after the structure.
pub fn descriptor_fixture(vendor: &str, product: &str, bus: u32) -> Vec<u8> {
    let mut b = vec![0u8; STORAGE_DEVICE_DESCRIPTOR_SIZE];
    put32(&mut b, 0, 40);
    put32(&mut b, 28, bus);
    let n = b.len() as u32;
    put32(&mut b, 12, n);
    b.extend(vendor.bytes().chain([0]));
    let n = b.len() as u32;
    put32(&mut b, 16, n);
    b.extend(product.bytes().chain([0]));
    let n = b.len() as u32;
    put32(&mut b, 4, n);
    b
}

/// `PROCESSOR_POWER_INFORMATION` for each (max, current, limit) MHz.
pub fn processors_fixture(cpus: &[(u32, u32, u32)]) -> Vec<u8> {
    let mut b = vec![0u8; cpus.len() * PROCESSOR_POWER_INFORMATION_SIZE];
    for (i, (max, cur, lim)) in cpus.iter().enumerate() {
        let at = i * PROCESSOR_POWER_INFORMATION_SIZE;
        put32(&mut b, at, i as u32);
        put32(&mut b, at + 4, *max);
        put32(&mut b, at + 8, *cur);
        put32(&mut b, at + 12, *lim);
        put32(&mut b, at + 16, 2);
    }
    b
}

#[test]
fn partition_info_reads_the_offset_and_type_of_mbr_and_gpt() {
    // Windows Server 2003's default: 63 sectors of 512 B, 31.5 KiB
    let p = partition_info(&partition_fixture(0, 32_256, 1 << 30, 1)).unwrap();
    assert_eq!((p.style, p.offset, p.number), ("MBR", 32_256, 1));
    assert_eq!(p.kind, "0x07");
    let g = partition_info(&partition_fixture(1, 1 << 20, 1 << 30, 2)).unwrap();
    assert_eq!(
        (g.style, g.offset, g.kind.as_str()),
        ("GPT", 1 << 20, GPT_BASIC_DATA)
    );
    assert_eq!(partition_info(&[0u8; 100]), None, "short");
}

#[test]
fn extents_list_every_disk_and_refuse_a_short_buffer() {
    let b = extents_fixture(&[(1, 1 << 20, 10 << 30), (2, 1 << 20, 10 << 30)]);
    let e = disk_extents(&b).unwrap();
    assert_eq!(e.len(), 2);
    assert_eq!(
        e[1],
        Extent {
            disk: 2,
            offset: 1 << 20,
            length: 10 << 30
        }
    );
    assert_eq!(disk_extents(&b[..40]), None);
    assert_eq!(disk_extents(&extents_fixture(&[])), None, "no extent");
}

#[test]
fn cache_information_and_write_cache_property() {
    assert_eq!(
        cache_information(&cache_fixture(true, false)),
        Some((true, false))
    );
    assert_eq!(cache_information(&[1, 1, 1]), None);
    let w = write_cache_property(&write_cache_fixture(2, 2, true)).unwrap();
    assert_eq!(w.type_name(), "write-back");
    assert_eq!((w.enabled, w.changeable), (Tri::Yes, Tri::Yes));
    assert!(w.flush_supported && w.user_power_protection && !w.nv_cache_enabled);
    let off = write_cache_property(&write_cache_fixture(3, 1, false)).unwrap();
    assert_eq!((off.type_name(), off.enabled), ("write-through", Tri::No));
    assert_eq!(write_cache_property(&[0u8; 20]), None);
}

#[test]
fn the_property_query_names_the_property_and_the_standard_query() {
    let q = property_query(STORAGE_TRIM_PROPERTY);
    assert_eq!(q, [8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn trim_seek_penalty_alignment_and_descriptor() {
    assert_eq!(boolean_descriptor(&boolean_fixture(true)), Some(true));
    assert_eq!(boolean_descriptor(&boolean_fixture(false)), Some(false));
    assert_eq!(boolean_descriptor(&[0u8; 8]), None);
    assert_eq!(
        access_alignment(&alignment_fixture(512, 4096)),
        Some((512, 4096))
    );
    assert_eq!(access_alignment(&alignment_fixture(0, 0)), None, "not told");
    let d = device_descriptor(&descriptor_fixture("DELL", "PERC H730P", BUS_TYPE_RAID)).unwrap();
    assert_eq!(
        (d.vendor.as_str(), d.product.as_str()),
        ("DELL", "PERC H730P")
    );
    assert_eq!(d.bus_name(), "RAID");
    let s = device_descriptor(&descriptor_fixture("", "", BUS_TYPE_SPACES)).unwrap();
    assert_eq!((s.vendor.as_str(), s.bus_name()), ("", "Storage Spaces"));
}

#[test]
fn processor_power_reads_each_processor() {
    let p = processor_power(&processors_fixture(&[
        (2600, 1200, 2600),
        (2600, 2600, 2600),
    ]));
    let p = p.unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!(
        (p[0].max_mhz, p[0].current_mhz, p[1].number),
        (2600, 1200, 1)
    );
    assert_eq!(processor_power(&[]), None);
}

#[test]
fn guid_text_is_windows_order() {
    assert_eq!(guid_text(&BASIC_DATA).unwrap(), GPT_BASIC_DATA);
}
