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

/// `s`, given after `flag`: a date, a UTC time or an age before now.
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
    if is_date && (b.len() == 10 || (b[10] == b'T' && t.ends_with('Z'))) {
        return Ok(t.to_string());
    }
    match parse_duration(t) {
        Ok(age) => Ok(ago(age)),
        Err(_) => Err(StoreError::Usage(format!(
            "{flag} '{s}' is neither a date (2026-11-01), a UTC time (2026-11-01T08:00:00Z) nor \
             an age (7d, 12h)"
        ))),
    }
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
    }
}
