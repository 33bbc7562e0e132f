//! The engine names a user types, which are the system's own: io_uring and psync are Linux's,
//! iocp and sync Windows'. A name of the other system is refused with the names to use here, so
//! a script carried from one system to the other fails at once and says what to change, rather
//! than running a different engine than it names. The system is a parameter of the parser
//! ([`EngineChoice::parse_on`]), so the names of both are tested on either.

use crate::EngineChoice;

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
