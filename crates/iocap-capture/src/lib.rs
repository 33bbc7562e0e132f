//! Block requests recorded from the kernel, as the device saw them (placeholder: being built).
