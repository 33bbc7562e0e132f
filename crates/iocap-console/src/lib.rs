//! The console of an iocap process: what a command line needs around a session that is
//! neither a flag nor a view of a result. The terminal's progress ([`progress`]: the fill bar,
//! the live line, the progress lines), Ctrl-C ([`interrupt`]), the files iocap writes for the
//! user, never over one they have ([`files`]), what each command's claim holds, built from its
//! flags ([`claim`]; the claim itself, never writing over what the command reads, is
//! `iocap_platform::claim`), the result store opened and saved into with what
//! it says on stderr ([`keep`]), what the shared flags do ([`flags`]: keeping a run, the
//! history's filter, the role directories), and the man pages rendered from the clap definition ([`man`]).
//!
//! Why a crate of its own: the command modules in `src/cli` only turn flags into a config, call
//! a library and print; these are the process-level pieces several of them share, and a
//! session (`iocap-session`) stays free of any terminal or file the user sees.

pub mod claim;
pub mod files;
pub mod flags;
pub mod interrupt;
pub mod keep;
pub mod man;
pub mod progress;

use std::sync::atomic::{AtomicBool, Ordering};

static NOT_ROOT: AtomicBool = AtomicBool::new(false);
static MANY: AtomicBool = AtomicBool::new(false);

/// Sets this process's place in a multi-host run (once, at start): only rank 0 prints results,
/// saves runs and writes reports.
pub fn set_place(rank: u32, size: u32) {
    NOT_ROOT.store(rank != 0, Ordering::Relaxed);
    MANY.store(size > 1, Ordering::Relaxed);
}

/// Whether this process is one rank of several (a multi-host run, whose runs are saved test by
/// test as they go, then replaced by the finished run).
pub fn many_ranks() -> bool {
    MANY.load(Ordering::Relaxed)
}

/// Whether this process is rank 0 (or alone): the one that prints, saves and writes reports.
pub fn is_root() -> bool {
    !NOT_ROOT.load(Ordering::Relaxed)
}
