//! `iocap audit` on device layouts the tests make themselves: partition tables written with
//! sfdisk into a backing file and read back by iocap from the loop device (no partition scan, no
//! udev partition nodes: iocap parses the table itself), and ext4 made with two block sizes.

use super::rig::*;
use super::MIB;

/// `iocap audit TARGET --output json`: the checks with `id`, as (severity, subject, evidence).
fn audit(rig: &Rig, target: &str) -> Vec<(String, String, String, String)> {
    let out = iocap(rig.dir.path(), "audit --output json", target);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let j = json(&out);
    j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (s("id"), s("severity"), s("subject"), s("evidence"))
        })
        .collect()
}

/// A 64 MiB backing file with one partition at `start` (512 B sectors), written by sfdisk.
fn partitioned(rig: &Rig, name: &str, label: &str, start: u64) -> std::path::PathBuf {
    let file = rig.backing_file(name, 64 * MIB, None);
    let script = format!("label: {label}\nstart={start}, size=40000, type=L\n");
    let mut child = std::process::Command::new(tool("sfdisk").unwrap())
        .args(["--no-reread", "--no-tell-kernel", "-q"])
        .arg(&file)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "sfdisk: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    file
}

#[test]
fn a_partition_at_sector_63_fails_and_one_at_1_mib_passes() {
    require!("losetup", "sfdisk");
    let mut rig = Rig::new();
    for (label, start, want) in [
        ("dos", 63, "FAIL"),
        ("dos", 2048, "PASS"),
        ("gpt", 2048, "PASS"),
    ] {
        let file = partitioned(&rig, &format!("{label}-{start}"), label, start);
        // attached without a partition scan: the kernel knows no partition, iocap reads the table
        let dev = rig.attach(&file);
        let name = dev.trim_start_matches("/dev/");
        assert!(
            !std::path::Path::new(&format!("/sys/class/block/{name}p1")).exists(),
            "the loop device was scanned for partitions"
        );
        let checks = audit(&rig, &dev);
        let align: Vec<_> = checks
            .iter()
            .filter(|c| c.0 == "partition.alignment")
            .collect();
        assert_eq!(align.len(), 1, "{label} at {start}: {align:?}");
        let (_, sev, subject, evidence) = align[0];
        assert_eq!(sev, want, "{label} at {start}: {evidence}");
        assert_eq!(subject, &format!("{name} partition 1"));
        let scheme = if label == "dos" { "MBR" } else { "GPT" };
        assert!(
            evidence.contains(&format!("logical block {start} "))
                && evidence.contains(&format!("= {} B", start * 512))
                && evidence.contains(scheme)
                && evidence.contains("read by iocap"),
            "{evidence}"
        );
    }
}

#[test]
fn a_device_without_a_partition_table_is_aligned() {
    require!("losetup");
    let mut rig = Rig::new();
    let file = rig.backing_file("bare", 16 * MIB, None);
    let dev = rig.attach(&file);
    let checks = audit(&rig, &dev);
    let a = checks
        .iter()
        .find(|c| c.0 == "partition.alignment")
        .expect("an alignment check");
    assert_eq!(a.1, "PASS", "{a:?}");
    assert!(a.3.contains("no partition table"), "{a:?}");
    // the device itself is audited, not the devtmpfs its node lives in
    assert!(
        checks
            .iter()
            .any(|c| c.0 == "device.scheduler" && dev.ends_with(&c.2)),
        "{checks:?}"
    );
}

#[test]
fn ext4_block_sizes_are_read_from_the_file_system() {
    require!("losetup", "mkfs.ext4", "mount", "umount");
    let mut rig = Rig::new();
    for (bs, want) in [(4096, "PASS"), (1024, "WARN")] {
        let file = rig.backing_file(&format!("ext4-{bs}"), 64 * MIB, None);
        let dev = rig.attach(&file);
        must("mkfs.ext4", &["-q", "-F", "-b", &bs.to_string(), &dev]);
        let mnt = rig.path(&format!("mnt-{bs}"));
        rig.mount(&dev, &mnt);
        let out = iocap(rig.dir.path(), "audit --output json", mnt.to_str().unwrap());
        assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
        let j = json(&out);
        let t = &j["targets"][0];
        assert_eq!(t["fs_type"], "ext4", "{t}");
        let name = dev.trim_start_matches("/dev/");
        assert_eq!(t["block_device"], name, "{t}");
        let c = j["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == "fs.block_size")
            .unwrap()
            .clone();
        assert_eq!(c["severity"], want, "{c}");
        assert!(
            c["evidence"]
                .as_str()
                .unwrap()
                .contains(&format!("ext4 block size {bs} B")),
            "{c}"
        );
        rig.umount(&mnt);
    }
}
