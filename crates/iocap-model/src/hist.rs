//! Latency histograms in a form that survives storage: HdrHistogram's V2 format, deflated and
//! base64-encoded, so a saved or exported result keeps its whole distribution. From it any
//! percentile can be recomputed later, and the histograms of several runs can be added up, which
//! stored percentiles alone would never allow (the p99 of two runs is not the mean of their p99s).
//!
//! The encoding is the one HdrHistogram's Java, Go and Python ports read, so the histograms can
//! also be analysed with their tools.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Encodes a histogram (values in nanoseconds) as base64 of its compressed V2 form.
pub fn encode_hist(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("serialising into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

/// Decodes what [`encode_hist`] wrote; a clear error for anything else.
pub fn decode_hist(s: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map_err(|e| format!("latency histogram is not valid base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("latency histogram cannot be decoded: {e:?}"))
}

/// The value at quantile `q` (0..=1) in microseconds, as the engine reports percentiles: the
/// middle of the bucket, kept inside the recorded extremes.
pub fn quantile_us(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    let v = h.value_at_quantile(q);
    let lo = h.min();
    let hi = h.max();
    h.median_equivalent(v).clamp(lo.min(hi), hi) as f64 / 1000.0
}

/// The value at quantile `q` in microseconds kept inside `min_us..=max_us`, the exact extremes
/// a result states: the histogram's own extremes are the edges of their buckets, which can lie
/// past the exact ones, so a high percentile read from it alone could exceed the stated max.
/// Every view that reads a percentile from a stored histogram reads it through this.
pub fn quantile_within_us(h: &Histogram<u64>, q: f64, min_us: f64, max_us: f64) -> f64 {
    let v = quantile_us(h, q);
    if min_us <= max_us {
        v.clamp(min_us, max_us)
    } else {
        v
    }
}

/// The mean in microseconds of the fastest `keep` share (0..=1) of the recorded values: a mean
/// that a few stalls (a descheduled thread, a hiccup of the host) do not move, while a share of
/// slow values larger than `1 - keep` still does. NaN for an empty histogram.
pub fn trimmed_mean_us(h: &Histogram<u64>, keep: f64) -> f64 {
    let want = ((h.len() as f64) * keep.clamp(0.0, 1.0)).ceil() as u64;
    if want == 0 {
        return f64::NAN;
    }
    let (mut n, mut sum) = (0u64, 0f64);
    for v in h.iter_recorded() {
        let take = v.count_at_value().min(want - n);
        sum += take as f64 * h.median_equivalent(v.value_iterated_to()) as f64;
        n += take;
        if n >= want {
            break;
        }
    }
    sum / n as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_mean_drops_only_the_slowest_share() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        h.record_n(10_000, 980).unwrap();
        h.record_n(5_000_000, 20).unwrap();
        let plain = h.mean() / 1000.0;
        assert!(plain > 100.0, "{plain}");
        let t = trimmed_mean_us(&h, 0.98);
        assert!((t - 10.0).abs() < 0.1, "{t}");
        // half slow: the trimmed mean still rises with them
        h.record_n(5_000_000, 960).unwrap();
        assert!(trimmed_mean_us(&h, 0.98) > 2000.0);
        assert!(trimmed_mean_us(&Histogram::<u64>::new(3).unwrap(), 0.98).is_nan());
    }

    #[test]
    fn round_trip_keeps_every_count() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 2).unwrap();
        for v in 1..=10_000u64 {
            h.record(v * 1000).unwrap();
        }
        let s = encode_hist(&h);
        assert!(s.len() < 4000, "{} bytes", s.len());
        let back = decode_hist(&s).unwrap();
        assert_eq!(back.len(), 10_000);
        assert_eq!(back, h);
        let p99 = quantile_us(&back, 0.99);
        assert!((p99 - 9900.0).abs() / 9900.0 < 0.01, "{p99}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode_hist("not base64!").is_err());
        assert!(decode_hist("aGVsbG8gd29ybGQ=").is_err());
        assert!(decode_hist("").is_err());
    }
}
