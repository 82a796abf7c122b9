//! Invariants every strategy must keep, checked over a Markdown fixture with nested and setext
//! headings, a code fence, a table and non-ASCII text; plus hand-checked cases per strategy.

use super::headings::{PathTracker, headings};
use super::*;
use crate::tokenize::{TokenCounter, TokenizerKind};

const DOC: &str = "# Larkspur handbook

Larkspur keeps “Zoë’s café” files in sync — for €12 a month 🙂. It runs on Linux and macOS.

## Billing

Invoices are issued on the first day of each month. Refunds take 14 days.

### Partial refunds

Partial refunds are prorated by the day. They appear on the next invoice.

```toml
# not a heading: inside a fence
[sync]
interval = 300
```

| Plan | Seats | Price |
|------|-------|-------|
| Team | 25    | €12   |
| Business | 100 | €30 |

Release notes
=============

Version 2.31 fixed the sync loop. Version 2.30 added sharing.

Known issues
------------

Large uploads may stall on slow links.
";

fn doc() -> Document {
    Document::new("handbook.md", DOC)
}

fn chunks_for(strategy: Strategy, size: usize, overlap: usize) -> Vec<Chunk> {
    let params = ChunkParams {
        strategy,
        chunk_size: size,
        chunk_overlap: overlap,
    };
    params.validate().unwrap();
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    let d = doc();
    chunk_document(
        &d,
        0,
        &TokenStream::new(&d.text, counter),
        &params,
        counter,
        &ChunkContext::default(),
    )
    .unwrap()
}

#[test]
fn every_strategy_keeps_offsets_order_coverage_and_size() {
    let d = doc();
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    // `semantic` needs sentence embeddings; it has its own tests in semantic.rs.
    for strategy in Strategy::ALL
        .into_iter()
        .filter(|s| *s != Strategy::Semantic)
    {
        for (size, overlap) in [(8, 0), (16, 4), (48, 7), (200, 30)] {
            let chunks = chunks_for(strategy, size, overlap);
            assert!(!chunks.is_empty(), "{strategy} {size}");
            let mut covered = vec![false; d.text.len()];
            for (i, c) in chunks.iter().enumerate() {
                assert_eq!(c.ordinal, i);
                // Byte and code-point offsets agree and slice the same text.
                assert_eq!(d.byte_to_char(c.byte_start), c.start);
                assert_eq!(d.byte_to_char(c.byte_end), c.end);
                assert_eq!(
                    d.slice_chars(c.start, c.end),
                    &d.text[c.byte_start..c.byte_end]
                );
                let text = &d.text[c.byte_start..c.byte_end];
                if strategy != Strategy::Fixed {
                    assert_eq!(text, text.trim(), "{strategy} {size}: chunks are trimmed");
                }
                // Counted in the document's token stream; encoding the chunk alone can differ
                // by a token where a boundary cuts one.
                let alone = counter.count(text);
                assert!(
                    alone.abs_diff(c.tokens) <= 1,
                    "{strategy} {size}: {alone} vs {}",
                    c.tokens
                );
                if strategy != Strategy::Words {
                    assert!(
                        c.tokens <= size,
                        "{strategy} {size}: chunk {i} has {} tokens: {text:?}",
                        c.tokens
                    );
                }
                if i > 0 {
                    assert!(
                        chunks[i - 1].start <= c.start,
                        "{strategy} {size}: in order"
                    );
                }
                covered[c.byte_start..c.byte_end]
                    .iter_mut()
                    .for_each(|b| *b = true);
            }
            for (i, ch) in d.text.char_indices() {
                assert!(
                    ch.is_whitespace() || covered[i],
                    "{strategy} {size}: byte {i} ({ch:?}) is in no chunk"
                );
            }
        }
    }
}

#[test]
fn words_windows_follow_the_seed_harness() {
    // 10 words, size 4, overlap 1: starts 0, 3, 6 (range(0, max(1, 10 - 1), 3)).
    let d = Document::new("w.txt", "a b c d e f g h i j");
    let params = ChunkParams {
        strategy: Strategy::Words,
        chunk_size: 4,
        chunk_overlap: 1,
    };
    let words = TokenCounter::new(TokenizerKind::Words);
    let chunks = chunk_document(
        &d,
        0,
        &TokenStream::new(&d.text, words),
        &params,
        words,
        &ChunkContext::default(),
    )
    .unwrap();
    let texts: Vec<&str> = chunks
        .iter()
        .map(|c| &d.text[c.byte_start..c.byte_end])
        .collect();
    assert_eq!(texts, vec!["a b c d", "d e f g", "g h i j"]);
    assert_eq!(
        chunks.iter().map(|c| c.tokens).collect::<Vec<_>>(),
        vec![4, 4, 4]
    );
}

#[test]
fn fixed_windows_have_the_requested_overlap_in_tokens() {
    let chunks = chunks_for(Strategy::Fixed, 16, 4);
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    let d = doc();
    // Consecutive windows share text (about 4 tokens; BPE may merge at the trimmed edges).
    for w in chunks.windows(2) {
        assert!(w[0].byte_end > w[1].byte_start);
        let shared = counter.count(&d.text[w[1].byte_start..w[0].byte_end]);
        assert!((3..=5).contains(&shared), "shared {shared}");
    }
}

#[test]
fn markdown_headings_start_chunks_and_fences_and_tables_stay_whole() {
    let d = doc();
    let chunks = chunks_for(Strategy::Markdown, 48, 0);
    let starts: Vec<usize> = chunks.iter().map(|c| c.byte_start).collect();
    for h in headings(DOC) {
        assert!(
            starts.contains(&h.byte),
            "heading {:?} starts a chunk",
            h.title
        );
    }
    let fence = DOC.find("```toml").unwrap();
    let fence_end = DOC.find("interval = 300\n```").unwrap() + "interval = 300\n```".len();
    let table = DOC.find("| Plan").unwrap();
    let table_end = DOC.find("| €30 |").unwrap() + "| €30 |".len();
    for (s, e) in [(fence, fence_end), (table, table_end)] {
        assert!(
            chunks.iter().any(|c| c.byte_start <= s && e <= c.byte_end),
            "{:?} is inside one chunk",
            &d.text[s..e]
        );
    }
}

#[test]
fn heading_paths_follow_nesting_setext_and_ignore_fences() {
    let hs = headings(DOC);
    let titles: Vec<(u8, &str)> = hs.iter().map(|h| (h.level, h.title.as_str())).collect();
    assert_eq!(
        titles,
        vec![
            (1, "Larkspur handbook"),
            (2, "Billing"),
            (3, "Partial refunds"),
            (1, "Release notes"),
            (2, "Known issues"),
        ]
    );
    let mut paths = PathTracker::new(&hs);
    assert_eq!(
        paths.path_at(DOC.find("Larkspur keeps").unwrap()),
        vec!["Larkspur handbook"]
    );
    assert_eq!(
        paths.path_at(DOC.find("interval = 300").unwrap()),
        vec!["Larkspur handbook", "Billing", "Partial refunds"]
    );
    assert_eq!(
        paths.path_at(DOC.find("Large uploads").unwrap()),
        vec!["Release notes", "Known issues"]
    );
    let chunks = chunks_for(Strategy::Markdown, 48, 0);
    let last = chunks.last().unwrap();
    assert_eq!(last.heading_path, vec!["Release notes", "Known issues"]);
}

#[test]
fn sentence_chunks_hold_whole_sentences() {
    let d = doc();
    let chunks = chunks_for(Strategy::Sentence, 40, 0);
    let s = DOC.find("Invoices are issued").unwrap();
    let e = DOC.find("Refunds take 14 days.").unwrap() + "Refunds take 14 days.".len();
    assert!(chunks.iter().any(|c| c.byte_start <= s && e <= c.byte_end));
    for c in &chunks {
        let text = &d.text[c.byte_start..c.byte_end];
        assert!(
            !text.starts_with("are "),
            "no chunk starts mid-sentence: {text:?}"
        );
    }
}

#[test]
fn overlap_not_below_size_is_refused() {
    let params = ChunkParams {
        strategy: Strategy::Recursive,
        chunk_size: 32,
        chunk_overlap: 32,
    };
    assert_eq!(
        params.validate(),
        Err(ChunkError::OverlapTooLarge {
            size: 32,
            overlap: 32
        })
    );
}

#[test]
fn chunk_ids_are_stable() {
    let corpus = Corpus::from_documents("x", vec![doc()]);
    let tokens = CorpusTokens::new(&corpus, TokenizerKind::Cl100kBase);
    let params = ChunkParams {
        strategy: Strategy::Recursive,
        chunk_size: 32,
        chunk_overlap: 4,
    };
    let a = chunk_corpus(&corpus, &tokens, &params, &ChunkContext::default()).unwrap();
    let b = chunk_corpus(&corpus, &tokens, &params, &ChunkContext::default()).unwrap();
    assert_eq!(a, b);
    assert_eq!(a[2].id(&corpus), "handbook.md#2");
}

#[test]
fn prefixes_follow_nesting_and_setext_and_ignore_fenced_hashes() {
    use super::enrich::{ContextMap, Prefix, enrich};
    let corpus = Corpus::from_documents("t", vec![doc()]);
    let tokens = CorpusTokens::new(&corpus, TokenizerKind::Cl100kBase);
    let params = ChunkParams {
        strategy: Strategy::Markdown,
        chunk_size: 48,
        chunk_overlap: 0,
    };
    let plain = chunk_corpus(&corpus, &tokens, &params, &ChunkContext::default()).unwrap();
    let with = |prefix| {
        let mut chunks = plain.clone();
        enrich(
            &corpus,
            tokens.counter(),
            prefix,
            &mut chunks,
            &ContextMap::new(),
        )
        .unwrap();
        chunks
    };
    let find = |chunks: &[Chunk], needle: &str| -> String {
        chunks
            .iter()
            .find(|c| c.text(&corpus).contains(needle))
            .unwrap_or_else(|| panic!("no chunk holds {needle:?}"))
            .prefix
            .clone()
    };
    let heads = with(Prefix::HeadingPath);
    assert_eq!(find(&heads, "Larkspur keeps"), "Larkspur handbook");
    assert_eq!(
        find(&heads, "interval = 300"),
        "Larkspur handbook > Billing > Partial refunds"
    );
    // setext headings (=== level 1, --- level 2) start a new path
    assert_eq!(
        find(&heads, "Large uploads"),
        "Release notes > Known issues"
    );
    // the `# not a heading` line inside the code fence never becomes a heading
    assert!(heads.iter().all(|c| !c.prefix.contains("not a heading")));
    // title + path: the title is not repeated when the path starts with it
    let both = with(Prefix::TitleHeading);
    assert_eq!(
        find(&both, "interval = 300"),
        "Larkspur handbook > Billing > Partial refunds"
    );
    assert_eq!(
        find(&both, "Large uploads"),
        "Larkspur handbook > Release notes > Known issues"
    );
    let titles = with(Prefix::Title);
    assert!(titles.iter().all(|c| c.prefix == "Larkspur handbook"));
    // ranges and text token counts are those of the unprefixed chunks
    for chunks in [&heads, &both, &titles] {
        let r: Vec<_> = chunks.iter().map(|c| (c.start, c.end, c.tokens)).collect();
        let p: Vec<_> = plain.iter().map(|c| (c.start, c.end, c.tokens)).collect();
        assert_eq!(r, p);
        assert!(chunks.iter().all(|c| c.prefix_tokens > 0));
    }
}
