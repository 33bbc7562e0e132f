//! Where a recorded request lands on the target: its offset and length aligned for O_DIRECT,
//! and, when the trace spans more than the target holds, mapped into the target's range by
//! wrapping (offset modulo the range: locality and distances kept, far regions folded onto
//! each other) or scaling (offset × range / span: the spread over the device kept, distances
//! shrunk). Without a mapping a trace that does not fit is refused, saying what each would do.

use iocap_model::human_bytes;

/// How offsets beyond the target are brought into its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapMode {
    Wrap,
    Scale,
}

impl MapMode {
    pub fn name(self) -> &'static str {
        match self {
            MapMode::Wrap => "wrap",
            MapMode::Scale => "scale",
        }
    }

    /// The mode of a name ([`MapMode::name`]).
    pub fn parse(s: &str) -> Option<Self> {
        [MapMode::Wrap, MapMode::Scale]
            .into_iter()
            .find(|m| m.name() == s)
    }
}

/// Maps offsets of a trace spanning `span_bytes` into a target of `range_bytes`.
#[derive(Debug, Clone, Copy)]
pub struct Mapper {
    pub mode: Option<MapMode>,
    span_bytes: u64,
    range_bytes: u64,
    align_bytes: u64,
}

impl Mapper {
    /// The mapper for a trace spanning `span_bytes` on a range of `range_bytes`, aligning to
    /// `align_bytes` (a power of two). `Err`: the trace does not fit and no mode was given; the
    /// message says what each mode would do.
    pub fn new(
        mode: Option<MapMode>,
        span_bytes: u64,
        range_bytes: u64,
        align_bytes: u64,
        target: &str,
    ) -> Result<Self, String> {
        let align_bytes = align_bytes.max(512);
        if range_bytes < align_bytes {
            return Err(format!(
                "{target} holds {range_bytes} B, less than one aligned block of {align_bytes} B"
            ));
        }
        if mode.is_none() && span_bytes > range_bytes {
            return Err(does_not_fit(span_bytes, range_bytes, target));
        }
        Ok(Self {
            mode: if span_bytes > range_bytes { mode } else { None },
            span_bytes: span_bytes.max(1),
            range_bytes: range_bytes / align_bytes * align_bytes,
            align_bytes,
        })
    }

    /// The mapping in use: `none` when the trace fits.
    pub fn name(&self) -> &'static str {
        self.mode.map_or("none", MapMode::name)
    }

    /// The aligned offset and length on the target of a request at `offset` of `len` bytes. The
    /// length is rounded up to the alignment (at most the range); the request stays inside the
    /// range.
    pub fn map(&self, offset: u64, len: u32) -> (u64, u32) {
        let a = self.align_bytes;
        let len = (u64::from(len).max(1).div_ceil(a) * a).min(self.range_bytes);
        let at = match self.mode {
            None => offset,
            Some(MapMode::Wrap) => offset % self.range_bytes,
            Some(MapMode::Scale) => {
                (u128::from(offset) * u128::from(self.range_bytes) / u128::from(self.span_bytes))
                    as u64
            }
        };
        let at = (at / a * a).min(self.range_bytes - len);
        (at, len as u32)
    }
}

/// The refusal of a trace larger than its target, naming both mappings.
fn does_not_fit(span: u64, range: u64, target: &str) -> String {
    format!(
        "the trace spans {} (its last request ends there) but {target} holds {}; refusing to \
         guess. Give --map wrap (offsets modulo {}: each region's pattern and distances are \
         kept, regions {} apart land on the same place) or --map scale (offsets × {:.3}: the \
         spread over the device is kept, distances between requests shrink {:.1}×), or a \
         larger target",
        human_bytes(span),
        human_bytes(range),
        human_bytes(range),
        human_bytes(range),
        range as f64 / span as f64,
        span as f64 / range as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// `--map` takes exactly the names the result records.
    #[test]
    fn each_mode_parses_back_from_its_name() {
        for m in [MapMode::Wrap, MapMode::Scale] {
            assert_eq!(MapMode::parse(m.name()), Some(m));
        }
        assert_eq!(MapMode::parse("none"), None);
    }

    #[test]
    fn a_trace_that_fits_keeps_its_offsets_aligned() {
        let m = Mapper::new(None, 8 * MIB, 16 * MIB, 4096, "t").unwrap();
        assert_eq!(m.name(), "none");
        assert_eq!(m.map(5 * MIB + 512, 512), (5 * MIB, 4096));
        assert_eq!(m.map(12288, 8192), (12288, 8192));
    }

    #[test]
    fn too_large_without_a_mapping_is_refused_naming_both() {
        let e = Mapper::new(None, 64 * MIB, 16 * MIB, 4096, "/x").unwrap_err();
        assert!(e.contains("--map wrap") && e.contains("--map scale"), "{e}");
        assert!(
            e.contains("64M") && e.contains("16M") && e.contains("4.0×"),
            "{e}"
        );
    }

    #[test]
    fn wrap_folds_offsets_modulo_the_range() {
        let m = Mapper::new(Some(MapMode::Wrap), 64 * MIB, 16 * MIB, 4096, "t").unwrap();
        assert_eq!(m.name(), "wrap");
        assert_eq!(m.map(40 * MIB + 8192, 4096), (8 * MIB + 8192, 4096));
        // the end of the range: pulled back so the request stays inside
        assert_eq!(m.map(32 * MIB - 4096, 65536), (16 * MIB - 65536, 65536));
    }

    #[test]
    fn scale_keeps_the_spread() {
        let m = Mapper::new(Some(MapMode::Scale), 64 * MIB, 16 * MIB, 4096, "t").unwrap();
        assert_eq!(m.map(0, 4096), (0, 4096));
        assert_eq!(m.map(32 * MIB, 4096), (8 * MIB, 4096));
        assert_eq!(m.map(64 * MIB - 4096, 4096), (16 * MIB - 4096, 4096));
    }

    #[test]
    fn a_mapping_is_not_applied_when_the_trace_fits() {
        let m = Mapper::new(Some(MapMode::Scale), 4 * MIB, 16 * MIB, 4096, "t").unwrap();
        assert_eq!(m.name(), "none");
        assert_eq!(m.map(2 * MIB, 4096), (2 * MIB, 4096));
    }
}
