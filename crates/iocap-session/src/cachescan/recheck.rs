//! The second look at each edge a sweep found. A sweep only goes up, so load on the host that
//! grows during it (other work starting beside it) rises like a cache at whichever step it
//! begins. Each edge is measured again after the sweep, the working set that fit and then the
//! one past it, up to [`RECHECKS`] times; the level stands when one of them shows the rise and
//! the fall again (the rule is `iocap_assess::cachescan::recheck_holds`).

use anyhow::Result;
use iocap_assess::cachescan::{edges, recheck_holds, rejected_note, RECHECKS};
use iocap_model::{CacheRecheck, CacheStep};

use super::{step, ScanConfig};
use crate::session::Session;

/// The edges of `steps` that held when measured again, and every recheck run. An edge that
/// did not hold is left out (with a note in `notes`), and the edges are found again without
/// it, since a level right after a rejected one may now count. A stop (Ctrl-C or an error)
/// ends the rechecks: the edges not yet measured again are kept as the sweep found them.
pub(super) fn confirmed_edges(
    s: &mut Session,
    c: &ScanConfig,
    steps: &[CacheStep],
    notes: &mut Vec<String>,
) -> Result<(Vec<usize>, Vec<CacheRecheck>)> {
    let (mut rejected, mut checked, mut rechecks) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        let found = edges(steps, &rejected);
        let Some(&k) = found.iter().find(|k| !checked.contains(*k)) else {
            return Ok((found, rechecks));
        };
        checked.push(k);
        let first = rechecks.len();
        match again(s, c, steps, k, &mut rechecks)? {
            Some(true) => {}
            Some(false) => {
                notes.push(rejected_note(
                    (&steps[k], &steps[k + 1]),
                    &rechecks[first..],
                ));
                rejected.push(k);
            }
            None => return Ok((found, rechecks)),
        }
    }
}

/// Measures edge `k` again, up to [`RECHECKS`] times: whether it held, `None` when stopped.
fn again(
    s: &mut Session,
    c: &ScanConfig,
    steps: &[CacheStep],
    k: usize,
    out: &mut Vec<CacheRecheck>,
) -> Result<Option<bool>> {
    for _ in 0..RECHECKS {
        if s.exec.interrupted() {
            return Ok(None);
        }
        s.exec.say(&format!(
            "cachescan: measuring the edge past {} again",
            iocap_model::human_bytes(steps[k].working_set_bytes)
        ));
        let Some(fit) = step(s, c, steps[k].working_set_bytes, true)? else {
            return Ok(None);
        };
        let Some(over) = step(s, c, steps[k + 1].working_set_bytes, true)? else {
            return Ok(None);
        };
        let confirmed = recheck_holds(&fit, &over);
        out.push(CacheRecheck {
            fit,
            over,
            confirmed,
        });
        if confirmed {
            return Ok(Some(true));
        }
    }
    Ok(Some(false))
}
