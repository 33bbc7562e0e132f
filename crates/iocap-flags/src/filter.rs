//! The filters of `history` and `export`: which saved runs (host, label, tag, target, a time
//! range), turned into the store's [`Filter`].

use clap::Args;

/// The filters `history` takes, shared with `export`.
#[derive(Args, Debug, Default)]
pub struct RunFilterArgs {
    /// Only runs of this host (exact name)
    #[arg(long)]
    pub host: Option<String>,
    /// Only runs whose label contains this (any case)
    #[arg(long)]
    pub label: Option<String>,
    /// Only runs with this tag
    #[arg(long)]
    pub tag: Option<String>,
    /// Only runs that tested this target (the path as given to the run)
    #[arg(long)]
    pub target: Option<String>,
    /// Only runs started since: a date (2026-11-01), a UTC time (2026-11-01T08:00:00Z) or an age
    /// (7d, 12h)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only runs started until: a date (the whole day counts), a UTC time or an age
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
}

impl RunFilterArgs {
    /// Whether any filter was given.
    pub fn any(&self) -> bool {
        self.host.is_some()
            || self.label.is_some()
            || self.tag.is_some()
            || self.target.is_some()
            || self.since.is_some()
            || self.until.is_some()
    }
}
