//! Number and list formatting shared by the selection's reasons and diagnoses.

use super::types::ConfigSelection;

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

/// The first five of `configs` as `describe` shows them, joined by commas, then how many more
/// there are (`" and 3 more"`).
pub(crate) fn first_five(
    configs: &[&ConfigSelection],
    describe: impl Fn(&ConfigSelection) -> String,
) -> String {
    let shown: Vec<String> = configs.iter().take(5).map(|c| describe(c)).collect();
    let more = if configs.len() > 5 {
        format!(" and {} more", configs.len() - 5)
    } else {
        String::new()
    };
    format!("{}{}", shown.join(", "), more)
}
