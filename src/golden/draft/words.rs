//! Word measures of the drafting filters: how much of a question is copied from its evidence,
//! and how alike two questions are.

use std::collections::HashSet;

/// Words too common to say what a question is about (left out of [`jaccard`]).
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "in", "is", "it", "of", "on", "or", "the", "to", "what", "when", "where", "which", "who",
    "why", "with", "you", "your",
];

/// The lower-cased words of `text`: runs of letters and digits.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn ngrams(words: &[String], n: usize) -> Vec<&[String]> {
    words.windows(n).collect()
}

/// The share (0 to 1) of the question's word trigrams (bigrams or words for a question of fewer
/// than three words) that also occur in the evidence: 1 when the question is a stretch of the
/// evidence, near 0 when it is asked in other words. Shared key terms alone stay low ("What is
/// the refund window?" against "The refund window is fourteen days." is 1/3).
pub fn copied_share(question: &str, evidence: &str) -> f64 {
    let q = words(question);
    let e = words(evidence);
    let n = q.len().clamp(1, 3);
    let grams = ngrams(&q, n);
    if grams.is_empty() {
        return 0.0;
    }
    let have: HashSet<&[String]> = ngrams(&e, n).into_iter().collect();
    grams.iter().filter(|g| have.contains(*g)).count() as f64 / grams.len() as f64
}

/// Word Jaccard similarity (0 to 1) of two questions: shared distinct words over all distinct
/// words, stopwords left out; 0 when either has no word left.
pub fn jaccard(a: &str, b: &str) -> f64 {
    let set = |t: &str| -> HashSet<String> {
        words(t)
            .into_iter()
            .filter(|w| !STOPWORDS.contains(&w.as_str()))
            .collect()
    };
    let (a, b) = (set(a), set(b));
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_asked_in_other_words_shares_few_trigrams_and_a_copy_shares_all() {
        let evidence = "The refund window is fourteen days from delivery.";
        assert!((copied_share("What is the refund window?", evidence) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            copied_share("The refund window is fourteen days?", evidence),
            1.0
        );
        assert_eq!(copied_share("Refunds?", evidence), 0.0);
        assert_eq!(copied_share("", evidence), 0.0);
    }

    #[test]
    fn jaccard_ignores_stopwords_and_case() {
        // {refund, window} against {long, refund, window}: 2 of 3.
        let j = jaccard(
            "What is the refund window?",
            "How long is the Refund window?",
        );
        assert!((j - 2.0 / 3.0).abs() < 1e-12, "{j}");
        assert_eq!(jaccard("What is it?", "Who is it?"), 0.0);
    }
}
