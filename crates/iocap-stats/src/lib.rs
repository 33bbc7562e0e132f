//! The statistics behind "how sure is this figure": a confidence interval of the mean of an
//! autocorrelated series (batch means), the coefficient of variation, the trend from the first
//! third to the last, Welch's test for a difference between two series, and quartiles.
//!
//! Why batch means: a test's per-second IOPS are not independent draws. A cache filling, a
//! neighbour's burst or a hypervisor's scheduling lasts several seconds, so consecutive seconds
//! are alike and the plain `s/√n` interval is too narrow, by a lot. Grouping the seconds into a
//! few batches and taking the interval over the batch means absorbs that correlation, as long as
//! a batch is longer than the correlation (the usual rule, about √n batches, is used here).
//!
//! Everything is a pure function of its input. No input panics or yields NaN inside a `Some`:
//! too few samples, a zero mean or a non-finite value give `None`.

mod dist;

pub use dist::{student_t_cdf, student_t_quantile};

/// A confidence interval of a mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    pub half_width: f64,
    /// Number of batches the interval was taken over.
    pub batches: usize,
}

/// Welch's unequal-variance t-test of two samples, two-sided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    pub mean_a: f64,
    pub mean_b: f64,
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided: the chance of a difference at least this large if the means were equal.
    pub p_value: f64,
}

/// The most batches an interval uses: beyond this the t quantile barely changes and longer
/// batches absorb more correlation.
pub const MAX_BATCHES: usize = 30;

fn finite(xs: &[f64]) -> bool {
    xs.iter().all(|x| x.is_finite())
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance (n - 1); 0 for one value.
fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

/// The batch means of `xs`: k = ⌊√n⌋ batches (2 to [`MAX_BATCHES`]) of consecutive samples, the
/// first `n mod k` batches one sample longer. `None` below three samples.
pub fn batch_means(xs: &[f64]) -> Option<Vec<f64>> {
    let n = xs.len();
    if n < 3 || !finite(xs) {
        return None;
    }
    let k = ((n as f64).sqrt().floor() as usize)
        .clamp(2, MAX_BATCHES)
        .min(n);
    let (base, extra) = (n / k, n % k);
    let mut out = Vec::with_capacity(k);
    let mut at = 0;
    for b in 0..k {
        let len = base + usize::from(b < extra);
        out.push(mean(&xs[at..at + len]));
        at += len;
    }
    Some(out)
}

/// The `confidence` (e.g. 0.95) interval of the mean of an autocorrelated series, by
/// non-overlapping batch means; `None` below three samples or for a confidence outside (0, 1).
///
/// The half-width is the wider of the batch-means interval and the interval that takes the
/// samples as independent. Positive correlation (the usual kind: a slow spell lasts) widens
/// the first; a periodic series (a checkpoint every few seconds) can make a few batch means
/// agree by chance, which the second catches.
pub fn batch_means_ci(xs: &[f64], confidence: f64) -> Option<Interval> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let b = batch_means(xs)?;
    let k = b.len();
    let m = mean(xs);
    let p = (1.0 + confidence) / 2.0;
    let batched = student_t_quantile(p, (k - 1) as f64) * (variance(&b) / k as f64).sqrt();
    let n = xs.len();
    let plain = student_t_quantile(p, (n - 1) as f64) * (variance(xs) / n as f64).sqrt();
    let half = batched.max(plain);
    half.is_finite().then_some(Interval {
        mean: m,
        lo: m - half,
        hi: m + half,
        half_width: half,
        batches: k,
    })
}

/// Sample standard deviation over mean; `None` below two samples or for a zero mean.
pub fn cv(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 || !finite(xs) {
        return None;
    }
    let m = mean(xs);
    let c = variance(xs).sqrt() / m.abs();
    (m != 0.0 && c.is_finite()).then_some(c)
}

/// Mean of the last third over mean of the first third, minus one (0.1: the last third 10 %
/// higher); `None` below three samples or when the first third's mean is zero.
pub fn trend(xs: &[f64]) -> Option<f64> {
    let n = xs.len();
    if n < 3 || !finite(xs) {
        return None;
    }
    let third = n / 3;
    let (first, last) = (mean(&xs[..third]), mean(&xs[n - third..]));
    let t = last / first - 1.0;
    (first != 0.0 && t.is_finite()).then_some(t)
}

/// Welch's test from each side's mean, sample variance and count.
pub fn welch_from_summary(a: (f64, f64, usize), b: (f64, f64, usize)) -> Option<Welch> {
    let ((ma, va, na), (mb, vb, nb)) = (a, b);
    if na < 2 || nb < 2 || ![ma, va, mb, vb].iter().all(|x| x.is_finite()) {
        return None;
    }
    let (sa, sb) = (va / na as f64, vb / nb as f64);
    let se2 = sa + sb;
    let welch = |t: f64, df: f64, p: f64| Welch {
        mean_a: ma,
        mean_b: mb,
        t,
        df,
        p_value: p,
    };
    if se2 == 0.0 {
        // no spread on either side: any difference is certain, none is nothing
        let df = (na + nb - 2) as f64;
        return Some(if ma == mb {
            welch(0.0, df, 1.0)
        } else {
            welch((ma - mb).signum() * f64::INFINITY, df, 0.0)
        });
    }
    let t = (ma - mb) / se2.sqrt();
    // Welch–Satterthwaite on each side's share of the variance, which cannot overflow where
    // squaring the variances themselves would
    let (fa, fb) = (sa / se2, sb / se2);
    let df = 1.0 / (fa * fa / (na - 1) as f64 + fb * fb / (nb - 1) as f64);
    let p = 2.0 * (1.0 - student_t_cdf(t.abs(), df));
    (!t.is_nan() && df.is_finite() && !p.is_nan()).then(|| welch(t, df, p.clamp(0.0, 1.0)))
}

/// Welch's test of two samples.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if !finite(a) || !finite(b) || a.len() < 2 || b.len() < 2 {
        return None;
    }
    welch_from_summary(
        (mean(a), variance(a), a.len()),
        (mean(b), variance(b), b.len()),
    )
}

/// Welch's test on the batch means of two autocorrelated series (as [`batch_means_ci`] groups
/// them), so that per-second samples are not taken as independent.
pub fn welch_batch_means(a: &[f64], b: &[f64]) -> Option<Welch> {
    welch(&batch_means(a)?, &batch_means(b)?)
}

/// First quartile, median and third quartile, by linear interpolation between order statistics
/// (numpy's default); `None` for an empty or non-finite sample.
pub fn quartiles(xs: &[f64]) -> Option<(f64, f64, f64)> {
    if xs.is_empty() || !finite(xs) {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let h = p * (v.len() - 1) as f64;
        let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
        let f = h - lo as f64;
        // weighted, not v[lo] + f·(v[hi] − v[lo]): the difference can overflow
        v[lo] * (1.0 - f) + v[hi] * f
    };
    Some((q(0.25), q(0.5), q(0.75)))
}

#[cfg(test)]
mod tests;
