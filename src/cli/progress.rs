//! What the user sees while iocap works, on stderr and only on a terminal: a bar while a test
//! file is filled, then one live line per second with elapsed time, IOPS, MB/s and latency.

use std::io::{IsTerminal, Write};
use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};
use iocap_engine::{FillObserver, LiveSample, Phase, RunObserver};

use iocap_report::{fmt_count, fmt_lat_us};

pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// A progress bar for test-file creation; silent off a terminal except for one line.
pub struct FillBar {
    bar: Option<ProgressBar>,
    tty: bool,
}

impl FillBar {
    pub fn new() -> Self {
        Self {
            bar: None,
            tty: stderr_is_terminal(),
        }
    }
}

impl FillObserver for FillBar {
    fn start(&mut self, path: &Path, total: u64) {
        if !self.tty {
            eprintln!(
                "iocap: writing {} of test data to {}",
                iocap_model::format_bytes(total),
                path.display()
            );
            return;
        }
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "writing test file {msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        bar.set_message(path.display().to_string());
        self.bar = Some(bar);
    }
    fn advance(&mut self, done: u64) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }
    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// The live line during a test.
pub struct LiveLine {
    tty: bool,
    shown: bool,
}

impl LiveLine {
    pub fn new() -> Self {
        Self {
            tty: stderr_is_terminal(),
            shown: false,
        }
    }

    pub fn clear(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
            self.shown = false;
        }
    }
}

impl RunObserver for LiveLine {
    fn tick(&mut self, s: &LiveSample) {
        if !self.tty {
            return;
        }
        let phase = match s.phase {
            Phase::Warmup => "warmup",
            Phase::Measure => "measure",
            Phase::Cooldown => "cooldown",
        };
        let lat = match (s.lat_us_mean, s.lat_us_p99) {
            (Some(m), Some(p)) => format!("lat mean {} p99 {}", fmt_lat_us(m), fmt_lat_us(p)),
            _ => "lat -".into(),
        };
        eprint!(
            "\r\x1b[2K[{phase}] {:.0}/{:.0} s  {} IOPS  {:.1} MB/s  {lat}",
            s.elapsed_s,
            s.total_s,
            fmt_count(s.iops),
            s.mb_s
        );
        let _ = std::io::stderr().flush();
        self.shown = true;
    }
}

impl Drop for LiveLine {
    fn drop(&mut self) {
        self.clear();
    }
}
