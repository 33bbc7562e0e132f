//! System-wide CPU time from `/proc/stat` on the engine's window edges: a [`RunObserver`] that
//! reads it there, so the system-wide figure covers the same window as the process's own
//! (`getrusage`, read by the engine on the same monitor thread just before each edge). The
//! parser and the reader are the platform layer's (`iocap_platform::procstat`); the engine's
//! monitor reads steal with them.
//!
//! Busy time is `user + nice + system + irq + softirq`. Not busy: `idle` and `iowait` (a CPU
//! waiting for I/O with nothing to run is idle), and `steal` (time the hypervisor ran someone
//! else on this virtual CPU: not CPU we got; reported on its own). `guest` and `guest_nice` are
//! already inside `user` and `nice` and are not added again.

use iocap_engine::{LiveSample, RunObserver};
pub use iocap_platform::procstat::{parse, read, ticks_per_s, CpuTimes, PROC_STAT};

/// System-wide CPU over the measured window, from its first and last edge.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WindowCpu {
    /// Seconds between the first and the last edge read (the engine's own clock).
    pub span_s: f64,
    pub delta: CpuTimes,
}

/// Reads `/proc/stat` at every window edge and keeps the first and the last; passes progress on
/// to `inner`.
pub struct StatWatch<'a> {
    pub inner: &'a mut dyn RunObserver,
    first: Option<(f64, CpuTimes)>,
    last: Option<(f64, CpuTimes)>,
}

impl<'a> StatWatch<'a> {
    pub fn new(inner: &'a mut dyn RunObserver) -> Self {
        StatWatch {
            inner,
            first: None,
            last: None,
        }
    }

    /// The window, when at least two edges were read.
    pub fn window(&self) -> Option<WindowCpu> {
        let ((t0, a), (t1, b)) = (self.first?, self.last?);
        (t1 > t0).then(|| WindowCpu {
            span_s: t1 - t0,
            delta: b.since(&a),
        })
    }
}

impl RunObserver for StatWatch<'_> {
    fn tick(&mut self, s: &LiveSample) {
        self.inner.tick(s);
    }
    fn window_edge(&mut self, t_s: f64) {
        // read first: the engine read its own counters just before calling us
        let now = read();
        if let Some(c) = now {
            if self.first.is_none() {
                self.first = Some((t_s, c));
            }
            self.last = Some((t_s, c));
        }
        self.inner.window_edge(t_s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watch_keeps_the_first_and_last_edge() {
        let mut q = iocap_engine::Quiet;
        let mut w = StatWatch::new(&mut q);
        assert!(w.window().is_none());
        w.window_edge(0.0);
        w.window_edge(1.0);
        w.window_edge(2.0);
        if read().is_some() {
            let win = w.window().unwrap();
            assert_eq!(win.span_s, 2.0);
        }
    }
}
