//! What a trace says about itself: where it came from, when, on which host and devices, and
//! what was filtered. iocap's own file keeps it as JSON in its header (the same JSON the rest of
//! iocap writes, so a newer iocap may add fields and an older one ignores them); the imports
//! fill what their formats know.

use serde::{Deserialize, Serialize};

use crate::record::DevId;

/// The `source` names: where a trace's records came from.
pub mod source {
    pub const CAPTURE: &str = "capture";
    pub const BLKTRACE: &str = "blktrace";
    pub const FIO_IOLOG_V2: &str = "fio-iolog-v2";
    pub const FIO_IOLOG_V3: &str = "fio-iolog-v3";
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TraceMeta {
    /// One of [`source`]'s names (a string, so that a newer source reads as itself).
    pub source: String,
    /// When the trace started, RFC 3339; empty where unknown.
    pub started_at: String,
    pub host: String,
    /// The devices the records name (a record's `dev`), where known.
    pub devices: Vec<DeviceInfo>,
    /// What the user named: a device, a path, a file of another format.
    pub target: String,
    /// The filters the capture applied, as `comm=NAME` or `pid=N`.
    pub filters: Vec<String>,
    /// Known once the trace is complete (the trailer of iocap's file).
    pub duration_s: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// `major:minor` in JSON.
    #[serde(with = "dev_text")]
    pub dev: DevId,
    /// `nvme0n1`, or for fio's iolog the file name.
    pub name: String,
    #[serde(default)]
    pub size_bytes: Option<u64>,
}

/// Events the capture could not record: the ring buffer was full, or another cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LostCounts {
    pub ring_full: u64,
    pub other: u64,
}

impl LostCounts {
    pub fn total(&self) -> u64 {
        self.ring_full.saturating_add(self.other)
    }
}

/// What a finished trace file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TraceSummary {
    pub records: u64,
    /// Data chunks (not counting the trailer).
    pub chunks: u64,
    pub file_bytes: u64,
    pub duration_ns: u64,
    pub lost: LostCounts,
}

pub(crate) mod dev_text {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    use crate::record::DevId;

    pub fn serialize<S: Serializer>(dev: &DevId, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(dev)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DevId, D::Error> {
        let text = String::deserialize(d)?;
        let parsed = text
            .split_once(':')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
        match parsed {
            Some((major, minor)) => Ok(DevId { major, minor }),
            None => Err(D::Error::custom(format!(
                "device `{text}` is not major:minor"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_round_trips_as_json_with_devices_as_text() {
        let meta = TraceMeta {
            source: source::CAPTURE.into(),
            started_at: "2026-11-26T22:06:12+01:00".into(),
            host: "db1".into(),
            devices: vec![DeviceInfo {
                dev: DevId {
                    major: 259,
                    minor: 1,
                },
                name: "nvme0n1".into(),
                size_bytes: Some(1 << 40),
            }],
            target: "/var/lib/postgresql".into(),
            filters: vec!["comm=postgres".into()],
            duration_s: None,
        };
        let json = serde_json::to_string(&meta).unwrap();
        assert!(json.contains(r#""dev":"259:1""#), "{json}");
        assert_eq!(serde_json::from_str::<TraceMeta>(&json).unwrap(), meta);
        // a field from a newer iocap is ignored; a missing one takes its default
        let newer: TraceMeta = serde_json::from_str(r#"{"source":"x","new":1}"#).unwrap();
        assert_eq!(newer.source, "x");
        assert!(newer.devices.is_empty());
    }
}
