//! `iocap store-fill` (hidden): fills a store with constructed runs, for the store benchmark
//! (bench/store.sh) and the test that kills a process while it saves. Never measures anything.

use anyhow::Result;
use clap::Args;
use iocap_model::fixture::{run, FixtureRun};
use iocap_model::RwMode;

use super::save::{open_store, StoreArg};
use super::Exit;

#[derive(Args, Debug)]
pub struct FillArgs {
    /// How many runs to add
    #[arg(long, default_value_t = 1000)]
    pub runs: u64,
    /// Number of the first run, so several fills add different runs
    #[arg(long, default_value_t = 0)]
    pub first: u64,
    #[command(flatten)]
    pub store: StoreArg,
}

pub fn fill(a: FillArgs) -> Result<Exit> {
    let mut store = open_store(a.store.db.as_deref())?;
    let hosts = ["db01", "db02", "db03", "dw01"];
    let targets = [
        "/data/iocap.testfile",
        "/log/iocap.testfile",
        "/dev/nvme1n1",
    ];
    let workloads = [
        (RwMode::RandRead, 8192),
        (RwMode::RandWrite, 8192),
        (RwMode::Write, 8192),
        (RwMode::Read, 1 << 20),
    ];
    for i in a.first..a.first + a.runs {
        let (rw, bs) = workloads[(i % 4) as usize];
        let r = run(&FixtureRun {
            hostname: hosts[(i / 4 % 4) as usize].into(),
            targets: vec![targets[(i / 16 % 3) as usize].into()],
            started_unix_s: 1_760_000_000 + i * 600,
            p50_us: 100.0 + (i % 37) as f64 * 10.0,
            iops: 10_000.0 + (i % 101) as f64 * 300.0,
            bs_bytes: bs,
            rw,
            duration_s: 10,
            label: (i % 5 == 0).then(|| format!("fill batch {}", i / 100)),
            tags: if i % 3 == 0 {
                vec!["nightly".into()]
            } else {
                vec![]
            },
            note: None,
            salt: i,
            ..FixtureRun::default()
        });
        store.save(&r)?;
    }
    eprintln!("iocap: added {} runs to {}", a.runs, store.location());
    Ok(Exit::Ok)
}
