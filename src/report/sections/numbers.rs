//! How the report writes numbers.

/// A number with up to four decimals, trailing zeros dropped.
pub(super) fn fmt_num(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A value with its interval: `0.950 [0.875, 1.000]`.
pub(super) fn with_ci(x: f64, lo: f64, hi: f64) -> String {
    format!("{x:.3} [{lo:.3}, {hi:.3}]")
}

/// A share as a whole percentage: 0.9 → "90%".
pub(super) fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::fmt_p;

    #[test]
    fn numbers_drop_trailing_zeros() {
        assert_eq!(fmt_num(3.0000000000000004), "3");
        assert_eq!(fmt_num(0.02), "0.02");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_p(0.0386), "= 0.039");
        assert_eq!(with_ci(-0.4, -0.59, -0.3), "-0.400 [-0.590, -0.300]");
        assert_eq!(fmt_p(0.0001), "< 0.001");
        assert_eq!(pct(0.9), "90%");
    }
}
