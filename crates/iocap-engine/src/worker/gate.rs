//! Whether a worker may start new I/O: the throttle's schedule (`pace`), the burst pattern's
//! on and off parts, and think time's pause after a count of completions. It is the worker's
//! one answer to "may I queue now, and if not, until when?", kept apart from the loop so its
//! edges are tested without a backend.

use crate::pace::Pacer;

use super::WorkerConfig;

/// Where a burst pattern stands at `now`: whether it is on, and when that changes.
#[inline]
pub(super) fn burst_state(start: u64, on: u64, off: u64, now: u64) -> (bool, u64) {
    let period = on + off;
    let since = now.saturating_sub(start);
    let period_start = now - since % period;
    if since % period < on {
        (true, period_start + on)
    } else {
        (false, period_start + period)
    }
}

/// Whether new I/O may start: the throttle's schedule and the burst pattern's on and off parts.
pub(super) struct Gate {
    pacer: Option<Pacer>,
    /// (on, off) in nanoseconds, from `start`.
    burst_ns: Option<(u64, u64)>,
    start: u64,
    /// The burst is on (always, without bursts), until `edge`.
    on: bool,
    edge: u64,
    /// DiskSpd's `-i`/`-j`: completions per burst and the pause after each.
    think: Option<Think>,
}

/// Count-based think time: the completions of the current burst.
struct Think {
    ios: u64,
    pause_ns: u64,
    done: u64,
}

impl Gate {
    pub(super) fn new(cfg: &WorkerConfig, start: u64, now: u64) -> Gate {
        Gate {
            pacer: cfg
                .rate_interval_ns
                .map(|iv| Pacer::new(iv, cfg.rate_process, cfg.write_seed, now)),
            burst_ns: cfg.burst_ns,
            start,
            on: true,
            edge: if cfg.burst_ns.is_some() {
                now
            } else {
                u64::MAX
            },
            think: None,
        }
    }

    /// With think time: after every `ios` completions, a pause of `pause_ns` (DiskSpd's
    /// `-i`/`-j`, which a time-based burst never comes with: the spec refuses both).
    pub(super) fn with_think(mut self, think: Option<(u32, u64)>) -> Gate {
        self.think = think.map(|(ios, pause_ns)| Think {
            ios: u64::from(ios.max(1)),
            pause_ns,
            done: 0,
        });
        self
    }

    /// Counts `n` completions at `now`; a burst's last starts the pause.
    #[inline]
    pub(super) fn completed(&mut self, n: u64, now: u64) {
        if self.think.is_some() {
            self.count_think(n, now);
        }
    }

    #[cold]
    fn count_think(&mut self, n: u64, now: u64) {
        let Some(t) = self.think.as_mut() else { return };
        let done = t.done + n;
        t.done = done % t.ios;
        if done >= t.ios {
            self.on = false;
            self.edge = now.saturating_add(t.pause_ns);
            if let Some(p) = self.pacer.as_mut() {
                p.hold_until(self.edge);
            }
        }
    }

    /// Recomputes the burst state when an edge has passed; an off part holds the throttle,
    /// which starts afresh with the next burst instead of catching up.
    #[inline]
    pub(super) fn update(&mut self, now: u64) {
        if now < self.edge {
            return;
        }
        if let Some((on, off)) = self.burst_ns {
            (self.on, self.edge) = burst_state(self.start, on, off, now);
            if let (false, Some(p)) = (self.on, self.pacer.as_mut()) {
                p.hold_until(self.edge);
            }
        } else {
            // the end of a think-time pause
            (self.on, self.edge) = (true, u64::MAX);
        }
    }

    /// Whether one more I/O may start now; if so it is taken from the throttle's schedule
    /// (behind the schedule, it catches up by 100 µs at most: no burst, see `pace`).
    #[inline]
    pub(super) fn admit(&mut self, now: u64) -> bool {
        if !self.on {
            return false;
        }
        match self.pacer.as_mut() {
            Some(p) if !p.ready(now) => false,
            Some(p) => {
                p.take(now);
                true
            }
            None => true,
        }
    }

    /// How far behind the throttle's schedule the worker is at `at` (0 unthrottled).
    pub(super) fn behind_ns(&self, at: u64) -> u64 {
        self.pacer.as_ref().map_or(0, |p| p.behind_ns(at))
    }

    /// When new I/O may next start, if something other than a free slot holds it back.
    #[inline]
    pub(super) fn held_until(&self) -> Option<u64> {
        let next_due = self.pacer.as_ref().map_or(0, Pacer::due);
        match (self.pacer.is_some(), self.on) {
            (_, false) => Some(self.edge.max(next_due)),
            (true, true) => Some(next_due),
            (false, true) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{burst_state, Gate};
    use crate::pace::Process;
    use crate::worker::WorkerConfig;

    fn config(burst_ns: Option<(u64, u64)>) -> WorkerConfig {
        WorkerConfig {
            job: 0,
            target_idx: 0,
            depth: 4,
            fsync_every: 0,
            datasync: false,
            rate_interval_ns: None,
            rate_process: Process::Linear,
            burst_ns,
            write_seed: 1,
            auto_submit: false,
        }
    }

    /// `-i8 -j5`: after 8 completions nothing starts for 5 ms (what is in flight still
    /// completes and counts toward the next burst); then I/O starts again.
    #[test]
    fn think_time_pauses_after_a_count_of_completions() {
        let mut g = Gate::new(&config(None), 0, 0).with_think(Some((8, 5_000_000)));
        g.update(0);
        assert!(g.admit(0) && g.held_until().is_none());
        g.completed(5, 100);
        assert!(g.admit(100));
        g.completed(4, 200); // the 8th completion: pause; one counts toward the next burst
        g.update(300);
        assert!(!g.admit(300));
        assert_eq!(g.held_until(), Some(5_000_200));
        g.update(5_000_199);
        assert!(!g.admit(5_000_199));
        g.update(5_000_200);
        assert!(g.admit(5_000_200) && g.held_until().is_none());
        g.completed(7, 6_000_000);
        g.update(6_000_001);
        assert!(
            !g.admit(6_000_001),
            "1 + 7 completions end the second burst"
        );
        // without think time, completions change nothing
        let mut g = Gate::new(&config(None), 0, 0);
        g.completed(1_000, 1);
        g.update(2);
        assert!(g.admit(2));
    }

    #[test]
    fn burst_phases_follow_the_start_instant() {
        let (start, on, off) = (1_000, 200, 300);
        assert_eq!(burst_state(start, on, off, 1_000), (true, 1_200));
        assert_eq!(burst_state(start, on, off, 1_199), (true, 1_200));
        assert_eq!(burst_state(start, on, off, 1_200), (false, 1_500));
        assert_eq!(burst_state(start, on, off, 1_499), (false, 1_500));
        assert_eq!(burst_state(start, on, off, 2_600), (true, 2_700));
        assert_eq!(burst_state(start, on, off, 2_750), (false, 3_000));
    }
}
