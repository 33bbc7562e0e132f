//! DiskSpd's XML output (`-Rxml`): the element names, nesting, order and number formats of
//! DiskSpd 2.2, so that scripts reading `Results/TimeSpan/Thread/Target/ReadBytes`,
//! `Results/TimeSpan/Latency/Bucket` and the like read iocap's output unchanged. A value iocap
//! cannot know (the power scheme where the host has none, the topology of a host it could not
//! read, a figure an older result lacks) is one a script can detect (`<unknown>`, `unknown`,
//! `N/A`), with a comment saying why, never an empty one; docs/diskspd.md lists them. iocap
//! adds no element of its own: its notes are XML comments, which parsers skip. This file
//! writes the document, `<System>` and `<Profile>`; `xml_results` the measured `<TimeSpan>`s.
//!
//! Written by hand: the document is small and flat, and the one thing a library would add,
//! escaping, is the few lines of `xml_writer::escape`. DiskSpd itself does not escape paths;
//! iocap does.

use crate::cpu::Layout;
use crate::figures;
use crate::series;
#[cfg(test)]
use crate::xml_writer::escape;
use crate::xml_writer::Xml;
use crate::{Access, DiskspdRun, Output, Throttle, WriteBuffers};
use iocap_model::{HostInfo, RunResult, TestResult};
use std::fmt::Write;

/// DiskSpd's `System/Tool/VersionDate` for this version of iocap, as DiskSpd writes its own
/// (`2024/6/3`). Bumped at each release, with the version.
pub const VERSION_DATE: &str = "2026/11/27";

/// The whole XML report: `<System>`, `<Profile>`, then one `<TimeSpan>` per test.
pub fn render_xml(result: &RunResult, run: &DiskspdRun) -> String {
    let mut x = Xml {
        out: String::new(),
        depth: 0,
    };
    x.open("Results");
    x.comment(&format!(
        "written by iocap {} (DiskSpd-compatible output), not by DiskSpd",
        result.iocap_version
    ));
    x.open("System");
    x.leaf("ComputerName", &result.host.hostname);
    x.open("Tool");
    x.leaf("Version", &result.iocap_version);
    x.leaf("VersionDate", VERSION_DATE);
    x.close("Tool");
    x.leaf("RunTime", figures::diskspd_time(&result.started_at));
    power_scheme(&mut x, &result.host);
    topology(&mut x, &result.host);
    x.close("System");
    profile(&mut x, run, &result.tests);
    for test in &result.tests {
        crate::xml_results::timespan(&mut x, run, test, &result.host);
    }
    for note in &run.notes {
        x.comment(&format!("iocap note: {note}"));
    }
    for test in &result.tests {
        for w in &test.warnings {
            x.comment(&format!("iocap warning: {w}"));
        }
        if let Some(fault) = &test.error {
            x.comment(&format!("iocap: stopped by an I/O error: {fault}"));
        }
    }
    x.close("Results");
    x.out
}

/// `<PowerScheme>`: the host's power policy; `<unknown>` (DiskSpd's word) for what it lacks.
fn power_scheme(x: &mut Xml, host: &HostInfo) {
    let (name, guid) = crate::cpu::power_scheme(host);
    if host.power_policy.is_none() {
        x.comment(
            "iocap: no power policy recorded for this host (no cpufreq governor, or a result \
             saved before iocap read it)",
        );
    } else if guid.is_none() {
        x.comment("iocap: the power policy is the CPUs' cpufreq governor, which has no GUID");
    }
    let attrs = [
        ("Name", name.to_string()),
        ("Guid", guid.unwrap_or(crate::cpu::UNKNOWN).to_string()),
    ];
    x.empty("PowerScheme", &attrs);
}

/// `<ProcessorTopology>`: groups of up to 64 CPUs, NUMA nodes, sockets and cores, each with
/// its CPUs' mask, as DiskSpd lists them. iocap's cores are all of one efficiency class.
fn topology(x: &mut Xml, host: &HostInfo) {
    let Some(t) = &host.topology else {
        x.comment("iocap: the processor topology of this host was not recorded");
        x.empty("ProcessorTopology", &[("Heterogeneous", "unknown".into())]);
        return;
    };
    let l = Layout::of(t);
    let hex = |m: u64| format!("0x{m:x}");
    x.open_with("ProcessorTopology", &[("Heterogeneous", "false".into())]);
    for g in &l.groups {
        let attrs = [
            ("Group", g.group.to_string()),
            ("MaximumProcessors", g.max.to_string()),
            ("ActiveProcessors", g.active.to_string()),
            ("ActiveProcessorMask", hex(g.mask)),
        ];
        x.empty("Group", &attrs);
    }
    for (tag, list) in [("Node", &l.nodes), ("Socket", &l.sockets)] {
        for (n, groups) in list {
            x.open_with(tag, &[(tag, n.to_string())]);
            for (g, mask) in groups {
                x.empty("Group", &[("Group", g.to_string()), ("Mask", hex(*mask))]);
            }
            x.close(tag);
        }
    }
    for c in &l.cores {
        let attrs = [
            ("Group", c.group.to_string()),
            ("Core", c.number.to_string()),
            ("Mask", hex(c.mask)),
            ("EfficiencyClass", "0".into()),
        ];
        x.empty("Core", &attrs);
    }
    x.close("ProcessorTopology");
}

fn flag(on: bool) -> &'static str {
    if on {
        "true"
    } else {
        "false"
    }
}

/// `<Profile>`: the parameters as DiskSpd states them, one `<TimeSpan>` per test.
fn profile(x: &mut Xml, run: &DiskspdRun, tests: &[TestResult]) {
    let p = &run.profile;
    x.open("Profile");
    x.leaf("Progress", p.progress);
    x.leaf(
        "ResultFormat",
        if run.output == Output::Xml {
            "xml"
        } else {
            "text"
        },
    );
    x.leaf("Verbose", flag(p.verbose));
    x.open("TimeSpans");
    for i in 0..tests.len().max(1) {
        x.open("TimeSpan");
        x.leaf("CompletionRoutines", flag(p.completion_routines));
        x.leaf("MeasureLatency", flag(run.latency));
        x.leaf("CalculateIopsStdDev", flag(run.per_interval_std));
        x.leaf("DisableAffinity", flag(p.no_affinity));
        x.leaf("Duration", p.duration_s);
        x.leaf("Warmup", p.warmup_s);
        x.leaf("Cooldown", p.cooldown_s);
        x.leaf("ThreadCount", p.total_threads.unwrap_or(0));
        x.leaf("RequestCount", p.pool_requests.unwrap_or(0));
        // the interval the test's samples have: -D's, or a second
        x.leaf(
            "IoBucketDuration",
            tests.get(i).map_or(1000, series::bucket_ms),
        );
        x.leaf("RandSeed", p.seed);
        if !p.affinity.is_empty() {
            x.open("Affinity");
            for cpu in &p.affinity {
                let attrs = [("Group", "0".to_string()), ("Processor", cpu.to_string())];
                x.empty("AffinityGroupAssignment", &attrs);
            }
            x.close("Affinity");
        }
        x.open("Targets");
        for path in &p.targets {
            profile_target(x, run, path);
        }
        x.close("Targets");
        x.close("TimeSpan");
    }
    x.close("TimeSpans");
    x.close("Profile");
}

/// One `<Target>` of the profile.
fn profile_target(x: &mut Xml, run: &DiskspdRun, path: &str) {
    let p = &run.profile;
    x.open("Target");
    x.leaf("Path", path);
    x.leaf("BlockSize", p.block_bytes);
    x.leaf("BaseFileOffset", p.base_bytes);
    x.leaf("SequentialScan", flag(p.hints.sequential));
    x.leaf("RandomAccess", flag(p.hints.random));
    x.leaf("TemporaryFile", flag(p.hints.temporary));
    x.leaf("UseLargePages", flag(p.large_pages));
    if p.disable_os_cache {
        x.leaf("DisableOSCache", "true");
    }
    if p.write_through {
        x.leaf("WriteThrough", "true");
    }
    x.open("WriteBufferContent");
    match p.write_buffers {
        WriteBuffers::Zero => x.leaf("Pattern", "zero"),
        WriteBuffers::Pattern | WriteBuffers::RandomPerIo => x.leaf("Pattern", "sequential"),
        WriteBuffers::Random { bytes } => {
            x.leaf("Pattern", "random");
            x.open("RandomDataSource");
            x.leaf("SizeInBytes", bytes);
            x.close("RandomDataSource");
        }
    }
    x.close("WriteBufferContent");
    x.leaf("ParallelAsyncIO", flag(p.parallel_async));
    if let Some(ios) = p.burst_ios {
        x.leaf("BurstSize", ios);
    }
    if let Some(ms) = p.think_ms {
        x.leaf("ThinkTime", ms);
    }
    if let Some(bytes) = run.create_bytes {
        x.leaf("FileSize", bytes);
    }
    match p.access {
        Access::Random { align_bytes } => {
            x.leaf("Random", align_bytes);
            // DiskSpd writes the ratio only for a mix (-rs); 100 % random is <Random> alone
            if let Some(pct) = p.random_pct.filter(|&r| r != 100) {
                x.leaf("RandomRatio", pct);
            }
        }
        Access::Sequential {
            stride_bytes,
            interlocked,
        } => {
            x.leaf("StrideSize", stride_bytes);
            x.leaf("InterlockedSequential", flag(interlocked));
        }
    }
    x.leaf("ThreadStride", p.thread_stride_bytes);
    x.leaf("MaxFileSize", p.max_size_bytes);
    x.leaf("RequestCount", p.requests);
    x.leaf("WriteRatio", p.write_pct);
    match p.throttle {
        Some(Throttle::Iops(n)) => {
            x.indent();
            let _ = writeln!(x.out, "<Throughput unit=\"IOPS\">{n}</Throughput>");
        }
        Some(Throttle::BytesPerMs(b)) => x.leaf("Throughput", b),
        None => x.leaf("Throughput", 0),
    }
    x.leaf("ThreadsPerFile", p.threads_per_target.unwrap_or(1));
    x.leaf("IOPriority", 3);
    x.leaf("Weight", 1);
    x.close("Target");
}

#[cfg(test)]
#[path = "xml_tests.rs"]
mod tests;
