//! iocap's integrity and crash-consistency verifier (skeleton; built under issue 6).
