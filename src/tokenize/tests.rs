use super::doc_sizer::markdown_trimmed;
use super::offsets::Offsets;
use super::*;

#[test]
fn words_are_whitespace_separated() {
    let c = TokenCounter::new(TokenizerKind::Words);
    assert_eq!(c.count("  a b\tc\n\nd  "), 4);
    assert_eq!(word_spans(" ab  c"), vec![(1, 3), (5, 6)]);
}

#[test]
fn cl100k_counts_a_known_sentence() {
    // "An apple a" is 3 tokens in cl100k_base (text-splitter's own test agrees).
    let c = TokenCounter::new(TokenizerKind::Cl100kBase);
    assert_eq!(c.count("An apple a"), 3);
}

#[test]
fn stream_counts_match_encoding_on_token_boundaries() {
    let text = "Refunds take 14 days. Zoë paid €12 🙂 at ~/.config/larkspur.";
    let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
    let stream = TokenStream::new(text, counter);
    assert_eq!(stream.len(), counter.count(text));
    assert_eq!(stream.count_in(0, text.len()), counter.count(text));
    let (s, _) = stream.span(3);
    let (_, e) = stream.span(7);
    assert_eq!(stream.count_in(s, e), 5);
    assert_eq!(stream.count_in(e, e), 0);
    let sizer = DocSizer::new(text, &stream, counter, 100);
    use text_splitter::ChunkSizer;
    assert_eq!(sizer.size(&text[s..e]), 5);
    assert_eq!(sizer.size("An apple a"), 3, "foreign text is encoded");
    let words = TokenStream::new(text, TokenCounter::new(TokenizerKind::Words));
    assert_eq!(words.len(), 10);
    // "take 14" plus the cut word "days." = 3 words overlap bytes 8..17.
    assert_eq!(words.count_in(8, 17), 3);
}

#[test]
fn sampled_offsets_count_as_a_search_of_the_whole_array() {
    // nondecreasing keys with repeats (empty token spans), gaps longer than a block, and
    // keys up to the text's end
    let len = 1_000;
    let mut keys = Vec::new();
    let mut k = 0u32;
    let mut step = 1u32;
    while (k as usize) <= len {
        keys.push(k);
        if step.is_multiple_of(7) {
            keys.push(k);
        }
        k += step % 150;
        step += 13;
    }
    let offsets = Offsets::new(keys.clone(), len);
    for x in 0..=len + 1 {
        let want = keys.partition_point(|&k| (k as usize) < x);
        assert_eq!(offsets.below(x), want, "below({x})");
    }
    assert_eq!(offsets.find(keys[5] as usize), Some(5));
    assert_eq!(Offsets::new(vec![], 10).below(3), 0);
    // each offset read alone and in order from any index, as stored in a byte and a block
    assert_eq!(offsets.len(), keys.len());
    for (i, &k) in keys.iter().enumerate() {
        assert_eq!(offsets.get(i), k as usize, "get({i})");
    }
    for i in [0, 1, 7, keys.len() / 2, keys.len() - 1, keys.len()] {
        let read: Vec<usize> = offsets.iter_from(i).collect();
        let want: Vec<usize> = keys[i..].iter().map(|&k| k as usize).collect();
        assert_eq!(read, want, "iter_from({i})");
    }
}

#[test]
fn piece_token_counts_read_from_the_starts_are_the_pieces_own() {
    // multi-byte characters split across tokens give empty tokens at a piece's end, which
    // belong to that piece and not to the next
    for text in [
        "Zoë paid €12 🙂 for “Café” — ok 🙂🙂",
        "🙂",
        " a",
        "",
        "a  b\n\n\tc",
    ] {
        let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
        let bpe = counter.bpe.unwrap();
        let stream = TokenStream::new(text, counter);
        let pieces: Vec<&str> = bpe.split(text).collect();
        assert_eq!(stream.pieces.len(), pieces.len() + 1, "{text:?}");
        let mut before = 0;
        for k in 0..=pieces.len() {
            let bound = stream.pieces.get(k);
            assert_eq!(
                stream.tokens_before_piece(k, bound),
                before,
                "{text:?} piece {k}"
            );
            if let Some(p) = pieces.get(k) {
                before += bpe.piece_count(p);
            }
        }
        assert_eq!(before, stream.len());
    }
}

#[test]
fn markdown_trim_keeps_indentation_only_around_line_breaks() {
    // text-splitter's own cases for Trim::PreserveIndentation and Trim::All
    assert_eq!(markdown_trimmed("\n  hello\n  world  "), (1, 16));
    assert_eq!(markdown_trimmed("  hello world  "), (2, 13));
    // no line break inside the trimmed text: every surrounding space goes
    assert_eq!(markdown_trimmed("\n\n    code  \n"), (6, 10));
    // a carriage return counts as a line break; leading spaces before it stay
    assert_eq!(markdown_trimmed("\r\n  a\r\n  b \r\n"), (2, 10));
    assert_eq!(markdown_trimmed(" \n \t "), (5, 5));
    assert_eq!(markdown_trimmed(""), (0, 0));
}

#[test]
fn a_bpe_stream_without_stored_ends_counts_every_range_as_its_spans_do() {
    // multi-byte characters split across tokens give empty tokens; the ends a BPE stream no
    // longer stores must count as the spans' own ends
    for text in ["Zoë paid €12 🙂 for “Café” — ok 🙂🙂", "🙂", " a", ""] {
        let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
        let stream = TokenStream::new(text, counter);
        let spans = counter.token_spans(text);
        assert_eq!(stream.len(), spans.len());
        for (i, &span) in spans.iter().enumerate() {
            assert_eq!(stream.span(i), span, "{text:?} token {i}");
        }
        for start in 0..=text.len() {
            for end in start..=text.len() + 1 {
                let by_hand = if start >= end {
                    0
                } else {
                    spans.iter().filter(|&&(s, e)| e > start && s < end).count()
                };
                assert_eq!(
                    stream.count_in(start, end),
                    by_hand,
                    "{text:?} {start}..{end}"
                );
            }
        }
    }
}

#[test]
fn bpe_spans_cover_text_on_char_boundaries() {
    let text = "Zoë paid €12 🙂 for “Café” — ok";
    let c = TokenCounter::new(TokenizerKind::Cl100kBase);
    let spans = c.token_spans(text);
    assert_eq!(spans.first().unwrap().0, 0);
    assert_eq!(spans.last().unwrap().1, text.len());
    for w in spans.windows(2) {
        assert_eq!(w[0].1, w[1].0, "spans are contiguous");
    }
    for (s, e) in &spans {
        assert!(text.is_char_boundary(*s) && text.is_char_boundary(*e));
    }
}
