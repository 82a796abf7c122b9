//! Invariants every strategy must keep, checked over a Markdown fixture with nested and setext
//! headings, a code fence, a table and non-ASCII text; plus hand-checked cases per strategy.

use super::headings::{DocKind, PathTracker, headings};
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

/// The handbook, with a page starting at every paragraph (for `page`).
fn doc() -> Document {
    let mut d = Document::new("handbook.md", DOC);
    d.pages = paragraph_pages(DOC);
    d
}

/// Page starts at 0 and after every blank line of `text`.
pub(super) fn paragraph_pages(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices("\n\n").map(|(i, _)| i + 2))
        .filter(|&p| p < text.len())
        .collect()
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
    for strategy in Strategy::BUILT_IN
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
                // The count of the chunk's own text, within the size.
                if strategy != Strategy::Words {
                    assert_eq!(c.tokens, counter.count(text), "{strategy} {size}: {text:?}");
                    assert!(
                        c.tokens <= size,
                        "{strategy} {size}: chunk {i} has {} tokens: {text:?}",
                        c.tokens
                    );
                }
                if i > 0 {
                    let p = &chunks[i - 1];
                    assert!(
                        p.start < c.start && p.end < c.end,
                        "{strategy} {size}: in order, none inside the previous"
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
    for h in headings(DocKind::Markdown, DOC) {
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
    let hs = headings(DocKind::Markdown, DOC);
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

/// `(text, tokens, prefix)` of the chunks of one document `id` holding `text`, in cl100k_base.
fn chunk_one(
    id: &str,
    text: &str,
    strategy: Strategy,
    size: usize,
    overlap: usize,
) -> Vec<(String, usize, String)> {
    let params = ChunkParams {
        strategy,
        chunk_size: size,
        chunk_overlap: overlap,
    };
    params.validate().unwrap();
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    let d = Document::new(id, text);
    chunk_document(
        &d,
        0,
        &TokenStream::new(&d.text, counter),
        &params,
        counter,
        &ChunkContext::default(),
    )
    .unwrap()
    .into_iter()
    .map(|c| {
        (
            d.text[c.byte_start..c.byte_end].to_string(),
            c.tokens,
            c.prefix,
        )
    })
    .collect()
}

fn texts(chunks: &[(String, usize, String)]) -> Vec<&str> {
    chunks.iter().map(|c| c.0.as_str()).collect()
}

const FIN: &str = "Revenue rose by $570 million in 2022, driven by pricing. Contributions were $758 million, mostly from the pension plan, and the remaining cash went to buybacks.";

#[test]
fn dollar_amounts_are_never_math_in_the_markdown_strategy() {
    let chunks = chunk_one("fin.md", FIN, Strategy::Markdown, 16, 0);
    assert_eq!(
        texts(&chunks),
        vec![
            "Revenue rose by $570 million in 2022, driven by pricing.",
            "Contributions were $758 million, mostly from the pension plan, and the remaining",
            "cash went to buybacks.",
        ]
    );
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    for (text, tokens, _) in &chunks {
        assert_eq!(*tokens, counter.count(text));
        assert!(*tokens <= 16, "{text:?}: {tokens}");
    }
    assert!(chunks.iter().all(|c| !c.0.ends_with('$')));
    assert!(
        chunks
            .iter()
            .any(|c| c.0.contains("Contributions were $758 million"))
    );
}

const RST: &str = "=====
Guide
=====

Larkspur keeps files in sync.

Install
-------

On Linux
~~~~~~~~

Use the package manager.

Usage
-----

Run larkspur sync.
";

#[test]
fn rst_titles_start_chunks_and_give_heading_paths_and_tildes_are_not_fences() {
    let params = ChunkParams {
        strategy: Strategy::Markdown,
        chunk_size: 200,
        chunk_overlap: 0,
    };
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    let d = Document::new("guide.rst", RST);
    let chunks = chunk_document(
        &d,
        0,
        &TokenStream::new(RST, counter),
        &params,
        counter,
        &ChunkContext::default(),
    )
    .unwrap();
    let got: Vec<(&str, Vec<String>)> = chunks
        .iter()
        .map(|c| (&RST[c.byte_start..c.byte_end], c.heading_path.clone()))
        .collect();
    let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        got,
        vec![
            (
                "=====\nGuide\n=====\n\nLarkspur keeps files in sync.",
                path(&["Guide"])
            ),
            ("Install\n-------", path(&["Guide", "Install"])),
            (
                "On Linux\n~~~~~~~~\n\nUse the package manager.",
                path(&["Guide", "Install", "On Linux"])
            ),
            (
                "Usage\n-----\n\nRun larkspur sync.",
                path(&["Guide", "Usage"])
            ),
        ]
    );
    // The same text read as Markdown: `~~~~~~~~` opens a code fence that swallows the rest, and
    // only the setext `-------` underline of "Install" is a heading.
    let md = chunk_one("guide.md", RST, Strategy::Markdown, 200, 0);
    assert!(md.iter().all(|c| !c.0.starts_with("Usage")));
}

#[test]
fn plain_text_has_no_headings_and_splits_by_paragraph() {
    let text = "# Not a heading\n\nFirst paragraph here.\n\nSecond paragraph here.\n";
    let params = ChunkParams {
        strategy: Strategy::Markdown,
        chunk_size: 6,
        chunk_overlap: 0,
    };
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    let d = Document::new("notes.txt", text);
    let chunks = chunk_document(
        &d,
        0,
        &TokenStream::new(text, counter),
        &params,
        counter,
        &ChunkContext::default(),
    )
    .unwrap();
    let got: Vec<&str> = chunks
        .iter()
        .map(|c| &text[c.byte_start..c.byte_end])
        .collect();
    assert_eq!(
        got,
        vec![
            "# Not a heading",
            "First paragraph here.",
            "Second paragraph here."
        ]
    );
    assert!(chunks.iter().all(|c| c.heading_path.is_empty()));
}

#[test]
fn every_chunk_counts_its_own_text_and_stays_within_its_size() {
    // Trimming " checklist" to "checklist" turns one token into two: the chunk is split again.
    let chunks = chunk_one(
        "plant.txt",
        "Plant room checklist for the east",
        Strategy::Recursive,
        4,
        2,
    );
    assert_eq!(
        chunks,
        vec![
            ("Plant room checklist for".to_string(), 4, String::new()),
            ("for the east".to_string(), 3, String::new()),
        ]
    );
    // "Ω" is two tokens on its own (one in the stream's count before).
    assert_eq!(
        chunk_one("o.txt", "Ω", Strategy::Fixed, 8, 0),
        vec![("Ω".to_string(), 2, String::new())]
    );
    assert_eq!(
        chunk_one("o.txt", "Ω", Strategy::Recursive, 8, 0),
        vec![("Ω".to_string(), 2, String::new())]
    );
    // "🔧" is three tokens: two windows of one wrench each, never the same range twice; each is
    // a single unit over the size, counted as oversize.
    let wrenches = chunk_one("w.txt", "🔧🔧", Strategy::Fixed, 2, 1);
    assert_eq!(
        wrenches,
        vec![
            ("🔧".to_string(), 3, String::new()),
            ("🔧".to_string(), 3, String::new())
        ]
    );
    let d = Document::new("w.txt", "🔧🔧");
    let corpus = Corpus::from_documents("w", vec![d]);
    let tokens = CorpusTokens::new(&corpus, TokenizerKind::Cl100kBase);
    let params = ChunkParams {
        strategy: Strategy::Fixed,
        chunk_size: 2,
        chunk_overlap: 1,
    };
    let chunks = chunk_corpus(&corpus, &tokens, &params, &ChunkContext::default()).unwrap();
    assert_eq!((chunks[0].byte_start, chunks[1].byte_start), (0, 4));
    assert_eq!(
        oversize(&corpus, &chunks, &params, TokenizerKind::Cl100kBase, None),
        (3, 2)
    );
}

const RAIN: &str = "# Rainfall

| City | Days | mm |
|------|------|----|
| Aalborg | 12 | 4.1 |
| Bergen | 9 | 5.5 |
| Cork | 15 | 3.0 |
";

#[test]
fn later_pieces_of_a_split_table_carry_its_header_rows_in_their_prefix() {
    let header = "| City | Days | mm |\n|------|------|----|";
    let corpus = Corpus::from_documents("t", vec![Document::new("rain.md", RAIN)]);
    let tokens = CorpusTokens::new(&corpus, TokenizerKind::Cl100kBase);
    let params = ChunkParams {
        strategy: Strategy::Markdown,
        chunk_size: 32,
        chunk_overlap: 0,
    };
    let chunks = chunk_corpus(&corpus, &tokens, &params, &ChunkContext::default()).unwrap();
    let got: Vec<(&str, &str)> = chunks
        .iter()
        .map(|c| (c.text(&corpus), c.prefix.as_str()))
        .collect();
    // header 14 tokens, rows 12, 11, 11: Bergen and Cork (22) with the header (14) are over 32,
    // so they are split at the 18 tokens the header leaves, a row each
    assert_eq!(
        got,
        vec![
            ("# Rainfall", ""),
            (
                "| City | Days | mm |\n|------|------|----|\n| Aalborg | 12 | 4.1 |",
                ""
            ),
            ("| Bergen | 9 | 5.5 |", header),
            ("| Cork | 15 | 3.0 |", header),
        ]
    );
    let bergen = &chunks[2];
    assert_eq!(bergen.byte_start, RAIN.find("| Bergen").unwrap());
    assert_eq!(
        bergen.prefix_tokens,
        tokens.counter().count(&format!("{header}\n"))
    );
    assert_eq!(bergen.prefix_tokens, 14);
    // the header and the rows read as one table: one line break between them
    assert_eq!(
        bergen.indexed_text(&corpus),
        format!("{header}\n| Bergen | 9 | 5.5 |")
    );
    // with a heading-path prefix, the path comes first, then the header rows
    let mut with_path = chunks.clone();
    enrich::enrich(
        &corpus,
        tokens.counter(),
        enrich::Prefix::HeadingPath,
        &mut with_path,
        &enrich::ContextMap::new(),
    )
    .unwrap();
    assert_eq!(with_path[2].prefix, format!("Rainfall\n\n{header}"));
    assert_eq!(
        with_path[2].indexed_text(&corpus),
        format!("Rainfall\n\n{header}\n| Bergen | 9 | 5.5 |")
    );
    assert_eq!(with_path[0].prefix, "Rainfall");
    // other strategies do not carry headers
    let params = ChunkParams {
        strategy: Strategy::Recursive,
        ..params
    };
    let plain = chunk_corpus(&corpus, &tokens, &params, &ChunkContext::default()).unwrap();
    assert!(plain.iter().all(|c| c.prefix.is_empty()));
}

/// Each piece of `text` (one `.md` document) under `markdown` at `size`, overlap 0: its own text,
/// whether it carries header rows, and its tokens with them.
fn table_pieces(text: &str, size: usize) -> Vec<(String, bool, usize)> {
    let corpus = Corpus::from_documents("t", vec![Document::new("t.md", text)]);
    let tokens = CorpusTokens::new(&corpus, TokenizerKind::Cl100kBase);
    let params = ChunkParams {
        strategy: Strategy::Markdown,
        chunk_size: size,
        chunk_overlap: 0,
    };
    let chunks = chunk_corpus(&corpus, &tokens, &params, &ChunkContext::default()).unwrap();
    assert_eq!(
        oversize(&corpus, &chunks, &params, TokenizerKind::Cl100kBase, None).1,
        chunks
            .iter()
            .filter(|c| c.tokens + c.carried_tokens > size)
            .count()
    );
    chunks
        .iter()
        .map(|c| {
            (
                c.text(&corpus).to_string(),
                !c.carried.is_empty(),
                c.tokens + c.carried_tokens,
            )
        })
        .collect()
}

#[test]
fn table_pieces_are_sized_with_the_header_they_carry() {
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    let header = "| City | Days | mm |\n|------|------|----|";
    // the header, with the line break that joins it to the rows, and each body row
    assert_eq!(counter.count(&format!("{header}\n")), 14);
    let rows: Vec<usize> = RAIN.lines().skip(4).map(|r| counter.count(r)).collect();
    assert_eq!(rows, [12, 11, 11]);
    let (title, aalborg, bergen, cork) = (
        "# Rainfall",
        "| Aalborg | 12 | 4.1 |",
        "| Bergen | 9 | 5.5 |",
        "| Cork | 15 | 3.0 |",
    );
    let piece = |text: &str, carries, tokens| (text.to_string(), carries, tokens);
    // 31: Bergen and Cork together (22 + 14 = 36) are split at the 17 the header leaves; each
    // row carries the header, 11 + 14 = 25
    assert_eq!(
        table_pieces(RAIN, 31),
        [
            piece(title, false, 3),
            piece(&format!("{header}\n{aalborg}"), false, 26),
            piece(bergen, true, 25),
            piece(cork, true, 25),
        ]
    );
    // 40: Bergen goes with the header and Aalborg (37); Cork carries the header (25)
    assert_eq!(
        table_pieces(RAIN, 40),
        [
            piece(title, false, 3),
            piece(&format!("{header}\n{aalborg}\n{bergen}"), false, 37),
            piece(cork, true, 25),
        ]
    );
    // 24: the header and one row (14 + 11 = 25) do not fit, so no piece carries it and every
    // piece keeps the size by its own text (before, Aalborg and Bergen under the header were 37)
    assert_eq!(
        table_pieces(RAIN, 24),
        [
            piece(title, false, 3),
            piece(header, false, 14),
            piece(&format!("{aalborg}\n{bergen}"), false, 23),
            piece(cork, false, 11),
        ]
    );
}

/// A table whose header and delimiter rows are 32 tokens (cl100k_base) and whose body rows are
/// 21 or 22 tokens each.
const WIDE: &str =
    "| Station identifier | Observation period | Mean annual rainfall | Wettest month | Rainy days per year |
|---|---|---|---|---|
| Aalborg north | 1991 to 2020 | 612 mm | October | 171 |
| Bergen harbour | 1991 to 2020 | 2250 mm | November | 202 |
| Cork airport | 1991 to 2020 | 1208 mm | December | 152 |
| Dublin port | 1991 to 2020 | 758 mm | August | 129 |
";

#[test]
fn a_header_that_cannot_fit_with_a_row_is_not_carried_and_every_piece_keeps_the_size() {
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    let header = WIDE.lines().take(2).collect::<Vec<_>>().join("\n");
    assert_eq!(counter.count(&format!("{header}\n")), 32);
    let rows: Vec<usize> = WIDE.lines().skip(2).map(|r| counter.count(r)).collect();
    assert_eq!(rows, [22, 22, 22, 21]);
    // 54 = 32 + 22: every later row carries the header, each piece at most 54 with it
    let at_54 = table_pieces(WIDE, 54);
    let carrying: Vec<(bool, usize)> = at_54.iter().map(|(_, c, n)| (*c, *n)).collect();
    assert_eq!(carrying, [(false, 54), (true, 54), (true, 54), (true, 53)]);
    // 53: a 22-token row does not fit under the header, so pieces of two rows (44 and 43)
    // carry nothing; at 31, 24 and 16 the header alone is over the size. Nothing is over it.
    for (size, pieces, most) in [(53, 3, 44), (31, 6, 22), (24, 6, 22), (16, 11, 16)] {
        let got = table_pieces(WIDE, size);
        assert_eq!(got.len(), pieces, "size {size}");
        assert!(got.iter().all(|(_, carries, _)| !carries), "size {size}");
        assert_eq!(got.iter().map(|p| p.2).max(), Some(most), "size {size}");
    }
}

#[test]
fn sizes_are_words_for_the_words_strategy_or_tokenizer_else_tokens() {
    assert_eq!(size_unit("words", "cl100k_base"), "words");
    assert_eq!(size_unit("fixed", "cl100k_base"), "tokens");
    assert_eq!(size_unit("markdown", "o200k_base"), "tokens");
    assert_eq!(size_unit("recursive", "words"), "words");
}

#[test]
fn structure_read_once_gives_the_chunks_read_per_document() {
    let corpus = Corpus::from_documents(
        "s",
        vec![Document::new("doc.md", DOC), Document::new("rain.md", RAIN)],
    );
    let tokens = CorpusTokens::new(&corpus, TokenizerKind::Cl100kBase);
    let structure = structure::CorpusStructure::new(&corpus);
    let shared = ChunkContext {
        structure: Some(&structure),
        ..ChunkContext::default()
    };
    for strategy in [
        Strategy::Fixed,
        Strategy::Words,
        Strategy::Recursive,
        Strategy::Markdown,
        Strategy::Sentence,
    ] {
        let params = ChunkParams {
            strategy,
            chunk_size: 24,
            chunk_overlap: 4,
        };
        let alone = chunk_corpus(&corpus, &tokens, &params, &ChunkContext::default()).unwrap();
        let once = chunk_corpus(&corpus, &tokens, &params, &shared).unwrap();
        assert_eq!(once, alone, "{strategy:?}");
        assert!(
            once.iter().any(|c| c.heading_path.len() == 3),
            "{strategy:?}: the nested heading path is found"
        );
        if strategy == Strategy::Markdown {
            // at 32 a piece of the rain table carries its header (at 24 none can: see
            // table_pieces_are_sized_with_the_header_they_carry)
            let params = ChunkParams {
                chunk_size: 32,
                ..params
            };
            let alone = chunk_corpus(&corpus, &tokens, &params, &ChunkContext::default()).unwrap();
            let once = chunk_corpus(&corpus, &tokens, &params, &shared).unwrap();
            assert_eq!(once, alone);
            assert!(once.iter().any(|c| !c.carried.is_empty()));
        }
    }
}

#[test]
fn markdown_splitter_gives_the_same_chunks_with_its_trimming_done_by_the_sizer() {
    use crate::tokenize::{DocSizer, TokenStream};
    use text_splitter::{ChunkConfig, MarkdownSplitter};
    // the fixture, the handbook and the first 20 kB of each chroma-general document
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    let mut texts = vec![DOC.to_string()];
    for dir in ["handbook", "chroma-general/corpora"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(f).unwrap();
            let mut end = text.len().min(20_000);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            texts.push(text[..end].to_string());
        }
    }
    // indented lines, where keeping the indentation changes a candidate's count
    let code: String = (0..40)
        .map(|i| format!("\n        step_{i} = run(step_{i}, {i})\n"))
        .collect();
    texts.push(format!("# Steps\n\nIndented code:\n{code}\nDone.\n"));
    // with its trimming off the splitter also emits a whitespace-only chunk and one ending
    // inside the previous one here (size 4, overlap 2); they are dropped as it would
    texts.push("\n -   word. \n\n  \t -  \n \n".to_string());
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    let mut compared = 0;
    for text in &texts {
        let stream = TokenStream::new(text, counter);
        for (size, overlap) in [(4, 2), (9, 0), (16, 0), (23, 3), (64, 9), (256, 38)] {
            let sizer = DocSizer::new(text, &stream, counter, size);
            let config = ChunkConfig::new(size)
                .with_sizer(sizer)
                .with_overlap(overlap)
                .unwrap();
            let by_splitter: Vec<(usize, usize)> = MarkdownSplitter::new(config)
                .chunk_indices(text)
                .map(|(o, c)| bound::trim(text, o, o + c.len()))
                .collect();
            let config = ChunkConfig::new(size)
                .with_sizer(sizer.trimming_markdown())
                .with_overlap(overlap)
                .unwrap()
                .with_trim(false);
            let untrimmed = MarkdownSplitter::new(config)
                .chunk_indices(text)
                .map(|(o, c)| (o, o + c.len()))
                .collect();
            let by_sizer: Vec<(usize, usize)> = markdown::emitted_with_trimming(text, untrimmed)
                .into_iter()
                .map(|(s, e)| bound::trim(text, s, e))
                .collect();
            assert_eq!(by_sizer, by_splitter, "size {size}, text {:.40?}", text);
            compared += by_splitter.len();
        }
    }
    assert!(compared > 1_000, "{compared} chunks compared");
}
