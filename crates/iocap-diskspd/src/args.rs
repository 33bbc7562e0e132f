//! DiskSpd's command line, read the way DiskSpd reads it: every switch is one argument with its
//! value attached (`-b8K`, never `-b 8K`), letters are case-sensitive (`-s` is not `-S`), and
//! switches come before the targets. The block size is read first, since other sizes may be
//! given in blocks (`-T1b`) wherever `-b` stands. One pass fills a [`Draft`]; `convert` then
//! turns it into the run, so every default and mapping rule lives in one place.
//!
//! Windows DiskSpd also takes `/` for `-`; on Linux `/data/t.dat` is a path, so only `-` (or an
//! en or em dash pasted from a document) starts a switch here.

use crate::size::{bounded, number, size};
use crate::{Access, DiskspdError, Hints, Output, Throttle, WriteBuffers};
use iocap_model::{EngineChoice, MAX_QD, MAX_THREADS};

/// The command line as typed, before the mapping to iocap.
#[derive(Debug, Default)]
pub(crate) struct Draft {
    pub block_bytes: u64,
    pub duration_s: Option<u32>,
    pub warmup_s: Option<u32>,
    pub cooldown_s: Option<u32>,
    pub threads: Option<u32>,
    pub total_threads: Option<u32>,
    pub requests: Option<u32>,
    pub pool_requests: Option<u32>,
    pub write_pct: u8,
    pub access: Option<Access>,
    pub thread_stride_bytes: u64,
    pub max_size_bytes: u64,
    pub create_bytes: Option<u64>,
    /// `Some(true)`: `-Su`, `-Sh`, `-h`, `-S`; `Some(false)`: `-Sb`.
    pub disable_os_cache: Option<bool>,
    pub write_through: Option<bool>,
    pub throttle: Option<Throttle>,
    pub seed: Option<u32>,
    pub seed_from_clock: bool,
    pub write_buffers: WriteBuffers,
    pub affinity: Vec<u32>,
    pub no_affinity: bool,
    pub hints: Hints,
    pub completion_routines: bool,
    /// DiskSpd for Linux's `-xk` (libaio) or `-xp` (POSIX aio).
    pub linux_engine: Option<char>,
    pub large_pages: bool,
    pub verbose: bool,
    pub progress: u32,
    pub latency: bool,
    pub interval_ms: Option<u32>,
    pub output: Output,
    pub targets: Vec<String>,
    pub allow_overwrite: bool,
    pub engine: Option<EngineChoice>,
    /// `-B<base>`: where every target's I/O starts; `max_size_bytes` stays the end offset
    /// (DiskSpd's `-B<base>:<length>` sets it to base + length).
    pub base_bytes: Option<u64>,
    /// The end offset came from `-B<base>:<length>`, so a `-f` conflicts with it.
    pub base_length: bool,
    /// `-rs<pct>`: the share of random I/Os; `random_align` says whether `-r` gave the
    /// alignment (an `-rs` alone takes the block size, as DiskSpd does).
    pub random_pct: Option<u8>,
    pub random_align: bool,
    /// `-p`: parallel I/O at one offset.
    pub parallel: bool,
    /// `-i<count>` and `-j<ms>`: I/Os per burst (per target, shared by its threads) and the
    /// think time after each.
    pub burst_ios: Option<u32>,
    pub think_ms: Option<u32>,
    /// `-vs`: verbose summary statistics, echoed only.
    pub verbose_stats: bool,
}

/// Reads the arguments of one DiskSpd call (without the program name) into a draft, each flag
/// checked on its own, and the command line as typed; `convert` makes the run of it.
pub(crate) fn read<S: AsRef<str>>(args: &[S]) -> Result<(Draft, String), DiskspdError> {
    let typed: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let normal: Vec<String> = typed.iter().map(|a| normalize_dashes(a)).collect();
    let mut d = Draft {
        block_bytes: block_size(&typed, &normal)?,
        ..Draft::default()
    };
    let mut i = 0;
    while i < normal.len() {
        let (raw, arg) = (typed[i], normal[i].as_str());
        i += 1;
        if let Some(long) = arg.strip_prefix("--") {
            let next = normal.get(i).map(String::as_str);
            i += long_option(&mut d, raw, long, next)?;
        } else if let Some(flag) = arg.strip_prefix('-') {
            if !d.targets.is_empty() {
                let problem = "DiskSpd's options come before its targets";
                return Err(DiskspdError::flag(raw, problem));
            }
            switch(&mut d, raw, flag)?;
        } else if arg.is_empty() {
            return Err(DiskspdError::Usage(
                "an empty argument is not a target".into(),
            ));
        } else {
            d.targets.push(arg.to_string());
        }
    }
    let command_line = std::iter::once("diskspd")
        .chain(typed.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    Ok((d, command_line))
}

/// Replaces a leading EN DASH or EM DASH (one or two of them) by `-`: word processors turn the
/// dashes of command lines copied into runbooks into them.
fn normalize_dashes(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len());
    let mut chars = arg.chars().peekable();
    for _ in 0..2 {
        match chars.peek() {
            Some('-' | '\u{2013}' | '\u{2014}') => {
                chars.next();
                out.push('-');
            }
            _ => break,
        }
    }
    out.extend(chars);
    out
}

/// Pass 1: the last `-b` (as in DiskSpd), since sizes in blocks depend on it.
fn block_size(typed: &[&str], normal: &[String]) -> Result<u64, DiskspdError> {
    let mut block = crate::DEFAULT_BLOCK_BYTES;
    for (raw, arg) in typed.iter().zip(normal) {
        if let Some(value) = arg.strip_prefix("-b") {
            let bytes = size(value, "block size", None).map_err(|p| DiskspdError::flag(raw, p))?;
            if bytes == 0 {
                return Err(DiskspdError::flag(
                    raw,
                    "the block size must be at least 1 byte",
                ));
            }
            block = bytes;
        }
    }
    Ok(block)
}

/// iocap's own long options; returns how many following arguments were taken as a value.
fn long_option(
    d: &mut Draft,
    raw: &str,
    long: &str,
    next: Option<&str>,
) -> Result<usize, DiskspdError> {
    let (name, inline) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    match (name, inline) {
        ("allow-overwrite", None) => d.allow_overwrite = true,
        ("allow-overwrite", Some(_)) => return Err(DiskspdError::flag(raw, "takes no value")),
        ("engine", _) => {
            let Some(value) = inline.or(next) else {
                let names = iocap_model::System::HOST.engine_names();
                return Err(DiskspdError::flag(raw, format!("needs a value: {names}")));
            };
            d.engine = Some(EngineChoice::parse(value).map_err(|e| DiskspdError::flag(raw, e))?);
            return Ok(usize::from(inline.is_none()));
        }
        _ => return Err(DiskspdError::flag(raw, "unknown option")),
    }
    Ok(0)
}

/// One switch; `flag` is what follows the dash, `raw` the argument as typed.
fn switch(d: &mut Draft, raw: &str, flag: &str) -> Result<(), DiskspdError> {
    let mut chars = flag.chars();
    let Some(letter) = chars.next() else {
        return Err(DiskspdError::flag(
            raw,
            "a lone dash is neither an option nor a target",
        ));
    };
    let value = chars.as_str();
    let bad = |p: String| DiskspdError::flag(raw, p);
    match letter {
        'a' => d.affinity.extend(affinity(value).map_err(bad)?),
        'S' | 'h' => caching(d, letter, value).map_err(bad)?,
        'r' => random(d, value).map_err(bad)?,
        's' => sequential(d, value).map_err(bad)?,
        'R' => d.output = output(value).map_err(bad)?,
        'Z' => d.write_buffers = write_buffers(value, d.block_bytes).map_err(bad)?,
        'g' => d.throttle = Some(throttle(value, d.block_bytes).map_err(bad)?),
        'f' => access_hints_or_size(d, value).map_err(bad)?,
        'z' if value.is_empty() => d.seed_from_clock = true,
        'z' => d.seed = Some(bounded(value, "seed", 0, u32::MAX.into()).map_err(bad)? as u32),
        _ => return counts_and_flags(d, raw, letter, value),
    }
    Ok(())
}

/// Switches that take a count, a time, a size or nothing at all, and those iocap refuses.
fn counts_and_flags(
    d: &mut Draft,
    raw: &str,
    letter: char,
    value: &str,
) -> Result<(), DiskspdError> {
    let bad = |p: String| DiskspdError::flag(raw, p);
    let count = |what: &str, min: u64, max: u64| -> Result<u32, DiskspdError> {
        Ok(bounded(value, what, min, max).map_err(bad)? as u32)
    };
    let secs = u32::MAX.into();
    match letter {
        'b' => {} // read in pass 1
        'c' => {
            d.create_bytes = Some(positive_size(value, "file size", d.block_bytes).map_err(bad)?)
        }
        'B' => base_offset(d, value).map_err(bad)?,
        'T' => {
            d.thread_stride_bytes =
                positive_size(value, "thread stride", d.block_bytes).map_err(bad)?
        }
        'd' => d.duration_s = Some(count("duration in seconds", 1, secs)?),
        'W' => d.warmup_s = Some(count("warm-up time in seconds", 0, secs)?),
        'C' => d.cooldown_s = Some(count("cool-down time in seconds", 0, secs)?),
        'D' if value.is_empty() => d.interval_ms = Some(crate::DEFAULT_INTERVAL_MS),
        'D' => d.interval_ms = Some(count("interval in milliseconds", 1, secs)?),
        'o' => d.requests = Some(count("number of outstanding I/Os", 1, MAX_QD.into())?),
        'O' => d.pool_requests = Some(count("number of outstanding I/Os", 1, MAX_QD.into())?),
        't' | 'F' => threads(
            d,
            raw,
            letter,
            count("number of threads", 1, MAX_THREADS.into())?,
        )?,
        'w' if value.is_empty() => d.write_pct = 0,
        'w' => d.write_pct = count("write percentage", 0, 100)? as u8,
        'P' if value.is_empty() => d.progress = 65_536,
        'P' => d.progress = count("progress interval", 1, secs)?,
        'I' => io_priority(count("I/O priority", 1, 3)?).map_err(bad)?,
        'i' => d.burst_ios = Some(count("number of I/Os per burst", 1, u32::MAX.into())?),
        'j' => d.think_ms = Some(count("think time in milliseconds", 1, u32::MAX.into())?),
        'p' if value.is_empty() => d.parallel = true,
        'v' if value == "s" => d.verbose_stats = true,
        // DiskSpd for Linux's engine: libaio (k) or POSIX aio (p), both asynchronous
        'x' if matches!(value, "k" | "p") => d.linux_engine = value.chars().next(),
        'L' | 'n' | 'x' | 'l' | 'v' | 'p' if !value.is_empty() => {
            return Err(bad(format!("-{letter} takes no value, not '{value}'")))
        }
        'L' => d.latency = true,
        'n' => d.no_affinity = true,
        'x' => d.completion_routines = true,
        'l' => d.large_pages = true,
        'v' => d.verbose = true,
        _ => return Err(refused(raw, letter)),
    }
    Ok(())
}

/// Switches iocap does not offer, each with the reason; anything else is unknown.
fn refused(raw: &str, letter: char) -> DiskspdError {
    let why = match letter {
        'N' => "memory-mapped I/O flushing (-N) is not supported by iocap",
        'X' => "XML profiles (-X) are not supported by iocap yet; give the options instead",
        'y' => "named events (-y) are Windows-only",
        'e' => "ETW tracing (-e) is Windows-only",
        '?' => "iocap diskspd has no usage screen; see docs/diskspd.md",
        _ => "unknown option",
    };
    DiskspdError::flag(raw, why)
}

fn threads(d: &mut Draft, raw: &str, letter: char, n: u32) -> Result<(), DiskspdError> {
    let conflict = if letter == 't' {
        d.threads = Some(n);
        d.total_threads.is_some()
    } else {
        d.total_threads = Some(n);
        d.threads.is_some()
    };
    if conflict {
        let problem = "-t (threads per target) and -F (total threads) conflict: give one";
        return Err(DiskspdError::flag(raw, problem));
    }
    Ok(())
}

fn positive_size(value: &str, what: &str, block: u64) -> Result<u64, String> {
    match size(value, what, Some(block))? {
        0 => Err(format!("the {what} must be greater than zero")),
        n => Ok(n),
    }
}

/// DiskSpd's words when the end of the targets' range is given twice.
const MAX_TWICE: &str =
    "the end of the range (-B<base>:<length> or -f<size>) can be given only once";

/// `-B<base>` or `-B<base>:<length>`: every target's I/O starts at the base; a length sets the
/// end offset (DiskSpd's maximum target offset) to base + length, as `-f` would.
fn base_offset(d: &mut Draft, value: &str) -> Result<(), String> {
    if d.base_bytes.is_some() {
        return Err("the base offset (-B) can be given only once".into());
    }
    let (base, length) = match value.split_once(':') {
        Some((base, length)) => (base, Some(length)),
        None => (value, None),
    };
    let base = size(base, "base offset", Some(d.block_bytes))?;
    d.base_bytes = Some(base);
    if let Some(length) = length {
        if length.is_empty() {
            return Err("-B<base>:<length> needs a length after the colon".into());
        }
        if d.max_size_bytes > 0 {
            return Err(MAX_TWICE.into());
        }
        let length = positive_size(length, "length", d.block_bytes)?;
        d.max_size_bytes = base
            .checked_add(length)
            .ok_or_else(|| "the base offset and the length add up past 2^64 bytes".to_string())?;
        d.base_length = true;
    }
    Ok(())
}

fn io_priority(level: u32) -> Result<(), String> {
    match level {
        3 => Ok(()),
        _ => Err("iocap issues every I/O at normal priority (-I3) only".into()),
    }
}

/// `-S[bhmruw]` and `-h`: a cache mode and write-through, each stated at most once, as DiskSpd
/// checks them.
fn caching(d: &mut Draft, letter: char, value: &str) -> Result<(), String> {
    let letters = match (letter, value) {
        ('h', "") => "h",
        ('h', _) => return Err(format!("-h takes no value, not '{value}'")),
        (_, "") => "u",
        _ => value,
    };
    for c in letters.chars() {
        let (cache, through) = match c {
            'b' => (Some(false), None),
            'u' => (Some(true), None),
            'w' => (None, Some(true)),
            'h' => (Some(true), Some(true)),
            // DiskSpd for Linux's letters: O_DIRECT and O_SYNC
            'd' => (Some(true), None),
            's' => (None, Some(true)),
            'r' => return Err("remote-only caching (-Sr) is for Windows file shares".into()),
            'm' => return Err("memory-mapped I/O (-Sm) is not supported by iocap".into()),
            _ => {
                return Err(format!(
                    "unknown caching letter '{c}': use b, h, u or w (or DiskSpd for Linux's d \
                     and s)"
                ))
            }
        };
        if (cache.is_some() && d.disable_os_cache.is_some())
            || (through.is_some() && d.write_through.is_some())
        {
            return Err("conflicts with an earlier -S or -h".into());
        }
        d.disable_os_cache = d.disable_os_cache.or(cache);
        d.write_through = d.write_through.or(through);
    }
    Ok(())
}

/// `-r[align]` and `-rs<pct>` (a share of random I/O, the rest sequential, aligned as `-r`
/// says or to the block size); `-rd` is refused. As in DiskSpd, `-rs` and `-r<align>` combine in
/// either order, each once.
fn random(d: &mut Draft, value: &str) -> Result<(), String> {
    if let Some(pct) = value.strip_prefix('s') {
        if pct.is_empty() {
            return Err("-rs needs the share of random I/O attached, 1 to 100".into());
        }
        let pct = bounded(pct, "random percentage", 1, 100)? as u8;
        if d.random_pct.is_some() {
            return Err("mixed random and sequential I/O (-rs) is given twice".into());
        }
        if let Some(Access::Sequential { .. }) = d.access {
            return Err("-rs conflicts with -s: -r gives the alignment of a mix".into());
        }
        d.random_pct = Some(pct);
        if d.access.is_none() {
            d.access = Some(Access::Random {
                align_bytes: d.block_bytes,
            });
        }
        return Ok(());
    }
    if value.starts_with('d') {
        return Err("random distributions (-rd) are not supported by iocap".into());
    }
    let align_bytes = match value {
        "" => d.block_bytes,
        v => positive_size(v, "alignment", d.block_bytes)?,
    };
    match d.access {
        Some(Access::Random { .. }) if d.random_align => {
            Err("random I/O (-r) is given twice".into())
        }
        Some(Access::Sequential { .. }) => Err("random I/O (-r) conflicts with -s".into()),
        _ => {
            d.access = Some(Access::Random { align_bytes });
            d.random_align = true;
            Ok(())
        }
    }
}

/// `-s[i][stride]`.
fn sequential(d: &mut Draft, value: &str) -> Result<(), String> {
    let (interlocked, stride) = match value.strip_prefix('i') {
        Some(rest) => (true, rest),
        None => (false, value),
    };
    let stride_bytes = match stride {
        "" => d.block_bytes,
        v => positive_size(v, "stride", d.block_bytes)?,
    };
    match d.access {
        Some(Access::Sequential { .. }) => Err("sequential I/O (-s) is given twice".into()),
        Some(Access::Random { .. }) if d.random_pct.is_some() => {
            Err("sequential I/O (-s) conflicts with -rs: use -r to give its alignment".into())
        }
        Some(Access::Random { .. }) => Err("sequential I/O (-s) conflicts with -r".into()),
        None => {
            d.access = Some(Access::Sequential {
                stride_bytes,
                interlocked,
            });
            Ok(())
        }
    }
}

fn output(value: &str) -> Result<Output, String> {
    match value {
        "text" => Ok(Output::Text),
        "xml" => Ok(Output::Xml),
        v if v.starts_with('p') => Err("-Rp (print the profile without running) is not \
                                        supported by iocap"
            .into()),
        "" => Err("needs text or xml attached".into()),
        v => Err(format!("takes text or xml, not '{v}'")),
    }
}

fn write_buffers(value: &str, block: u64) -> Result<WriteBuffers, String> {
    match value {
        // `-Zz` is DiskSpd for Linux's way of saying zeroed buffers
        "" | "z" => Ok(WriteBuffers::Zero),
        "r" => Ok(WriteBuffers::RandomPerIo),
        v if v.contains(',') => Err("write data from a file (-Z<size>,<file>) is not supported \
                                     by iocap; its writes are random"
            .into()),
        v => Ok(WriteBuffers::Random {
            bytes: positive_size(v, "write buffer size", block)?,
        }),
    }
}

/// `-g<bytes per ms>` or `-g<I/Os per s>i`.
fn throttle(value: &str, block: u64) -> Result<Throttle, String> {
    match value.strip_suffix('i') {
        Some(iops) => Ok(Throttle::Iops(bounded(iops, "I/O rate", 1, u64::MAX)?)),
        None => Ok(Throttle::BytesPerMs(positive_size(
            value,
            "throughput",
            block,
        )?)),
    }
}

/// `-f<size>` (digits first) or the hints `-f<rst>`.
fn access_hints_or_size(d: &mut Draft, value: &str) -> Result<(), String> {
    if value.starts_with(|c: char| c.is_ascii_digit()) {
        if d.base_length {
            return Err(MAX_TWICE.into());
        }
        d.max_size_bytes = size(value, "target size", Some(d.block_bytes))?;
        return Ok(());
    }
    if value.is_empty() {
        return Err("needs a target size or the hints r, s or t attached".into());
    }
    for c in value.chars() {
        match c {
            'r' => d.hints.random = true,
            's' => d.hints.sequential = true,
            't' => d.hints.temporary = true,
            _ => return Err(format!("unknown access hint '{c}': use r, s or t")),
        }
    }
    Ok(())
}

/// `-a`, `-ag`: DiskSpd's default; `-a0,1,2` or `-ag0,0,1,2`: CPUs in processor group 0.
fn affinity(value: &str) -> Result<Vec<u32>, String> {
    let list = match value {
        "" | "g" => return Ok(vec![]),
        v => v,
    };
    let mut cpus = Vec::new();
    let mut group_next = false;
    for token in list.split(',') {
        if let Some(g) = token.strip_prefix('g') {
            let group = number(g, "processor group")?;
            if group != 0 {
                return Err(format!(
                    "processor group {group}: iocap pins threads in group 0 only; name CPUs 0 to 63"
                ));
            }
            group_next = true;
            continue;
        }
        let cpu = bounded(token, "CPU number", 0, 63)?;
        cpus.push(cpu as u32);
        group_next = false;
    }
    if group_next || cpus.is_empty() {
        return Err("a processor group needs CPU numbers after it".into());
    }
    Ok(cpus)
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
