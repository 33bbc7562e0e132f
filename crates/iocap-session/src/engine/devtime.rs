//! The engine's tests timed in the device (`crate::executor::DeviceTimes`): the block
//! requests of a test's disks recorded by `iocap-capture` on a thread of their own while the
//! test runs, reduced as they arrive to a count and a sum (no record is kept), so the I/O
//! threads meet no lock and no allocation of this.

use anyhow::Result;
use iocap_model::JobSpec;

use super::EngineExecutor;
use crate::executor::{DeviceTimes, TimedRun};

impl DeviceTimes for EngineExecutor {
    fn timed_run(&mut self, spec: &JobSpec) -> Result<std::result::Result<TimedRun, String>> {
        if cfg!(not(target_os = "linux")) {
            return Ok(Err(
                "the block layer's requests are recorded on Linux only".into()
            ));
        }
        let mut devices = Vec::new();
        for t in &spec.targets {
            match crate::capture::capture_devices(&t.path) {
                Ok(d) => devices.extend(d.into_iter().map(|d| d.dev)),
                Err(e) => return Ok(Err(e.to_string())),
            }
        }
        devices.sort();
        devices.dedup();
        // the targets first: creating a test file is not the test's I/O
        let prepared = self.prepare_group(std::slice::from_ref(spec))?;
        let recorder = match recorder::Recorder::start(devices, spec.warmup_s) {
            Ok(r) => r,
            Err(why) => return Ok(Err(why)),
        };
        let ran = self.run_prepared(prepared);
        let tally = recorder.finish();
        let result = ran?.remove(0);
        Ok(tally.map(|t| TimedRun {
            result,
            requests: t.requests,
            device_us_mean: t.mean_us(),
        }))
    }
}

/// The capture's thread (`iocap_capture::Capture`, which cannot start off Linux).
mod recorder {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};
    use std::thread::JoinHandle;
    use std::time::Duration;

    use iocap_capture::{Capture, CaptureConfig, CaptureError};
    use iocap_trace::{DevId, IoRecord, Op};

    pub(super) use super::tally::Tally;

    /// A capture running on its own thread until [`Recorder::finish`].
    pub(super) struct Recorder {
        stop: Arc<AtomicBool>,
        thread: JoinHandle<Result<Tally, String>>,
    }

    impl Recorder {
        /// Starts recording `devices`; the requests issued `warmup_s` after the start or later
        /// are counted (the test starts right after). `Err(why)` where the kernel refuses.
        pub(super) fn start(devices: Vec<DevId>, warmup_s: f64) -> Result<Recorder, String> {
            let (started, told) = mpsc::channel();
            let stop = Arc::new(AtomicBool::new(false));
            let flag = Arc::clone(&stop);
            let thread = std::thread::Builder::new()
                .name("iocap-devtime".into())
                .spawn(move || record(devices, warmup_s, &flag, &started))
                .map_err(|e| format!("no thread for the capture: {e}"))?;
            match told.recv() {
                Ok(Ok(())) => Ok(Recorder { stop, thread }),
                Ok(Err(why)) => {
                    let _ = thread.join();
                    Err(why)
                }
                Err(_) => Err(match thread.join() {
                    Err(_) => "the capture's thread failed".into(),
                    Ok(r) => r
                        .err()
                        .unwrap_or_else(|| "the capture did not start".into()),
                }),
            }
        }

        /// Stops the capture, lets every record out, and returns the tally.
        pub(super) fn finish(self) -> Result<Tally, String> {
            self.stop.store(true, Ordering::SeqCst);
            self.thread
                .join()
                .map_err(|_| "the capture's thread failed".to_string())?
        }
    }

    fn record(
        devices: Vec<DevId>,
        warmup_s: f64,
        stop: &AtomicBool,
        started: &mpsc::Sender<Result<(), String>>,
    ) -> Result<Tally, String> {
        let config = CaptureConfig {
            devices,
            ..CaptureConfig::default()
        };
        let mut cap = match Capture::start(&config) {
            Ok(c) => c,
            Err(e) => {
                let why = why(&e);
                let _ = started.send(Err(why.clone()));
                return Err(why);
            }
        };
        // the records' times count from the capture's start, just before the test's
        let mut tally = Tally::since((warmup_s.max(0.0) * 1e9) as u64);
        let _ = started.send(Ok(()));
        let mut take = |r: &IoRecord| {
            if matches!(r.op, Op::Read | Op::Write) {
                tally.take(r.issue_ns, r.complete_ns, r.bytes);
            }
        };
        while !stop.load(Ordering::SeqCst) {
            cap.poll(Duration::from_millis(100), &mut take)
                .map_err(|e| why(&e))?;
        }
        cap.finish(&mut take).map_err(|e| why(&e))?;
        Ok(tally)
    }

    /// Why the capture cannot run, without `iocap capture`'s advice to bring a trace.
    fn why(e: &CaptureError) -> String {
        match e {
            CaptureError::Unavailable { what } => what.clone(),
            CaptureError::Rejected { source, .. } => {
                format!("the kernel refused the capture's eBPF program ({source})")
            }
            CaptureError::Io(e) => format!("the capture failed: {e}"),
        }
    }
}

mod tally {
    /// The data requests issued from a moment on: how many completed, and their time in
    /// the device.
    #[derive(Debug, Default, Clone, Copy, PartialEq)]
    pub(crate) struct Tally {
        from_ns: u64,
        pub(crate) requests: u64,
        sum_ns: u128,
    }

    impl Tally {
        /// Counting requests issued at `from_ns` or later.
        pub(crate) fn since(from_ns: u64) -> Tally {
            Tally {
                from_ns,
                ..Tally::default()
            }
        }

        /// One request: counted when it carried data, was issued in time and completed.
        pub(crate) fn take(&mut self, issue_ns: u64, complete_ns: Option<u64>, bytes: u32) {
            let Some(done) = complete_ns else { return };
            if bytes > 0 && issue_ns >= self.from_ns {
                self.requests += 1;
                self.sum_ns += u128::from(done.saturating_sub(issue_ns));
            }
        }

        /// The mean time in the device, in µs; `None` without requests.
        pub(crate) fn mean_us(&self) -> Option<f64> {
            (self.requests > 0).then(|| self.sum_ns as f64 / self.requests as f64 / 1e3)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn only_data_requests_issued_after_the_warmup_and_completed_count() {
            let mut t = Tally::since(1_000);
            t.take(999, Some(5_000), 4096); // in the warm-up
            t.take(1_000, Some(1_400), 4096);
            t.take(2_000, Some(2_200), 4096);
            t.take(3_000, None, 4096); // in flight at the end
            t.take(4_000, Some(9_000), 0); // no data
            assert_eq!(t.requests, 2);
            assert_eq!(t.mean_us(), Some(0.3));
            assert_eq!(Tally::since(0).mean_us(), None);
        }
    }
}
