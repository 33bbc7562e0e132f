//! How the result's enums get their names. Each enum serialises to the same word it always had
//! in the JSON, the store and the views; [`names!`] writes, from one list of `Variant => "name"`
//! pairs, the enum's `ALL`, `name` (the JSON word), `parse` (the word back) and `Display` (the
//! word), so the list is written once beside the enum. The serde attributes on the enum must
//! give the same words; the test below checks every enum that uses it.
//!
//! A set that grows with iocap (a finding of the OS counters' check, an fsync method) is kept
//! open in the JSON: [`open_names!`] adds an `Other(String)` variant, serialised through
//! `String`, so a run saved by a newer iocap, with a word this version does not know, still
//! loads and shows that word (as [`crate::RunCommand`] does).

/// `ALL`, `name`, `parse` and `Display` for fieldless enums, from their `Variant => "name"` pairs.
macro_rules! names {
    ($($t:ident { $($v:ident => $n:literal),+ $(,)? })*) => {$(
        impl $t {
            /// Every variant, in the order of the list.
            pub const ALL: [$t; [$($n),+].len()] = [$($t::$v),+];

            /// The word the JSON, the store and the views use.
            pub const fn name(self) -> &'static str {
                match self {
                    $($t::$v => $n),+
                }
            }

            /// The variant named `s`, exactly.
            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.into_iter().find(|x| x.name() == s)
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    )*};
}

/// An enum whose set grows with iocap, with an `Other(String)` for a word this version does not
/// know: `KNOWN`, `name`, `Display`, and the conversions from and to `String` that serde uses
/// (`#[serde(from = "String", into = "String")]` on the enum).
macro_rules! open_names {
    ($t:ident { $($v:ident => $n:literal),+ $(,)? }) => {
        impl $t {
            /// Every word this version knows, in the order of the list.
            pub const KNOWN: [$t; [$($n),+].len()] = [$($t::$v),+];

            /// The word the JSON, the store and the views use.
            pub fn name(&self) -> &str {
                match self {
                    $($t::$v => $n,)+
                    $t::Other(word) => word,
                }
            }
        }

        /// Any word: a known one is its variant, any other is kept as `Other`.
        impl From<String> for $t {
            fn from(word: String) -> Self {
                Self::KNOWN
                    .into_iter()
                    .find(|k| k.name() == word)
                    .unwrap_or($t::Other(word))
            }
        }

        impl From<$t> for String {
            fn from(k: $t) -> String {
                match k {
                    $t::Other(word) => word,
                    known => known.name().to_string(),
                }
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

pub(crate) use {names, open_names};

#[cfg(test)]
mod tests {
    use crate::*;
    use serde::{de::DeserializeOwned, Serialize};
    use std::fmt::Debug;

    /// What serde writes is the name, and the name reads back as the variant.
    fn same_words<T: Serialize + DeserializeOwned + PartialEq + Debug + std::fmt::Display>(
        all: &[T],
    ) {
        for v in all {
            let json = serde_json::to_value(v).unwrap();
            assert_eq!(json.as_str(), Some(v.to_string().as_str()), "{v:?}");
            assert_eq!(&serde_json::from_value::<T>(json).unwrap(), v);
        }
    }

    #[test]
    fn every_enum_serialises_to_its_name() {
        same_words(&CostMatrix::ALL);
        same_words(&CacheMode::ALL);
        same_words(&IoDirection::ALL);
        same_words(&Accounting::ALL);
        same_words(&AnswerKind::ALL);
        same_words(&VerifyMode::ALL);
        same_words(&VerifyOp::ALL);
        same_words(&TargetKind::ALL);
        same_words(&FaultOp::ALL);
        same_words(&request::Op::ALL);
        same_words(&FindingKind::KNOWN);
        same_words(&[FindingKind::Other("later_kind".into())]);
    }
}
