//! The cost model `µs per I/O = fixed + per_KB × KB`, fitted by ordinary least squares over the
//! block sizes. Never returns NaN or infinity: points that are not finite are left out, and a
//! coefficient that cannot be told (no point, a single size) is `None`.

/// The fitted line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// `None` when no usable point remains.
    pub fixed: Option<f64>,
    /// `None` with fewer than two distinct sizes.
    pub per_kb: Option<f64>,
    /// `None` with fewer than three points or when the costs do not vary.
    pub r2: Option<f64>,
}

impl Fit {
    /// The modelled cost of one I/O of `size_kb`, when both coefficients are known.
    pub fn at(&self, size_kb: f64) -> Option<f64> {
        Some(self.fixed? + self.per_kb? * size_kb)
    }
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Fits `y = a + b x` to `(x, y)` points (x: KiB per I/O, y: µs per I/O).
pub fn fit(points: &[(f64, f64)]) -> Fit {
    let p: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let none = Fit {
        fixed: None,
        per_kb: None,
        r2: None,
    };
    if p.is_empty() {
        return none;
    }
    let n = p.len() as f64;
    let mx = p.iter().map(|q| q.0).sum::<f64>() / n;
    let my = p.iter().map(|q| q.1).sum::<f64>() / n;
    let sxx: f64 = p.iter().map(|q| (q.0 - mx).powi(2)).sum();
    let sxy: f64 = p.iter().map(|q| (q.0 - mx) * (q.1 - my)).sum();
    let syy: f64 = p.iter().map(|q| (q.1 - my).powi(2)).sum();
    // one size (or sizes equal to rounding): the mean cost, no slope
    if sxx <= f64::EPSILON * mx.abs().max(1.0) * n {
        return Fit {
            fixed: finite(my),
            ..none
        };
    }
    let b = sxy / sxx;
    let a = my - b * mx;
    let r2 = if p.len() >= 3 && syy > 0.0 {
        let ss_res: f64 = p.iter().map(|q| (q.1 - (a + b * q.0)).powi(2)).sum();
        finite(1.0 - ss_res / syy)
    } else {
        None
    };
    Fit {
        fixed: finite(a),
        per_kb: finite(b),
        r2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn recovers_an_exact_line() {
        let pts: Vec<(f64, f64)> = [4.0, 8.0, 64.0, 256.0, 1024.0]
            .iter()
            .map(|&x| (x, 12.5 + 0.04 * x))
            .collect();
        let f = fit(&pts);
        assert!(close(f.fixed.unwrap(), 12.5, 1e-9), "{f:?}");
        assert!(close(f.per_kb.unwrap(), 0.04, 1e-12), "{f:?}");
        assert!(close(f.r2.unwrap(), 1.0, 1e-12));
        assert!(close(f.at(8.0).unwrap(), 12.82, 1e-9));
    }

    #[test]
    fn noisy_data_within_tolerance() {
        // ±5 % deterministic "noise" around 20 + 0.1 x
        let noise = [1.05, 0.95, 1.03, 0.97, 1.02, 0.98, 1.04, 0.96];
        let sizes = [4.0, 8.0, 16.0, 64.0, 128.0, 256.0, 512.0, 1024.0];
        let pts: Vec<(f64, f64)> = sizes
            .iter()
            .zip(noise)
            .map(|(&x, k)| (x, (20.0 + 0.1 * x) * k))
            .collect();
        let f = fit(&pts);
        assert!(close(f.fixed.unwrap(), 20.0, 3.0), "{f:?}");
        assert!(close(f.per_kb.unwrap(), 0.1, 0.01), "{f:?}");
        assert!(f.r2.unwrap() > 0.95, "{f:?}");
    }

    #[test]
    fn degenerate_inputs_give_no_nan() {
        let empty = fit(&[]);
        assert_eq!((empty.fixed, empty.per_kb, empty.r2), (None, None, None));
        let one_size = fit(&[(8.0, 10.0), (8.0, 12.0)]);
        assert_eq!(one_size.fixed, Some(11.0));
        assert_eq!((one_size.per_kb, one_size.r2), (None, None));
        assert_eq!(one_size.at(8.0), None);
        // a point without I/O is infinite or NaN: left out
        let zero_ios = fit(&[(8.0, f64::NAN), (64.0, f64::INFINITY), (4.0, 9.0)]);
        assert_eq!(zero_ios.fixed, Some(9.0));
        assert_eq!(zero_ios.per_kb, None);
        // two points: a line, but no R²
        let two = fit(&[(4.0, 10.0), (8.0, 12.0)]);
        assert_eq!(two.per_kb, Some(0.5));
        assert_eq!(two.r2, None);
        // flat costs: no variance to explain
        let flat = fit(&[(4.0, 10.0), (8.0, 10.0), (64.0, 10.0)]);
        assert_eq!((flat.per_kb, flat.r2), (Some(0.0), None));
    }
}
