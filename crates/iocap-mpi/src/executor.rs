//! The executor of a rank: every test runs on the ranks asked for, together, and every rank
//! gets the same merged result back.
//!
//! One test goes: (1) every rank checks its targets read-only, and a refusal anywhere is the
//! error everywhere, before anything is created; (2) every rank prepares (creates, fills) its
//! targets, and a failure anywhere ends the test everywhere; (3) the engine runs, its clock
//! started on a barrier of the ranks that take part; a rank whose test fails tells the others,
//! which stop within a second; (4) rank 0 gathers every rank's result, merges them
//! (`iocap_session::merge_test`) and sends the merge back.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Result;
use iocap_engine::probe::RawSamples;
use iocap_model::{ConfigCheck, HostInfo, JobSpec, TestResult};
use iocap_session::{
    merge_test, place, EngineExecutor, Executor, HostFacts, Probe, Progress, RankPart,
};
use mpi::topology::{Color, Communicator, SimpleCommunicator};
use mpi::traits::*;
use serde::{Deserialize, Serialize};

use crate::comm::{broadcast_json, gather_bytes, gather_json, max_f64, min_u64};
use crate::live::{drain_stops, RankProgress, Shared, TAG_STOP};

/// An error every rank has (rank 0 prints it, the others need not).
#[derive(Debug)]
pub struct Agreed(pub String);

impl std::fmt::Display for Agreed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Agreed {}

/// What a rank sends rank 0 after a test.
#[derive(Serialize, Deserialize)]
struct Sent {
    took_part: bool,
    start_ns: u64,
    outcome: std::result::Result<Vec<TestResult>, String>,
}

/// What rank 0 does with each test's merged results as they come.
pub type Checkpoint = Box<dyn FnMut(&[TestResult])>;

pub struct MpiExecutor {
    engine: EngineExecutor,
    checkpoint: Option<Checkpoint>,
    shared: Rc<RefCell<Shared>>,
    world: SimpleCommunicator,
    rank: u32,
    hosts: Vec<String>,
    host_infos: Vec<HostInfo>,
}

impl MpiExecutor {
    /// An executor on every rank of the job (MPI must run: [`crate::init`]).
    pub fn new(progress: Box<dyn Progress>, stop: &'static AtomicBool) -> Self {
        let place = crate::place().expect("MPI runs");
        let shared = Rc::new(RefCell::new(Shared {
            group: None,
            seq: 0,
            start_ns: 0,
            stopped_by_peer: false,
            stop,
        }));
        let root = place.rank == 0;
        let progress = RankProgress {
            inner: progress,
            shared: shared.clone(),
            root,
        };
        Self {
            engine: EngineExecutor::new(Box::new(progress), stop),
            checkpoint: None,
            shared,
            world: SimpleCommunicator::world(),
            rank: place.rank,
            hosts: place.hosts.clone(),
            host_infos: place.host_infos.clone(),
        }
    }

    /// Hands rank 0 every test's merged results as soon as they are in, so a job that mpirun
    /// ends (a rank died) leaves what was measured until then.
    pub fn checkpointing(mut self, keep: Checkpoint) -> Self {
        self.checkpoint = Some(keep);
        self
    }

    fn host(&self) -> &str {
        &self.hosts[self.rank as usize]
    }

    /// `path` with this rank's `{host}` and `{rank}`.
    fn placed(&self, path: &str) -> String {
        iocap_session::place_path(path, self.host(), self.rank)
    }

    fn placed_path(&self, path: &Path) -> PathBuf {
        PathBuf::from(self.placed(&path.to_string_lossy()))
    }

    /// Every rank's problem (`None`: none), agreed: the same error on every rank, naming each
    /// rank that had one.
    fn agree(&self, mine: Option<String>) -> Result<()> {
        let all = gather_json(&self.world, &mine);
        let joined = all.map(|all| {
            let lines: Vec<String> = all
                .iter()
                .enumerate()
                .filter_map(|(r, p)| {
                    p.as_ref()
                        .map(|p| format!("rank {r} on {}: {p}", self.hosts[r]))
                })
                .collect();
            lines.join("; ")
        });
        let joined: String = broadcast_json(&self.world, joined.as_ref());
        if joined.is_empty() {
            Ok(())
        } else {
            Err(Agreed(joined).into())
        }
    }

    /// This rank's part of the test: checked, prepared and run.
    fn run_mine(&mut self, specs: &[JobSpec], active: bool) -> Result<Sent> {
        let placed: Vec<JobSpec> = specs
            .iter()
            .map(|s| place(s, self.host(), self.rank))
            .collect();
        let refused = active
            .then(|| {
                placed.iter().find_map(|s| {
                    let checked = s.validate().map_err(|e| e.to_string()).and_then(|_| {
                        iocap_engine::safety::check_targets(s).map_err(|e| e.to_string())
                    });
                    checked.err()
                })
            })
            .flatten();
        self.agree(refused)?;
        let prepared = if active {
            self.engine
                .prepare_group(&placed)
                .map_err(|e| format!("{e:#}"))
        } else {
            Err(String::new())
        };
        self.agree(prepared.as_ref().err().filter(|e| !e.is_empty()).cloned())?;
        let outcome = match prepared {
            Ok(p) => self.engine.run_prepared(p).map_err(|e| format!("{e:#}")),
            Err(_) => Ok(Vec::new()),
        };
        Ok(Sent {
            took_part: active,
            start_ns: self.shared.borrow().start_ns,
            outcome,
        })
    }

    /// Asks the other ranks of the test to stop (this one failed or was stopped).
    fn tell_stop(&self, ranks: &[u32], seq: u64) {
        for r in ranks.iter().filter(|r| **r != self.rank) {
            self.world
                .process_at_rank(*r as i32)
                .send_with_tag(&seq, TAG_STOP);
        }
    }

    /// Rank 0 merges what every rank sent; every rank gets the merge.
    fn merge(&self, sent: &Sent) -> Result<Vec<TestResult>> {
        let bytes = serde_json::to_vec(sent).expect("results serialise");
        let all = gather_bytes(&self.world, &bytes);
        // the cost of the merge itself (decoding included), from the moment every rank's
        // result is in
        let merged = all.map(|all| {
            let started = Instant::now();
            let sent: Vec<Sent> = all
                .iter()
                .map(|b| serde_json::from_slice(b).expect("a rank sent what this build serialised"))
                .collect();
            merge_all(sent, &self.host_infos, started)
        });
        let merged: std::result::Result<Vec<TestResult>, String> =
            broadcast_json(&self.world, merged.as_ref());
        merged.map_err(|e| Agreed(e).into())
    }
}

/// The merge of every rank's results, test by test, or the first rank's error.
fn merge_all(
    all: Vec<Sent>,
    hosts: &[HostInfo],
    started: Instant,
) -> std::result::Result<Vec<TestResult>, String> {
    let mut parts: Vec<(u32, u64, Vec<TestResult>)> = Vec::new();
    for (r, s) in all.into_iter().enumerate().filter(|(_, s)| s.took_part) {
        match s.outcome {
            Ok(results) => parts.push((r as u32, s.start_ns, results)),
            Err(e) => return Err(format!("rank {r} on {}: {e}", hosts[r].hostname)),
        }
    }
    let n = parts.first().map_or(0, |p| p.2.len());
    let mut merged: Vec<TestResult> = (0..n)
        .map(|j| {
            merge_test(
                parts
                    .iter()
                    .map(|(r, start_ns, results)| RankPart {
                        rank: *r,
                        host: hosts[*r as usize].hostname.clone(),
                        start_ns: *start_ns,
                        result: results[j].clone(),
                        host_info: Some(hosts[*r as usize].clone()),
                    })
                    .collect(),
            )
        })
        .collect();
    // rank 0's decoding and merging; the gather before it waits for the slowest rank's test
    let us = started.elapsed().as_secs_f64() * 1e6;
    for t in &mut merged {
        if let Some(r) = &mut t.ranks {
            r.merge_us = us;
        }
    }
    Ok(merged)
}

impl Executor for MpiExecutor {
    fn run(&mut self, specs: &[JobSpec]) -> Result<Vec<TestResult>> {
        let all: Vec<u32> = (0..self.hosts.len() as u32).collect();
        self.run_on(specs, &all)
    }

    fn ranks(&self) -> Vec<String> {
        self.hosts.clone()
    }

    fn run_on(&mut self, specs: &[JobSpec], ranks: &[u32]) -> Result<Vec<TestResult>> {
        let active = ranks.contains(&self.rank);
        let color = if active {
            Color::with_value(0)
        } else {
            Color::undefined()
        };
        let group = self.world.split_by_color(color);
        let seq = {
            let mut sh = self.shared.borrow_mut();
            sh.seq += 1;
            sh.group = group;
            sh.start_ns = 0;
            sh.stopped_by_peer = false;
            sh.seq
        };
        let mut sent = self.run_mine(specs, active)?;
        let failed = match &sent.outcome {
            Ok(r) => r.iter().any(|t| t.error.is_some() || t.interrupted),
            Err(_) => true,
        };
        let by_peer = self.shared.borrow().stopped_by_peer;
        if active && failed && !by_peer {
            self.tell_stop(ranks, seq);
        }
        if by_peer {
            // not a Ctrl-C here: the next test may run
            self.shared.borrow().stop.store(false, Ordering::SeqCst);
            if let Ok(r) = &mut sent.outcome {
                for t in r {
                    t.warnings
                        .push("stopped early: another rank's test failed".into());
                }
            }
        }
        let merged = self.merge(&sent);
        drain_stops(&self.world, seq);
        self.shared.borrow_mut().group = None;
        if let (Ok(tests), Some(keep), 0) = (&merged, &mut self.checkpoint, self.rank) {
            keep(tests);
        }
        merged
    }

    fn interrupted(&self) -> bool {
        self.engine.interrupted()
    }

    fn pause(&mut self, secs: f64) -> bool {
        self.engine.pause(secs)
    }

    fn label(&mut self, what: &str) {
        self.engine.label(what);
    }

    fn say(&mut self, line: &str) {
        self.engine.say(line);
    }

    fn facts(&self) -> &dyn HostFacts {
        self
    }

    fn probe(&mut self) -> &mut dyn Probe {
        self
    }
}

/// Every rank asks the same question of its own host; the answer every rank can work with.
impl HostFacts for MpiExecutor {
    /// A device on any rank is a device on every rank: the stricter rules hold everywhere, and
    /// every rank takes the same branch.
    fn is_device(&self, path: &str) -> bool {
        let mine = self.engine.is_device(&self.placed(path));
        max_f64(&self.world, if mine { 1.0 } else { 0.0 }) > 0.0
    }

    /// The device of this rank's test (the device-class check of its own result).
    fn rotational(&self, device: &str) -> Option<bool> {
        self.engine.rotational(device)
    }

    /// The configuration under this rank's own paths (rank 0's is the one saved).
    fn config(&self, paths: &[PathBuf]) -> Vec<ConfigCheck> {
        let placed: Vec<PathBuf> = paths.iter().map(|p| self.placed_path(p)).collect();
        self.engine.config(&placed)
    }

    /// The least free space of any rank: files sized by it fit on every rank.
    fn free_bytes(&self, dir: &Path) -> Option<u64> {
        let mine = self.engine.free_bytes(&self.placed_path(dir));
        let least = min_u64(&self.world, mine.unwrap_or(u64::MAX));
        (least != u64::MAX).then_some(least)
    }

    /// The shortest of the ranks' files, or `None` when any rank has none: every rank sizes
    /// alike.
    fn file_len(&self, path: &Path) -> Option<u64> {
        let mine = self.engine.file_len(&self.placed_path(path));
        let least = min_u64(&self.world, mine.map_or(u64::MAX, |l| l.min(u64::MAX - 1)));
        (least != u64::MAX).then_some(least)
    }

    /// This rank's own (only the cost flow asks, and it runs on one host).
    fn mem_available_bytes(&self) -> Option<u64> {
        self.engine.mem_available_bytes()
    }
}

/// Each rank reads its own placed target.
impl Probe for MpiExecutor {
    /// The smallest range of any rank: every rank sweeps the same working sets.
    fn range(&mut self, spec: &JobSpec) -> Result<u64> {
        let placed = place(spec, self.host(), self.rank);
        let mine = self.engine.range(&placed);
        self.agree(mine.as_ref().err().map(|e| format!("{e:#}")))?;
        Ok(min_u64(&self.world, mine.unwrap_or(u64::MAX)))
    }

    /// Every rank warms its own target; the slowest rank's time (the sweep's budget is kept
    /// the same everywhere).
    fn warm(&mut self, spec: &JobSpec, bytes: u64) -> Result<Option<f64>> {
        let placed = place(spec, self.host(), self.rank);
        let mine = self.engine.warm(&placed, bytes);
        self.agree(mine.as_ref().err().map(|e| format!("{e:#}")))?;
        let secs = mine.unwrap_or(None).unwrap_or(f64::INFINITY);
        let slowest = max_f64(&self.world, secs);
        Ok(slowest.is_finite().then_some(slowest))
    }

    fn read_after_write(
        &mut self,
        spec: &JobSpec,
        samples: u32,
        max_s: f64,
    ) -> Result<std::result::Result<RawSamples, String>> {
        let placed = place(spec, self.host(), self.rank);
        self.engine.read_after_write(&placed, samples, max_s)
    }
}
