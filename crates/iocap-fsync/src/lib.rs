//! Log-flush methods compared (skeleton; built under issue 7).
