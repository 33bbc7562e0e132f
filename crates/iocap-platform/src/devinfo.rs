//! What the system says about a target's device: its size and logical block, the alignment
//! direct I/O needs, free space, its device and file system, whether it spins, and whether a
//! device is in use. Every function degrades to a safe answer when a value cannot be read.
//!
//! Both systems have `block_device_size`, `block_device_logical_block`, `file_dio_alignment`,
//! `free_bytes`, `device_and_fs` and `rotational`, and say whether `device_and_fs` names a
//! block device at all (`NAMES_BLOCK_DEVICE`: Linux does, Windows never). Linux asks whether a
//! block device is in use by its number (`block_device_in_use`: holders, partitions, mounts,
//! swap); Windows by its path (`device_in_use`: a file system on the volume or on one of the
//! disk's volumes), and also reads a disk's counters (`disk_performance`) and the disks under
//! a file (`disks_of`) for the OS-counter cross-check. Each system's file is
//! `sys/<system>/devinfo.rs`.

pub use crate::sys::devinfo::*;
