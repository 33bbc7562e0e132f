//! The whole disks whose requests carry a path's I/O: what `iocap capture` records.
//!
//! The block tracepoints report a request on the disk that serves it, with the disk's own
//! sectors: a partition's I/O shows on its disk, a device-mapper or md volume's on the disks
//! under it. So a path resolves (as the audit does: mount, block device, partitions, slaves) to
//! its physical disks, each with its number and size. A path with no block device under it
//! (tmpfs, NFS, FUSE) is refused with the file system's name.

use crate::resolve::{resolve_device, resolve_path};
use crate::Root;
use std::path::Path;

/// A whole disk: its name (`vda`, `nvme0n1`, `loop3`), number and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDisk {
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub size_bytes: u64,
}

/// The disks under `target`: a block device (`/dev/sda1`, `/dev/mapper/vg-lv`, `nvme0n1`) or a
/// path on a file system. An error names why there is none.
pub fn disks_under(root: &Root, target: &str) -> Result<Vec<BlockDisk>, String> {
    let names = physical_names(root, target)?;
    names.iter().map(|n| disk(root, n)).collect()
}

fn physical_names(root: &Root, target: &str) -> Result<Vec<String>, String> {
    let path = Path::new(target);
    let dev_name = block_node_name(root, path);
    let resolved = match dev_name {
        Some(name) => resolve_device(root, &name),
        None if !target.starts_with('/')
            && root.join(&format!("sys/class/block/{target}")).exists() =>
        {
            resolve_device(root, target)
        }
        None => {
            if !path.exists() {
                return Err(format!("{target}: no such file, directory or block device"));
            }
            resolve_path(root, path)?
        }
    };
    if resolved.block_device.is_none() || resolved.devices.is_empty() {
        let fs = resolved.fs_type.as_deref().unwrap_or("a file system");
        return Err(format!(
            "{target} is on {fs}, which has no block device under it: a capture records a \
             block device's requests (name a path on a disk-backed file system, or the device)"
        ));
    }
    Ok(resolved.devices)
}

/// The kernel's name of a block device node (`/dev/sda1` → `sda1`, `/dev/mapper/x` → `dm-0`).
#[cfg(not(unix))]
fn block_node_name(_: &Root, _: &Path) -> Option<String> {
    None
}

/// The kernel's name of a block device node (`/dev/sda1` → `sda1`, `/dev/mapper/x` → `dm-0`).
#[cfg(unix)]
fn block_node_name(root: &Root, path: &Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let canonical = std::fs::canonicalize(path).ok()?;
    if !std::fs::metadata(&canonical)
        .ok()?
        .file_type()
        .is_block_device()
    {
        return None;
    }
    let name = canonical.file_name()?.to_string_lossy().into_owned();
    root.join(&format!("sys/class/block/{name}"))
        .exists()
        .then_some(name)
}

fn disk(root: &Root, name: &str) -> Result<BlockDisk, String> {
    let dev = root.read(&format!("sys/class/block/{name}/dev"))?;
    let (major, minor) = dev
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .ok_or_else(|| format!("/sys/class/block/{name}/dev holds {dev:?}, not MAJ:MIN"))?;
    let sectors = root
        .read_u64(&format!("sys/class/block/{name}/size"))
        .unwrap_or(0);
    Ok(BlockDisk {
        name: name.to_string(),
        major,
        minor,
        size_bytes: sectors * 512,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_block(root: &Path, name: &str, dev: &str, size: u64) {
        let d = root.join("sys/class/block").join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("dev"), format!("{dev}\n")).unwrap();
        std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
    }

    #[test]
    fn a_device_mapper_volume_is_captured_on_the_disks_under_it() {
        let t = tempfile::tempdir().unwrap();
        fake_block(t.path(), "dm-0", "253:0", 100);
        fake_block(t.path(), "sdb", "8:16", 2048);
        fake_block(t.path(), "sdc", "8:32", 4096);
        let slaves = t.path().join("sys/class/block/dm-0/slaves");
        std::fs::create_dir_all(slaves.join("sdb")).unwrap();
        std::fs::create_dir_all(slaves.join("sdc")).unwrap();
        let disks = disks_under(&Root::new(t.path()), "dm-0").unwrap();
        let names: Vec<_> = disks
            .iter()
            .map(|d| (d.name.as_str(), d.major, d.minor))
            .collect();
        assert_eq!(names, [("sdb", 8, 16), ("sdc", 8, 32)]);
        assert_eq!(disks[1].size_bytes, 4096 * 512);
    }

    #[test]
    fn a_partition_is_captured_on_its_disk() {
        let t = tempfile::tempdir().unwrap();
        fake_block(t.path(), "vda", "254:0", 100);
        let part = t.path().join("sys/class/block/vda1");
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(part.join("partition"), "1\n").unwrap();
        std::fs::write(part.join("dev"), "254:1\n").unwrap();
        let d = disks_under(&Root::new(t.path()), "vda1").unwrap();
        assert_eq!(
            (d[0].name.as_str(), d[0].major, d[0].minor),
            ("vda", 254, 0)
        );
    }

    #[test]
    fn a_missing_path_is_named() {
        let e = disks_under(&Root::system(), "/no/such/place/here").unwrap_err();
        assert!(e.contains("/no/such/place/here: no such file"), "{e}");
    }

    #[test]
    fn tmpfs_is_refused_with_its_name() {
        let shm = Path::new("/dev/shm");
        if !shm.exists() {
            assert!(std::env::var_os("CI").is_none(), "CI's Debian has /dev/shm");
            eprintln!("skipping: no /dev/shm here");
            return;
        }
        let e = disks_under(&Root::system(), "/dev/shm").unwrap_err();
        assert!(e.contains("tmpfs") && e.contains("no block device"), "{e}");
    }
}
