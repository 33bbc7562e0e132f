//! PostgreSQL connection strings in every form libpq accepts: a URL (`postgres://` or
//! `postgresql://`, the scheme in any case, a password in the userinfo or in a `?password=`
//! query parameter) or key=value conninfo (`host=db user=iocap password='a b' dbname=results`).
//! A password in any of them is shown as `***`, everywhere iocap writes a connection string,
//! and scrubbed from the errors the postgres crate returns. When the string holds no password,
//! `PGPASSWORD` and then the password file (`~/.pgpass`, `PGPASSFILE`) supply it, as libpq does;
//! `PGHOST`, `PGPORT`, `PGUSER` and `PGDATABASE` fill in what the string leaves out, and with
//! no host at all the local server's Unix socket is used.

use std::ops::Range;
use std::path::Path;
use std::str::FromStr;

use postgres::config::Host;
use postgres::Config;

use crate::pgpass;
use crate::StoreError;

const SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// The string with a PostgreSQL URL scheme written in lower case (the postgres crate knows
/// only that spelling), or `None` when it is no PostgreSQL URL.
pub fn url(s: &str) -> Option<String> {
    SCHEMES.iter().find_map(|p| {
        let head = s.get(..p.len())?;
        head.eq_ignore_ascii_case(p)
            .then(|| format!("{p}{}", &s[p.len()..]))
    })
}

/// Whether `s` is key=value conninfo: it starts with a keyword and `=` (`host=...`). libpq takes
/// any string holding `=` as conninfo; a file path with `=` in its name is still a path when it
/// starts with `./` or `/`.
pub fn is_conninfo(s: &str) -> bool {
    let key_end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    key_end > 0
        && s.as_bytes()[0].is_ascii_alphabetic()
        && s[key_end..].trim_start().starts_with('=')
}

/// A key=value pair of conninfo: the keyword, and the byte range of its value in the source.
struct Pair<'a> {
    key: &'a str,
    start: usize,
    end: usize,
}

/// Splits conninfo as libpq does (values quoted in `'...'` or bare, `\` escaping one character);
/// `Err(at)` says where a pair could not be read.
fn pairs(s: &str) -> Result<Vec<Pair<'_>>, usize> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        if i == b.len() {
            return Ok(out);
        }
        let k = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' {
            i += 1;
        }
        let key = &s[k..i];
        skip_ws(&mut i);
        if i == b.len() || b[i] != b'=' {
            return Err(k);
        }
        i += 1;
        skip_ws(&mut i);
        let start = i;
        let quoted = i < b.len() && b[i] == b'\'';
        if quoted {
            i += 1;
        }
        loop {
            match b.get(i) {
                None if quoted => return Err(start),
                None => break,
                Some(b'\\') => i += 2,
                Some(b'\'') if quoted => {
                    i += 1;
                    break;
                }
                Some(c) if !quoted && c.is_ascii_whitespace() => break,
                Some(_) => i += 1,
            }
        }
        let end = i.min(b.len());
        out.push(Pair { key, start, end });
    }
}

/// Where the passwords of a connection string are, as byte ranges of it (empty for a string
/// that is no PostgreSQL one); `Err` for conninfo that cannot be read.
fn password_spans(s: &str) -> Result<Vec<Range<usize>>, ()> {
    if url(s).is_some() {
        return Ok(url_password_spans(s));
    }
    if !is_conninfo(s) {
        return Ok(Vec::new());
    }
    let ps = pairs(s).map_err(|_| ())?;
    // a value under a keyword iocap does not know (a misspelt `pasword`?) is hidden too
    Ok(ps
        .iter()
        .filter(|p| !SHOWN.contains(&p.key))
        .map(|p| p.start..p.end)
        .collect())
}

/// The conninfo keywords whose values are shown.
const SHOWN: [&str; 20] = [
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "options",
    "application_name",
    "sslmode",
    "sslnegotiation",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
    "replication",
    "passfile",
];

/// A URL's passwords: as the postgres crate reads them (the userinfo ends at the first '@',
/// then `?password=`), and, when the URL holds more than one '@', everything from the scheme to
/// the last '@' too: a password with an unencoded '@', '/', '?' or '&' is then hidden whole,
/// whatever was meant, at the cost of hiding the host as well.
fn url_password_spans(s: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let Some(se) = s.find("://").map(|i| i + 3) else {
        return out;
    };
    let ats: Vec<usize> = s[se..].match_indices('@').map(|(i, _)| se + i).collect();
    let mut query_from = vec![ats.first().copied().unwrap_or(se)];
    if let Some(&at) = ats.first() {
        if let Some(c) = s[se..at].find(':') {
            out.push(se + c + 1..at);
        }
    }
    if let (true, Some(&last)) = (ats.len() > 1, ats.last()) {
        out.push(se..last);
        query_from.push(last);
    }
    for from in query_from {
        if let Some(q) = s[from..].find('?').map(|q| from + q) {
            query_password_spans(s, q, &mut out);
        }
    }
    merged(out)
}

/// The values of `password` parameters in the query that starts at `q` (the '?'). A part with
/// no '=' after a password is taken as more of it (an unencoded '&').
fn query_password_spans(s: &str, q: usize, out: &mut Vec<Range<usize>>) {
    let mut pos = q + 1;
    let mut in_password = false;
    for p in s[q + 1..].split('&') {
        match p.split_once('=') {
            Some((k, _)) if decode(k).eq_ignore_ascii_case("password") => {
                out.push(pos + k.len() + 1..pos + p.len());
                in_password = true;
            }
            None if in_password => out.push(pos - 1..pos + p.len()),
            _ => in_password = false,
        }
        pos += p.len() + 1;
    }
}

/// Ranges sorted, overlapping ones joined.
fn merged(mut spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    spans.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for r in spans {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The connection string as it may be shown: every password replaced by `***`.
pub fn masked(s: &str) -> String {
    match password_spans(s) {
        Ok(spans) => {
            let mut out = String::with_capacity(s.len());
            let mut at = 0;
            for r in spans {
                out.push_str(&s[at..r.start]);
                out.push_str("***");
                at = r.end;
            }
            out.push_str(&s[at..]);
            out
        }
        // conninfo that cannot be read: keep only the keywords it was read to, no value
        Err(()) => {
            let at = pairs(s).err().unwrap_or(0);
            let good = pairs(&s[..at]).unwrap_or_default();
            let keys: Vec<String> = good.iter().map(|p| format!("{}=...", p.key)).collect();
            keys.join(" ")
        }
    }
}

/// `%XX` decoded, for query keys (invalid escapes are kept as written).
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|&c| hex(c)),
            b.get(i + 2).and_then(|&c| hex(c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every text a password may appear as in a message: as written (perhaps percent-encoded or
/// quoted) and as used.
fn secrets(s: &str, cfg: Option<&Config>) -> Vec<String> {
    let mut out: Vec<String> = password_spans(s)
        .unwrap_or_default()
        .into_iter()
        .map(|r| s[r].to_string())
        .collect();
    if let Some(p) = cfg.and_then(Config::get_password) {
        out.push(String::from_utf8_lossy(p).into_owned());
    }
    // the longest first, so a password holding another is replaced whole
    out.sort_by_key(|p| std::cmp::Reverse(p.len()));
    // a password of one or two characters would mangle every message; none of the crate's
    // messages quotes one
    out.retain(|p| p.len() >= 3);
    out
}

/// `msg` with the connection string shown masked and each password replaced by `***`.
pub fn scrub(msg: &str, conn: &str, cfg: Option<&Config>) -> String {
    let mut out = match conn.is_empty() {
        true => msg.to_string(),
        false => msg.replace(conn, &masked(conn)),
    };
    for s in secrets(conn, cfg) {
        out = out.replace(&s, "***");
    }
    out
}

/// The string without its `passfile` setting (conninfo `passfile=...` or a URL's
/// `?passfile=...`), and that setting: libpq's keyword for the password file to read instead of
/// `PGPASSFILE` or `~/.pgpass`, which the postgres crate does not know.
fn split_passfile(s: &str) -> (String, Option<String>) {
    if let Some(u) = url(s) {
        let Some((head, query)) = u.split_once('?') else {
            return (u, None);
        };
        let mut file = None;
        let kept: Vec<&str> = query
            .split('&')
            .filter(|part| match part.split_once('=') {
                Some((k, v)) if decode(k) == "passfile" => {
                    file = Some(decode(v));
                    false
                }
                _ => true,
            })
            .collect();
        let rest = if kept.is_empty() {
            head.to_string()
        } else {
            format!("{head}?{}", kept.join("&"))
        };
        return (rest, file);
    }
    let Ok(ps) = pairs(s) else {
        return (s.to_string(), None);
    };
    let (mut rest, mut at, mut file) = (String::new(), 0, None);
    for p in ps.iter().filter(|p| p.key == "passfile") {
        let key_start = p.key.as_ptr() as usize - s.as_ptr() as usize;
        rest.push_str(&s[at..key_start]);
        at = p.end;
        file = Some(unquote(&s[p.start..p.end]));
    }
    rest.push_str(&s[at..]);
    (rest, file)
}

/// A conninfo value as libpq reads it: surrounding single quotes removed, `\x` read as `x`.
fn unquote(v: &str) -> String {
    let inner = v
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .unwrap_or(v);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' {
            chars.next().unwrap_or(c)
        } else {
            c
        });
    }
    out
}

/// Reads a connection string (URL or conninfo) into the postgres crate's config; errors name
/// the string masked. A `passfile` setting is left out here: [`config`] reads it.
pub fn parse(s: &str) -> Result<Config, StoreError> {
    let (text, _) = split_passfile(s);
    let text = url(&text).unwrap_or(text);
    Config::from_str(&text).map_err(|e| {
        // the crate's summary ("invalid connection string") hides the reason
        let mut why = e.to_string();
        let mut src = std::error::Error::source(&e);
        while let Some(c) = src {
            why.push_str(&format!(": {c}"));
            src = c.source();
        }
        StoreError::Usage(format!(
            "the PostgreSQL connection string '{}' cannot be read: {}{}",
            masked(s),
            scrub(&why, s, None),
            if is_conninfo(s) && url(s).is_none() {
                " (a SQLite file whose name holds '=' is given as ./NAME)"
            } else {
                ""
            }
        ))
    })
}

/// The config to connect with: the string's own settings, then the environment (`PGHOST`,
/// `PGPORT`, `PGUSER`, `PGDATABASE`; a password from `PGPASSWORD`, else the password file: the
/// string's `passfile`, else `PGPASSFILE`, else `~/.pgpass`). `env` reads a variable (the
/// process environment, or a test's).
pub fn config(s: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, StoreError> {
    let mut cfg = parse(s)?;
    let passfile = split_passfile(s).1.filter(|f| !f.is_empty());
    let var = |k: &str| env(k).filter(|v| !v.is_empty());
    if cfg.get_hosts().is_empty() {
        if let Some(h) = var("PGHOST") {
            for one in h.split(',') {
                cfg.host(one);
            }
        }
    }
    if cfg.get_hosts().is_empty() && cfg.get_hostaddrs().is_empty() {
        // libpq's default: the local server's Unix socket
        let port = var("PGPORT").unwrap_or_else(|| "5432".into());
        let socket = ["/var/run/postgresql", "/tmp"]
            .into_iter()
            .find(|d| Path::new(d).join(format!(".s.PGSQL.{port}")).exists());
        cfg.host(socket.unwrap_or("localhost"));
    }
    if cfg.get_ports().is_empty() {
        if let Some(p) = var("PGPORT") {
            let port = p
                .trim()
                .parse::<u16>()
                .map_err(|_| StoreError::Usage(format!("PGPORT '{p}' is not a port number")))?;
            cfg.port(port);
        }
    }
    if cfg.get_user().is_none() {
        if let Some(u) = var("PGUSER")
            .or_else(|| var("USER"))
            .or_else(|| var("LOGNAME"))
        {
            cfg.user(&u);
        }
    }
    if cfg.get_dbname().is_none() {
        if let Some(d) = var("PGDATABASE") {
            cfg.dbname(&d);
        }
    }
    if cfg.get_password().is_none() {
        if let Some(p) = var("PGPASSWORD") {
            cfg.password(p);
        } else if let Some(p) = from_password_file(&cfg, passfile, env) {
            cfg.password(p);
        }
    }
    Ok(cfg)
}

/// The password the password file (`passfile`, else the environment's) holds for the first
/// host of `cfg`, as libpq looks it up.
fn from_password_file(
    cfg: &Config,
    passfile: Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let host = match cfg.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        // a Unix socket, or the default, matches "localhost"
        _ => "localhost".to_string(),
    };
    let port = cfg.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = cfg.get_user()?;
    let db = cfg.get_dbname().unwrap_or(user);
    let path = passfile
        .map(std::path::PathBuf::from)
        .or_else(|| pgpass::path(env))?;
    match pgpass::lookup(&path, [host.as_str(), &port, db, user]) {
        Ok(found) => found,
        Err(warning) => {
            eprintln!("iocap: warning: {warning}");
            None
        }
    }
}

#[cfg(test)]
#[path = "conninfo_tests.rs"]
mod tests;
