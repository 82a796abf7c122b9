//! Property test over every strategy: generated documents of all three file types mixing prose,
//! dollar amounts, emoji, CJK, Markdown tables, code fences, and Markdown and reStructuredText
//! headings. `semantic` runs on a deterministic fake embedding (a hash of each sentence).

use std::collections::HashMap;

use proptest::prelude::{
    ProptestConfig, Strategy as _, TestCaseError, any, prop, prop_assert, prop_assert_eq,
    prop_oneof, proptest,
};
use unicode_segmentation::UnicodeSegmentation;

use super::semantic::{SentenceVectors, sentences};
use super::*;

const WORDS: &[&str] = &[
    "the",
    "refund",
    "window",
    "is",
    "fourteen",
    "days",
    "Zoë’s",
    "café",
    "—",
    "sync",
    "Larkspur",
    "2.31",
    "checklist",
    "east",
    "plant",
    "room",
    "(see",
    "below)",
    "über",
];
const EMOJI: &[&str] = &["🔧", "🙂", "👨‍👩‍👧", "🇩🇰", "Ω"];
const CJK: &[&str] = &[
    "日本語の文章です。",
    "数据同步已完成。",
    "한국어 문장입니다.",
];

fn sentence() -> impl proptest::strategy::Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..12).prop_map(|w| w.join(" ") + ".")
}

fn block() -> impl proptest::strategy::Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(sentence(), 1..5).prop_map(|s| s.join(" ")),
        2 => (any::<u16>(), any::<u16>(), sentence()).prop_map(|(a, b, s)| format!(
            "Revenue rose by ${a} million, then ${b}.{} {s}", b % 100
        )),
        1 => (prop::sample::select(EMOJI), prop::sample::select(EMOJI))
            .prop_map(|(a, b)| format!("{a}{b}{a}")),
        1 => prop::collection::vec(prop::sample::select(CJK), 1..4).prop_map(|c| c.concat()),
        1 => prop::collection::vec((prop::sample::select(WORDS), any::<u8>()), 1..6)
            .prop_map(|rows| {
                let mut t = "| City | Days | Cost |\n|------|------|------|\n".to_string();
                for (w, n) in rows {
                    t.push_str(&format!("| {w} | {n} | ${n}.50 |\n"));
                }
                t
            }),
        1 => prop::sample::select(WORDS).prop_map(|w| format!("```\nlet {w} = $x;\n```")),
        1 => prop::sample::select(WORDS).prop_map(|w| format!("## {w} notes")),
        1 => (prop::sample::select(WORDS), prop::sample::select(&['=', '-', '~', '^'][..]))
            .prop_map(|(w, c)| {
                let title = format!("{w} section");
                let line: String = std::iter::repeat_n(c, title.chars().count()).collect();
                format!("{title}\n{line}")
            }),
        1 => prop::sample::select(WORDS).prop_map(|w| format!("=====\n {w}\n=====")),
    ]
}

fn document() -> impl proptest::strategy::Strategy<Value = (String, String)> {
    (
        prop::sample::select(&["md", "rst", "txt"][..]),
        prop::collection::vec(
            (
                block(),
                prop::sample::select(&["\n\n", "\n", " ", "\n\n\n  "][..]),
            ),
            1..10,
        ),
    )
        .prop_map(|(ext, blocks)| {
            let text: String = blocks.into_iter().map(|(b, sep)| b + sep).collect();
            (format!("doc.{ext}"), text)
        })
}

/// Unit vectors from a hash of each sentence: deterministic, and unrelated sentences far apart.
struct FakeVectors(HashMap<String, Vec<f32>>);

impl FakeVectors {
    fn new(text: &str) -> Self {
        let mut map = HashMap::new();
        for (s, e) in sentences(text) {
            let sentence = &text[s..e];
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            let mut v = Vec::with_capacity(8);
            for b in sentence.bytes().chain(0..8u8) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                if v.len() < 8 {
                    v.push((h % 1000) as f32 / 1000.0 - 0.5);
                }
            }
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
            map.insert(sentence.to_string(), v.iter().map(|x| x / norm).collect());
        }
        FakeVectors(map)
    }
}

impl SentenceVectors for FakeVectors {
    fn sentence_vector(&self, sentence: &str) -> Option<&[f32]> {
        self.0.get(sentence).map(Vec::as_slice)
    }
}

fn check(
    id: &str,
    text: &str,
    params: &ChunkParams,
    kind: TokenizerKind,
) -> Result<(), TestCaseError> {
    let counter = TokenCounter::new(kind);
    let mut doc = Document::new(id, text);
    doc.pages = super::tests::paragraph_pages(&doc.text.clone());
    let vectors = FakeVectors::new(&doc.text);
    let ctx = ChunkContext {
        sentence_vectors: Some(&vectors),
        ..ChunkContext::default()
    };
    let stream = TokenStream::new(&doc.text, counter);
    let chunks = chunk_document(&doc, 0, &stream, params, counter, &ctx)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let corpus = Corpus::from_documents("p", vec![doc.clone()]);
    let text = doc.text.as_str();
    let mut covered = vec![false; text.len()];
    let mut over = 0;
    for (i, c) in chunks.iter().enumerate() {
        let t = c.text(&corpus);
        let at = format!("chunk {i} {t:?}");
        prop_assert_eq!(c.ordinal, i);
        prop_assert!(
            c.byte_start < c.byte_end && c.byte_end <= text.len(),
            "{at}: inside"
        );
        prop_assert_eq!(doc.byte_to_char(c.byte_start), c.start);
        prop_assert!(!t.trim().is_empty(), "{at}: empty after trimming");
        if i > 0 {
            let p = &chunks[i - 1];
            prop_assert!(
                p.byte_start < c.byte_start,
                "{at}: starts after the previous"
            );
            prop_assert!(p.byte_end < c.byte_end, "{at}: ends after the previous");
        }
        prop_assert_eq!(c.tokens, counter.count(t), "{}: own count", at);
        let size_units = if params.strategy == Strategy::Words {
            t.split_whitespace().count()
        } else {
            c.tokens
        };
        // n_oversize counts what a chunk carries too (a split table's header rows)
        let carried = if params.strategy == Strategy::Words {
            size_units
        } else {
            c.tokens + c.carried_tokens
        };
        over += usize::from(carried > params.chunk_size);
        // a piece of a split table is sized with the header it carries
        if size_units > params.chunk_size || carried > params.chunk_size {
            prop_assert_eq!(
                t.trim().graphemes(true).count(),
                1,
                "{}: over the size yet splittable",
                at
            );
        }
        covered[c.byte_start..c.byte_end].fill(true);
    }
    prop_assert_eq!(
        oversize(&corpus, &chunks, params, counter.kind(), None).1,
        over
    );
    for (i, ch) in text.char_indices() {
        prop_assert!(
            ch.is_whitespace() || covered[i],
            "byte {i} ({ch:?}) is in no chunk"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_strategy_keeps_order_bounds_sizes_and_coverage(
        (id, text) in document(),
        size in prop_oneof![1..8usize, 8..64usize],
        overlap_share in 0.0..0.6f64,
        words_tokenizer in prop::bool::weighted(0.2),
    ) {
        let kind = if words_tokenizer { TokenizerKind::Words } else { TokenizerKind::Cl100kBase };
        let overlap = ((size as f64) * overlap_share) as usize;
        for strategy in Strategy::BUILT_IN {
            let params = ChunkParams { strategy, chunk_size: size, chunk_overlap: overlap };
            check(&id, &text, &params, kind)
                .map_err(|e| TestCaseError::fail(format!("{strategy} {size}/{overlap}: {e}")))?;
        }
    }
}
