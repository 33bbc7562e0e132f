//! Runs saved while the result's named values were strings load with them as enums: the JSON a
//! store holds (`runs.result_json`) is read back through the model's serde, so a run written by
//! an older iocap, with the words it wrote then, loads; one written by a newer iocap, with a
//! word this version does not know where the set grows (a finding's kind, an fsync method),
//! loads too and keeps the word. What loads writes back the same JSON, word for word.
//!
//! SQLite only: PostgreSQL keeps the same JSON text and loads it through the same function
//! (`queries::load`); `store.rs` runs both.

use iocap_model::fixture::{run, FixtureRun};
use iocap_model::replay::{Replay, ReplayOp};
use iocap_model::request::Op;
use iocap_model::workload::{OpShare, Workload};
use iocap_model::*;
use iocap_store::{Location, Store};
use serde_json::{json, Value};

/// A run as an older (or newer) iocap saved it: every named value a string in the JSON.
fn saved_with_words() -> Value {
    let mut r = run(&FixtureRun::default());
    r.tests[0].os_counters = Some(OsCounters {
        devices: vec![OsDevice::default()],
        ..OsCounters::default()
    });
    r.verify = Some(Verify::default());
    r.cost = Some(CostReport {
        points: vec![CostPoint::default()],
        models: vec![CostModel::default()],
        answers: vec![CostAnswer::default()],
        ..CostReport::default()
    });
    r.fsync = Some(FsyncReport {
        points: vec![FsyncPoint::default(), FsyncPoint::default()],
        ..FsyncReport::default()
    });
    r.workload = Some(Workload {
        mix: vec![OpShare::default()],
        ..Workload::default()
    });
    r.replay = Some(Replay {
        ops: vec![ReplayOp::default()],
        ..Replay::default()
    });
    let mut v = serde_json::to_value(&r).unwrap();
    let t = &mut v["tests"][0];
    t["targets"][0]["kind"] = json!("block_device");
    t["error"] = json!({"op": "fsync", "path": "/data/a.dat", "offset_bytes": 0,
        "len_bytes": 8192, "errno": 5, "message": "EIO"});
    t["os_counters"]["devices"][0]["findings"] = json!([
        {"kind": "writes_absorbed", "message": "m"},
        {"kind": "a_newer_finding", "message": "m"}
    ]);
    v["config"] = json!([{"id": "device.scheduler", "severity": "WARN", "subject": "sda",
        "evidence": "mq-deadline"}]);
    let c = &mut v["cost"];
    c["matrix"] = json!("full");
    c["points"][0]["rw"] = json!("write");
    c["points"][0]["cache"] = json!("miss");
    c["models"][0]["accounting"] = json!("system");
    c["answers"][0]["kind"] = json!("cores_for_mb_s");
    v["fsync"]["points"][0]["method"] = json!("o_direct_o_dsync");
    v["fsync"]["points"][1]["method"] = json!("a_newer_method");
    v["verify"]["mode"] = json!("check");
    v["verify"]["failures"] = json!([{"class": "stale", "path": "/data/a.dat", "page": 3,
        "offset_bytes": 24576, "len_bytes": 8192, "op": "final_pass", "expected_generation": 2,
        "found_generation": 1, "found_page": null, "found_file_id": null,
        "sectors_512_differing": [], "sectors_4k_differing": [], "transient": false,
        "rereads": 0, "dump": null, "errno": null, "message": "older"}]);
    v["workload"]["mix"][0]["op"] = json!("write-zeroes");
    v["replay"]["target_kind"] = json!("block_device");
    v["replay"]["ops"][0]["op"] = json!("discard");
    v
}

/// The run saved as `json` straight into the store, then loaded as any run is.
fn through_the_store(json: &Value) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let loc = Location::Sqlite(dir.path().join("results.db"));
    let r: RunResult = serde_json::from_value(json.clone()).unwrap();
    let mut s = Store::open(&loc).unwrap();
    s.save(&r).unwrap();
    drop(s);
    let mut db = Store::open_raw(&loc).unwrap();
    db.exec(
        "UPDATE runs SET result_json = ? WHERE run_id = ?",
        &[json.to_string().into(), r.run_id.as_str().into()],
    )
    .unwrap();
    drop(db);
    Store::open(&loc).unwrap().load(&r.run_id).unwrap()
}

#[test]
fn a_run_saved_with_words_loads_with_enums_and_writes_the_same_words() {
    let json = saved_with_words();
    let r = through_the_store(&json);
    let t = &r.tests[0];
    assert_eq!(t.targets[0].kind, TargetKind::BlockDevice);
    assert_eq!(t.error.as_ref().unwrap().op, FaultOp::Fsync);
    let findings = &t.os_counters.as_ref().unwrap().devices[0].findings;
    assert_eq!(findings[0].kind, FindingKind::WritesAbsorbed);
    assert_eq!(
        findings[1].kind,
        FindingKind::Other("a_newer_finding".into())
    );
    assert_eq!(r.config[0].severity, Severity::Warn);
    let c = r.cost.as_ref().unwrap();
    assert_eq!(c.matrix, CostMatrix::Full);
    assert_eq!(
        (c.points[0].rw, c.points[0].cache),
        (IoDirection::Write, CacheMode::Miss)
    );
    assert_eq!(c.models[0].accounting, Accounting::System);
    assert_eq!(c.answers[0].kind, AnswerKind::CoresForMbS);
    let f = &r.fsync.as_ref().unwrap().points;
    assert_eq!(f[0].method, FsyncMethod::ODirectODsync);
    assert_eq!(f[1].method.label(), "a_newer_method");
    let v = r.verify.as_ref().unwrap();
    assert_eq!(
        (v.mode, v.failures[0].op),
        (VerifyMode::Check, VerifyOp::FinalPass)
    );
    assert_eq!(r.workload.as_ref().unwrap().mix[0].op, Op::WriteZeroes);
    let p = r.replay.as_ref().unwrap();
    assert_eq!(
        (p.target_kind, p.ops[0].op),
        (TargetKind::BlockDevice, Op::Discard)
    );
    // and it writes back exactly what was saved
    assert_eq!(serde_json::to_value(&r).unwrap(), json);
}
