//! The "Host and test setup" cards: per run, the host, the run's label, tags and note, and per
//! test the workload, engine and every target with its device, so a reader can tell whether two
//! runs are comparable before looking at a figure.

use std::fmt::Write as _;

use iocap_model::{human_bytes, EngineFeature, RunResult};

use super::{escape, swatch};
use crate::{fmt, plural, text};

fn kv(out: &mut String, k: &str, v: &str) {
    let _ = write!(out, "<dt>{}</dt><dd>{v}</dd>", escape(k));
}

fn memory(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        format!("{:.0} MiB", bytes as f64 / f64::from(1u32 << 20))
    }
}

pub(super) fn setup(out: &mut String, runs: &[RunResult], names: &[String]) {
    out.push_str(r#"<section id="setup"><h2>Host and test setup</h2><div class="cards">"#);
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(
            out,
            r#"<div class="card"><h3>{}{}</h3><dl class="kv">"#,
            swatch(i),
            escape(&names[i])
        );
        let h = &r.host;
        kv(out, "host", &escape(&h.hostname));
        kv(out, "kernel", &escape(&h.kernel));
        kv(
            out,
            "CPU",
            &format!("{} × {}", h.cpus, escape(&h.cpu_model)),
        );
        kv(out, "memory", &memory(h.memory_bytes));
        if let Some(l) = &r.label {
            kv(out, "label", &escape(l));
        }
        if !r.tags.is_empty() {
            let tags: Vec<String> = r
                .tags
                .iter()
                .map(|t| format!(r#"<span class="tag">{}</span>"#, escape(t)))
                .collect();
            kv(out, "tags", &tags.concat());
        }
        if let Some(n) = &r.note {
            kv(out, "note", &escape(n));
        }
        kv(out, "run id", &escape(&r.run_id));
        kv(out, "started", &escape(&r.started_at));
        kv(out, "iocap", &escape(&r.iocap_version));
        for t in &r.tests {
            kv(out, "test", &format!("<b>{}</b>", escape(&t.name)));
            kv(out, "workload", &escape(&text::describe(t)));
            let mut engine = t.engine.to_string();
            if !t.engine_features.is_empty() {
                let features = EngineFeature::list(&t.engine_features);
                let _ = write!(engine, " ({})", escape(&features));
            }
            kv(out, "engine", &engine);
            kv(
                out,
                "duration",
                &format!("{} measured", fmt::secs(t.duration_s)),
            );
            for tr in &t.targets {
                let dev = tr.device.as_deref().unwrap_or("unknown device");
                let fs = tr
                    .fs_type
                    .as_deref()
                    .map(|f| format!(", {f}"))
                    .unwrap_or_default();
                kv(
                    out,
                    "target",
                    &format!(
                        "<code>{}</code><br>{} ({}{}), {}, {}",
                        escape(&tr.path),
                        escape(tr.kind.name()),
                        escape(dev),
                        escape(&fs),
                        human_bytes(tr.size_bytes),
                        plural(tr.threads as usize, "thread")
                    ),
                );
            }
        }
        out.push_str("</dl></div>");
    }
    out.push_str("</div></section>");
}
