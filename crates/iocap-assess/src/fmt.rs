//! Number formatting for the plain-language sentences: the model's (`iocap_model::figures`),
//! under the short names the verdicts use.

pub(crate) use iocap_model::figures::{
    binary_bytes as bytes, limit_ms, ms, signed_count as count, whole_pct as pct,
};
