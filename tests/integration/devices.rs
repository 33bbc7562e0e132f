//! End-to-end tests of iocap on real block devices that the tests make themselves: loop devices
//! over backing files, an ext4 file system mounted on one, and a device with one bad 4 KiB block
//! (device-mapper's `error` target, or, where the kernel has no device-mapper, a loop device over
//! a file served by a small FUSE server in this file that fails reads of that block). The
//! assessing commands, `iocap saturate` and `iocap scaleup`, are run on loop devices in
//! [`assess`].
//!
//! They need root, the loop driver and util-linux (plus e2fsprogs for the file-system test).
//! Without them each test prints `skipping: <why>` to stderr and passes. Everything a test sets
//! up is torn down by [`Rig`]'s `Drop`, also when an assertion fails, and every name carries the
//! process id, so parallel tests and parallel runs do not collide.

#[macro_use]
mod rig;
mod assess;
mod badblock;
mod capture;
mod innodb;
mod layout;
mod limit;
mod pgloop;
mod replay;
mod roundtrip;
mod trip;

use std::fs::{self, File};
use std::io::Write;

use badblock::*;
use rig::*;

pub(super) const MIB: u64 = 1 << 20;
/// The magic iocap writes at the start of every 4 KiB block it writes.
pub(super) const STAMP: &[u8; 8] = b"IOCAPWR1";
/// Where the bad block of the EIO tests sits: 32 MiB, i.e. sectors [65536, 65544).
pub(super) const BAD_OFFSET: u64 = 32 * MIB;
pub(super) const BAD_LEN: u64 = 4096;

// 1. Byte accounting on a block device

/// Runs 1 s of 8K random reads at queue depth 8 on a fresh 128 MiB loop device and checks what
/// iocap reported against what the device's own counters saw: with no warmup, every byte the
/// device read is in the figures except the I/Os still in flight when the window closed.
fn check_read_accounting() {
    require!("losetup");
    let mut rig = Rig::new();
    let file = rig.backing_file("disk", 128 * MIB, None);
    let dev = rig.attach(&file);
    settle();
    let (qd, bs) = (8u64, 8192u64);
    let (read0, written0) = io_sectors(&dev);
    let out = iocap(
        rig.dir.path(),
        "run --rw randread --bs 8K --qd 8 --duration 1s --warmup 0s --output json",
        &dev,
    );
    let (read1, written1) = io_sectors(&dev);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let j = json(&out);
    let t = &j["tests"][0];
    assert_eq!(t["targets"][0]["kind"], "block_device", "{t:#}");
    assert_eq!(t["targets"][0]["direct"], true, "{t:#}");
    assert_eq!(t["direct"], true, "{t:#}");
    let ios = u64_at(t, "/total/ios");
    let reported = u64_at(t, "/total/bytes");
    assert!(ios > 0, "no I/O completed: {t:#}");
    assert_eq!(reported, ios * bs, "bytes and I/Os disagree: {t:#}");
    assert_eq!(u64_at(t, "/read/bytes"), reported, "{t:#}");
    let device = (read1 - read0) * 512;
    assert!(
        device >= reported,
        "iocap reported {reported} B read but the device saw only {device} B"
    );
    // Nothing else reads the device (iocap makes no probe reads and udev has settled): only the
    // I/Os still in flight when the window closed may be missing from the figures, plus a little
    // slack for a stray probe.
    let slack = qd * bs + 128 * 1024;
    assert!(
        device <= reported + slack,
        "the device read {device} B, {} B more than the {reported} B iocap reported; at most \
         {slack} B (the {qd} I/Os in flight at the end and 128 KiB of slack) may go uncounted",
        device - reported
    );
    assert_eq!(written1, written0, "a read test wrote to {dev}");
}

/// With `--warmup 0s` every byte the device reads is counted, except the I/Os still in flight
/// when the window closes.
#[test]
fn reads_on_a_loop_device_count_every_byte() {
    check_read_accounting();
}

// ---------------------------------------------------------------------------------------------
// 2. --size bounds sequential I/O on a device

#[test]
fn sequential_reads_stay_inside_size() {
    require!("losetup");
    let mut rig = Rig::new();
    let size = 128 * MIB;
    let range = 16 * MIB;
    let file = rig.backing_file("disk", size, Some(0xAB));
    // buffered: the loop device reads through the backing file's page cache, which then shows
    // which parts of the device were read
    let dev = rig.attach_buffered(&file);
    settle();
    evict(&file);
    let (_, before) = resident_pages(&file);
    let (read0, written0) = io_sectors(&dev);
    let out = iocap(
        rig.dir.path(),
        "run --rw read --size 16M --bs 1M --qd 4 --duration 1s --warmup 0s --output json",
        &dev,
    );
    let (read1, written1) = io_sectors(&dev);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let j = json(&out);
    let t = &j["tests"][0];
    assert_eq!(u64_at(t, "/targets/0/size_bytes"), range, "{t:#}");
    let reported = u64_at(t, "/read/bytes");
    assert!(reported > 0, "{t:#}");
    assert!(
        (read1 - read0) * 512 >= reported,
        "iocap reported {reported} B read, the device saw {} B",
        (read1 - read0) * 512
    );
    assert_eq!(written1, written0, "a read test wrote to {dev}");

    // Where the reads landed: in the first 16 MiB (most of which must be cached; not all, as
    // something else on the machine may evict pages) and nowhere past 16 MiB beyond what the
    // kernel's readahead on the backing file may add (two windows).
    let (page, after) = resident_pages(&file);
    let ra = readahead_bytes(&file).unwrap_or(8 * MIB);
    let limit = range + 2 * ra + MIB;
    if before.iter().any(|&o| o >= range) || limit > size / 2 {
        eprintln!(
            "note: not checking where the reads landed (pages cached before: {}, readahead {ra} B)",
            before.len()
        );
    } else {
        let in_range = after.iter().filter(|&&o| o < range).count() as u64;
        assert!(
            reported < range || in_range >= range / page / 2,
            "iocap read {reported} B sequentially from 0 but only {in_range} of the {} pages of \
             the first 16 MiB were read from the device",
            range / page
        );
        let beyond: Vec<u64> = after.iter().copied().filter(|&o| o >= limit).collect();
        assert!(
            beyond.is_empty(),
            "with --size 16M, the device was read at {} offsets at or past {limit} B, first at \
             {} B",
            beyond.len(),
            beyond[0]
        );
    }

    // Writes: only the first 16 MiB change, each 4 KiB block carrying its own offset.
    let out = iocap(
        rig.dir.path(),
        "run --rw write --allow-overwrite --size 16M --bs 1M --qd 4 --duration 1s --warmup 0s \
         --output json",
        &dev,
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let j = json(&out);
    let written = u64_at(&j["tests"][0], "/write/bytes");
    assert!(written > 0, "{j:#}");
    let data = fs::read(&file).unwrap();
    assert_eq!(data.len() as u64, size);
    let untouched = vec![0xABu8; 4096];
    if let Some(k) = data[range as usize..]
        .chunks(4096)
        .position(|c| c != &untouched[..c.len()])
    {
        panic!(
            "with --size 16M, the 4 KiB block at {} B (past 16 MiB) was changed",
            range + k as u64 * 4096
        );
    }
    let found = stamps(&data);
    for &pos in &found {
        assert!(
            (pos as u64) < range && pos % 4096 == 0,
            "a write stamp at {pos} B"
        );
        assert_eq!(
            stamped_offset(&data, pos),
            pos as u64,
            "the block at {pos} B was written for another offset"
        );
    }
    // sequential from 0: at least the reported bytes were written, from the start
    let covered = written.min(range);
    let stamped: std::collections::HashSet<usize> = found.into_iter().collect();
    if let Some(o) = (0..covered as usize)
        .step_by(4096)
        .find(|o| !stamped.contains(o))
    {
        panic!("iocap reported {written} B written sequentially, but the block at {o} B was not");
    }
}

// ---------------------------------------------------------------------------------------------
// 3 and 4. Data safety on devices

#[test]
fn writes_to_an_unmounted_device_need_allow_overwrite() {
    require!("losetup");
    let mut rig = Rig::new();
    let file = rig.backing_file("disk", 64 * MIB, Some(0x5C));
    let dev = rig.attach(&file);
    settle();
    let before = fs::read(&file).unwrap();
    let args = "run --rw randwrite --bs 8K --qd 4 --duration 1s --warmup 0s";

    let out = iocap(rig.dir.path(), args, &dev);
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    assert!(
        stderr(&out).contains("--allow-overwrite"),
        "the refusal does not say how to proceed:\n{}",
        shown(&out)
    );
    let after = fs::read(&file).unwrap();
    assert!(
        after == before,
        "refused, yet {dev} changed ({} write stamps)",
        stamps(&after).len()
    );

    let out = iocap(rig.dir.path(), &format!("{args} --allow-overwrite"), &dev);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let after = fs::read(&file).unwrap();
    assert!(
        !stamps(&after).is_empty(),
        "--allow-overwrite ran, yet no write reached {dev}"
    );
}

#[test]
fn writes_to_a_mounted_device_are_always_refused() {
    require!("losetup", "mkfs.ext4", "mount", "umount", "e2fsck");
    let mut rig = Rig::new();
    let mnt = rig.path("mnt");
    let dev = rig.ext4("disk", 64 * MIB, &mnt);
    let file = rig.path("disk");
    let precious: Vec<u8> = (0..MIB as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    {
        let mut f = File::create(mnt.join("precious")).unwrap();
        f.write_all(&precious).unwrap();
        f.sync_all().unwrap();
    }

    let out = iocap(
        rig.dir.path(),
        "run --rw randwrite --allow-overwrite --bs 8K --duration 1s --warmup 0s",
        &dev,
    );
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    assert!(
        stderr(&out).contains("mounted"),
        "the refusal does not say the device is mounted:\n{}",
        shown(&out)
    );

    // reading a mounted device harms nothing and is allowed
    let out = iocap(
        rig.dir.path(),
        "run --rw randread --bs 8K --duration 1s --warmup 0s --output json",
        &dev,
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(u64_at(&json(&out)["tests"][0], "/total/ios") > 0);

    rig.umount(&mnt);
    let data = fs::read(&file).unwrap();
    assert!(stamps(&data).is_empty(), "iocap wrote to the mounted {dev}");
    if let Err(e) = sys("e2fsck", &["-f", "-n", &dev]) {
        panic!("the file system is damaged: {e}");
    }
    rig.mount(&dev, &mnt);
    assert!(
        fs::read(mnt.join("precious")).unwrap() == precious,
        "the file written before the test changed"
    );
}

// ---------------------------------------------------------------------------------------------
// 5 and 6. An I/O error during a test

fn check_eio_is_reported(engine: &str) {
    require!("losetup");
    let mut rig = Rig::new();
    let dev = match device_with_a_bad_block(&mut rig) {
        Ok(d) => d,
        Err(why) => {
            skip_or_fail(&format!(
                "no device with a bad block can be made here: {why}"
            ));
            return;
        }
    };
    // a window long enough to reach the bad block however busy the disk (quiet, it is reached
    // in well under a second; beside fio reading the same disk, a 5 s window once ended first),
    // which the run must then end early
    let args =
        format!("run --rw read --bs 4K --qd 4 --duration 120s --warmup 0s --engine {engine}");

    let out = iocap(rig.dir.path(), &args, &dev);
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    assert!(
        stdout(&out).contains("IOPS"),
        "the figures measured before the error are not printed:\n{}",
        shown(&out)
    );
    // one line, on either stream, names the operation, the offset and the error
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        all.lines().any(|l| l.contains("read")
            && l.contains(&format!(" {BAD_OFFSET} "))
            && l.contains("Input/output error")),
        "no line names the failed read, its offset {BAD_OFFSET} and the error:\n{}",
        shown(&out)
    );

    let out = iocap(rig.dir.path(), &format!("{args} --output json"), &dev);
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    let j = json(&out);
    let t = &j["tests"][0];
    if engine == "psync" {
        assert_eq!(t["engine"], "psync", "{t:#}");
    }
    let e = &t["error"];
    assert_eq!(e["op"], "read", "{e:#}");
    assert_eq!(u64_at(e, "/offset_bytes"), BAD_OFFSET, "{e:#}");
    assert_eq!(u64_at(e, "/len_bytes"), 4096, "{e:#}");
    assert_eq!(e["errno"], 5, "{e:#}");
    assert_eq!(e["path"], dev.as_str(), "{e:#}");
    // The figures before the error are kept, and reading stopped there. Until the failed read
    // is reaped the other slots (or psync threads) go on past it, so allow some of that, but
    // far less than the rest of the device.
    let ran = t["duration_s"].as_f64().unwrap_or(f64::NAN);
    assert!(
        ran < 120.0,
        "iocap did not stop at the error: it ran {ran} s"
    );
    let ios = u64_at(t, "/total/ios");
    assert!(ios > 0, "the figures before the error were lost: {t:#}");
    let most = (BAD_OFFSET + 8 * MIB) / 4096;
    assert!(
        ios <= most,
        "{ios} reads completed (at most {most} may): iocap went on reading after the error"
    );
    assert!(
        stderr(&out).contains(&format!("read of 4096 bytes at offset {BAD_OFFSET}")),
        "with --output json the error is not on stderr:\n{}",
        shown(&out)
    );
}

#[test]
fn eio_during_a_run_names_the_operation_and_offset() {
    check_eio_is_reported("auto");
}

#[test]
fn psync_engine_reports_the_same_eio() {
    check_eio_is_reported("psync");
}

// ---------------------------------------------------------------------------------------------
// 7. A block size O_DIRECT cannot use on the target

/// On a device with 4 KiB logical blocks, 512 B O_DIRECT I/O is impossible: iocap says so before
/// issuing anything, names the alignment, and points at --buffered, which then works.
#[test]
fn a_block_size_o_direct_cannot_use_is_refused_with_the_reason() {
    require!("losetup");
    let mut rig = Rig::new();
    let file = rig.backing_file("disk4k", 32 * MIB, None);
    let dev = match rig.losetup(&["--sector-size", "4096"], file.to_str().unwrap()) {
        Ok(d) => d,
        Err(why) => {
            skip_or_fail(&format!("no loop device with 4 KiB sectors: {why}"));
            return;
        }
    };
    settle();
    let out = iocap(
        rig.dir.path(),
        "run --bs 512 --duration 0.3s --warmup 0s",
        &dev,
    );
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    let err = stderr(&out);
    assert!(
        err.contains("block size 512 B is not a multiple of 4096 B") && err.contains("--buffered"),
        "{}",
        shown(&out)
    );
    assert!(!err.contains("panicked"));
    let out = iocap(
        rig.dir.path(),
        "run --bs 4K --duration 0.3s --warmup 0s --output json",
        &dev,
    );
    assert!(out.status.success(), "{}", shown(&out));
    assert_eq!(
        json(&out)["tests"][0]["targets"][0]["logical_block_bytes"],
        4096
    );
}
