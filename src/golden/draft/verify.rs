//! Checking one drafted item against the corpus: every quote found in its document (exactly, or
//! after collapsing whitespace, stored with the document's own text and offsets), not too many,
//! each long enough and found once in the whole corpus, and a question not copied from them.
//! A near miss is rejected, never rewritten.

use serde_json::Value;

use super::sample::Passage;
use super::words::copied_share;
use crate::corpus::Corpus;
use crate::golden::Finder;
use crate::golden::resolve::{excerpt, trim_edges};

/// Why a drafted item was left out (the first filter it failed, in this order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// The call failed, or the reply lacks a question, an answer or a quote.
    NoReply,
    /// More quotes than allowed.
    TooManyQuotes,
    /// A quote is not in the passage's document, even after collapsing whitespace.
    QuoteNotFound,
    /// A quote under the minimum length (code points, after trimming).
    EvidenceTooShort,
    /// A quote found more than once in the corpus: retrieving any copy would count.
    EvidenceNotUnique,
    /// The question repeats its evidence word for word.
    CopiesEvidence,
    /// The answer is not in the evidence and the model check said the evidence does not
    /// support it.
    AnswerUnsupported,
    /// The question is nearly the same as one kept before it.
    NearDuplicate,
}

impl Reason {
    /// Every reason, in filter order.
    pub const ALL: [Reason; 8] = [
        Reason::NoReply,
        Reason::TooManyQuotes,
        Reason::QuoteNotFound,
        Reason::EvidenceTooShort,
        Reason::EvidenceNotUnique,
        Reason::CopiesEvidence,
        Reason::AnswerUnsupported,
        Reason::NearDuplicate,
    ];

    /// Its name in the summary and the drafting CSV.
    pub fn name(self) -> &'static str {
        match self {
            Reason::NoReply => "no_reply",
            Reason::TooManyQuotes => "too_many_quotes",
            Reason::QuoteNotFound => "quote_not_found",
            Reason::EvidenceTooShort => "evidence_too_short",
            Reason::EvidenceNotUnique => "evidence_not_unique",
            Reason::CopiesEvidence => "copies_evidence",
            Reason::AnswerUnsupported => "answer_unsupported",
            Reason::NearDuplicate => "near_duplicate",
        }
    }
}

/// A rejection: the reason and what exactly failed.
pub type Rejection = (Reason, String);

/// A drafted item's fields as the model wrote them.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The question.
    pub question: String,
    /// The reference answer.
    pub answer: String,
    /// The quotes, as written.
    pub quotes: Vec<String>,
}

impl Reply {
    /// Reads `{"question", "answer", "evidence": [strings]}`.
    ///
    /// # Errors
    /// A [`Reason::NoReply`] rejection when a field is missing, blank or of another type.
    pub fn from_json(value: &Value) -> Result<Reply, Rejection> {
        let text = |key: &str| {
            value[key]
                .as_str()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .ok_or((Reason::NoReply, format!("reply without a {key}")))
        };
        let quotes: Vec<String> = value["evidence"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        if quotes.is_empty() {
            return Err((Reason::NoReply, "reply without a quote".into()));
        }
        Ok(Reply {
            question: text("question")?,
            answer: text("answer")?,
            quotes,
        })
    }
}

/// One quote located in the corpus: the document's own text at its code-point range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    /// Index into the corpus's documents.
    pub doc: usize,
    /// First code point.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
    /// The document's text there (which may differ from the model's in whitespace).
    pub text: String,
    /// Whether it was found only after collapsing whitespace.
    pub forgiven: bool,
}

/// The limits the checks apply.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most quotes an item may have.
    pub max_quotes: usize,
    /// Fewest code points a quote may have.
    pub min_evidence_chars: usize,
    /// Largest [`copied_share`] of the question in its evidence.
    pub max_copied_share: f64,
}

/// Locates every quote of `reply` in the passage's document and applies the filters up to
/// [`Reason::CopiesEvidence`].
///
/// # Errors
/// The first filter that fails, with the quote or the measure that failed it.
pub fn check(
    reply: &Reply,
    passage: &Passage,
    corpus: &Corpus,
    finder: &mut Finder<'_>,
    limits: Limits,
) -> Result<Vec<Quote>, Rejection> {
    if reply.quotes.len() > limits.max_quotes {
        return Err((
            Reason::TooManyQuotes,
            format!(
                "{} quotes (at most {})",
                reply.quotes.len(),
                limits.max_quotes
            ),
        ));
    }
    let doc = &corpus.docs[passage.doc];
    let mut quotes = Vec::with_capacity(reply.quotes.len());
    for q in &reply.quotes {
        let Some((locations, forgiven)) = finder.find(q, passage.doc..passage.doc + 1) else {
            return Err((
                Reason::QuoteNotFound,
                format!("{:?} is not in {}", excerpt(q), doc.id),
            ));
        };
        let (trimmed, _) = trim_edges(corpus, vec![locations[0]]);
        let loc = trimmed[0];
        quotes.push(Quote {
            doc: passage.doc,
            start: loc.start,
            end: loc.end,
            text: doc.slice_chars(loc.start, loc.end).to_string(),
            forgiven,
        });
    }
    for q in &quotes {
        let chars = q.text.chars().count();
        if chars < limits.min_evidence_chars {
            return Err((
                Reason::EvidenceTooShort,
                format!(
                    "{:?} has {chars} characters (at least {})",
                    q.text, limits.min_evidence_chars
                ),
            ));
        }
        let found = finder
            .find(&q.text, 0..corpus.docs.len())
            .map_or(0, |(l, _)| l.len());
        if found > 1 {
            return Err((
                Reason::EvidenceNotUnique,
                format!("{:?} occurs {found} times in the corpus", excerpt(&q.text)),
            ));
        }
    }
    let evidence: Vec<&str> = quotes.iter().map(|q| q.text.as_str()).collect();
    let share = copied_share(&reply.question, &evidence.join(" \u{2029} "));
    if share > limits.max_copied_share {
        return Err((
            Reason::CopiesEvidence,
            format!(
                "{:.0}% of the question's word trigrams are in its evidence (at most {:.0}%)",
                100.0 * share,
                100.0 * limits.max_copied_share
            ),
        ));
    }
    Ok(quotes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Document;
    use crate::golden::draft::sample::{Kind, Length, Position};

    const A: &str = "Refunds take fourteen days from the date of delivery.\nPaid refunds go back to the card.\nShort one.";
    const B: &str = "Paid refunds go back to the card.";

    fn passage() -> Passage {
        Passage {
            doc: 0,
            start: 0,
            end: A.chars().count(),
            position: Position::Start,
            kind: Kind::Prose,
            length: Length::Short,
        }
    }

    fn reply(question: &str, quotes: &[&str]) -> Reply {
        Reply {
            question: question.into(),
            answer: "a".into(),
            quotes: quotes.iter().map(|q| q.to_string()).collect(),
        }
    }

    fn reason(question: &str, quotes: &[&str]) -> Result<Vec<Quote>, Reason> {
        let corpus = Corpus::from_documents(
            "root",
            vec![Document::new("a.md", A), Document::new("b.md", B)],
        );
        let mut finder = Finder::new(&corpus);
        let limits = Limits {
            max_quotes: 2,
            min_evidence_chars: 25,
            max_copied_share: 0.5,
        };
        check(
            &reply(question, quotes),
            &passage(),
            &corpus,
            &mut finder,
            limits,
        )
        .map_err(|(r, _)| r)
    }

    #[test]
    fn each_filter_rejects_what_it_names_and_a_respaced_quote_keeps_the_true_text() {
        let q = "How long until my money is back?";
        let kept = reason(
            q,
            &["Refunds take fourteen days from the date of delivery."],
        )
        .unwrap();
        assert_eq!(
            (kept[0].start, kept[0].end, kept[0].forgiven),
            (0, 53, false)
        );
        let respaced = reason(
            q,
            &["  Refunds take fourteen   days from the date of delivery. Paid"],
        )
        .unwrap();
        assert_eq!(
            respaced[0].text,
            "Refunds take fourteen days from the date of delivery.\nPaid"
        );
        assert!(respaced[0].forgiven);
        assert_eq!(reason(q, &["x", "y", "z"]), Err(Reason::TooManyQuotes));
        assert_eq!(
            reason(q, &["Refunds take fifteen days from the date of delivery."]),
            Err(Reason::QuoteNotFound)
        );
        assert_eq!(reason(q, &["Short one."]), Err(Reason::EvidenceTooShort));
        // In a.md and in b.md: retrieving either copy would count.
        assert_eq!(
            reason(q, &["Paid refunds go back to the card."]),
            Err(Reason::EvidenceNotUnique)
        );
        assert_eq!(
            reason(
                "Refunds take fourteen days from the date of delivery?",
                &["Refunds take fourteen days from the date of delivery."]
            ),
            Err(Reason::CopiesEvidence)
        );
    }
}
