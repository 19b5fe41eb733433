//! Summary statistics over latency samples, in milliseconds.
//!
//! Used by the load tester to print a report after each run. The samples
//! are never mutated: functions that need sorted data sort a copy.

/// Arithmetic mean, or `None` for no samples.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// Sample variance (n - 1 in the denominator), or `None` under two samples.
pub fn variance(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values)?;
    let squares: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    Some(squares / (values.len() - 1) as f64)
}

pub fn std_dev(values: &[f64]) -> Option<f64> {
    variance(values).map(f64::sqrt)
}

fn sorted_copy(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    sorted
}

/// The `p`-th percentile (0 to 100) with linear interpolation between the
/// two nearest ranks, as numpy's default does.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    let sorted = sorted_copy(values);
    let rank = (p.clamp(0.0, 100.0) / 100.0) * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let frac = rank - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// Averages of every run of `window` consecutive samples, in order.
pub fn moving_average(values: &[f64], window: usize) -> Vec<f64> {
    let mut out = Vec::new();
    if window == 0 || window > values.len() {
        return out;
    }
    for start in 0..values.len() - window {
        let sum: f64 = values[start..start + window].iter().sum();
        out.push(sum / window as f64);
    }
    out
}

/// Counts of samples per bucket of `width` ms: `(bucket_start, count)`,
/// for the buckets from the smallest sample's to the largest's.
pub fn histogram(values: &[f64], width: f64) -> Vec<(f64, usize)> {
    if values.is_empty() || width <= 0.0 {
        return Vec::new();
    }
    let sorted = sorted_copy(values);
    let first = (sorted[0] / width).floor();
    let last = (sorted[sorted.len() - 1] / width).floor();
    let mut counts = vec![0usize; (last - first) as usize + 1];
    for v in &sorted {
        counts[((v / width).floor() - first) as usize] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, n)| ((first + i as f64) * width, n))
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub count: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// Everything the report prints, or `None` when there are no samples.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let sorted = sorted_copy(values);
    let (&min, &max) = (sorted.first()?, sorted.last()?);
    Some(Summary {
        count: values.len(),
        min,
        max,
        mean: mean(values)?,
        p50: percentile(values, 50.0),
        p95: percentile(values, 95.0),
        p99: percentile(values, 99.0),
    })
}

/// One line of the report: `n=100 min=1.0 p50=5.0 p95=9.5 p99=9.9 max=10.0`.
pub fn format_summary(s: &Summary) -> String {
    format!(
        "n={} min={:.1} p50={:.1} p95={:.1} p99={:.1} max={:.1}",
        s.count, s.min, s.p50, s.p95, s.p99, s.max
    )
}
