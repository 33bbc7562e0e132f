//! The JSON contract, pinned: `docs/result-schema.json` is the JSON Schema of `RunResult`, and
//! this test fails when the structs drift from it. Adding a field is fine (regenerate the file
//! with `UPDATE_SCHEMA=1 cargo test -p iocap-model --test schema` and review the diff); renaming
//! or removing one breaks users' scripts and must not happen.

use iocap_model::RunResult;

#[test]
fn result_schema_matches_the_committed_contract() {
    let schema = schemars::schema_for!(RunResult);
    let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/result-schema.json");
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    if committed != text {
        // show what changed in terms of properties, then fail
        let old: serde_json::Value = serde_json::from_str(&committed).unwrap_or_default();
        let new: serde_json::Value = serde_json::from_str(&text).unwrap();
        panic!(
            "the result schema changed; if only fields were added, regenerate docs/result-schema.json \
             with UPDATE_SCHEMA=1.\nold: {}\nnew: {}",
            old["$defs"]["TestResult"]["properties"], new["$defs"]["TestResult"]["properties"]
        );
    }
}

#[test]
fn the_contract_keeps_every_documented_field() {
    let schema = serde_json::to_value(schemars::schema_for!(RunResult)).unwrap();
    let props = |def: &str| -> Vec<String> {
        let p = if def.is_empty() {
            &schema["properties"]
        } else {
            &schema["$defs"][def]["properties"]
        };
        p.as_object().unwrap().keys().cloned().collect()
    };
    let has = |def: &str, keys: &[&str]| {
        let got = props(def);
        for k in keys {
            assert!(got.iter().any(|g| g == k), "{def} lacks {k}");
        }
    };
    has(
        "",
        &[
            "iocap_version",
            "run_id",
            "started_at",
            "host",
            "tests",
            "label",
            "tags",
            "note",
        ],
    );
    has(
        "TestResult",
        &[
            "name",
            "spec",
            "engine",
            "direct",
            "duration_s",
            "total",
            "read",
            "write",
            "cpu",
            "qd_mean",
            "targets",
            "per_second",
            "warnings",
        ],
    );
    has(
        "OpStats",
        &[
            "ios",
            "bytes",
            "iops",
            "mib_s",
            "mb_s",
            "lat_us",
            "lat_hist_ns",
        ],
    );
    has(
        "LatencyUs",
        &[
            "min", "mean", "stddev", "p50", "p90", "p95", "p99", "p99_9", "p99_99", "p99_999",
            "max",
        ],
    );
    has("CpuStats", &["user_s", "sys_s", "us_per_io"]);
    has("TargetResult", &["path", "total", "device", "fs_type"]);
    has(
        "SecondSample",
        &["t_s", "iops", "mb_s", "lat_us_mean", "lat_us_p99"],
    );
}
