//! Scales for the charts: linear, logarithmic and "nines" (percentile) axes over the data they
//! must show, widened to round bounds with "nice" ticks, and how tick values read. Apart from
//! the marks because this is where the arithmetic (and every guard against a zero range, NaN
//! or a non-positive value on a log scale) lives, and it is tested on its own.

use super::trim;

/// How tick values are written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TickFmt {
    /// 0, 500, 1k, 2.5k, 1.2M
    Si,
    /// Plain decimal, e.g. seconds.
    Plain,
    /// A latency held in µs, written in µs.
    Us,
    /// A latency held in µs, written in ms.
    Ms,
    /// A quantile (0..1) written as a percentile: 0, 90, 99, 99.9.
    Nines,
}

impl TickFmt {
    pub(crate) fn format(self, v: f64) -> String {
        match self {
            TickFmt::Si if v.abs() >= 1e6 => format!("{}M", trim(v / 1e6)),
            TickFmt::Si if v.abs() >= 1e3 => format!("{}k", trim(v / 1e3)),
            TickFmt::Si | TickFmt::Plain | TickFmt::Us => trim(v),
            TickFmt::Ms => trim(v / 1000.0),
            TickFmt::Nines => {
                let s = format!("{:.5}", v * 100.0);
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Linear,
    Log,
    /// Logarithmic with ticks at powers of two: queue depths, volume counts.
    Log2,
    /// Quantiles on `-log10(1 - q)`: 0 %, 90 %, 99 %, 99.9 % evenly spaced.
    Nines,
}

/// One axis: its scale, its range in data units and how its ticks read.
#[derive(Debug, Clone)]
pub(crate) struct Axis {
    pub label: String,
    kind: Kind,
    min: f64,
    max: f64,
    pub(super) fmt: TickFmt,
}

/// "Nice" numbers for steps: 1, 2, 2.5, 5 times a power of ten.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

fn finite_range(values: &[f64]) -> Option<(f64, f64)> {
    let mut it = values.iter().copied().filter(|v| v.is_finite());
    let first = it.next()?;
    Some(it.fold((first, first), |(lo, hi), v| (lo.min(v), hi.max(v))))
}

impl Axis {
    /// A linear axis over `values` and zero, widened to nice ticks.
    pub(crate) fn linear(label: &str, values: &[f64], fmt: TickFmt) -> Axis {
        let (lo, hi) = finite_range(values).unwrap_or((0.0, 1.0));
        let (mut lo, mut hi) = (lo.min(0.0), hi.max(0.0));
        if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
            let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
            hi += pad;
            if lo != 0.0 {
                lo -= pad;
            }
        }
        let step = nice_step((hi - lo) / 5.0);
        Axis {
            label: label.into(),
            kind: Kind::Linear,
            min: (lo / step).floor() * step,
            max: (hi / step).ceil() * step,
            fmt,
        }
    }

    /// A logarithmic axis over the positive `values`, widened to 1-2-5 bounds.
    pub(crate) fn log(label: &str, values: &[f64], fmt: TickFmt) -> Axis {
        let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
        let (lo, hi) = finite_range(&pos).unwrap_or((1.0, 10.0));
        let down = |v: f64| {
            let m = 10f64.powf(v.log10().floor());
            [5.0, 2.0, 1.0]
                .iter()
                .map(|k| k * m)
                .find(|b| *b <= v * 1.000_001)
                .unwrap_or(m)
        };
        let up = |v: f64| {
            let m = 10f64.powf(v.log10().floor());
            [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|k| k * m)
                .find(|b| *b >= v / 1.000_001)
                .unwrap_or(10.0 * m)
        };
        Axis::logarithmic(label, Kind::Log, (down(lo), up(hi)), 10.0, fmt)
    }

    /// A logarithmic axis over the positive `values` with ticks at powers of two (1, 2, 4, ...),
    /// widened to the powers of two around them.
    pub(crate) fn log2(label: &str, values: &[f64]) -> Axis {
        let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
        let (lo, hi) = finite_range(&pos).unwrap_or((1.0, 2.0));
        let min = 2f64.powf((lo.log2() + 1e-9).floor());
        let max = 2f64.powf((hi.log2() - 1e-9).ceil());
        Axis::logarithmic(label, Kind::Log2, (min, max), 2.0, TickFmt::Plain)
    }

    /// A logarithmic axis from `min` to `max`, or to `min` times `base` when that range is
    /// empty.
    fn logarithmic(
        label: &str,
        kind: Kind,
        (min, max): (f64, f64),
        base: f64,
        fmt: TickFmt,
    ) -> Axis {
        Axis {
            label: label.into(),
            kind,
            min,
            max: if max <= min { min * base } else { max },
            fmt,
        }
    }

    /// A percentile axis from 0 to `nines` nines (2: 99 %, 5: 99.999 %).
    pub(crate) fn nines(label: &str, nines: u32) -> Axis {
        Axis {
            label: label.into(),
            kind: Kind::Nines,
            min: 0.0,
            max: f64::from(nines.max(1)),
            fmt: TickFmt::Nines,
        }
    }

    /// Whether a value can be placed on this axis at all.
    pub(crate) fn accepts(&self, v: f64) -> bool {
        v.is_finite()
            && match self.kind {
                Kind::Linear => true,
                Kind::Log | Kind::Log2 => v > 0.0,
                Kind::Nines => (0.0..1.0).contains(&v),
            }
    }

    /// Where `v` falls, 0 at `min` and 1 at `max`, clamped.
    pub(super) fn frac(&self, v: f64) -> f64 {
        let f = match self.kind {
            Kind::Linear => (v - self.min) / (self.max - self.min),
            Kind::Log | Kind::Log2 => (v.ln() - self.min.ln()) / (self.max.ln() - self.min.ln()),
            Kind::Nines => -(1.0 - v).log10() / self.max,
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    pub(super) fn ticks(&self) -> Vec<f64> {
        match self.kind {
            Kind::Linear => {
                let step = nice_step((self.max - self.min) / 5.0);
                let n = ((self.max - self.min) / step).round() as i64;
                (0..=n.clamp(0, 50))
                    .map(|i| self.min + i as f64 * step)
                    .collect()
            }
            Kind::Log => {
                let (a, b) = (
                    self.min.log10().floor() as i32,
                    self.max.log10().ceil() as i32,
                );
                let mults: &[f64] = if b - a <= 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
                (a..=b)
                    .flat_map(|e| mults.iter().map(move |m| m * 10f64.powi(e)))
                    .filter(|v| *v >= self.min / 1.000_001 && *v <= self.max * 1.000_001)
                    .collect()
            }
            Kind::Log2 => {
                let (a, b) = (
                    self.min.log2().round() as i32,
                    self.max.log2().round() as i32,
                );
                let every = ((b - a) / 10 + 1).max(1) as usize;
                (a..=b.min(a + 60))
                    .step_by(every)
                    .map(|e| 2f64.powi(e))
                    .collect()
            }
            Kind::Nines => (0..=self.max as i32)
                .map(|k| 1.0 - 10f64.powi(-k))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_linear_ticks() {
        let a = Axis::linear("x", &[3.0, 97.0], TickFmt::Plain);
        assert_eq!((a.min, a.max), (0.0, 100.0));
        assert_eq!(a.ticks(), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        let a = Axis::linear("x", &[38_500.0, 41_700.0], TickFmt::Si);
        assert_eq!(a.min, 0.0);
        assert!(a.max >= 41_700.0 && a.max <= 50_000.0, "{}", a.max);
        assert_eq!(TickFmt::Si.format(40_000.0), "40k");
        assert_eq!(TickFmt::Si.format(2_500.0), "2.5k");
        assert_eq!(TickFmt::Si.format(1_200_000.0), "1.2M");
    }

    #[test]
    fn degenerate_ranges_do_not_divide_by_zero() {
        for vals in [
            &[][..],
            &[0.0][..],
            &[5.0, 5.0][..],
            &[f64::NAN, f64::INFINITY][..],
        ] {
            let a = Axis::linear("x", vals, TickFmt::Plain);
            assert!(a.max > a.min, "{vals:?}: {a:?}");
            assert!(a.frac(1.0).is_finite());
            let l = Axis::log("y", vals, TickFmt::Us);
            assert!(l.max > l.min && l.min > 0.0, "{vals:?}: {l:?}");
        }
    }

    #[test]
    fn log_and_nines_ticks() {
        let a = Axis::log("lat", &[130.0, 4_300.0], TickFmt::Us);
        assert_eq!((a.min, a.max), (100.0, 5000.0));
        assert_eq!(a.ticks(), vec![100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0]);
        let n = Axis::nines("p", 5);
        let labels: Vec<String> = n
            .ticks()
            .iter()
            .map(|t| TickFmt::Nines.format(*t))
            .collect();
        assert_eq!(labels, ["0", "90", "99", "99.9", "99.99", "99.999"]);
        assert!((n.frac(0.99) - 0.4).abs() < 1e-9);
        assert!(!n.accepts(1.0));
    }

    #[test]
    fn log2_ticks() {
        let a = Axis::log2("qd", &[1.0, 64.0]);
        assert_eq!((a.min, a.max), (1.0, 64.0));
        assert_eq!(a.ticks(), vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
        let a = Axis::log2("qd", &[3.0, 5.0]);
        assert_eq!((a.min, a.max), (2.0, 8.0));
        assert!((a.frac(4.0) - 0.5).abs() < 1e-9);
        let a = Axis::log2("qd", &[]);
        assert!(a.max > a.min && a.min > 0.0);
        let a = Axis::log2("qd", &[1.0, 1.0]);
        assert_eq!((a.min, a.max), (1.0, 2.0));
        assert_eq!(Axis::log2("qd", &[1.0, 65536.0]).ticks().len(), 9);
    }
}
