//! Whole-page evidence in the golden set, and what it does to the comparison: a span counts as
//! recalled only when one chunk holds it whole ([`crate::metrics`]), so a page is within reach
//! only of chunks at least as large as the page. The report says so beside the pick, with how
//! many page spans fit each swept size.

use std::collections::HashSet;
use std::str::FromStr;

use super::doc::Prose;
use super::texts::Texts;
use crate::golden::{Location, page_location};
use crate::select::{Selection, thousands};
use crate::tokenize::{TokenCounter, TokenizerKind};

/// The golden set's whole-page evidence spans.
#[derive(Debug, Clone, PartialEq)]
pub struct PageEvidence {
    /// Evidence spans that are a whole page of a document with pages (some location equals
    /// what `{"doc", "page"}` resolves to).
    pub spans: usize,
    /// Evidence spans in all.
    pub all_spans: usize,
    /// Questions with at least one page span.
    pub questions: usize,
    /// Questions in all.
    pub all_questions: usize,
    /// Each page span's length in the pick's size unit (its smallest location), ascending.
    pub sizes: Vec<usize>,
    /// The size unit (`tokens` or `words`) and the tokenizer counted with.
    pub unit: String,
    /// The tokenizer's name.
    pub tokenizer: String,
    /// The swept chunk sizes (in `unit`), ascending, each with the page spans that fit in it.
    pub reach: Vec<(usize, usize)>,
    /// Whether some configuration expands what it sends (`neighbours:N`, `parent:P`): its unit
    /// sent can hold a page that its chunk alone does not.
    pub expanded: bool,
}

/// The page spans of `texts`' golden set, sized with the tokenizer of `sel`'s pick; `None`
/// when no span is a whole page (or the tokenizer is unknown).
pub fn find(texts: &Texts<'_>, sel: &Selection) -> Option<PageEvidence> {
    let pages: HashSet<Location> = (texts.corpus.docs.iter().enumerate())
        .filter(|(_, doc)| !doc.pages.is_empty())
        .flat_map(|(d, doc)| {
            (1..=doc.pages.len()).filter_map(move |p| page_location(doc, d, p).ok())
        })
        .collect();
    if pages.is_empty() {
        return None;
    }
    let winner = sel.winner();
    let counter = TokenCounter::new(TokenizerKind::from_str(&winner.tokenizer).ok()?);
    let (mut spans, mut questions, mut sizes) = (0, 0, Vec::new());
    let all_spans = texts.golden.questions.iter().map(|q| q.spans.len()).sum();
    for q in &texts.golden.questions {
        let before = spans;
        for span in &q.spans {
            let size = span
                .locations
                .iter()
                .filter(|l| pages.contains(l))
                .map(|l| counter.count(texts.corpus.docs[l.doc].slice_chars(l.start, l.end)))
                .min();
            if let Some(size) = size {
                spans += 1;
                sizes.push(size);
            }
        }
        questions += usize::from(spans > before);
    }
    if spans == 0 {
        return None;
    }
    sizes.sort_unstable();
    let mut swept: Vec<usize> = (sel.configs.iter())
        .filter(|c| c.size_unit == winner.size_unit)
        .map(|c| c.chunk_size)
        .collect();
    swept.sort_unstable();
    swept.dedup();
    let reach = swept
        .into_iter()
        .map(|s| (s, sizes.partition_point(|&n| n <= s)))
        .collect();
    Some(PageEvidence {
        spans,
        all_spans,
        questions,
        all_questions: texts.golden.questions.len(),
        sizes,
        unit: winner.size_unit.clone(),
        tokenizer: winner.tokenizer.clone(),
        reach,
        expanded: (sel.configs.iter()).any(|c| !c.expand.is_empty() && c.expand != "none"),
    })
}

/// The report's fact: how many spans are pages, how large, how many fit each swept size, and
/// that page evidence favours chunks that hold a page.
pub fn fact(p: &PageEvidence) -> Prose {
    let (lo, hi) = (p.sizes[0], p.sizes[p.sizes.len() - 1]);
    let range = match lo == hi {
        true => thousands(lo as f64),
        false => format!("{}–{}", thousands(lo as f64), thousands(hi as f64)),
    };
    let reach: Vec<String> = (p.reach.iter())
        .map(|(s, n)| format!("{} → {n}", thousands(*s as f64)))
        .collect();
    Prose::new().b(Prose::text("Page evidence:")).t(format!(
        " {} of {} evidence spans (in {} of {} questions) are whole PDF pages, of {range} {} ({}). \
         A span counts only when one chunk holds it whole, so a chunk recalls a page only if the \
         page fits in its size; how many of the {} fit each swept size: {}. Page evidence \
         therefore favours configurations whose chunks hold a page, and their recall on it is not \
         a like-for-like comparison with recall on text evidence (sweep_questions.csv has each \
         question's).{}",
        p.spans,
        p.all_spans,
        p.questions,
        p.all_questions,
        p.unit,
        p.tokenizer,
        p.spans,
        reach.join(", "),
        match p.expanded {
            true =>
                " With an expansion the unit sent (a window of neighbours or a parent) can \
                     hold a page that its chunk alone does not: these counts bind only the \
                     configurations without one.",
            false => "",
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Corpus, Document};
    use crate::golden::{EvidenceSpan, GoldenSet, Origin, Question};
    use crate::report::doc::{Block, DocSection, to_markdown};
    use crate::select::tests::{Fake, tables};
    use crate::select::{SelectionSettings, select_cuts};

    #[test]
    fn whole_page_spans_are_counted_sized_and_set_against_the_swept_sizes() {
        // two pages: "Alpha page one." (4 cl100k tokens) and "Beta page two is longer than
        // that." (8), the second page's start after the blank line that joins them
        let mut pdf = Document::new(
            "f.pdf",
            "Alpha page one.\n\nBeta page two is longer than that.\n",
        );
        pdf.pages = vec![0, 17];
        let corpus =
            Corpus::from_documents("c", vec![pdf, Document::new("a.md", "Alpha page one.")]);
        let at = |doc, start, end| EvidenceSpan {
            locations: vec![Location { doc, start, end }],
        };
        let question = |id: &str, spans| Question {
            line: 1,
            id: id.into(),
            text: "q?".into(),
            spans,
            answer: None,
            question_type: None,
            origin: Origin::default(),
        };
        let golden = GoldenSet {
            path: "g.jsonl".into(),
            questions: vec![
                // page 1, and the same words in a.md (not a page; documents are in id order)
                question("q1", vec![at(1, 0, 15), at(0, 0, 15)]),
                // page 2
                question("q2", vec![at(1, 17, 51)]),
                // text inside page 2, not the whole page
                question("q3", vec![at(1, 17, 30)]),
            ],
            trimmed_spans: 0,
        };
        let fakes = [
            Fake::new("fixed-4", 4, 100.0, vec![1.; 3], vec![0.2; 3]),
            Fake::new("fixed-6", 6, 150.0, vec![1.; 3], vec![0.2; 3]),
            Fake::new("fixed-8", 8, 200.0, vec![1.; 3], vec![0.3; 3]),
        ];
        let (mut rows, questions) = tables(&fakes);
        for r in &mut rows {
            r.size_unit = "tokens".into();
        }
        let cuts = select_cuts(&rows, &questions, &SelectionSettings::default()).unwrap();
        let texts = Texts {
            corpus: &corpus,
            golden: &golden,
        };
        let found = find(&texts, &cuts.selections[0]).unwrap();
        assert_eq!(
            found,
            PageEvidence {
                spans: 2,
                all_spans: 4,
                questions: 2,
                all_questions: 3,
                sizes: vec![4, 8],
                unit: "tokens".into(),
                tokenizer: "cl100k_base".into(),
                reach: vec![(4, 1), (6, 1), (8, 2)],
                expanded: false,
            }
        );
        let md = to_markdown(&[DocSection::new("x", vec![Block::Para(fact(&found))])]);
        assert!(!md.contains("With an expansion"), "{md}");
        assert!(
            md.contains("**Page evidence:** 2 of 4 evidence spans (in 2 of 3 questions) are whole PDF pages, of 4–8 tokens (cl100k_base). A span counts only when one chunk holds it whole, so a chunk recalls a page only if the page fits in its size; how many of the 2 fit each swept size: 4 → 1, 6 → 1, 8 → 2. Page evidence therefore favours configurations whose chunks hold a page,"),
            "{md}"
        );
        // a grid with an expansion: the counts bind only the configurations without one
        let mut expanded = cuts.selections[0].clone();
        expanded.configs[0].expand = "parent:1024".into();
        let found = find(&texts, &expanded).unwrap();
        assert!(found.expanded);
        let md = to_markdown(&[DocSection::new("x", vec![Block::Para(fact(&found))])]);
        assert!(
            md.ends_with("With an expansion the unit sent (a window of neighbours or a parent) can hold a page that its chunk alone does not: these counts bind only the configurations without one.\n"),
            "{md}"
        );
        // no page spans: no fact
        let text_only = GoldenSet {
            questions: vec![question("q3", vec![at(1, 17, 30)])],
            ..golden.clone()
        };
        let texts = Texts {
            corpus: &corpus,
            golden: &text_only,
        };
        assert_eq!(find(&texts, &cuts.selections[0]), None);
    }
}
