//! The workload keys (`rw`, `bs`, `qd`, ...) that every level of a profile or suite file may
//! carry, and how the levels stack: built-in base, then `[defaults]`, then the test (and its
//! matrix point), then the workload; the most specific level wins.
//!
//! Each table of a file is its own struct with `deny_unknown_fields`, so a typo is rejected with
//! its line. serde cannot combine `flatten` with `deny_unknown_fields`, so the shared keys are
//! spliced into each struct by the [`job_table!`] macro instead.

use crate::values::{BlockSize, BsSplit};
use iocap_model::{BsWeight, Burst, JobSpec, RateProcess, Role, RwMode, SubmitMode, TargetSpec};

/// Duration, warmup and cooldown when no level of a file gives one.
pub const BASE_DURATION_S: f64 = 60.0;
pub const BASE_WARMUP_S: f64 = 5.0;
/// Role of a workload that names none.
pub const BASE_ROLE: Role = Role::Data;
/// Share of writes of `rw` and `randrw` when a file gives none.
pub const BASE_MIXED_WRITE_PCT: u8 = 50;

/// Block size: one size or a mix. One key group, so that a `bs_split` given by a workload
/// replaces a `bs` inherited from `[defaults]` and the other way round.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    Fixed(u64),
    Split(Vec<BsWeight>),
}

/// The shared keys of one level, every one optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct JobFields {
    pub role: Option<Role>,
    pub rw: Option<RwMode>,
    pub write_pct: Option<u8>,
    pub block: Option<Block>,
    pub qd: Option<u32>,
    pub threads: Option<u32>,
    pub size: Option<u64>,
    pub duration: Option<f64>,
    pub warmup: Option<f64>,
    pub cooldown: Option<f64>,
    pub align: Option<u64>,
    pub direct: Option<bool>,
    pub write_through: Option<bool>,
    pub fsync_every: Option<u32>,
    pub datasync: Option<bool>,
    pub engine: Option<iocap_model::EngineChoice>,
    pub rate_iops: Option<f64>,
    pub rate_mbps: Option<f64>,
    pub rate_process: Option<RateProcess>,
    pub burst: Option<Burst>,
    pub seed: Option<u64>,
    pub submit: Option<SubmitMode>,
    pub compressible: Option<u8>,
    pub dedupe: Option<u8>,
}

/// Declares a table struct with its own keys followed by the shared workload keys, and a
/// `job()` method that gathers the shared ones into a [`JobFields`].
macro_rules! job_table {
    ($(#[$attr:meta])* $name:ident { $($(#[$fattr:meta])* $field:ident : $ty:ty,)* }) => {
        $(#[$attr])*
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct $name {
            $($(#[$fattr])* #[serde(default)] pub $field: $ty,)*
            #[serde(default)] pub role: Option<crate::values::Role>,
            #[serde(default)] pub rw: Option<crate::values::Rw>,
            #[serde(default)] pub write_pct: Option<crate::values::Percent>,
            #[serde(default)] pub bs: Option<crate::values::BlockSize>,
            #[serde(default)] pub bs_split: Option<crate::values::BsSplit>,
            #[serde(default)] pub qd: Option<crate::values::Qd>,
            #[serde(default)] pub threads: Option<crate::values::Threads>,
            #[serde(default)] pub size: Option<crate::values::Size>,
            #[serde(default)] pub duration: Option<crate::values::Secs>,
            #[serde(default)] pub warmup: Option<crate::values::Secs>,
            #[serde(default)] pub cooldown: Option<crate::values::Secs>,
            #[serde(default)] pub align: Option<crate::values::BlockSize>,
            #[serde(default)] pub direct: Option<bool>,
            #[serde(default)] pub write_through: Option<bool>,
            #[serde(default)] pub fsync_every: Option<crate::values::Every>,
            #[serde(default)] pub datasync: Option<bool>,
            #[serde(default)] pub engine: Option<crate::values::Engine>,
            #[serde(default)] pub rate_iops: Option<crate::values::Rate>,
            #[serde(default)] pub rate_mbps: Option<crate::values::Rate>,
            #[serde(default)] pub rate_process: Option<iocap_model::RateProcess>,
            #[serde(default)] pub burst: Option<crate::values::BurstCfg>,
            #[serde(default)] pub seed: Option<u64>,
            #[serde(default)] pub submit: Option<iocap_model::SubmitMode>,
            #[serde(default)] pub compressible: Option<crate::values::Percent>,
            #[serde(default)] pub dedupe: Option<crate::values::Percent>,
        }

        impl $name {
            /// The shared keys; refuses `bs` and `bs_split` together.
            pub fn job(&self) -> Result<crate::fields::JobFields, String> {
                Ok(crate::fields::JobFields {
                    role: self.role.map(|r| r.0),
                    rw: self.rw.map(|r| r.0),
                    write_pct: self.write_pct.map(|p| p.0 as u8),
                    block: crate::fields::block(self.bs, self.bs_split.as_ref())?,
                    qd: self.qd.map(|c| c.0),
                    threads: self.threads.map(|c| c.0),
                    size: self.size.map(|s| s.0),
                    duration: self.duration.map(|s| s.0),
                    warmup: self.warmup.map(|s| s.0),
                    cooldown: self.cooldown.map(|s| s.0),
                    align: self.align.map(|a| a.0),
                    direct: self.direct,
                    write_through: self.write_through,
                    fsync_every: self.fsync_every.map(|c| c.0),
                    datasync: self.datasync,
                    engine: self.engine.map(|e| e.0),
                    rate_iops: self.rate_iops.map(|r| r.0),
                    rate_mbps: self.rate_mbps.map(|r| r.0),
                    rate_process: self.rate_process,
                    burst: self.burst.map(|b| iocap_model::Burst {
                        on_s: b.on.0,
                        off_s: b.off.0,
                    }),
                    seed: self.seed,
                    submit: self.submit,
                    compressible: self.compressible.map(|p| p.0 as u8),
                    dedupe: self.dedupe.map(|p| p.0 as u8),
                })
            }
        }
    };
}
pub(crate) use job_table;

/// The block-size group of one table.
pub(crate) fn block(
    bs: Option<BlockSize>,
    split: Option<&BsSplit>,
) -> Result<Option<Block>, String> {
    Ok(match (bs, split) {
        (Some(_), Some(_)) => {
            return Err(
                "give bs or bs_split, not both (with a mix, the block size is its largest)".into(),
            )
        }
        (Some(b), None) => Some(Block::Fixed(b.0)),
        (None, Some(s)) => Some(Block::Split(s.0.clone())),
        (None, None) => None,
    })
}

impl JobFields {
    /// `self` with every key that `top` sets replaced by `top`'s.
    pub fn under(&self, top: &JobFields) -> JobFields {
        let b = self.clone();
        let t = top.clone();
        JobFields {
            role: t.role.or(b.role),
            rw: t.rw.or(b.rw),
            write_pct: t.write_pct.or(b.write_pct),
            block: t.block.or(b.block),
            qd: t.qd.or(b.qd),
            threads: t.threads.or(b.threads),
            size: t.size.or(b.size),
            duration: t.duration.or(b.duration),
            warmup: t.warmup.or(b.warmup),
            cooldown: t.cooldown.or(b.cooldown),
            align: t.align.or(b.align),
            direct: t.direct.or(b.direct),
            write_through: t.write_through.or(b.write_through),
            fsync_every: t.fsync_every.or(b.fsync_every),
            datasync: t.datasync.or(b.datasync),
            engine: t.engine.or(b.engine),
            rate_iops: t.rate_iops.or(b.rate_iops),
            rate_mbps: t.rate_mbps.or(b.rate_mbps),
            rate_process: t.rate_process.or(b.rate_process),
            burst: t.burst.or(b.burst),
            seed: t.seed.or(b.seed),
            submit: t.submit.or(b.submit),
            compressible: t.compressible.or(b.compressible),
            dedupe: t.dedupe.or(b.dedupe),
        }
    }

    pub fn role(&self) -> Role {
        self.role.unwrap_or(BASE_ROLE)
    }

    /// The job spec these keys describe, on top of iocap's defaults, with no targets. Refuses
    /// what [`JobSpec::validate`] refuses; `write_pct` follows `rw` unless given.
    pub fn spec(&self, name: &str) -> Result<JobSpec, String> {
        let base = JobSpec::default();
        let rw = self.rw.unwrap_or(base.rw);
        let (bs_bytes, bs_split) = match &self.block {
            None => (base.bs_bytes, Vec::new()),
            Some(Block::Fixed(b)) => (*b, Vec::new()),
            Some(Block::Split(mix)) => (
                mix.iter()
                    .map(|w| w.bs_bytes)
                    .max()
                    .unwrap_or(base.bs_bytes),
                mix.clone(),
            ),
        };
        if let Some(pct) = self.write_pct {
            let pure = match rw {
                RwMode::Read | RwMode::RandRead => Some(0),
                RwMode::Write | RwMode::RandWrite => Some(100),
                RwMode::Rw | RwMode::RandRw => None,
            };
            if pure.is_some_and(|p| p != pct) {
                return Err(format!(
                    "write_pct = {pct} needs a mix: rw = \"rw\" or \"randrw\", not \"{}\"",
                    rw.name()
                ));
            }
        }
        let write_pct = self.write_pct.unwrap_or(match rw {
            RwMode::Read | RwMode::RandRead => 0,
            RwMode::Write | RwMode::RandWrite => 100,
            RwMode::Rw | RwMode::RandRw => BASE_MIXED_WRITE_PCT,
        });
        let spec = JobSpec {
            name: name.to_string(),
            targets: Vec::new(),
            rw,
            write_pct,
            bs_bytes,
            bs_split,
            qd: self.qd.unwrap_or(base.qd),
            threads: self.threads.unwrap_or(base.threads),
            size_bytes: self.size.unwrap_or(base.size_bytes),
            duration_s: self.duration.unwrap_or(BASE_DURATION_S),
            warmup_s: self.warmup.unwrap_or(BASE_WARMUP_S),
            cooldown_s: self.cooldown.unwrap_or(0.0),
            seed: self.seed.unwrap_or(base.seed),
            align_bytes: self.align.unwrap_or(bs_bytes),
            rate_iops: self.rate_iops,
            rate_mb_s: self.rate_mbps,
            rate_process: self.rate_process.unwrap_or(base.rate_process),
            direct: self.direct.unwrap_or(base.direct),
            write_through: self.write_through.unwrap_or(base.write_through),
            fsync_every: self.fsync_every.unwrap_or(0),
            datasync: self.datasync.unwrap_or(false),
            engine: self.engine.unwrap_or(base.engine),
            burst: self.burst,
            submit: self.submit.unwrap_or(base.submit),
            compressible_pct: self.compressible.unwrap_or(0),
            dedupe_pct: self.dedupe.unwrap_or(0),
            ..base
        };
        check(&spec)?;
        Ok(spec)
    }
}

/// [`JobSpec::validate`] for a spec whose targets the CLI fills in later.
pub(crate) fn check(spec: &JobSpec) -> Result<(), String> {
    let mut probe = spec.clone();
    if probe.targets.is_empty() {
        probe.targets.push(TargetSpec::new("placeholder"));
    }
    probe.validate().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_replaces_an_inherited_block_size_and_back() {
        let defaults = JobFields {
            block: Some(Block::Fixed(8192)),
            qd: Some(4),
            ..JobFields::default()
        };
        let mix = vec![
            BsWeight {
                bs_bytes: 512,
                weight: 1,
            },
            BsWeight {
                bs_bytes: 61440,
                weight: 1,
            },
        ];
        let w = JobFields {
            block: Some(Block::Split(mix.clone())),
            rw: Some(RwMode::Write),
            ..JobFields::default()
        };
        let spec = defaults.under(&w).spec("log").unwrap();
        assert_eq!(
            (spec.bs_bytes, spec.align_bytes, spec.qd),
            (61440, 61440, 4)
        );
        assert_eq!((spec.bs_split, spec.write_pct), (mix, 100));
        let back = defaults
            .under(&w)
            .under(&JobFields {
                block: Some(Block::Fixed(4096)),
                ..JobFields::default()
            })
            .spec("x")
            .unwrap();
        assert_eq!((back.bs_bytes, back.bs_split.len()), (4096, 0));
    }

    #[test]
    fn base_values_when_no_level_sets_them() {
        let spec = JobFields::default().spec("t").unwrap();
        assert_eq!(spec.duration_s, BASE_DURATION_S);
        assert_eq!(spec.warmup_s, BASE_WARMUP_S);
        assert!(spec.targets.is_empty());
        assert_eq!(JobFields::default().role(), BASE_ROLE);
        let mixed = JobFields {
            rw: Some(RwMode::Rw),
            ..JobFields::default()
        };
        assert_eq!(mixed.spec("m").unwrap().write_pct, BASE_MIXED_WRITE_PCT);
    }

    #[test]
    fn a_suite_sets_the_rate_process_and_a_test_overrides_it() {
        let text = r#"
            name = "s"
            [defaults]
            rate_iops = 500
            rate_process = "poisson"
            [[test]]
            name = "a"
            [[test]]
            name = "b"
            rate_process = "linear"
        "#;
        let suite = crate::parse_suite(text).unwrap();
        let process = |k: usize| suite.tests[k].workloads[0].spec.rate_process;
        assert_eq!(process(0), RateProcess::Poisson);
        assert_eq!(process(1), RateProcess::Linear);
        let bad = text.replace("\"poisson\"", "\"bursty\"");
        assert!(crate::parse_suite(&bad).is_err());
    }
}
