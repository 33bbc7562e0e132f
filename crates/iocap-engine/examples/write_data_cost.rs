//! What making a write's data costs, per 8 KiB write of a 32-slot worker (issue 23): the
//! default (whiten the slot, then stamp it), fresh bytes from the PRNG (the alternative it was
//! measured against), and whitening alone. CPU only, no I/O; the paired-round effect on CPU per
//! I/O is bench/ab.py's (docs/PERFORMANCE.md).
//!
//! `cargo run --release -p iocap-engine --example write_data_cost`

use std::time::Instant;

use iocap_engine::{fill_random, whiten, SlotBuffers};
use rand_core::SeedableRng;

fn per_write_ns(n: u64, mut f: impl FnMut(u64)) -> f64 {
    let t = Instant::now();
    for i in 0..n {
        f(i);
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

fn main() -> std::io::Result<()> {
    const SLOTS: u64 = 32;
    const BS: usize = 8192;
    let n = 200_000;
    let mut b = SlotBuffers::new(SLOTS as usize, BS, 1)?;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
    println!("ns per 8 KiB write: default (whiten + stamp), fresh PRNG bytes, whiten alone");
    for round in 1..=3 {
        let default = per_write_ns(n, |i| b.stamp((i % SLOTS) as usize, BS, i * BS as u64, i));
        let fresh = per_write_ns(n, |i| {
            fill_random(&mut b.slot_mut((i % SLOTS) as usize)[..BS], &mut rng)
        });
        let alone = per_write_ns(n, |i| {
            whiten(&mut b.slot_mut((i % SLOTS) as usize)[..BS], i)
        });
        println!("round {round}: {default:.0} {fresh:.0} {alone:.0}");
    }
    Ok(())
}
