//! The CPU cost of I/O (skeleton; built under issue 7).
