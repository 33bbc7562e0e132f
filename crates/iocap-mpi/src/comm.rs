//! The few collectives the executor needs, on bytes: JSON to rank 0, JSON from rank 0 to all,
//! and the host names. Variable-length data goes as a length first, then the bytes.

use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub fn rank(world: &SimpleCommunicator) -> u32 {
    world.rank() as u32
}

/// Every rank's bytes, at rank 0 (`None` elsewhere).
pub fn gather_bytes(world: &SimpleCommunicator, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
    let root = world.process_at_rank(0);
    let n = mine.len() as Count;
    if world.rank() != 0 {
        root.gather_into(&n);
        root.gather_varcount_into(mine);
        return None;
    }
    let mut counts = vec![0 as Count; world.size() as usize];
    root.gather_into_root(&n, &mut counts[..]);
    let displs: Vec<Count> = counts
        .iter()
        .scan(0, |acc, &c| {
            let at = *acc;
            *acc += c;
            Some(at)
        })
        .collect();
    let mut buf = vec![0u8; counts.iter().sum::<Count>() as usize];
    {
        let mut part = PartitionMut::new(&mut buf[..], counts.clone(), &displs[..]);
        root.gather_varcount_into_root(mine, &mut part);
    }
    Some(
        counts
            .iter()
            .zip(&displs)
            .map(|(c, d)| buf[*d as usize..(*d + *c) as usize].to_vec())
            .collect(),
    )
}

/// Rank 0's bytes, on every rank (`mine` is read on rank 0 only).
pub fn broadcast_bytes(world: &SimpleCommunicator, mine: Vec<u8>) -> Vec<u8> {
    let root = world.process_at_rank(0);
    let mut n = mine.len() as u64;
    root.broadcast_into(&mut n);
    let mut buf = if world.rank() == 0 {
        mine
    } else {
        vec![0u8; n as usize]
    };
    root.broadcast_into(&mut buf[..]);
    buf
}

/// Every rank's value, at rank 0.
pub fn gather_json<T: Serialize + DeserializeOwned>(
    world: &SimpleCommunicator,
    mine: &T,
) -> Option<Vec<T>> {
    let bytes = serde_json::to_vec(mine).expect("results serialise");
    gather_bytes(world, &bytes).map(|all| {
        all.iter()
            .map(|b| serde_json::from_slice(b).expect("a rank sent what this build serialised"))
            .collect()
    })
}

/// Rank 0's value, on every rank.
pub fn broadcast_json<T: Serialize + DeserializeOwned>(
    world: &SimpleCommunicator,
    mine: Option<&T>,
) -> T {
    let bytes = mine.map_or_else(Vec::new, |v| {
        serde_json::to_vec(v).expect("results serialise")
    });
    let got = broadcast_bytes(world, bytes);
    serde_json::from_slice(&got).expect("rank 0 sent what this build serialised")
}

/// Every rank's host (name, kernel, CPU, memory), on every rank.
pub fn all_hosts(world: &SimpleCommunicator) -> Vec<iocap_model::HostInfo> {
    let all = gather_json(world, &iocap_platform::host::host_info());
    broadcast_json(world, all.as_ref())
}

/// The smallest of every rank's value, on every rank.
pub fn min_u64(world: &SimpleCommunicator, mine: u64) -> u64 {
    let mut out = 0u64;
    world.all_reduce_into(&mine, &mut out, mpi::collective::SystemOperation::min());
    out
}

/// The largest of every rank's value, on every rank.
pub fn max_f64(world: &SimpleCommunicator, mine: f64) -> f64 {
    let mut out = 0f64;
    world.all_reduce_into(&mine, &mut out, mpi::collective::SystemOperation::max());
    out
}
