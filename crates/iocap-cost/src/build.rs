//! From measured tests to the cost report: each point's three accountings, the fitted models
//! and the answers in plain words.

use iocap_model::{
    format_bytes, Accounting, AnswerKind, CacheMode, CostAnswer, CostModel, CostPoint, CpuAccount,
    EngineChoice, IoDirection, ModelPoint, TestResult,
};

use crate::fit::{fit, Fit};
use crate::matrix::PlannedPoint;
use crate::procstat::WindowCpu;

/// A point that completes fewer I/Os than this is measured again over a longer window: a few
/// I/Os divide a CPU time read in 10 ms clock ticks into noise, and none (a disk that stalled
/// for the whole window under someone else's load) into nothing.
pub const MIN_IOS: u64 = 100;

/// How many times a point's window may be doubled before its few I/Os are kept and said so.
pub const STRETCHES: u32 = 3;

/// The longer window to measure a point again over, when `ios` completed in `duration_s` are
/// too few and `stretched` doublings have been spent; `None` to keep what was measured.
pub fn stretch(ios: u64, duration_s: f64, stretched: u32) -> Option<f64> {
    (ios < MIN_IOS && stretched < STRETCHES).then_some(duration_s * 2.0)
}

/// `cpu_s` spread over `ios` I/Os and `bytes`; zero per-I/O figures when nothing moved.
pub fn account(cpu_s: f64, ios: u64, bytes: u64) -> CpuAccount {
    let cpu_s = if cpu_s.is_finite() { cpu_s } else { 0.0 };
    CpuAccount {
        cpu_s,
        us_per_io: if ios > 0 {
            cpu_s * 1e6 / ios as f64
        } else {
            0.0
        },
        us_per_kb: if bytes > 0 {
            cpu_s * 1e6 / (bytes as f64 / 1024.0)
        } else {
            0.0
        },
    }
}

/// One point's figures. `win` is `/proc/stat` over the edges the engine called; its busy time is
/// scaled to the test's own window length when the two differ (the engine skips a last edge
/// shorter than 0.1 s).
pub fn point(
    p: &PlannedPoint,
    test_idx: usize,
    t: &TestResult,
    win: Option<WindowCpu>,
    hz: u32,
    resident_after_pct: Option<f64>,
) -> CostPoint {
    let (ios, bytes) = (t.total.ios, t.total.bytes);
    let proc_s = t.cpu.user_s + t.cpu.sys_s;
    let scale = |ticks: u64, w: &WindowCpu| {
        let s = ticks as f64 / f64::from(hz.max(1));
        if w.span_s > 0.0 && t.duration_s > 0.0 {
            s * t.duration_s / w.span_s
        } else {
            s
        }
    };
    let system_s = win.as_ref().map(|w| scale(w.delta.busy(), w));
    CostPoint {
        test_idx: test_idx as u32,
        engine: p.engine,
        engine_features: t.engine_features.clone(),
        rw: p.direction(),
        bs_bytes: p.bs_bytes,
        cache: p.cache,
        qd: p.qd,
        ios,
        duration_s: t.duration_s,
        iops: t.total.iops,
        mb_s: t.total.mb_s,
        process: account(proc_s, ios, bytes),
        system: system_s.map(|s| account(s, ios, bytes)),
        elsewhere: system_s.map(|s| account(s - proc_s, ios, bytes)),
        steal_s: win.as_ref().map(|w| scale(w.delta.steal, w)),
        resident_after_pct,
    }
}

/// The key points share to be fitted together.
fn key(p: &CostPoint) -> (EngineChoice, IoDirection, CacheMode, u32) {
    (p.engine, p.rw, p.cache, p.qd)
}

fn model_of(points: &[&CostPoint], accounting: Accounting) -> CostModel {
    let pts: Vec<ModelPoint> = points
        .iter()
        .filter(|p| p.ios > 0)
        .filter_map(|p| {
            let us = match accounting {
                Accounting::Process => p.process.us_per_io,
                Accounting::System => p.system.as_ref()?.us_per_io,
            };
            Some(ModelPoint {
                size_kb: p.bs_bytes as f64 / 1024.0,
                us_per_io: us,
            })
        })
        .collect();
    let f = fit(&pts
        .iter()
        .map(|m| (m.size_kb, m.us_per_io))
        .collect::<Vec<_>>());
    let p = points[0];
    CostModel {
        engine: p.engine,
        rw: p.rw,
        cache: p.cache,
        qd: p.qd,
        accounting,
        fixed_us: f.fixed,
        per_kb_us: f.per_kb,
        r2: f.r2,
        points: pts,
    }
}

/// One model per engine, direction, cache mode and queue depth, in the process and the
/// system-wide accounting, in the order the points first appear.
pub fn models(points: &[CostPoint]) -> Vec<CostModel> {
    let mut keys: Vec<(EngineChoice, IoDirection, CacheMode, u32)> = Vec::new();
    for p in points {
        if !keys.contains(&key(p)) {
            keys.push(key(p));
        }
    }
    let mut out = Vec::new();
    for k in keys {
        let group: Vec<&CostPoint> = points.iter().filter(|p| key(p) == k).collect();
        out.push(model_of(&group, Accounting::Process));
        if group.iter().any(|p| p.system.is_some()) {
            out.push(model_of(&group, Accounting::System));
        }
    }
    out
}

fn as_fit(m: &CostModel) -> Fit {
    Fit {
        fixed: m.fixed_us,
        per_kb: m.per_kb_us,
        r2: m.r2,
    }
}

/// What the answers are asked about.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Questions {
    /// The block size for IOPS per core and the IOPS target.
    pub bs_bytes: u64,
    /// The block size for MB/s per core and the MB/s target.
    pub mb_bs_bytes: u64,
    pub target_iops: Option<f64>,
    pub target_mb_s: Option<f64>,
}

impl Default for Questions {
    fn default() -> Self {
        Questions {
            bs_bytes: 8 << 10,
            mb_bs_bytes: 1 << 20,
            target_iops: None,
            target_mb_s: None,
        }
    }
}

fn positive(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

fn f1(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The answers, from every model fitted over at least two sizes: IOPS and MB/s per core, cores
/// for the targets, and one 64K I/O against eight 8K I/Os. Process accounting first, the
/// system-wide one as the upper bound. A model whose line predicts no cost at a size (a noisy
/// fit with a negative fixed cost) gives no answer there. A system-wide line that falls below
/// the process's at a size is no upper bound: the system-wide busy time includes the process's,
/// so only steal (a vCPU stopped by the hypervisor counts as running for the process but as
/// stolen for /proc/stat) or noise can put it there; it is left out and the text says why.
pub fn answers(models: &[CostModel], q: &Questions) -> Vec<CostAnswer> {
    let mut out = Vec::new();
    for m in models
        .iter()
        .filter(|m| m.accounting == Accounting::Process)
    {
        let sys = models.iter().find(|s| {
            s.accounting == Accounting::System
                && (s.engine, s.rw, s.cache, s.qd) == (m.engine, m.rw, m.cache, m.qd)
        });
        let (fp, fs) = (as_fit(m), sys.map(as_fit));
        if fp.per_kb.is_none() {
            continue;
        }
        let engine = m.engine.name_on(iocap_model::System::HOST);
        let what = format!("{engine} {} {} qd {}", m.rw, m.cache, m.qd);
        let ans =
            |kind: AnswerKind, value: f64, value_system: Option<f64>, text: String| CostAnswer {
                kind,
                engine: m.engine,
                rw: m.rw,
                cache: m.cache,
                qd: m.qd,
                value,
                value_system,
                text,
            };
        let kb = q.bs_bytes as f64 / 1024.0;
        let mkb = q.mb_bs_bytes as f64 / 1024.0;
        let at = |f: &Fit, kb: f64| positive(f.at(kb));
        let sys_raw = |kb: f64| fs.as_ref().and_then(|f| at(f, kb));
        // the system-wide µs at a size, when it is an upper bound of the process's
        let sys_at =
            |kb: f64| sys_raw(kb).filter(|s| at(&fp, kb).is_none_or(|p| *s >= p * (1.0 - 1e-9)));
        let both = |v: f64, s: Option<f64>, unit: &str, kb: f64| match s {
            Some(s) => format!("{} {unit} (system-wide: {} {unit})", f1(v), f1(s)),
            None if sys_raw(kb).is_some() => format!(
                "{} {unit} (the system-wide figure is left out: it fell below the process's, \
                 which only steal or noise can do)",
                f1(v)
            ),
            None => format!("{} {unit}", f1(v)),
        };
        if let Some(us) = at(&fp, kb) {
            let (v, s) = (1e6 / us, sys_at(kb).map(|s| 1e6 / s));
            out.push(ans(
                AnswerKind::IopsPerCore,
                v,
                s,
                format!(
                    "{what}: one core drives {} of {} (model: {} µs each)",
                    both(v, s, "I/Os per second", kb),
                    format_bytes(q.bs_bytes),
                    f1(us)
                ),
            ));
            if let Some(t) = q.target_iops {
                let (c, cs) = (t * us / 1e6, sys_at(kb).map(|s| t * s / 1e6));
                out.push(ans(
                    AnswerKind::CoresForIops,
                    c,
                    cs,
                    format!(
                        "{what}: {} {} I/Os per second need {}",
                        f1(t),
                        format_bytes(q.bs_bytes),
                        both(c, cs, "cores", kb)
                    ),
                ));
            }
        }
        if let Some(us) = at(&fp, mkb) {
            let per = |us: f64| 1e6 / us * q.mb_bs_bytes as f64 / 1e6;
            let (v, s) = (per(us), sys_at(mkb).map(per));
            out.push(ans(
                AnswerKind::MbSPerCore,
                v,
                s,
                format!(
                    "{what}: one core moves {} in {} I/Os",
                    both(v, s, "MB/s", mkb),
                    format_bytes(q.mb_bs_bytes)
                ),
            ));
            if let Some(t) = q.target_mb_s {
                let (c, cs) = (t / v, s.map(|s| t / s));
                out.push(ans(
                    AnswerKind::CoresForMbS,
                    c,
                    cs,
                    format!(
                        "{what}: {} MB/s in {} I/Os need {}",
                        f1(t),
                        format_bytes(q.mb_bs_bytes),
                        both(c, cs, "cores", mkb)
                    ),
                ));
            }
        }
        if let (Some(big), Some(small)) = (at(&fp, 64.0), at(&fp, 8.0)) {
            let ratio = 8.0 * small / big;
            let sys_ratio = match (sys_at(64.0), sys_at(8.0)) {
                (Some(b), Some(s)) => Some(8.0 * s / b),
                _ => None,
            };
            out.push(ans(
                AnswerKind::LargeVsSmall,
                ratio,
                sys_ratio,
                format!(
                    "{what}: one 64K I/O costs {} µs, eight 8K I/Os {} µs: {}× the CPU for the \
                     same data (the fixed {} µs is paid once instead of eight times)",
                    f1(big),
                    f1(8.0 * small),
                    f1(ratio),
                    f1(fp.fixed.unwrap_or(0.0))
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::CpuAccount;

    fn pt(engine: &str, kb: u64, us: f64, sys_us: f64) -> CostPoint {
        let ios = 1000;
        CostPoint {
            engine: EngineChoice::parse(engine).unwrap(),
            rw: IoDirection::Read,
            cache: CacheMode::Direct,
            qd: 16,
            bs_bytes: kb << 10,
            ios,
            process: CpuAccount {
                us_per_io: us,
                ..Default::default()
            },
            system: Some(CpuAccount {
                us_per_io: sys_us,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn accounts_per_io_and_per_kb() {
        let a = account(0.5, 100_000, 100_000 * 8192);
        assert!((a.us_per_io - 5.0).abs() < 1e-9);
        assert!((a.us_per_kb - 0.625).abs() < 1e-9);
        let z = account(0.5, 0, 0);
        assert_eq!((z.us_per_io, z.us_per_kb), (0.0, 0.0));
        assert_eq!(account(f64::NAN, 1, 1).cpu_s, 0.0);
    }

    #[test]
    fn answers_from_constructed_figures() {
        // process: 10 µs + 0.05 µs/KiB; system-wide: 20 µs + 0.1 µs/KiB
        let pts: Vec<CostPoint> = [4, 8, 64, 1024]
            .iter()
            .map(|&kb| {
                let k = kb as f64;
                pt("psync", kb, 10.0 + 0.05 * k, 20.0 + 0.1 * k)
            })
            .collect();
        let ms = models(&pts);
        assert_eq!(ms.len(), 2);
        assert!((ms[0].fixed_us.unwrap() - 10.0).abs() < 1e-9);
        let q = Questions {
            target_iops: Some(200_000.0),
            target_mb_s: Some(2000.0),
            ..Questions::default()
        };
        let a = answers(&ms, &q);
        let get = |k: AnswerKind| a.iter().find(|x| x.kind == k).unwrap();
        // 8K: 10.4 µs → 96 154 IOPS per core; system 20.8 µs → 48 077
        let ipc = get(AnswerKind::IopsPerCore);
        assert!((ipc.value - 1e6 / 10.4).abs() < 1e-6, "{ipc:?}");
        assert!((ipc.value_system.unwrap() - 1e6 / 20.8).abs() < 1e-6);
        // 200 000 × 10.4 µs = 2.08 cores
        assert!((get(AnswerKind::CoresForIops).value - 2.08).abs() < 1e-9);
        // 1M: 61.2 µs → 16 340 I/Os → 17.13 MB/s (10^6 B) per core... in 2^20 B I/Os
        let mb = get(AnswerKind::MbSPerCore).value;
        assert!((mb - 1e6 / 61.2 * 1.048576).abs() < 1e-6, "{mb}");
        assert!((get(AnswerKind::CoresForMbS).value - 2000.0 / mb).abs() < 1e-9);
        // eight 8K = 83.2 µs, one 64K = 13.2 µs
        let r = get(AnswerKind::LargeVsSmall);
        assert!((r.value - 83.2 / 13.2).abs() < 1e-9, "{r:?}");
        assert!(
            r.text.contains("64K") && r.text.contains("8K"),
            "{}",
            r.text
        );
        assert!(ipc.text.contains("system-wide"), "{}", ipc.text);
    }

    #[test]
    fn a_system_wide_figure_below_the_process_one_is_left_out_and_said_so() {
        // process: 10 µs + 0.05 µs/KiB; system-wide (steal): 2 µs + 0.01 µs/KiB, below it
        let pts: Vec<CostPoint> = [4, 8, 64, 1024]
            .iter()
            .map(|&kb| {
                let k = kb as f64;
                pt("psync", kb, 10.0 + 0.05 * k, 2.0 + 0.01 * k)
            })
            .collect();
        let q = Questions {
            target_iops: Some(200_000.0),
            ..Questions::default()
        };
        let a = answers(&models(&pts), &q);
        for kind in [
            AnswerKind::IopsPerCore,
            AnswerKind::CoresForIops,
            AnswerKind::MbSPerCore,
            AnswerKind::LargeVsSmall,
        ] {
            let x = a.iter().find(|x| x.kind == kind).unwrap();
            assert_eq!(x.value_system, None, "{x:?}");
        }
        let ipc = a
            .iter()
            .find(|x| x.kind == AnswerKind::IopsPerCore)
            .unwrap();
        assert!(
            ipc.text.contains("fell below the process's"),
            "{}",
            ipc.text
        );
        assert!((ipc.value - 1e6 / 10.4).abs() < 1e-6, "{ipc:?}");
    }

    #[test]
    fn no_answers_without_a_slope_or_with_a_negative_line() {
        let one = vec![pt("psync", 8, 10.0, 20.0), pt("psync", 8, 12.0, 20.0)];
        assert!(answers(&models(&one), &Questions::default()).is_empty());
        // falls steeply: negative at 1M, so no MB/s answer there, no NaN anywhere
        let neg = vec![pt("psync", 4, 100.0, 100.0), pt("psync", 64, 10.0, 10.0)];
        let a = answers(&models(&neg), &Questions::default());
        assert!(a
            .iter()
            .all(|x| x.value.is_finite() && x.kind != AnswerKind::MbSPerCore));
        assert!(a.iter().all(|x| x.value_system.is_none_or(f64::is_finite)));
    }
}
