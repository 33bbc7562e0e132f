//! Points in time as users give them to the history's filters and to `prune`: a date
//! (2026-11-01), an RFC 3339 UTC time (2026-11-01T08:00:00Z) or an age before now (7d, 12h),
//! turned into the RFC 3339 text the store compares `started_at` with.

use iocap_model::{parse_duration, rfc3339_utc};

use crate::StoreError;

/// Seconds since the epoch, now.
pub(crate) fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Now, as the store writes times.
pub fn now_rfc3339() -> String {
    rfc3339_utc(now_s())
}

/// The time `age_s` seconds ago.
pub fn ago(age_s: f64) -> String {
    rfc3339_utc(now_s().saturating_sub(age_s as u64))
}

/// The forms [`parse_when`] accepts, for its errors.
const FORMS: &str = "a date (2026-11-01), a UTC time (2026-11-01T08:00:00Z) or an age (7d, 12h)";

/// `s`, given after `flag`: a date, a UTC time or an age before now. A date or time that does
/// not exist (month 13, 31 April, 25:00) is refused, naming what is wrong: compared as text, it
/// would silently select the wrong runs.
pub fn parse_when(flag: &str, s: &str) -> Result<String, StoreError> {
    let t = s.trim();
    let b = t.as_bytes();
    let is_date = b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    if is_date {
        let bad = |why: String| StoreError::Usage(format!("{flag} '{s}' is {why}; give {FORMS}"));
        return check_date(&t[..10])
            .and_then(|()| check_time(&t[10..]))
            .map(|()| t.to_string())
            .map_err(bad);
    }
    match parse_duration(t) {
        Ok(age) => Ok(ago(age)),
        Err(_) => Err(StoreError::Usage(format!(
            "{flag} '{s}' is neither a date (2026-11-01), a UTC time (2026-11-01T08:00:00Z) nor \
             an age (7d, 12h)"
        ))),
    }
}

/// `YYYY-MM-DD` (digits and dashes already checked) names a day of the calendar.
fn check_date(d: &str) -> Result<(), String> {
    let num = |r: std::ops::Range<usize>| d[r].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    if !(1..=12).contains(&month) {
        return Err(format!("not a date: there is no month {month}"));
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=days).contains(&day) {
        return Err(format!(
            "not a date: month {month} of {year} has days 1 to {days}, not {day}"
        ));
    }
    Ok(())
}

/// What follows a date: nothing, or `THH:MM:SS` with optional decimals and a `Z`.
fn check_time(rest: &str) -> Result<(), String> {
    if rest.is_empty() {
        return Ok(());
    }
    let bad = || "not a UTC time as iocap takes it (THH:MM:SSZ after the date)".to_string();
    let hms = rest
        .strip_prefix('T')
        .and_then(|r| r.strip_suffix('Z'))
        .ok_or_else(bad)?;
    let (whole, frac) = hms.split_once('.').unwrap_or((hms, "0"));
    let parts: Vec<&str> = whole.split(':').collect();
    let two_digits = |p: &&str| p.len() == 2 && p.bytes().all(|c| c.is_ascii_digit());
    if parts.len() != 3 || !parts.iter().all(two_digits) || frac.is_empty() {
        return Err(bad());
    }
    if !frac.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let [h, m, sec] = [0, 1, 2].map(|i| parts[i].parse::<u32>().unwrap_or(99));
    if h > 23 || m > 59 || sec > 60 {
        return Err(format!("not a time of day: {h:02}:{m:02}:{sec:02}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_pass_through_and_ages_count_back_from_now() {
        assert_eq!(parse_when("--since", "2026-11-01").unwrap(), "2026-11-01");
        assert_eq!(
            parse_when("--since", " 2026-11-01T08:00:00Z ").unwrap(),
            "2026-11-01T08:00:00Z"
        );
        let week = parse_when("--since", "7d").unwrap();
        assert!(week < now_rfc3339() && week.ends_with('Z'), "{week}");
        let e = parse_when("--until", "yesterday").unwrap_err().to_string();
        assert!(
            e.starts_with("--until 'yesterday' is neither a date"),
            "{e}"
        );
        assert!(parse_when("--since", "2026-11-01T08:00:00").is_err());
        assert_eq!(
            parse_when("--since", "2024-02-29T23:59:60.5Z").unwrap(),
            "2024-02-29T23:59:60.5Z"
        );
    }

    #[test]
    fn a_date_or_time_that_does_not_exist_is_refused_naming_it() {
        let e = |s: &str| parse_when("--since", s).unwrap_err().to_string();
        let m = e("2026-13-45");
        assert!(
            m.starts_with("--since '2026-13-45' is not a date: there is no month 13; give a date"),
            "{m}"
        );
        assert!(
            m.contains("(2026-11-01T08:00:00Z)") && m.contains("(7d, 12h)"),
            "{m}"
        );
        assert!(e("2026-04-31").contains("month 4 of 2026 has days 1 to 30, not 31"));
        assert!(e("2026-02-29").contains("has days 1 to 28"));
        parse_when("--since", "2028-02-29").unwrap();
        assert!(e("2026-00-10").contains("no month 0"));
        assert!(e("2026-11-01T25:00:00Z").contains("not a time of day: 25:00:00"));
        assert!(e("2026-11-01Tnoon Z").contains("THH:MM:SSZ"));
        assert!(e("2026-11-01x").contains("THH:MM:SSZ"));
    }
}
