//! How the capture gives the CPUs to the workload it records: the thread that drains the ring
//! runs at nice 19 while it keeps up, and at the nice it started with once it falls behind.
//!
//! Why: with the programs' work cut to about 200 ns a request (the typed tracepoints and the
//! tag table), the capture's own process became the larger part of what it takes from the
//! workload. On this project's 2-core VM, fio's 4K reads at qd 16 on a loop device, its
//! drains, reordering and the window it writes each second take about 4 % of a CPU, and fio
//! read 0.954 of its IOPS beside it at nice 0 against 0.992 at nice 19 (10 paired windows
//! each, bench/capture-overhead.py). At nice 19 the thread still runs whenever a CPU is free,
//! which on a host that is not saturated is at once.
//!
//! On a saturated host a thread at nice 19 waits, and a capture that waits too long loses
//! requests (a full ring) or writes its last second late. So the yield ends, and the thread
//! takes back the nice it started with, when a drain finds the ring a quarter full or starts
//! more than 50 ms after it was due; it yields again once a drain finds the ring under a
//! sixteenth full and on time. A thread that could not take its nice back (raising a thread's
//! priority needs CAP_SYS_NICE or an RLIMIT_NICE that reaches it) never yields.
//! `IOCAP_CAPTURE_NO_YIELD=1` turns the yield off, for the benchmark that measures it.

/// Set (to anything), the capture does not yield.
pub const NO_YIELD: &str = "IOCAP_CAPTURE_NO_YIELD";
/// The nice while yielding.
const NICE: i32 = 19;
/// Late by more than this, the drain stops yielding.
pub const LATE_NS: u64 = 50_000_000;

/// Whether to yield after a drain that found `fill` of the ring used (0 to 1) and started
/// `late_ns` after it was due, having yielded before it or not.
pub fn decide(yielding: bool, fill: f64, late_ns: u64) -> bool {
    let behind = fill >= 0.25 || late_ns > LATE_NS;
    match yielding {
        true => !behind,
        false => fill < 1.0 / 16.0 && late_ns <= LATE_NS,
    }
}

/// The calling thread's yield.
#[derive(Debug)]
pub struct Yield {
    /// The nice the thread started with; `None` where it does not yield.
    base: Option<i32>,
    yielding: bool,
}

impl Yield {
    /// Starts yielding where the thread can take its nice back.
    pub fn start() -> Yield {
        let off = Yield {
            base: None,
            yielding: false,
        };
        if std::env::var_os(NO_YIELD).is_some() {
            return off;
        }
        let Some(base) = nice() else { return off };
        // a thread that could not take its nice back would be left behind: it keeps it
        if base >= NICE || !may_raise_to(base) || !set_nice(NICE) {
            return off;
        }
        Yield {
            base: Some(base),
            yielding: true,
        }
    }

    /// After a drain: yields or stops as [`decide`] says.
    pub fn drained(&mut self, fill: f64, late_ns: u64) {
        let Some(base) = self.base else { return };
        let want = decide(self.yielding, fill, late_ns);
        if want != self.yielding && set_nice(if want { NICE } else { base }) {
            self.yielding = want;
        }
    }

    /// Takes the thread's nice back for good.
    pub fn end(&mut self) {
        if let Some(base) = self.base.take() {
            if self.yielding {
                set_nice(base);
            }
        }
        self.yielding = false;
    }
}

impl Drop for Yield {
    fn drop(&mut self) {
        self.end();
    }
}

/// The calling thread's nice (Linux's `PRIO_PROCESS` with 0 is the calling thread).
fn nice() -> Option<i32> {
    // SAFETY: getpriority has no preconditions; -1 is a valid nice, so errno is cleared first
    // and read after, both this thread's own.
    unsafe {
        *libc::__errno_location() = 0;
        let n = libc::getpriority(libc::PRIO_PROCESS, 0);
        (n != -1 || *libc::__errno_location() == 0).then_some(n)
    }
}

/// Whether this thread may set its nice back to `base` once it has lowered it: with
/// CAP_SYS_NICE, or an RLIMIT_NICE that reaches `base` (its floor is 20 less the limit).
fn may_raise_to(base: i32) -> bool {
    const CAP_SYS_NICE: u32 = 23;
    let caps = std::fs::read_to_string("/proc/thread-self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        });
    if caps.is_some_and(|c| c & (1 << CAP_SYS_NICE) != 0) {
        return true;
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into `limit`, a live rlimit.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NICE, &mut limit) } == 0;
    read && 20 - limit.rlim_cur.min(40) as i32 <= base
}

fn set_nice(n: i32) -> bool {
    // SAFETY: setpriority has no preconditions; on Linux it changes the calling thread alone.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, n) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_yields_while_it_keeps_up_and_stops_once_it_falls_behind() {
        // yielding, on time, the ring nearly empty: goes on
        assert!(decide(true, 0.01, 1_000_000));
        // a quarter full, or late: stops
        assert!(!decide(true, 0.25, 0));
        assert!(!decide(true, 0.0, LATE_NS + 1));
        // stopped: starts again only under a sixteenth and on time
        assert!(!decide(false, 0.1, 0));
        assert!(!decide(false, 0.01, LATE_NS + 1));
        assert!(decide(false, 0.05, 0));
    }

    #[test]
    fn a_thread_s_nice_comes_back_when_the_yield_ends() {
        let base = nice().expect("getpriority of this thread");
        let handle = std::thread::spawn(move || {
            let mut y = Yield::start();
            let yields = y.base.is_some();
            let during = nice();
            y.drained(0.5, 0); // behind: the nice it started with
            let behind = nice();
            y.drained(0.0, 0); // caught up: yields again
            let again = nice();
            y.end();
            (yields, during, behind, again, nice())
        });
        let (yields, during, behind, again, after) = handle.join().unwrap();
        // CI runs as root, which may take its nice back: there the yield must happen
        assert!(
            yields || std::env::var_os("CI").is_none(),
            "root did not yield"
        );
        if yields {
            assert_eq!(during, Some(NICE));
            assert_eq!(behind, Some(base));
            assert_eq!(again, Some(NICE));
        }
        assert_eq!(after, Some(base), "the thread's nice at the end");
    }
}
