//! Parsers of numeric flags whose out-of-range value would silently turn a check off (a NaN
//! compares false with everything, so `--max-cost nan` would allow any spend): each refuses such
//! a value as a usage error (exit 2) saying the valid range. `--max-cost`'s is
//! [`crate::budget::max_cost_usd`].

/// A share or similarity threshold: a number from 0 to 1.
///
/// # Errors
/// The range, for clap to print after the flag's name and value.
pub fn unit_share(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err("must be a number from 0 to 1".into()),
    }
}

/// A count that must be at least 1.
///
/// # Errors
/// The range, for clap to print after the flag's name and value.
pub fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err("must be a whole number, at least 1".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_outside_zero_to_one_and_zero_counts_are_refused() {
        for bad in ["nan", "-0.1", "1.01", "inf"] {
            assert!(unit_share(bad).is_err(), "{bad}");
        }
        assert_eq!(unit_share("1"), Ok(1.0));
        assert_eq!(unit_share("0"), Ok(0.0));
        assert!(at_least_one("0").is_err());
        assert_eq!(at_least_one("3"), Ok(3));
    }
}
