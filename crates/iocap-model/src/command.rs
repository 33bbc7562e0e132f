//! The command that made a run ([`RunResult::command`](crate::RunResult::command)), by the name
//! the command line gives it. The set grows with every measuring command iocap gains, and a
//! store is shared by hosts on different versions (a PostgreSQL store in particular), so a run
//! saved by a newer iocap under a name this one does not know is read back as
//! [`RunCommand::Other`], keeping its name, rather than refused as corrupt. In the JSON and the
//! schema it stays a plain string.

use serde::{Deserialize, Serialize};

/// A command that saves what it measured as a run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(from = "String", into = "String")]
pub enum RunCommand {
    Run,
    Sqlio,
    Diskspd,
    Suite,
    Saturate,
    Scaleup,
    Preflight,
    Cachescan,
    Cost,
    Fsync,
    Verify,
    Capture,
    Characterise,
    Replay,
    /// A name this version does not know (a run saved by a newer iocap), kept as it was.
    Other(String),
}

impl RunCommand {
    /// Every command this version names, in the command line's order.
    pub const KNOWN: [RunCommand; 14] = [
        RunCommand::Run,
        RunCommand::Sqlio,
        RunCommand::Diskspd,
        RunCommand::Suite,
        RunCommand::Saturate,
        RunCommand::Scaleup,
        RunCommand::Preflight,
        RunCommand::Cachescan,
        RunCommand::Cost,
        RunCommand::Fsync,
        RunCommand::Verify,
        RunCommand::Capture,
        RunCommand::Characterise,
        RunCommand::Replay,
    ];

    /// As the command line and the JSON name it: `run`, `sqlio`, ..., `characterise`.
    pub fn name(&self) -> &str {
        match self {
            RunCommand::Run => "run",
            RunCommand::Sqlio => "sqlio",
            RunCommand::Diskspd => "diskspd",
            RunCommand::Suite => "suite",
            RunCommand::Saturate => "saturate",
            RunCommand::Scaleup => "scaleup",
            RunCommand::Preflight => "preflight",
            RunCommand::Cachescan => "cachescan",
            RunCommand::Cost => "cost",
            RunCommand::Fsync => "fsync",
            RunCommand::Verify => "verify",
            RunCommand::Capture => "capture",
            RunCommand::Characterise => "characterise",
            RunCommand::Replay => "replay",
            RunCommand::Other(name) => name,
        }
    }
}

/// Any name: a known one is its variant, any other is kept as [`RunCommand::Other`].
impl From<String> for RunCommand {
    fn from(name: String) -> Self {
        Self::KNOWN
            .into_iter()
            .find(|c| c.name() == name)
            .unwrap_or(RunCommand::Other(name))
    }
}

impl From<RunCommand> for String {
    fn from(c: RunCommand) -> Self {
        match c {
            RunCommand::Other(name) => name,
            known => known.name().to_string(),
        }
    }
}

impl std::fmt::Display for RunCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name ever written reads back as its variant and is written as it was.
    #[test]
    fn names_are_the_serialised_values_and_parse_back() {
        let old = [
            "run",
            "sqlio",
            "diskspd",
            "suite",
            "saturate",
            "scaleup",
            "preflight",
            "cachescan",
            "cost",
            "fsync",
            "verify",
            "capture",
            "characterise",
            "replay",
        ];
        for (c, name) in RunCommand::KNOWN.into_iter().zip(old) {
            assert_eq!(serde_json::to_value(&c).unwrap(), name);
            let back: RunCommand = serde_json::from_value(name.into()).unwrap();
            assert_eq!(back, c);
            assert_eq!(c.to_string(), name);
        }
    }

    /// A newer version's command is kept, not refused: the run reads back and is saved as it was.
    #[test]
    fn an_unknown_name_is_kept() {
        let c: RunCommand = serde_json::from_value("fill".into()).unwrap();
        assert_eq!(c, RunCommand::Other("fill".into()));
        assert_eq!(serde_json::to_value(&c).unwrap(), "fill");
    }
}
