//! What the user expects of the storage: the vendor's promise or the links' theoretical limit.
//! Practitioners compare every result with what the path can carry (a 2 Gb/s HBA gives about
//! 200 MB/s); a figure well under it is the first sign of a misconfigured path.
//!
//! The file is TOML:
//! ```toml
//! links = "2 x 16Gb FC"
//! random_read_8k_iops = 200000
//! random_write_8k_iops = 80000
//! sequential_mb_s = 2000
//! log_mb_s = 300
//! ```
//! Links are `N x SPEED KIND`, several joined with `+` (`2 x 16Gb FC + 1 x 10GbE`). Usable
//! MB/s per link: Fibre Channel 1/2/4/8/16/32/64 Gb ≈ 100/200/400/800/1600/3200/6400 (the
//! practitioners' rule of about 100 MB/s per Gb); Ethernet (iSCSI, NFS, NVMe/TCP) 1/10/25/40/
//! 50/100 GbE ≈ 110/1100/2800/4400/5600/11000; other speeds scale linearly from those rules.

use serde::Deserialize;

use crate::AssessError;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// e.g. `2 x 16Gb FC`.
    pub links: Option<String>,
    pub random_read_8k_iops: Option<f64>,
    pub random_write_8k_iops: Option<f64>,
    /// Scan and backup bandwidth.
    pub sequential_mb_s: Option<f64>,
    pub log_mb_s: Option<f64>,
}

impl Expectations {
    /// Parses the expectations file; the links are checked here so a typo fails early.
    pub fn from_toml(text: &str) -> Result<Self, AssessError> {
        let e: Expectations = toml::from_str(text)
            .map_err(|e| AssessError::Expectations(e.to_string().trim().to_string()))?;
        if let Some(l) = &e.links {
            parse_links(l)?;
        }
        for (key, v) in [
            ("random_read_8k_iops", e.random_read_8k_iops),
            ("random_write_8k_iops", e.random_write_8k_iops),
            ("sequential_mb_s", e.sequential_mb_s),
            ("log_mb_s", e.log_mb_s),
        ] {
            if v.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                return Err(AssessError::Expectations(format!(
                    "{key} must be a positive number"
                )));
            }
        }
        Ok(e)
    }

    /// What the links can carry, in MB/s; `None` when no links are given or they do not parse.
    pub fn link_mb_s(&self) -> Option<f64> {
        self.links.as_deref().and_then(|l| parse_links(l).ok())
    }

    /// The bandwidth a scan or backup should reach, and where that figure comes from: the
    /// lower of `sequential_mb_s` and the links, as the links cap whatever the array promises.
    pub fn sequential(&self) -> Option<(f64, String)> {
        let links = self.link_mb_s().map(|v| {
            (
                v,
                format!("the {} links", self.links.as_deref().unwrap_or("")),
            )
        });
        let seq = self
            .sequential_mb_s
            .map(|v| (v, "the expected sequential MB/s".to_string()));
        match (seq, links) {
            (Some(s), Some(l)) => Some(if l.0 < s.0 { l } else { s }),
            (s, l) => s.or(l),
        }
    }
}

/// Usable MB/s of a link description such as `2 x 16Gb FC`.
pub fn parse_links(input: &str) -> Result<f64, AssessError> {
    let bad = |why: &str| AssessError::Links {
        input: input.to_string(),
        why: why.to_string(),
    };
    let mut total = 0.0;
    for part in input.split('+') {
        total += parse_one(part.trim()).map_err(bad)?;
    }
    Ok(total)
}

fn parse_one(s: &str) -> Result<f64, &'static str> {
    if s.is_empty() {
        return Err("empty; write e.g. \"2 x 16Gb FC\"");
    }
    let lower = s.to_ascii_lowercase();
    // "2 x 16Gb FC", "2x16G FC", "16GFC"
    let (count, rest) = match lower.split_once('x') {
        Some((n, rest)) if !n.trim().is_empty() && n.trim().chars().all(|c| c.is_ascii_digit()) => {
            let n: u32 = n.trim().parse().map_err(|_| "bad link count")?;
            (n, rest.trim().to_string())
        }
        _ => (1, lower.trim().to_string()),
    };
    if count == 0 {
        return Err("the link count must be at least 1");
    }
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let gbit: f64 = digits
        .parse()
        .map_err(|_| "no speed; write e.g. \"16Gb FC\" or \"10GbE\"")?;
    if !(gbit.is_finite() && gbit > 0.0) {
        return Err("the speed must be positive");
    }
    let kind: String = rest[digits.len()..]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let kind = kind
        .trim_start_matches("gbit/s")
        .trim_start_matches("gb/s")
        .trim_start_matches("gbit")
        .trim_start_matches("gbps");
    let per_link = if kind.contains("fc") || kind.contains("fibre") || kind.contains("fiber") {
        fc_mb_s(gbit)
    } else if kind.contains("gbe")
        || kind.contains("ethernet")
        || kind.contains("iscsi")
        || kind.contains("nfs")
        || kind.contains("tcp")
    {
        ethernet_mb_s(gbit)
    } else {
        return Err("unknown link kind; say FC or GbE (iSCSI), e.g. \"2 x 16Gb FC\"");
    };
    Ok(f64::from(count) * per_link)
}

fn fc_mb_s(gbit: f64) -> f64 {
    gbit * 100.0
}

fn ethernet_mb_s(gbit: f64) -> f64 {
    // Measured iSCSI figures; TCP and framing cost more per bit on the faster links.
    const KNOWN: [(f64, f64); 3] = [(25.0, 2800.0), (40.0, 4400.0), (50.0, 5600.0)];
    KNOWN
        .iter()
        .find(|(g, _)| *g == gbit)
        .map_or(gbit * 110.0, |(_, mb)| *mb)
}
