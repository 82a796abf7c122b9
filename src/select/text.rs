//! Number and list formatting shared by the selection's reasons and diagnoses.

use super::types::ConfigSelection;
use crate::stats::QUESTIONS_CAP;

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

pub(crate) use crate::numbers::thousands;

/// The questions-needed figure in words: "about 1,240 questions" up to
/// [`QUESTIONS_CAP`], "more questions are unlikely to settle this" above it or when it cannot
/// be computed.
pub(crate) fn questions_words(needed: Option<u64>) -> String {
    match needed {
        Some(q) if q <= QUESTIONS_CAP => format!("about {} questions", thousands(q as f64)),
        _ => "more questions are unlikely to settle this".into(),
    }
}

/// What the questions-needed figure means, for the sentences that give it: "if it were as good
/// as the best, about 310 questions in all would show it within δ (have 40)", or "more questions
/// are unlikely to settle this" above [`QUESTIONS_CAP`] or without a figure.
pub(crate) fn planning_words(needed: Option<u64>, have: usize) -> String {
    match needed {
        Some(q) if q as usize <= have => format!(
            "if it were as good as the best, about {} questions in all would show it within δ, \
             no more than the {} here: the data lean against its being as good",
            thousands(q as f64),
            thousands(have as f64)
        ),
        Some(q) if q <= QUESTIONS_CAP => format!(
            "if it were as good as the best, about {} questions in all would show it within δ \
             (have {})",
            thousands(q as f64),
            thousands(have as f64)
        ),
        _ => "more questions are unlikely to settle this".into(),
    }
}

/// "P(worse by more than δ) = 0.83" from the data, or nothing for the best.
pub(crate) fn worse_words(p_worse: Option<f64>) -> Option<String> {
    p_worse.map(|p| format!("P(worse by more than δ) = {p:.2}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(8971.4), "8,971");
        assert_eq!(thousands(999.6), "1,000");
        assert_eq!(thousands(12.0), "12");
        assert_eq!(thousands(1234567.0), "1,234,567");
        assert_eq!(thousands(-2500.0), "-2,500");
    }

    #[test]
    fn questions_above_the_cap_are_not_a_number() {
        assert_eq!(questions_words(Some(9_999)), "about 9,999 questions");
        assert_eq!(questions_words(Some(10_000)), "about 10,000 questions");
        assert_eq!(
            questions_words(Some(10_001)),
            "more questions are unlikely to settle this"
        );
        assert_eq!(
            questions_words(None),
            "more questions are unlikely to settle this"
        );
        assert_eq!(
            planning_words(Some(1_469), 1_276),
            "if it were as good as the best, about 1,469 questions in all would show it within \
             δ (have 1,276)"
        );
        assert_eq!(
            planning_words(Some(268), 276),
            "if it were as good as the best, about 268 questions in all would show it within δ, \
             no more than the 276 here: the data lean against its being as good"
        );
        assert_eq!(
            planning_words(Some(10_001), 276),
            "more questions are unlikely to settle this"
        );
    }
}
