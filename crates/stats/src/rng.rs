//! The seeded random streams of [`lab_basis::rng`], which every resample draws from, and a
//! standard normal deviate drawn from them.

pub use lab_basis::rng::{
    Generator, Stream, Xoshiro256PlusPlus, fnv1a64, splitmix64, stream, stream_of,
};
use rand::Rng;

/// A standard normal deviate by the Box–Muller transform (Box & Muller, Ann. Math. Stat.
/// 29:610, 1958), using two uniforms from `rng` (the sine variate is discarded, so each call
/// consumes exactly two `f64`s — simple and reproducible).
pub fn standard_normal<R: Rng>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.r#gen::<f64>(); // (0, 1], so ln is finite
    let u2: f64 = rng.r#gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_normal_moments() {
        // 200,000 draws: mean 0 ± 0.01, variance 1 ± 0.02, P(|Z| < 1.96) = 0.95 ± 0.003.
        let mut rng = stream(1, "normal");
        let z: Vec<f64> = (0..200_000).map(|_| standard_normal(&mut rng)).collect();
        let m = z.iter().sum::<f64>() / z.len() as f64;
        let v = z.iter().map(|x| (x - m).powi(2)).sum::<f64>() / z.len() as f64;
        let inside = z.iter().filter(|x| x.abs() < 1.96).count() as f64 / z.len() as f64;
        assert!(m.abs() < 0.01 && (v - 1.0).abs() < 0.02 && (inside - 0.95).abs() < 0.003);
    }
}
