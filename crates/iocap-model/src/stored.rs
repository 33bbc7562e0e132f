//! What the result store lists: a run in one line ([`RunSummary`]) and a baseline. The store
//! fills them from its tables; the report's history views show them.

use serde::Serialize;

/// One line of the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    pub run_id: String,
    pub started_at: String,
    pub hostname: String,
    pub label: Option<String>,
    pub tags: Vec<String>,
    /// Number of tests in the run.
    pub tests: u32,
    /// The first test's workload, e.g. `randread 8K`.
    pub workload: String,
    pub targets: Vec<String>,
    /// Of the first test.
    pub iops: f64,
    pub mb_s: f64,
    pub lat_us_p99: Option<f64>,
    /// The ranks of a multi-host run (MPI) that ran it together; 0 for a run on one host.
    pub ranks: u32,
}

impl RunSummary {
    /// The host as a list shows it: rank 0's, and how many others took part (`db01 +3`).
    pub fn hosts_label(&self) -> String {
        match self.ranks {
            0 | 1 => self.hostname.clone(),
            n => format!("{} +{}", self.hostname, n - 1),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Baseline {
    pub hostname: String,
    pub target: String,
    pub run_id: String,
    pub set_at: String,
}
