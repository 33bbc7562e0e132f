//! `iocap store-fill` (hidden): fills a store with constructed runs, for the store benchmark
//! (bench/store.sh) and the test that kills a process while it saves. Never measures anything.

use anyhow::Result;
use clap::Args;
use iocap_model::fixture::filler;

use super::Exit;
use iocap_console::keep::open_store;
use iocap_flags::StoreArg;

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
    for i in a.first..a.first + a.runs {
        store.save(&filler(i))?;
    }
    eprintln!("iocap: added {} runs to {}", a.runs, store.location());
    Ok(Exit::Ok)
}
