//! What a path is, in words, for the refusals that name it: "/dev/null is a character device",
//! "x is a FIFO (named pipe)". The engine (test targets), the store (`--db`) and the console
//! (files written for the user) each refuse what they cannot use by its kind, read with a stat
//! before anything opens it, and say it the same way. Pure: the caller reads the type.

use std::fs::FileType;

/// The kind of file `t` is, with no article: "regular file", "directory", "FIFO (named
/// pipe)", "socket", "character device", "block device", "symbolic link".
pub fn file_kind(t: &FileType) -> &'static str {
    if t.is_file() {
        "regular file"
    } else if t.is_dir() {
        "directory"
    } else if t.is_symlink() {
        "symbolic link"
    } else {
        special_kind(t)
    }
}

#[cfg(unix)]
fn special_kind(t: &FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "FIFO (named pipe)"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else {
        "special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &FileType) -> &'static str {
    "special file"
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_named() {
        let d = std::env::temp_dir();
        let kind =
            |p: &std::path::Path| file_kind(&std::fs::symlink_metadata(p).unwrap().file_type());
        assert_eq!(kind(&d), "directory");
        assert_eq!(kind(std::path::Path::new("/dev/null")), "character device");
        let f = tempfile_in(&d);
        assert_eq!(kind(&f), "regular file");
        std::fs::remove_file(&f).unwrap();
    }

    fn tempfile_in(d: &std::path::Path) -> std::path::PathBuf {
        let p = d.join(format!("iocap-filekind-{}", std::process::id()));
        std::fs::write(&p, b"x").unwrap();
        p
    }
}
