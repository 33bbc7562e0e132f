//! One durable write at a time, as `iocap fsync` measures them: how each log-flush method
//! (the model's `FsyncMethod`) opens the prepared file and makes a write durable, and what a
//! failed write means. Its own module because these are the measured calls themselves: the
//! loop that times them, the skips and the figures stay `iocap-fsync`'s.
//!
//! Linux reopens the file by its path with the method's flags and checks it is still the file
//! prepared; Windows reopens the prepared handle itself (`ReOpenFile`). Both have the same
//! items; [`Writer::write_durably`] is `#[inline]`, so the measuring loop inlines it across
//! the crate boundary as it did when the calls were fsync's. Each system's file is
//! `sys/<system>/durable.rs`.

pub use crate::parse::durable::OpenError;
pub use crate::sys::durable::{
    is_interrupted, is_not_offered, needs_alignment, Prepared, Writer, DIRECT, REFUSED,
};
