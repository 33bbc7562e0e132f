//! The PostgreSQL password file, read as libpq reads it: `PGPASSFILE`, else `~/.pgpass`; one
//! `hostname:port:database:username:password` a line, `*` matching anything in the first four
//! fields, `\:` and `\\` escaping; the first matching line wins. A file that others may read
//! (group or world bits set) is ignored with a warning, as libpq does.

use std::path::{Path, PathBuf};

/// Where the password file is: `PGPASSFILE`, else `$HOME/.pgpass`.
pub fn path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    set("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|h| Path::new(&h).join(".pgpass")))
}

/// The password for `[host, port, database, user]`: `Ok(None)` when the file is missing or
/// holds no matching line, `Err(warning)` when it is ignored.
pub fn lookup(path: &Path, want: [&str; 4]) -> Result<Option<String>, String> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Err(format!(
            "password file {} is not a plain file; it is ignored",
            path.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(format!(
                "password file {} has group or world access; permissions should be u=rw (0600) \
                 or less; it is ignored",
                path.display()
            ));
        }
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "password file {} cannot be read ({e}); it is ignored",
            path.display()
        )
    })?;
    Ok(find(&text, want))
}

/// The password of the first line of `text` matching `want`.
pub fn find(text: &str, want: [&str; 4]) -> Option<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|line| {
            let f = fields(line);
            if f.len() < 5 {
                return None;
            }
            let matches = f[..4]
                .iter()
                .zip(want)
                .all(|((v, star), w)| *star || v == w);
            matches.then(|| f[4].0.clone())
        })
}

/// The fields of a line, unescaped, each with whether it is a bare `*`. The fifth field (the
/// password) runs to the end of the line, colons and all, as in libpq.
fn fields(line: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut escaped_star = false;
    let mut chars = line.trim_end_matches('\r').chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    escaped_star |= n == '*';
                    cur.push(n);
                }
            }
            ':' if out.len() < 4 => {
                let star = cur == "*" && !escaped_star;
                out.push((std::mem::take(&mut cur), star));
                escaped_star = false;
            }
            c => cur.push(c),
        }
    }
    out.push((cur, false));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
# comments and short lines are skipped
nonsense
db.example:5432:results:iocap:first\\:pass
*:*:*:admin:adm:in:colons
127.0.0.1:5433:*:iocap:other port
127.0.0.1:*:*:iocap:any port
";

    #[test]
    fn the_first_matching_line_gives_the_password() {
        let f = |w| find(FILE, w);
        assert_eq!(
            f(["db.example", "5432", "results", "iocap"]).as_deref(),
            Some("first:pass")
        );
        assert_eq!(
            f(["anywhere", "1", "x", "admin"]).as_deref(),
            Some("adm:in:colons")
        );
        assert_eq!(
            f(["127.0.0.1", "5433", "x", "iocap"]).as_deref(),
            Some("other port")
        );
        assert_eq!(
            f(["127.0.0.1", "5432", "x", "iocap"]).as_deref(),
            Some("any port")
        );
        assert_eq!(f(["db.example", "5432", "other", "iocap"]), None);
    }

    #[test]
    fn an_escaped_star_is_a_literal_star() {
        let text = "h:5432:\\*:u:lit\n";
        assert_eq!(find(text, ["h", "5432", "db", "u"]), None);
        assert_eq!(find(text, ["h", "5432", "*", "u"]).as_deref(), Some("lit"));
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_read_is_ignored_with_a_warning() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pgpass");
        std::fs::write(&p, "*:*:*:*:S3cret\n").unwrap();
        let want = ["h", "5432", "db", "u"];
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let w = lookup(&p, want).unwrap_err();
        assert!(
            w.contains("group or world access") && w.contains("0600"),
            "{w}"
        );
        assert!(!w.contains("S3cret"), "{w}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(lookup(&p, want).unwrap().as_deref(), Some("S3cret"));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert_eq!(lookup(&p, want).unwrap().as_deref(), Some("S3cret"));
        assert_eq!(lookup(&dir.path().join("none"), want), Ok(None));
    }

    #[test]
    fn pgpassfile_overrides_home() {
        let env = |k: &str| match k {
            "HOME" => Some("/home/u".to_string()),
            "PGPASSFILE" => Some("/etc/pw".to_string()),
            _ => None,
        };
        assert_eq!(path(&env), Some(PathBuf::from("/etc/pw")));
        let env = |k: &str| (k == "HOME").then(|| "/home/u".to_string());
        assert_eq!(path(&env), Some(PathBuf::from("/home/u/.pgpass")));
    }
}
