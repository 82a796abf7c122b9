//! Number formatting shared by the selection's reasons and diagnoses.

/// `x` with three decimals.
pub(crate) fn fmt3(x: f64) -> String {
    format!("{x:.3}")
}

/// `x` with up to four decimals and no trailing zeros (0.03 → "0.03", 3.0 → "3").
pub(crate) fn trim(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A p-value with its relation: "= 0.039", or "< 0.001".
pub(crate) fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("= {p:.3}")
    }
}
