//! A FUSE pass-through file system that injects storage faults (skeleton; built under issue 6).
