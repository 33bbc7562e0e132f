//! The engine names a user types, which are the system's own: io_uring and psync are Linux's,
//! iocp and sync Windows'. A name of the other system is refused with the names to use here, so
//! a script carried from one system to the other fails at once and says what to change, rather
//! than running a different engine than it names. The system is a parameter of the parser
//! ([`EngineChoice::parse_on`]), so the names of both are tested on either.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::EngineChoice;

/// The engine that ran a test, as its result records it: the system's own backend, not the
/// choice (`auto` comes to io_uring or psync on Linux, IOCP on Windows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// Linux's io_uring (registered or not: `engine_features` says which).
    #[default]
    IoUring,
    /// Linux's pread/pwrite, a thread per I/O in flight.
    Psync,
    /// Windows' overlapped I/O on an I/O completion port per thread, as DiskSpd's.
    Iocp,
    /// Windows' positioned ReadFile/WriteFile on blocking handles, a thread per I/O in flight.
    Sync,
}

impl Engine {
    pub const ALL: [Engine; 4] = [Engine::IoUring, Engine::Psync, Engine::Iocp, Engine::Sync];

    pub fn name(self) -> &'static str {
        match self {
            Engine::IoUring => "io_uring",
            Engine::Psync => "psync",
            Engine::Iocp => "iocp",
            Engine::Sync => "sync",
        }
    }

    /// The system whose engine this is.
    pub fn system(self) -> System {
        match self {
            Engine::IoUring | Engine::Psync => System::Linux,
            Engine::Iocp | Engine::Sync => System::Windows,
        }
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for EngineChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What an engine used beyond plain reads and writes, as a result lists it
/// (`engine_features`): io_uring's setup and registrations, IOCP's port per thread, and the
/// submission modes a test ran in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EngineFeature {
    /// The ring was set up with IORING_SETUP_SINGLE_ISSUER and DEFER_TASKRUN.
    DeferTaskrun,
    /// The ring was set up with IORING_SETUP_COOP_TASKRUN (where DEFER_TASKRUN was refused).
    CoopTaskrun,
    /// The ring's own descriptor was registered.
    RegisteredRing,
    /// The target's descriptor was registered (fixed file).
    RegisteredFiles,
    /// The I/O buffers were registered (fixed buffers).
    RegisteredBuffers,
    /// Windows: one I/O completion port per thread.
    CompletionPortPerThread,
    /// `--submit auto` chose the submission mode by a trial.
    SubmitAuto,
    /// I/Os were submitted one by one as they were queued.
    SubmitEach,
    /// I/Os were submitted together with the wait.
    SubmitBatch,
}

impl EngineFeature {
    pub const ALL: [EngineFeature; 9] = [
        Self::DeferTaskrun,
        Self::CoopTaskrun,
        Self::RegisteredRing,
        Self::RegisteredFiles,
        Self::RegisteredBuffers,
        Self::CompletionPortPerThread,
        Self::SubmitAuto,
        Self::SubmitEach,
        Self::SubmitBatch,
    ];

    /// `features` by name, separated by commas, as every view lists them.
    pub fn list(features: &[EngineFeature]) -> String {
        let names: Vec<&str> = features.iter().map(|f| f.name()).collect();
        names.join(", ")
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::DeferTaskrun => "defer_taskrun",
            Self::CoopTaskrun => "coop_taskrun",
            Self::RegisteredRing => "registered_ring",
            Self::RegisteredFiles => "registered_files",
            Self::RegisteredBuffers => "registered_buffers",
            Self::CompletionPortPerThread => "completion_port_per_thread",
            Self::SubmitAuto => "submit_auto",
            Self::SubmitEach => "submit_each",
            Self::SubmitBatch => "submit_batch",
        }
    }
}

impl std::fmt::Display for EngineFeature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An operating system iocap runs on, for the names it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum System {
    Linux,
    Windows,
}

impl System {
    /// The system this build runs on.
    pub const HOST: System = if cfg!(windows) {
        System::Windows
    } else {
        System::Linux
    };

    pub fn name(self) -> &'static str {
        match self {
            System::Linux => "Linux",
            System::Windows => "Windows",
        }
    }

    fn possessive(self) -> &'static str {
        match self {
            System::Linux => "Linux's",
            System::Windows => "Windows'",
        }
    }

    /// Every engine name this system takes, for an error or a help text.
    pub fn engine_names(self) -> &'static str {
        match self {
            System::Linux => "auto, io_uring, io_uring_unregistered or psync",
            System::Windows => "auto (iocp), iocp or sync",
        }
    }

    /// The engine names this system takes, one per engine, as shell completion offers them.
    pub fn engines(self) -> &'static [&'static str] {
        match self {
            System::Linux => &["auto", "io_uring", "io_uring_unregistered", "psync"],
            System::Windows => &["auto", "iocp", "sync"],
        }
    }

    /// The engines to name instead of another system's.
    fn engines_instead(self) -> &'static str {
        match self {
            System::Linux => "io_uring or psync",
            System::Windows => "iocp or sync",
        }
    }
}

impl EngineChoice {
    /// The name it is stored and shown by (Windows' `iocp` is `auto`, its `sync` `psync`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::IoUring => "io_uring",
            Self::Psync => "psync",
            Self::IoUringUnregistered => "io_uring_unregistered",
        }
    }

    /// The name a user of `system` knows it by: Windows' `iocp` (`Auto`) and `sync`
    /// (`Psync`); elsewhere [`EngineChoice::name`].
    pub fn name_on(self, system: System) -> &'static str {
        match (system, self) {
            (System::Windows, Self::Auto) => "iocp",
            (System::Windows, Self::Psync) => "sync",
            _ => self.name(),
        }
    }

    /// An engine name as typed (any case) on this system.
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::parse_on(s, System::HOST)
    }

    /// An engine name as typed on `system`: its own names, or a refusal naming the system a
    /// name belongs to and what to use instead.
    pub fn parse_on(s: &str, system: System) -> Result<Self, String> {
        use System::{Linux, Windows};
        let (owner, choice) = match s.to_ascii_lowercase().as_str() {
            "auto" => return Ok(Self::Auto),
            "io_uring" | "iouring" | "uring" => (Linux, Self::IoUring),
            "io_uring_unregistered" | "io_uring-unregistered" | "uring_unregistered" => {
                (Linux, Self::IoUringUnregistered)
            }
            "psync" => (Linux, Self::Psync),
            "iocp" => (Windows, Self::Auto),
            "sync" => (Windows, Self::Psync),
            _ => {
                return Err(format!(
                    "unknown engine '{s}': use {}",
                    system.engine_names()
                ))
            }
        };
        if owner != system {
            return Err(format!(
                "{s} is {}; on {} use {}",
                owner.possessive(),
                system.name(),
                system.engines_instead()
            ));
        }
        Ok(choice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use System::{Linux, Windows};

    /// Each name an engine is shown by on a system parses back to it there.
    #[test]
    fn the_names_shown_on_a_system_are_the_ones_it_takes() {
        for system in [Linux, Windows] {
            let choices: &[EngineChoice] = match system {
                Linux => &[
                    EngineChoice::Auto,
                    EngineChoice::IoUring,
                    EngineChoice::Psync,
                    EngineChoice::IoUringUnregistered,
                ],
                Windows => &[EngineChoice::Auto, EngineChoice::Psync],
            };
            for &e in choices {
                assert_eq!(EngineChoice::parse_on(e.name_on(system), system), Ok(e));
            }
        }
        assert_eq!(EngineChoice::Auto.name_on(Windows), "iocp");
        assert_eq!(EngineChoice::Psync.name_on(Windows), "sync");
    }

    #[test]
    fn each_system_takes_its_own_names_in_any_case() {
        for (name, want) in [
            ("auto", EngineChoice::Auto),
            ("io_uring", EngineChoice::IoUring),
            ("IO_URING", EngineChoice::IoUring),
            ("io_uring_unregistered", EngineChoice::IoUringUnregistered),
            ("psync", EngineChoice::Psync),
        ] {
            assert_eq!(EngineChoice::parse_on(name, Linux), Ok(want), "{name}");
        }
        for (name, want) in [
            ("auto", EngineChoice::Auto),
            ("iocp", EngineChoice::Auto),
            ("IOCP", EngineChoice::Auto),
            ("sync", EngineChoice::Psync),
        ] {
            assert_eq!(EngineChoice::parse_on(name, Windows), Ok(want), "{name}");
        }
    }

    #[test]
    fn engines_and_features_are_stored_by_their_names() {
        for e in Engine::ALL {
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(json, format!("\"{}\"", e.name()));
            assert_eq!(serde_json::from_str::<Engine>(&json).unwrap(), e);
        }
        let names: Vec<&str> = Engine::ALL.iter().map(|e| e.name()).collect();
        assert_eq!(names, ["io_uring", "psync", "iocp", "sync"]);
        for f in EngineFeature::ALL {
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(json, format!("\"{}\"", f.name()));
            assert_eq!(serde_json::from_str::<EngineFeature>(&json).unwrap(), f);
        }
        for c in [
            EngineChoice::Auto,
            EngineChoice::IoUring,
            EngineChoice::Psync,
            EngineChoice::IoUringUnregistered,
        ] {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
        }
    }

    #[test]
    fn every_offered_name_is_taken() {
        for system in [Linux, Windows] {
            for name in system.engines() {
                assert!(EngineChoice::parse_on(name, system).is_ok(), "{name}");
            }
        }
    }

    #[test]
    fn a_name_of_the_other_system_says_whose_it_is_and_what_to_use() {
        for name in ["io_uring", "io_uring_unregistered", "psync"] {
            let e = EngineChoice::parse_on(name, Windows).unwrap_err();
            assert_eq!(e, format!("{name} is Linux's; on Windows use iocp or sync"));
        }
        for name in ["iocp", "sync"] {
            let e = EngineChoice::parse_on(name, Linux).unwrap_err();
            assert_eq!(
                e,
                format!("{name} is Windows'; on Linux use io_uring or psync")
            );
        }
    }

    #[test]
    fn an_unknown_name_lists_this_systems_engines() {
        let e = EngineChoice::parse_on("spdk", Windows).unwrap_err();
        assert_eq!(e, "unknown engine 'spdk': use auto (iocp), iocp or sync");
        let e = EngineChoice::parse_on("", Linux).unwrap_err();
        assert_eq!(
            e,
            "unknown engine '': use auto, io_uring, io_uring_unregistered or psync"
        );
    }

    #[test]
    fn the_host_is_the_system_this_was_built_for() {
        assert_eq!(System::HOST == Windows, cfg!(windows));
    }
}
