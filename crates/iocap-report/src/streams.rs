//! A recorded workload's streams as text (`iocap characterise`): one row per role, each over
//! its own busy seconds, with the file map they were told apart by (or why there was none).

use std::fmt::Write as _;

use iocap_model::format_bytes;
use iocap_model::workload::Workload;

use crate::fmt::{count, printable};

/// The streams block; nothing for a workload without streams (saved before they existed).
pub fn render(o: &mut String, w: &Workload) {
    if w.streams.is_empty() {
        return;
    }
    match &w.file_map {
        Some(m) => {
            let _ = writeln!(
                o,
                "\nStreams, by file (map of {} files read by {}, {:.1} % of requests in them)",
                count(m.files as f64),
                printable(&m.read_by),
                m.mapped_pct
            );
        }
        None => {
            let note = w.file_map_note.as_deref().unwrap_or("no file map");
            let _ = writeln!(o, "\nStreams ({})", printable(note));
        }
    }
    let _ = writeln!(
        o,
        "  role           IOPS  busy s  depth  read %   size  seq % flush/s durable MB/s"
    );
    for s in &w.streams {
        let depth = s
            .depth_mean
            .map_or_else(|| "-".to_string(), |d| format!("{d:.1}"));
        let size = match s.size_mode_bytes {
            0 => "-".to_string(),
            b => format_bytes(b),
        };
        let _ = writeln!(
            o,
            "  {:<11} {:>7} {:>7.1} {:>6} {:>7.1} {:>6} {:>6.1} {:>7.1} {:>12.2}",
            s.role.name(),
            count(s.iops),
            s.busy_s,
            depth,
            s.read_pct,
            size,
            s.sequential_pct,
            s.flushes_per_s,
            s.durable_bytes_per_s / 1e6
        );
    }
    for s in w.streams.iter().filter(|s| s.flushes > 0 && s.writes > 0) {
        let _ = writeln!(
            o,
            "  {}: a flush every {:.1} writes ({})",
            s.role.name(),
            s.writes_per_flush,
            iocap_model::human_bytes(s.bytes_per_flush.round().max(0.0) as u64)
        );
    }
    let _ = writeln!(
        o,
        "  (rates and depth over each stream's busy seconds; a flush is the stream's that \
         asked for it, durable bytes any flush's after the write)"
    );
}
