//! What the user sees while iocap works, on stderr and only on a terminal: a bar while a test
//! file is filled, then one live line per second with elapsed time, IOPS, MB/s and latency;
//! off a terminal, one line per file and the progress lines alone.

use std::io::{IsTerminal, Write};
use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};
use iocap_engine::{FillObserver, LiveSample, Phase, RunObserver};

use iocap_report::fmt;
use iocap_report::terminal::{columns, fit};

pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// A progress bar for test-file creation; silent off a terminal except for one line.
pub struct FillBar {
    bar: Option<ProgressBar>,
    tty: bool,
}

impl Default for FillBar {
    fn default() -> Self {
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
                fmt::printable(&path.display().to_string())
            );
            return;
        }
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{msg} [{wide_bar}] {bytes}/{total_bytes} eta {eta}")
                .expect("static template")
                .progress_chars("=> "),
        );
        // the bar ({wide_bar}) takes what the name leaves of the terminal's width
        bar.set_message(format!(
            "writing test file {}",
            fit(&fmt::printable(&path.display().to_string()), 28)
        ));
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

/// The live line during a test, after what it is about (`label: `).
pub struct LiveLine {
    tty: bool,
    shown: bool,
    label: String,
}

impl LiveLine {
    /// Shows `starting` at once, so the line is never blank while the test warms up and no
    /// figure has come yet.
    pub fn new(label: &str) -> Self {
        let mut l = Self {
            tty: stderr_is_terminal(),
            shown: false,
            label: if label.is_empty() {
                String::new()
            } else {
                format!("{label}: ")
            },
        };
        l.show("starting");
        l
    }

    /// Shows `what` after the label, replacing the line (on a terminal only): a command's
    /// own progress (`iocap capture`'s seconds and requests). The label may name a user's path
    /// (`iocap replay TRACE`): its controls read escaped.
    pub fn show(&mut self, what: &str) {
        if !self.tty {
            return;
        }
        let line = fmt::printable(&format!("{}{what}", self.label)).into_owned();
        let line = fit(&line, columns() - 1);
        eprint!("\r\x1b[2K{line}");
        let _ = std::io::stderr().flush();
        self.shown = true;
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
        let phase = match s.phase {
            Phase::Warmup => "warming up",
            Phase::Measure => "measuring",
            Phase::Cooldown => "cooling down",
        };
        let lat = match (s.lat_us_mean, s.lat_us_p99) {
            (Some(m), Some(p)) => format!("mean {} p99 {}", fmt::lat_us(m), fmt::lat_us(p)),
            _ => "lat -".into(),
        };
        self.show(&format!(
            "{phase} {:.0}/{:.0} s  {} IOPS  {:.1} MB/s  {lat}",
            s.elapsed_s,
            s.total_s,
            fmt::count(s.iops),
            s.mb_s
        ));
    }
}

impl Drop for LiveLine {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The terminal's view of a session's progress: a bar while a test file is filled, the live
/// line while a test runs, and progress lines on stderr (`iocap: ...`, a suite's `== ...`
/// headers as they are), each cut to the terminal's width. The label names the test (and the
/// step of a sequence: `data: 8K random read (qd 32), step 5 of at most 13`) that the next live
/// lines are about; empty for a single `run`.
#[derive(Default)]
pub struct Terminal {
    label: String,
}

impl iocap_session::Progress for Terminal {
    fn fill(&mut self) -> Box<dyn FillObserver> {
        Box::<FillBar>::default()
    }
    fn live(&mut self) -> Box<dyn RunObserver> {
        Box::new(LiveLine::new(&self.label))
    }
    // a label or a line may name a test from a suite file: its controls read escaped
    fn label(&mut self, what: &str) {
        self.label = fmt::printable(what).into_owned();
    }
    fn say(&mut self, line: &str) {
        let line = fmt::printable(line);
        let line = if line.starts_with("== ") {
            line.into_owned()
        } else {
            format!("iocap: {line}")
        };
        eprintln!("{}", fit(&line, columns() - 1));
    }
}

/// The line a command keeps while it steps through points (`iocap fsync`: a method at a write
/// size): the point and how many of the total, on a terminal only; cleared when dropped.
pub struct PointLine {
    live: bool,
    prefix: String,
    n: usize,
    total: usize,
}

impl PointLine {
    /// `prefix` names the command (`iocap fsync`); `total` is how many points there will be.
    pub fn new(prefix: &str, total: usize) -> Self {
        Self {
            live: stderr_is_terminal(),
            prefix: prefix.to_string(),
            n: 0,
            total,
        }
    }

    /// The next point, in a few words (`fdatasync 8K`).
    pub fn point(&mut self, what: &str) {
        self.n += 1;
        if self.live {
            let line = format!("{}: {what} ({}/{})", self.prefix, self.n, self.total);
            eprint!("\r\x1b[2K{}", fit(&fmt::printable(&line), columns() - 1));
            let _ = std::io::stderr().flush();
        }
    }
}

impl Drop for PointLine {
    fn drop(&mut self) {
        if self.live {
            eprint!("\r\x1b[2K");
        }
    }
}
