//! What the engine executor lends besides running tests: the host's facts, the cache scan's
//! reads of one target, and cost points (see `crate::executor`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use iocap_audit::{AuditOptions, Root};
use iocap_engine::probe::{self, RawSamples};
use iocap_engine::{prepare_targets, TargetError};
use iocap_model::{CacheMode, ConfigCheck, JobSpec};

use super::{EngineExecutor, WARM_BS};
use crate::executor::{CostPoints, CostRun, HostFacts, Probe};

impl HostFacts for EngineExecutor {
    fn is_device(&self, path: &str) -> bool {
        if cfg!(windows) {
            return iocap_platform::winstruct::names_device(path);
        }
        std::fs::metadata(path).is_ok_and(|m| !m.is_file())
    }

    fn rotational(&self, device: &str) -> Option<bool> {
        iocap_platform::devinfo::rotational(device)
    }

    fn config(&self, paths: &[PathBuf]) -> Vec<ConfigCheck> {
        if cfg!(not(target_os = "linux")) {
            // the host audit reads Linux's /sys and /proc
            return vec![];
        }
        let report = iocap_audit::audit(&Root::system(), paths, &AuditOptions::default());
        report
            .checks
            .into_iter()
            .map(|c| ConfigCheck {
                id: c.id,
                severity: c.severity,
                subject: c.subject,
                evidence: c.evidence,
            })
            .collect()
    }

    fn free_bytes(&self, dir: &Path) -> Option<u64> {
        iocap_platform::devinfo::free_bytes(dir)
    }

    fn file_len(&self, path: &Path) -> Option<u64> {
        std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    }

    fn mem_available_bytes(&self) -> Option<u64> {
        iocap_platform::host::mem_available_bytes()
    }
}

impl Probe for EngineExecutor {
    fn range(&mut self, spec: &JobSpec) -> Result<u64> {
        Ok(self.prepare_one(spec)?.range_bytes)
    }

    fn warm(&mut self, spec: &JobSpec, bytes: u64) -> Result<Option<f64>> {
        let t = self.prepare_one(spec)?;
        let w = probe::warm(&t, bytes, WARM_BS, self.stop)?;
        Ok((!w.interrupted).then_some(w.seconds))
    }

    fn read_after_write(
        &mut self,
        spec: &JobSpec,
        samples: u32,
        max_s: f64,
    ) -> Result<std::result::Result<RawSamples, String>> {
        let t = match self.prepare_one(spec) {
            Ok(t) => t,
            Err(e)
                if e.downcast_ref::<TargetError>()
                    .is_some_and(|e| matches!(e, TargetError::Refused(_))) =>
            {
                return Ok(Err(format!("the read-after-write check did not run: {e}")))
            }
            Err(e) => return Err(e),
        };
        let s = probe::read_after_write(&t, spec.bs_bytes, samples, max_s, self.stop)?;
        Ok(Ok(s))
    }
}

impl CostPoints for EngineExecutor {
    fn cost_point(&mut self, spec: &JobSpec, cache: CacheMode, range: u64) -> Result<CostRun> {
        let path = iocap_engine::safety::target_path(Path::new(&spec.targets[0].path));
        if cache == CacheMode::Hit {
            iocap_cost::cache::warm(&path, range)
                .context("cannot read the test file into the cache")?;
        }
        let targets = prepare_targets(spec, self.fill_bar().as_mut(), self.stop)?;
        // the test file as the engine opened it, checked and locked: never reopened by path
        let file = &targets[0].file;
        if cache == CacheMode::Miss {
            iocap_cost::cache::drop_pages(file)
                .context("cannot drop the test file's cached pages")?;
        }
        let mut quiet = iocap_engine::Quiet;
        let mut watch = iocap_cost::StatWatch::new(&mut quiet);
        let out = iocap_engine::run_test(spec, &targets, self.stop, &mut watch)
            .context("the test could not run")?;
        let cpu = watch.window();
        let file = &targets[0].file;
        let resident_pct = (cache != CacheMode::Direct)
            .then(|| iocap_cost::cache::resident_pct(file, range).ok())
            .flatten();
        if spec.writes() {
            iocap_cost::cache::flush(file).context("cannot fsync the test file")?;
        }
        Ok(CostRun {
            result: out.result,
            cpu,
            resident_pct,
        })
    }
}
