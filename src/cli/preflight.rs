//! `iocap preflight`: the job users come for. One command tests what a database will do to its
//! volumes (page reads raised to the knee, checkpoint writes, durable log writes at queue depth
//! 1, read-ahead scans, a backup that reads data while writing the backup volume) and answers
//! with a capacity table and a verdict per line, in plain words. `--quick` takes about two
//! minutes; the full mode measures long enough for array caches to settle.

use anyhow::{bail, Context, Result};
use clap::Args;
use iocap_assess::{
    capacity_table, ramp, summarize, DeviceClass, Expectations, Guidelines, Measured,
    PreflightInput, RoleClasses, SaturateConfig,
};
use iocap_model::{parse_duration, CurvePoint, JobSpec, RunResult, TargetSpec, Verdict};
use iocap_plan::Profile;

use super::args::{size_arg, FailOn};
use super::execute::{finish, median_run, new_run, run_repeated, run_text};
use super::roles::RoleDirs;
use super::save::SaveArgs;
use super::signals::interrupted;
use super::sure::SureArgs;
use super::{Exit, OutputFormat};

#[derive(Args, Debug)]
pub struct PreflightArgs {
    #[command(flatten)]
    pub roles: RoleDirs,
    /// Database family: sqlserver, postgres, mysql or oracle (or a profile TOML file)
    #[arg(long, default_value = "sqlserver")]
    pub profile: String,
    /// About two minutes instead of the full assessment (about ten)
    #[arg(long)]
    pub quick: bool,
    /// Size of test files that do not exist yet; skips the cache scan [default: 4 times the
    /// largest cache the scan finds, at least 1G quick, 8G full]
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,
    /// What the storage should deliver (TOML: links = "2 x 16Gb FC", random_read_8k_iops,
    /// random_write_8k_iops, sequential_mb_s, log_mb_s)
    #[arg(long, value_name = "FILE")]
    pub expect: Option<String>,
    /// Latency guidelines to hold the results against, overriding the defaults (TOML)
    #[arg(long, value_name = "FILE")]
    pub guidelines: Option<String>,
    /// The largest cache in the path (controller, array), to warn when a test file fits in it;
    /// skips the cache scan
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub cache_size: Option<u64>,
    /// The largest working set of the cache scan that sizes the test files (run unless --size
    /// or --cache-size is given) [default: 1G quick, 8G full]
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub scan_max: Option<u64>,
    /// flash or rotational, for every role [default: from sysfs, else flash]
    #[arg(long, value_name = "CLASS")]
    pub device_class: Option<String>,
    /// Permit writes to files and devices iocap did not create (destroys their contents)
    #[arg(long)]
    pub allow_overwrite: bool,
    /// Step and test durations, STEP:TEST (e.g. 1s:2s), for tests of iocap itself
    #[arg(long, hide = true, value_name = "STEP:TEST")]
    pub timing: Option<String>,
    /// Exit with 1 when a line of the capacity table is at least this bad
    #[arg(long, value_enum, value_name = "VERDICT")]
    pub fail_on: Option<FailOn>,
    #[arg(long, visible_alias = "format", value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    #[command(flatten)]
    pub sure: SureArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

/// The size of test files without a scan: 1 GiB quick, 8 GiB full.
fn default_size(quick: bool) -> u64 {
    if quick {
        1 << 30
    } else {
        8 << 30
    }
}

/// The short cache scan of this preflight: up to `--scan-max` (the mode's file size), within a
/// fifth of the mode's time.
fn scan_plan(a: &PreflightArgs, step_s: f64) -> super::cachescan::PreflightScan {
    super::cachescan::PreflightScan {
        max_bytes: a.scan_max.unwrap_or(default_size(a.quick)),
        step_s: if a.timing.is_some() {
            step_s
        } else if a.quick {
            0.5
        } else {
            2.0
        },
        budget_s: if a.quick { 24.0 } else { 120.0 },
        files: 3 + usize::from(!a.quick),
        fill_budget_s: if a.quick { 30.0 } else { 120.0 },
        allow_overwrite: a.allow_overwrite,
    }
}

/// Durations of one mode: (step measured, step warmup, test measured, test warmup).
fn timing(quick: bool) -> (f64, f64, f64, f64) {
    if quick {
        (3.0, 1.0, 8.0, 1.0)
    } else {
        (10.0, 2.0, 30.0, 5.0)
    }
}

pub fn load_profile(what: &str) -> Result<Profile> {
    let p = std::path::Path::new(what);
    if p.exists() || what.ends_with(".toml") {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("cannot read profile file {what}"))?;
        return iocap_plan::parse_profile(&text)
            .map_err(|e| super::suite::not_toml(e, what, "profile"));
    }
    Ok(iocap_plan::profile(what)?)
}

struct Plan<'a> {
    a: &'a PreflightArgs,
    profile: Profile,
    size: u64,
    /// The size came from a cache scan: every role's file is made (or grown to) that size.
    sized_by_scan: bool,
}

impl Plan<'_> {
    /// The profile's workload `key`, placed on its role's target with this mode's timing.
    fn spec(&self, key: &str, duration: f64, warmup: f64) -> Result<(String, JobSpec)> {
        let w = self
            .profile
            .workloads
            .iter()
            .find(|w| w.key == key)
            .with_context(|| format!("profile {} has no workload '{key}'", self.profile.name))?;
        let mut s = w.spec.clone();
        s.name = w.title.clone();
        let path = self.a.roles.target(&w.role);
        // sized by a cache scan: the scanned data file (ours) is extended to the size
        let device = std::fs::metadata(&path).is_ok_and(|m| !m.is_file());
        s.targets = vec![TargetSpec {
            size_bytes: (self.sized_by_scan && !device).then_some(self.size),
            ..TargetSpec::new(path)
        }];
        s.size_bytes = self.size;
        s.duration_s = duration;
        s.warmup_s = warmup;
        s.cooldown_s = 0.0;
        // a capacity figure is the sustained rate: checkpoint bursts belong to suites
        s.burst = None;
        s.allow_overwrite = self.a.allow_overwrite;
        self.a.sure.apply(&mut s);
        s.validate().with_context(|| format!("workload {key}"))?;
        Ok((w.role.clone(), s))
    }
}

/// Every workload of a preflight, each with its role, placed and timed.
struct Workloads {
    read: (String, JobSpec),
    write: (String, JobSpec),
    log: (String, JobSpec),
    scan: (String, JobSpec),
    backup_read: (String, JobSpec),
    backup_write: (String, JobSpec),
    temp: Option<(String, JobSpec)>,
}

impl Plan<'_> {
    /// The workloads with (step measured, step warm-up, test measured, test warm-up).
    fn workloads(
        &self,
        (step_s, step_warm, test_s, test_warm): (f64, f64, f64, f64),
    ) -> Result<Workloads> {
        let w = Workloads {
            read: self.spec("data-random-read", step_s, step_warm)?,
            write: self.spec("data-checkpoint-write", test_s, test_warm)?,
            log: self.spec("log-write", test_s, test_warm)?,
            scan: self.spec("read-ahead-1m", test_s, test_warm)?,
            backup_read: self.spec("backup-read", test_s, test_warm)?,
            backup_write: self.spec("backup-write", test_s, test_warm)?,
            temp: if self.a.quick {
                None
            } else {
                Some(self.spec("temp", test_s, test_warm)?)
            },
        };
        if w.backup_read.1.targets[0].path == w.backup_write.1.targets[0].path {
            bail!("the backup would read and write the same file");
        }
        Ok(w)
    }
}

fn push(run: &mut RunResult, role: &str, r: iocap_model::TestResult) -> u32 {
    let mut r = r;
    r.role = Some(role.to_string());
    run.tests.push(r);
    (run.tests.len() - 1) as u32
}

/// Runs `specs` together (`--repeat` times), adds every run's tests to `run` with their roles,
/// the workloads of one run in one group when there are several, and returns the indexes of the
/// median run's tests: the figures the verdicts are taken from.
fn measure(run: &mut RunResult, sure: &SureArgs, specs: &[(String, JobSpec)]) -> Result<Vec<u32>> {
    let only: Vec<JobSpec> = specs.iter().map(|(_, s)| s.clone()).collect();
    let names: Vec<String> = specs
        .iter()
        .map(|(r, s)| format!("{r}: {}", s.name))
        .collect();
    super::progress::set_label(names.join(" + "));
    let runs = run_repeated(&only, sure, 1, true)?;
    let median = median_run(&runs);
    let mut picked = Vec::new();
    for (k, outs) in runs.into_iter().enumerate() {
        let group = (outs.len() > 1).then_some(run.tests.len() as u32);
        for ((role, _), o) in specs.iter().zip(outs) {
            let mut r = o.result;
            r.group = group;
            let i = push(run, role, r);
            if k == median {
                picked.push(i);
            }
        }
    }
    Ok(picked)
}

fn failed(run: &RunResult) -> bool {
    interrupted() || run.tests.iter().any(|t| t.error.is_some() || t.interrupted)
}

pub fn preflight(a: PreflightArgs) -> Result<Exit> {
    let profile = load_profile(&a.profile)?;
    let guidelines = match &a.guidelines {
        Some(f) => Guidelines::with_override(Some(
            &std::fs::read_to_string(f).with_context(|| format!("cannot read {f}"))?,
        ))
        .with_context(|| format!("in guidelines file {f}"))?,
        None => Guidelines::default(),
    };
    let expectations = match &a.expect {
        Some(f) => Some(
            Expectations::from_toml(
                &std::fs::read_to_string(f).with_context(|| format!("cannot read {f}"))?,
            )
            .with_context(|| format!("in expectations file {f}"))?,
        ),
        None => None,
    };
    let forced_class = match &a.device_class {
        Some(c) => Some(
            DeviceClass::parse(c)
                .with_context(|| format!("--device-class '{c}': use flash or rotational"))?,
        ),
        None => None,
    };
    let (step_s, step_warm, test_s, test_warm) = match &a.timing {
        Some(t) => {
            let (st, te) = t.split_once(':').context("--timing is STEP:TEST")?;
            let (st, te) = (parse_duration(st)?, parse_duration(te)?);
            (st, 0.0, te, 0.0)
        }
        None => timing(a.quick),
    };
    let mut plan = Plan {
        a: &a,
        size: a.size.unwrap_or(default_size(a.quick)),
        profile,
        sized_by_scan: false,
    };
    // every workload is checked before the first runs
    let mut w = plan.workloads((step_s, step_warm, test_s, test_warm))?;
    a.save.check()?;
    let mut run = new_run("preflight");
    a.save.stamp(&mut run);
    // 0. unless told the size or the cache, find the caches and size the files past them
    let sizing = if a.size.is_none() && a.cache_size.is_none() {
        let z = super::cachescan::preflight_scan(&mut run, &a.roles, &scan_plan(&a, step_s))?;
        plan.size = z.bytes;
        plan.sized_by_scan = true;
        w = plan.workloads((step_s, step_warm, test_s, test_warm))?;
        Some(z)
    } else {
        None
    };
    if interrupted() {
        let code = finish(&run, a.output, || run_text(&run));
        a.save.keep(std::slice::from_ref(&run))?;
        return Ok(code);
    }
    let Workloads {
        read,
        write,
        log,
        scan,
        backup_read,
        backup_write,
        temp,
    } = w;

    // 1. page reads, raised to the knee
    let cfg = SaturateConfig {
        latency_target_us: Some(
            guidelines
                .for_class(DeviceClass::Flash)
                .data_read_p99
                .pass_us(),
        ),
        max_qd: if a.quick { 64 } else { 256 },
        ..SaturateConfig::default()
    };
    let steps = ramp(&cfg, |qd| {
        let spec = JobSpec {
            name: format!("{} (qd {qd})", read.1.name),
            qd,
            ..read.1.clone()
        };
        let at = measure(&mut run, &a.sure, &[(read.0.clone(), spec)])?[0];
        let p = CurvePoint::of(at, qd, None, &run.tests[at as usize]);
        anyhow::Ok((p, failed(&run)))
    })?;
    // 2. to 5. the other workloads, each alone, the backup as read and write together
    let mut idx = std::collections::HashMap::new();
    for (key, (role, spec)) in [("write", &write), ("log", &log), ("scan", &scan)]
        .into_iter()
        .chain(temp.as_ref().map(|t| ("temp", t)))
    {
        if failed(&run) {
            break;
        }
        let at = measure(&mut run, &a.sure, &[(role.clone(), spec.clone())])?;
        idx.insert(key, at[0]);
    }
    if !failed(&run) {
        let pair = [backup_read.clone(), backup_write.clone()];
        let at = measure(&mut run, &a.sure, &pair)?;
        for ((role, _), i) in pair.iter().zip(at) {
            idx.insert(
                if role == "backup" {
                    "backup"
                } else {
                    "backup-read"
                },
                i,
            );
        }
    }

    // the class of each role's device: the kernel's flag, overruled by the qd-1 page reads'
    // latency on the data device (and on any role on the same device) where they disagree
    let first_read = steps.first().map(|s| s.test_idx);
    let qd1 = first_read.and_then(|i| super::class::qd1_read_p50(&run.tests[i as usize]));
    let data_device = first_read
        .and_then(|i| run.tests[i as usize].targets.first())
        .and_then(|t| t.device.clone());
    let mut class_notes = Vec::new();
    let mut class_of = |i: Option<&u32>| {
        forced_class.unwrap_or_else(|| {
            let Some(t) = i.and_then(|i| run.tests.get(*i as usize)) else {
                return DeviceClass::Flash;
            };
            let same = t.targets.first().and_then(|x| x.device.clone()) == data_device;
            let j = super::class::judge(t, qd1.filter(|_| same));
            if let Some(n) = j.note {
                let n = format!("Device class: {n}.");
                if !class_notes.contains(&n) {
                    class_notes.push(n);
                }
            }
            j.class
        })
    };
    let classes = RoleClasses {
        data: class_of(first_read.as_ref()),
        log: class_of(idx.get("log")),
        temp: class_of(idx.get("temp").or(first_read.as_ref())),
        backup: class_of(idx.get("backup")),
    };
    // the capacity figure is read at the data volume's own guideline
    let saturation = summarize(
        &steps,
        &[],
        &SaturateConfig {
            latency_target_us: Some(guidelines.for_class(classes.data).data_read_p99.pass_us()),
            ..cfg
        },
    );
    let m = |k: &str| {
        idx.get(k).map(|i| Measured {
            test: &run.tests[*i as usize],
            test_idx: *i,
        })
    };
    let best = steps
        .iter()
        .max_by(|x, y| x.iops.total_cmp(&y.iops))
        .map(|p| Measured {
            test: &run.tests[p.test_idx as usize],
            test_idx: p.test_idx,
        });
    let mut input = PreflightInput::new(&plan.profile.family, &guidelines);
    input.quick = a.quick;
    input.classes = classes;
    input.page_bytes = plan.profile.page_bytes;
    input.data_read = best;
    input.data_read_curve = Some(&saturation);
    input.data_write = m("write");
    input.temp = m("temp");
    input.log_write_qd1 = m("log");
    input.scan = m("scan");
    input.backup = m("backup");
    input.expectations = expectations.as_ref();
    input.ram_bytes = run.host.memory_bytes;
    input.cpus = run.host.cpus;
    input.cache_size_bytes = a.cache_size;
    input.class_notes = class_notes;
    let mut preflight = capacity_table(&input);
    if let Some(z) = sizing {
        preflight.file_bytes = Some(z.bytes);
        preflight.cache_included = z.cache_included;
        if z.cache_included {
            preflight.warnings.push(z.sentence);
        }
    }
    run.repeats = iocap_assess::repeats(&run.tests);
    run.preflight = Some(preflight);
    super::audit::record_config(&mut run);
    run.saturation = Some(saturation);
    let code = finish(&run, a.output, || run_text(&run));
    a.save.keep(std::slice::from_ref(&run))?;
    let worst = |v: Verdict| {
        run.preflight
            .as_ref()
            .is_some_and(|p| p.rows.iter().any(|r| r.verdict == v))
    };
    let check_failed = match a.fail_on {
        Some(FailOn::Fail) => worst(Verdict::Fail),
        Some(FailOn::Warn) => worst(Verdict::Fail) || worst(Verdict::Warn),
        None => false,
    };
    Ok(if code == Exit::Ok && check_failed {
        Exit::CheckFailed
    } else {
        code
    })
}
