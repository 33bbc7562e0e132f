//! `/proc/locks`, read for who holds a `flock`.

/// The pids holding a `flock` on the file of device `dev` (major, minor) and inode `ino`, in
/// the text of `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 4242 fe:00:1234 0 EOF`; the device's
/// numbers in hex; a waiting lock's line has `->` and is skipped).
pub fn holders(text: &str, dev: (u32, u32), ino: u64) -> Vec<u32> {
    text.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.get(1) != Some(&"FLOCK") {
                return None;
            }
            let mut id = w.get(5)?.split(':');
            let major = u32::from_str_radix(id.next()?, 16).ok()?;
            let minor = u32::from_str_radix(id.next()?, 16).ok()?;
            let inode: u64 = id.next()?.parse().ok()?;
            ((major, minor) == dev && inode == ino)
                .then(|| w[4].parse().ok())
                .flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_names_the_holder_of_the_file() {
        let text = "\
1: FLOCK  ADVISORY  WRITE 4242 fe:00:1234 0 EOF
1: -> FLOCK  ADVISORY  WRITE 5151 fe:00:1234 0 EOF
2: POSIX  ADVISORY  WRITE 777 fe:00:1234 0 EOF
3: FLOCK  ADVISORY  WRITE 99 103:02:1234 0 EOF
4: OFDLCK ADVISORY  READ  -1 00:15:1234 0 EOF
";
        assert_eq!(holders(text, (0xfe, 0), 1234), vec![4242]);
        assert_eq!(holders(text, (0x103, 2), 1234), vec![99]);
        assert!(holders(text, (0xfe, 0), 1235).is_empty());
    }
}
