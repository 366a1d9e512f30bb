//! The standard error of a sample median: the asymptotic one, √(π/2) · σ / √n for normal data
//! (Kendall & Stuart, *The Advanced Theory of Statistics* vol. 1, §10.10), σ estimated as
//! 1.4826 × MAD (Rousseeuw & Croux 1993).

/// The standard error of the median of `n` values whose median absolute deviation is `mad`.
pub fn median_standard_error(mad: f64, n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let sigma = 1.4826 * mad;
    (std::f64::consts::PI / 2.0).sqrt() * sigma / (n as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_error_is_kendall_and_stuarts() {
        // σ = 1.4826 × 0.1 = 0.14826; √(π/2) · σ / √30 = 0.033925…
        let se = median_standard_error(0.1, 30);
        assert!((se - 0.033_925_3).abs() < 1e-6, "{se}");
        assert_eq!(median_standard_error(0.1, 0), 0.0);
    }
}
