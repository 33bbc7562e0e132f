//! From a path to its mount, block device, partition and physical devices.

#[cfg(target_os = "linux")]
use crate::nearest_existing;
use crate::{Resolved, Root};
use std::path::Path;

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone)]
pub(crate) struct Mount {
    pub majmin: String,
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    pub options: Vec<String>,
}

/// mountinfo(5): `id parent maj:min root mount_point options [optional...] - fstype source super_options`.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<Mount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        if sep < 6 || fields.len() < sep + 3 {
            continue;
        }
        let mut options: Vec<String> = fields[5].split(',').map(str::to_string).collect();
        if let Some(sup) = fields.get(sep + 3) {
            for o in sup.split(',') {
                if !options.iter().any(|x| x == o) {
                    options.push(o.to_string());
                }
            }
        }
        out.push(Mount {
            majmin: fields[2].to_string(),
            mount_point: unescape(fields[4]),
            fs_type: fields[sep + 1].to_string(),
            source: unescape(fields[sep + 2]),
            options,
        });
    }
    out
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `mount_point` contains `path` (component-wise prefix).
fn contains(mount_point: &str, path: &str) -> bool {
    Path::new(path).starts_with(Path::new(mount_point))
}

/// Device numbers and /sys are Linux's: elsewhere an error that says so.
#[cfg(not(target_os = "linux"))]
pub fn resolve_path(_: &Root, path: &Path) -> Result<Resolved, String> {
    Err(format!(
        "cannot resolve the device under {}: Linux's device numbers and /sys are needed",
        path.display()
    ))
}

/// Resolve a real path: stat it (or its nearest existing ancestor) for its device number, then
/// [`resolve_dev`]. Errors only when the path cannot be stat'ed at all.
#[cfg(target_os = "linux")]
pub fn resolve_path(root: &Root, path: &Path) -> Result<Resolved, String> {
    use std::os::unix::fs::MetadataExt;
    let existing = nearest_existing(path);
    let canonical = std::fs::canonicalize(&existing)
        .map_err(|e| format!("cannot resolve {}: {}", existing.display(), e))?;
    let meta = std::fs::metadata(&canonical)
        .map_err(|e| format!("cannot stat {}: {}", canonical.display(), e))?;
    let dev = meta.dev();
    // glibc's encoding of dev_t (what major(3) / minor(3) compute).
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let mut r = resolve_dev(
        root,
        &canonical.to_string_lossy(),
        major as u32,
        minor as u32,
    );
    r.path = path.display().to_string();
    Ok(r)
}

/// Resolve a path whose file system has device number `major:minor`: the mount from
/// `proc/self/mountinfo`, the block device from `sys/dev/block/MAJ:MIN` (or the mount source), then
/// its partition and physical devices. Fields that cannot be found stay empty.
pub fn resolve_dev(root: &Root, path: &str, major: u32, minor: u32) -> Resolved {
    let majmin = format!("{major}:{minor}");
    let mounts = root
        .read("proc/self/mountinfo")
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default();
    let best = |ms: &mut dyn Iterator<Item = &Mount>| {
        ms.filter(|m| contains(&m.mount_point, path))
            .max_by_key(|m| m.mount_point.len())
            .cloned()
    };
    let mount = best(&mut mounts.iter().filter(|m| m.majmin == majmin))
        .or_else(|| mounts.iter().find(|m| m.majmin == majmin).cloned())
        .or_else(|| best(&mut mounts.iter()));

    let mut r = Resolved {
        path: path.to_string(),
        ..Resolved::default()
    };
    let mut block = block_from_devnum(root, &majmin);
    if let Some(m) = &mount {
        r.mount_point = Some(m.mount_point.clone());
        r.fs_type = Some(m.fs_type.clone());
        r.mount_options = m.options.clone();
        if block.is_none() {
            block = block_from_source(root, &m.source);
        }
    }
    if let Some(b) = block {
        fill_chain(root, &mut r, &b);
    }
    r
}

/// Resolve a block device by name (`sda1`, `dm-0`, `md0`, `nvme0n1`): partition and physical devices.
/// `block_device` stays `None` when `sys/class/block/NAME` does not exist.
pub fn resolve_device(root: &Root, name: &str) -> Resolved {
    let mut r = Resolved {
        path: name.to_string(),
        ..Resolved::default()
    };
    let name = name.trim_start_matches("/dev/");
    if root.join(&format!("sys/class/block/{name}")).exists() {
        fill_chain(root, &mut r, name);
    }
    r
}

fn fill_chain(root: &Root, r: &mut Resolved, block: &str) {
    let c = chain(root, block);
    r.block_device = Some(block.to_string());
    r.partition = c.partitions.first().cloned();
    r.devices = c.physical;
}

/// The name behind `sys/dev/block/MAJ:MIN`: the symlink's last component, else `DEVNAME` in uevent.
fn block_from_devnum(root: &Root, majmin: &str) -> Option<String> {
    let rel = format!("sys/dev/block/{majmin}");
    let p = root.join(&rel);
    if let Ok(target) = std::fs::read_link(&p) {
        if let Some(n) = target.file_name() {
            return Some(n.to_string_lossy().into_owned());
        }
    }
    let uevent = root.read(&format!("{rel}/uevent")).ok()?;
    uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .map(|s| s.trim().to_string())
}

/// A mount source such as `/dev/sda1` or `/dev/mapper/vg-lv` to a block device name.
fn block_from_source(root: &Root, source: &str) -> Option<String> {
    if !source.starts_with("/dev/") {
        return None;
    }
    let exists = |n: &str| root.join(&format!("sys/class/block/{n}")).exists();
    if let Ok(c) = std::fs::canonicalize(root.join(source)) {
        if let Some(n) = c.file_name().map(|n| n.to_string_lossy().into_owned()) {
            if exists(&n) {
                return Some(n);
            }
        }
    }
    let base = Path::new(source)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    if exists(&base) {
        return Some(base);
    }
    // /dev/mapper/NAME: find the dm device whose dm/name is NAME.
    let dir = std::fs::read_dir(root.join("sys/class/block")).ok()?;
    for e in dir.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if root
            .read(&format!("sys/class/block/{n}/dm/name"))
            .ok()
            .as_deref()
            == Some(&base)
        {
            return Some(n);
        }
    }
    None
}

/// The devices under a block device.
#[derive(Debug, Default, Clone)]
pub(crate) struct Chain {
    /// Partitions met on the way down, top first.
    pub partitions: Vec<String>,
    /// Stacked devices (dm-*, md*) met on the way down, top first.
    pub stacked: Vec<String>,
    /// Whole physical disks at the bottom.
    pub physical: Vec<String>,
}

pub(crate) fn chain(root: &Root, name: &str) -> Chain {
    let mut c = Chain::default();
    visit(root, name, &mut c, 0);
    c
}

fn is_partition(root: &Root, name: &str) -> bool {
    root.join(&format!("sys/class/block/{name}/partition"))
        .exists()
}

fn visit(root: &Root, name: &str, c: &mut Chain, depth: u32) {
    if depth > 16 {
        return;
    }
    let disk = if is_partition(root, name) {
        if !c.partitions.iter().any(|p| p == name) {
            c.partitions.push(name.to_string());
        }
        match parent_disk(root, name) {
            Some(d) => d,
            None => return,
        }
    } else {
        name.to_string()
    };
    let slaves = list_dir(root, &format!("sys/class/block/{disk}/slaves"));
    if slaves.is_empty() {
        if !c.physical.contains(&disk) {
            c.physical.push(disk);
        }
    } else {
        if !c.stacked.contains(&disk) {
            c.stacked.push(disk.clone());
        }
        for s in slaves {
            visit(root, &s, c, depth + 1);
        }
    }
}

/// Sorted entry names of a directory under the root (empty when it is missing).
pub(crate) fn list_dir(root: &Root, rel: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root.join(rel))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The disk a partition belongs to: the parent directory of its sysfs node, else its name without
/// the partition number (`sda1` → `sda`, `nvme0n1p2` → `nvme0n1`).
pub(crate) fn parent_disk(root: &Root, part: &str) -> Option<String> {
    let exists = |n: &str| root.join(&format!("sys/class/block/{n}")).exists();
    let link = root.join(&format!("sys/class/block/{part}"));
    if std::fs::symlink_metadata(&link)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
    {
        if let Ok(c) = std::fs::canonicalize(&link) {
            if let Some(p) = c.parent().and_then(|p| p.file_name()) {
                let p = p.to_string_lossy().into_owned();
                if exists(&p) && p != part {
                    return Some(p);
                }
            }
        }
    }
    let stem = part.trim_end_matches(|ch: char| ch.is_ascii_digit());
    if stem.len() == part.len() {
        return None;
    }
    if let Some(s) = stem.strip_suffix('p') {
        if s.ends_with(|ch: char| ch.is_ascii_digit()) && exists(s) {
            return Some(s.to_string());
        }
    }
    exists(stem).then(|| stem.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_parses_optional_fields_and_escapes() {
        let t = "36 35 98:0 /mnt1 /mnt/my\\040data rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n";
        let m = parse_mountinfo(t);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].mount_point, "/mnt/my data");
        assert_eq!(m[0].majmin, "98:0");
        assert_eq!(m[0].fs_type, "ext3");
        assert_eq!(m[0].source, "/dev/root");
        assert_eq!(m[0].options, vec!["rw", "noatime", "errors=continue"]);
    }

    #[test]
    fn prefix_is_component_wise() {
        assert!(contains("/data", "/data/pg"));
        assert!(contains("/", "/data"));
        assert!(!contains("/dat", "/data"));
    }
}
