//! The words both writers of a recorded workload's profile write alike: its family, a
//! workload's `rw`, its `bs` or `bs_split` line, and recorded text made one line for a comment.
//! [`captured`](crate::captured) writes one mix for a whole workload and chooses, and
//! [`streams`](crate::streams) one workload per stream; both use these, so they live below
//! both, and the two writers import each other one way only.

use iocap_model::format_bytes;

/// The `family` of a profile written from a trace.
pub const CAPTURED_FAMILY: &str = "captured";

/// The `rw` of a workload with `write_pct` % writes, sequential or random.
pub(crate) fn rw_name(write_pct: u64, sequential: bool) -> &'static str {
    iocap_model::RwMode::ALL
        .into_iter()
        .find(|m| {
            m.is_random() != sequential
                && match write_pct {
                    0 => !m.is_mixed() && m.write_pct(0) == 0,
                    100 => !m.is_mixed() && m.write_pct(0) == 100,
                    _ => m.is_mixed(),
                }
        })
        .map_or("randrw", |m| m.name())
}

/// `bs = "8K"` for one size, `bs_split = "8K:70,128K:30"` for several `(size, share)`.
pub(crate) fn split_text(shares: &[(u64, u64)]) -> String {
    match shares {
        [] => "bs = \"8K\"".into(),
        [(s, _)] => format!("bs = \"{}\"", format_bytes(*s)),
        many => format!(
            "bs_split = \"{}\"",
            many.iter()
                .map(|(s, p)| format!("{}:{p}", format_bytes(*s)))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

/// `s` with every control character (a line break, a tab) a space, for a comment line.
pub(crate) fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_share_and_pattern_names_its_rw() {
        let names: Vec<&str> = [
            (0, false),
            (0, true),
            (100, false),
            (100, true),
            (30, false),
            (30, true),
        ]
        .iter()
        .map(|&(w, seq)| super::rw_name(w, seq))
        .collect();
        assert_eq!(
            names,
            ["randread", "read", "randwrite", "write", "randrw", "rw"]
        );
    }
}
