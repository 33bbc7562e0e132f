//! What the preflight capacity table is judged from ([`PreflightInput`]: the tests, the
//! guidelines, the expectations, the device classes) and its rows ([`RowKind`]). Apart from the
//! table (`verdict`) and each row's judgement (`rows`), which both read it.

use iocap_model::{human_bytes, Role, Saturation, ScaleUp, TestResult};

use crate::expect::Expectations;
use crate::fmt;
use crate::guidelines::{DeviceClass, Guidelines, Limit, RoleClasses};

/// A measured value below this share of the expectation is flagged.
pub const EXPECTATION_SHARE: f64 = 0.8;

/// One test of the run and its index in `RunResult.tests`.
#[derive(Debug, Clone, Copy)]
pub struct Measured<'a> {
    pub test: &'a TestResult,
    pub test_idx: u32,
}

/// Everything the capacity table is judged from. Test-file sizes and durations are read from
/// the tests themselves (`TargetResult.size_bytes`, `TestResult.duration_s`).
#[derive(Debug, Clone)]
pub struct PreflightInput<'a> {
    /// `sqlserver`, `postgres`, `mysql` or `oracle`.
    pub profile: String,
    pub quick: bool,
    pub classes: RoleClasses,
    /// The database page: 8 KiB, 16 KiB for InnoDB.
    pub page_bytes: u64,
    /// Page-sized random reads on the data file; with a curve, the test at its maximum (the
    /// evidence for the likely causes).
    pub data_read: Option<Measured<'a>>,
    /// A saturation curve of the same workload; when given, the read capacity is read from it.
    pub data_read_curve: Option<&'a Saturation>,
    pub data_write: Option<Measured<'a>>,
    pub temp: Option<Measured<'a>>,
    /// Log writes at queue depth 1.
    pub log_write_qd1: Option<Measured<'a>>,
    /// Log writes at their throughput (larger blocks or more outstanding); the qd-1 test is
    /// used when absent.
    pub log_throughput: Option<Measured<'a>>,
    pub scan: Option<Measured<'a>>,
    pub backup: Option<Measured<'a>>,
    pub guidelines: &'a Guidelines,
    pub expectations: Option<&'a Expectations>,
    /// From `iocap scaleup`, for the slow-volume cause.
    pub scaleup: Option<&'a ScaleUp>,
    /// 0: unknown.
    pub ram_bytes: u64,
    /// Online CPUs; 0: unknown.
    pub cpus: u32,
    /// The largest cache in the path (`--cache-size`).
    pub cache_size_bytes: Option<u64>,
    /// The tests ran through the page cache.
    pub buffered: bool,
    /// A test shorter than this is too short for a steady state (outside quick mode).
    pub min_duration_s: f64,
    /// Where the kernel's device class and the measured latency disagreed, in words
    /// ([`crate::judge_class`]); shown as warnings.
    pub class_notes: Vec<String>,
}

impl<'a> PreflightInput<'a> {
    /// No tests, flash everywhere, 8 KiB pages, 30 s minimum duration.
    pub fn new(profile: &str, guidelines: &'a Guidelines) -> Self {
        Self {
            profile: profile.to_string(),
            quick: false,
            classes: RoleClasses::all(DeviceClass::Flash),
            page_bytes: 8 << 10,
            data_read: None,
            data_read_curve: None,
            data_write: None,
            temp: None,
            log_write_qd1: None,
            log_throughput: None,
            scan: None,
            backup: None,
            guidelines,
            expectations: None,
            scaleup: None,
            ram_bytes: 0,
            cpus: 0,
            cache_size_bytes: None,
            buffered: false,
            min_duration_s: 30.0,
            class_notes: Vec::new(),
        }
    }

    /// The tests given, with a name for each, without repeats.
    pub(crate) fn named_tests(&self) -> Vec<(&'static str, Measured<'a>)> {
        let mut out: Vec<(&'static str, Measured<'a>)> = Vec::new();
        for (name, m) in [
            ("random read", self.data_read),
            ("random write", self.data_write),
            ("temp", self.temp),
            ("log write", self.log_write_qd1),
            ("log throughput", self.log_throughput),
            ("scan", self.scan),
            ("backup", self.backup),
        ] {
            if let Some(m) = m {
                if !out.iter().any(|(_, o)| o.test_idx == m.test_idx) {
                    out.push((name, m));
                }
            }
        }
        out
    }
}

/// The rows of the capacity table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    RandomRead,
    RandomWrite,
    Temp,
    LogP50,
    LogP99,
    LogMbS,
    Scan,
    Backup,
}

impl RowKind {
    pub const ALL: [RowKind; 8] = [
        RowKind::RandomRead,
        RowKind::RandomWrite,
        RowKind::Temp,
        RowKind::LogP50,
        RowKind::LogP99,
        RowKind::LogMbS,
        RowKind::Scan,
        RowKind::Backup,
    ];

    pub(crate) fn role(self) -> Role {
        match self {
            RowKind::RandomRead | RowKind::RandomWrite | RowKind::Scan => Role::Data,
            RowKind::Temp => Role::Temp,
            RowKind::LogP50 | RowKind::LogP99 | RowKind::LogMbS => Role::Log,
            RowKind::Backup => Role::Backup,
        }
    }

    pub(crate) fn class(self, c: &RoleClasses) -> DeviceClass {
        c.get(self.role())
    }

    pub(crate) fn is_random(self) -> bool {
        matches!(
            self,
            RowKind::RandomRead | RowKind::RandomWrite | RowKind::Temp
        )
    }

    pub(crate) fn test<'a>(self, i: &PreflightInput<'a>) -> Option<Measured<'a>> {
        match self {
            RowKind::RandomRead => i.data_read,
            RowKind::RandomWrite => i.data_write,
            RowKind::Temp => i.temp,
            RowKind::LogP50 | RowKind::LogP99 => i.log_write_qd1,
            RowKind::LogMbS => i.log_throughput.or(i.log_write_qd1),
            RowKind::Scan => i.scan,
            RowKind::Backup => i.backup,
        }
    }

    pub(crate) fn limit(self, i: &PreflightInput) -> Option<Limit> {
        let g = i.guidelines.for_class(self.class(&i.classes));
        match self {
            RowKind::RandomRead => Some(g.data_read_p99),
            RowKind::RandomWrite => Some(g.data_write_p99),
            RowKind::Temp => Some(g.temp_p99),
            RowKind::LogP50 => Some(g.log_write_p50),
            RowKind::LogP99 => Some(g.log_write_p99),
            _ => None,
        }
    }

    pub(crate) fn metric(self, i: &PreflightInput) -> String {
        let page = human_bytes(i.page_bytes);
        match self {
            RowKind::RandomRead => format!(
                "{page} random read IOPS at p99 <= {}",
                fmt::limit_ms(self.limit(i).map_or(f64::NAN, |l| l.pass))
            ),
            RowKind::RandomWrite => format!("{page} random write IOPS"),
            RowKind::Temp => "temp random I/O IOPS".into(),
            RowKind::LogP50 => "log write p50 latency at qd 1".into(),
            RowKind::LogP99 => "log write p99 latency at qd 1".into(),
            RowKind::LogMbS => "log write MB/s".into(),
            RowKind::Scan => "scan read MB/s".into(),
            RowKind::Backup => "backup MB/s".into(),
        }
    }

    /// What the expectation file says this figure should reach, and in words.
    pub(crate) fn expectation(self, e: Option<&Expectations>) -> Option<(f64, String)> {
        let e = e?;
        let iops = |v: Option<f64>| v.map(|v| (v, format!("{} IOPS expected", fmt::count(v))));
        match self {
            RowKind::RandomRead => iops(e.random_read_8k_iops),
            RowKind::RandomWrite => iops(e.random_write_8k_iops),
            RowKind::LogMbS => e
                .log_mb_s
                .map(|v| (v, format!("{} MB/s expected", fmt::count(v)))),
            RowKind::Scan | RowKind::Backup => e
                .sequential()
                .map(|(v, from)| (v, format!("{} MB/s from {from}", fmt::count(v)))),
            _ => None,
        }
    }

    /// The plain name of what the row measures, to start a sentence with.
    pub(crate) fn subject(self) -> &'static str {
        match self {
            RowKind::RandomRead => "Random page reads",
            RowKind::RandomWrite => "Random page writes",
            RowKind::Temp => "Temp-file reads and writes",
            RowKind::LogP50 | RowKind::LogP99 | RowKind::LogMbS => "Log writes",
            RowKind::Scan => "Scans",
            RowKind::Backup => "Backups",
        }
    }
}
