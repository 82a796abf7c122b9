//! Hand-built chunks, counted in whitespace words (the `words` tokenizer) so every token count
//! is checked by hand.
//!
//! ```text
//! a.txt  "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9"   word i at [3i, 3i + 2)
//!        c0 = w0 w1 [0, 5)   c1 = w2 w3 [6, 11)   c2 = w4 w5 [12, 17)   c3 = w6 w7 [18, 23)
//!        c4 = w8 w9 [24, 29)
//! b.txt  "x0 x1 x2 x3"     c5 = x0 x1 [0, 5)   c6 = x2 x3 [6, 11)
//! s.md   "# A\n\nalpha beta gamma delta.\n\n# B\n\nepsilon zeta eta theta iota kappa.\n"
//!        section A = [0, 28) (6 words), section B = [30, 69) (8 words)
//!        c0 "# A" [0, 3)  c1 "alpha beta" [5, 15)  c2 "gamma delta." [16, 28)
//!        c3 "# B" [30, 33)  c4 "epsilon zeta eta" [35, 51)  c5 "theta iota kappa." [52, 69)
//! ```

use super::Expand;
use super::parents::{doc_parents, parents_of};
use super::send::{Expansion, Sender, Sent};
use crate::chunking::Chunk;
use crate::chunking::structure::CorpusStructure;
use crate::corpus::{Corpus, Document};
use crate::golden::{EvidenceSpan, Location, Question};
use crate::metrics::{ChunkTable, Cut, MarginScale, SentRanges, rank_facts, score_sent};
use crate::retrieval::{Hit, Ranked};
use crate::tokenize::{CorpusTokens, TokenizerKind};

const SECTIONS: &str =
    "# A\n\nalpha beta gamma delta.\n\n# B\n\nepsilon zeta eta theta iota kappa.\n";

fn corpus(docs: Vec<(&str, &str)>) -> Corpus {
    Corpus::from_documents(
        "t",
        docs.into_iter()
            .map(|(id, text)| Document::new(id, text))
            .collect(),
    )
}

fn chunk(corpus: &Corpus, doc: usize, ordinal: usize, start: usize, end: usize) -> Chunk {
    let d = &corpus.docs[doc];
    Chunk {
        doc,
        ordinal,
        start,
        end,
        byte_start: d.char_to_byte(start),
        byte_end: d.char_to_byte(end),
        heading_path: vec![],
        tokens: d.text[start..end].split_whitespace().count(),
        prefix: String::new(),
        prefix_tokens: 0,
        carried: String::new(),
        carried_tokens: 0,
    }
}

/// a.txt and b.txt with chunks c0–c6.
fn windows() -> (Corpus, Vec<Chunk>) {
    let c = corpus(vec![
        ("a.txt", "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9"),
        ("b.txt", "x0 x1 x2 x3"),
    ]);
    let mut chunks: Vec<Chunk> = (0..5).map(|i| chunk(&c, 0, i, 6 * i, 6 * i + 5)).collect();
    chunks.push(chunk(&c, 1, 0, 0, 5));
    chunks.push(chunk(&c, 1, 1, 6, 11));
    (c, chunks)
}

/// s.md with chunks c0–c5.
fn sections() -> (Corpus, Vec<Chunk>) {
    let c = corpus(vec![("s.md", SECTIONS)]);
    let ranges = [(0, 3), (5, 15), (16, 28), (30, 33), (35, 51), (52, 69)];
    let chunks = ranges
        .iter()
        .enumerate()
        .map(|(i, &(s, e))| chunk(&c, 0, i, s, e))
        .collect();
    (c, chunks)
}

fn hits(chunks: &[usize]) -> Vec<Hit> {
    chunks
        .iter()
        .enumerate()
        .map(|(i, &chunk)| Hit {
            chunk,
            score: 10.0 - i as f64,
        })
        .collect()
}

/// What `order` (chunk indices, best first) sends at `cut` under `expand`.
fn send(corpus: &Corpus, chunks: &[Chunk], expand: Expand, order: &[usize], cut: Cut) -> Sent {
    let tokens = CorpusTokens::new(corpus, TokenizerKind::Words);
    let structure = CorpusStructure::new(corpus);
    let expansion = Expansion::new(expand, corpus, &tokens, &structure);
    let sender = Sender {
        expansion: &expansion,
        chunks,
        corpus,
        tokens: &tokens,
    };
    let head = hits(order);
    sender.cut(&Ranked::Top(head.clone()), &head, cut)
}

fn words(corpus: &Corpus, sent: &Sent, chunks: &[Chunk]) -> usize {
    sent.units
        .iter()
        .map(|u| u.text(corpus, chunks).split_whitespace().count())
        .sum()
}

#[test]
fn values_parse_print_and_tag_ids() {
    for (text, value, tag) in [
        ("none", Expand::None, None),
        ("neighbours:1", Expand::Neighbours(1), Some("neighbours1")),
        ("parent:1024", Expand::Parent(1024), Some("parent1024")),
    ] {
        let parsed: Expand = text.parse().unwrap();
        assert_eq!(parsed, value);
        assert_eq!(parsed.to_string(), text);
        assert_eq!(parsed.id_tag().as_deref(), tag);
        if let Some(t) = tag {
            assert_eq!(Expand::from_id_tag(t), Some(value));
        }
    }
    for bad in [
        "neighbours:0",
        "parent",
        "parent:x",
        "window:2",
        "neighbors:1",
    ] {
        let e = bad.parse::<Expand>().unwrap_err();
        assert!(e.contains("none, neighbours:N"), "{e}");
    }
    let e = "neighbors:2".parse::<Expand>().unwrap_err();
    assert!(e.ends_with("(did you mean neighbours:2?)"), "{e}");
    assert_eq!(Expand::from_id_tag("stem"), None);
    assert_eq!(Expand::from_id_tag("parent0"), None);
}

#[test]
fn neighbour_windows_stop_at_document_edges_and_merge_where_they_overlap() {
    let (corpus, chunks) = windows();
    // c0 at a's first edge: c0..c1; c6 at b's last edge: c5..c6; c2: c1..c3 overlaps c0..c1
    let sent = send(
        &corpus,
        &chunks,
        Expand::Neighbours(1),
        &[0, 6, 2],
        Cut::K(3),
    );
    assert_eq!(sent.ranges(), vec![(0, 0, 23), (1, 0, 11)]);
    let ids: Vec<String> = sent
        .units
        .iter()
        .map(|u| u.id(&corpus, &chunks, Expand::Neighbours(1)))
        .collect();
    assert_eq!(ids, ["a.txt#0-3", "b.txt#0-1"]);
    assert_eq!(sent.units[0].hits, vec![0, 2]);
    assert_eq!(
        sent.units[0].text(&corpus, &chunks),
        "w0 w1 w2 w3 w4 w5 w6 w7"
    );
    // w0–w7 and x0–x3, each once
    assert_eq!(sent.tokens(), 12);
    assert_eq!(words(&corpus, &sent, &chunks), 12);
    assert_eq!(sent.hits.len(), 3);
}

#[test]
fn neighbour_windows_that_touch_merge_into_one_unit() {
    let (corpus, chunks) = windows();
    // c0: c0..c1; c3: c2..c4, whose c2 is next to c1: one unit, the whole of a.txt
    let sent = send(&corpus, &chunks, Expand::Neighbours(1), &[0, 3], Cut::K(2));
    assert_eq!(sent.ranges(), vec![(0, 0, 29)]);
    assert_eq!(sent.tokens(), 10);
    // two chunks apart (c0 and c4 with N = 1: c0..c1 and c3..c4) stay two units
    let sent = send(&corpus, &chunks, Expand::Neighbours(1), &[4, 0], Cut::K(2));
    assert_eq!(sent.ranges(), vec![(0, 18, 29), (0, 0, 11)]);
    assert_eq!(sent.tokens(), 8);
}

#[test]
fn overlapping_chunks_send_their_shared_text_once() {
    let c = corpus(vec![("a.txt", "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9")]);
    // chunks of 4 words overlapping by 2: [0, 11) [6, 17) [12, 23)
    let chunks = vec![
        chunk(&c, 0, 0, 0, 11),
        chunk(&c, 0, 1, 6, 17),
        chunk(&c, 0, 2, 12, 23),
    ];
    let sent = send(&c, &chunks, Expand::Neighbours(1), &[0], Cut::K(1));
    // c0..c1 = w0–w5: 6 words, not 4 + 4
    assert_eq!(sent.ranges(), vec![(0, 0, 17)]);
    assert_eq!(sent.tokens(), 6);
}

#[test]
fn parents_are_sections_cut_to_the_cap_by_the_recursive_rule() {
    let (corpus, _) = sections();
    let tokens = CorpusTokens::new(&corpus, TokenizerKind::Words);
    let structure = CorpusStructure::new(&corpus);
    let doc = &corpus.docs[0];
    let parents = doc_parents(doc, structure.doc(0), tokens.doc(0), tokens.counter(), 1024);
    let spans: Vec<(usize, usize, usize)> = parents
        .iter()
        .map(|p| (p.byte_start, p.byte_end, p.tokens))
        .collect();
    assert_eq!(spans, vec![(0, 28, 6), (30, 69, 8)]);
    // at 4 words, section B (8) is cut: its heading paragraph, then its 6-word paragraph in
    // two pieces of at most 4
    let parents = doc_parents(doc, structure.doc(0), tokens.doc(0), tokens.counter(), 4);
    let texts: Vec<&str> = parents
        .iter()
        .map(|p| &doc.text[p.byte_start..p.byte_end])
        .collect();
    assert_eq!(
        texts,
        [
            "# A",
            "alpha beta gamma delta.",
            "# B",
            "epsilon zeta eta theta",
            "iota kappa."
        ]
    );
    assert!(parents.iter().all(|p| p.tokens <= 4));
    // a chunk across two parents gets both
    assert_eq!(parents_of(&parents, 0, 15).len(), 2);
    // plain text has no sections: pieces of at most P words over the whole document
    let (plain, _) = windows();
    let tokens = CorpusTokens::new(&plain, TokenizerKind::Words);
    let structure = CorpusStructure::new(&plain);
    let parents = doc_parents(
        &plain.docs[0],
        structure.doc(0),
        tokens.doc(0),
        tokens.counter(),
        4,
    );
    let sizes: Vec<usize> = parents.iter().map(|p| p.tokens).collect();
    assert_eq!(sizes, vec![4, 4, 2]);
}

#[test]
fn a_parent_is_sent_once_for_two_hits_ranked_by_its_best_hit() {
    let (corpus, chunks) = sections();
    // c4 and c5 lie in section B, c1 in section A
    let sent = send(
        &corpus,
        &chunks,
        Expand::Parent(1024),
        &[4, 1, 5],
        Cut::K(3),
    );
    assert_eq!(sent.ranges(), vec![(0, 30, 69), (0, 0, 28)]);
    assert_eq!(sent.units[0].hits, vec![4, 5]);
    assert_eq!(sent.units[0].score, 10.0);
    let ids: Vec<String> = sent
        .units
        .iter()
        .map(|u| u.id(&corpus, &chunks, Expand::Parent(1024)))
        .collect();
    assert_eq!(ids, ["s.md#parent1", "s.md#parent0"]);
    assert_eq!(sent.tokens(), 8 + 6);
    assert_eq!(sent.hits.len(), 3);
}

#[test]
fn budget_cuts_never_exceed_the_budget_with_expanded_units() {
    let (corpus, chunks) = windows();
    let n1 = Expand::Neighbours(1);
    // c2: c1..c3 (6 words); c4: c3..c4 joins it into c1..c4 (8) > 7: stop
    let sent = send(&corpus, &chunks, n1, &[2, 4, 5], Cut::Budget(7));
    assert_eq!(
        (sent.ranges(), sent.tokens(), sent.hits.len()),
        (vec![(0, 6, 23)], 6, 1)
    );
    // at 5, c2's window alone (6) is skipped for size; c0's (4) is taken; c4's would make 8
    let sent = send(&corpus, &chunks, n1, &[2, 0, 4], Cut::Budget(5));
    assert_eq!(sent.skipped_for_size, 1);
    assert_eq!((sent.ranges(), sent.tokens()), (vec![(0, 0, 11)], 4));
    // what MRR reads: the hit taken is chunk 0 at rank 2 (rank 1, skipped, is not taken)
    assert_eq!(sent.taken(), vec![(2, 0)]);
    // a hit whose parent is already sent adds nothing and is taken; the next parent stops it
    let (corpus_s, chunks_s) = sections();
    let sent = send(
        &corpus_s,
        &chunks_s,
        Expand::Parent(1024),
        &[4, 5, 1],
        Cut::Budget(8),
    );
    assert_eq!(
        (sent.ranges(), sent.tokens(), sent.hits.len()),
        (vec![(0, 30, 69)], 8, 2)
    );
    // every budget, every order: never over, and the count is the words of the text sent
    let orders: [&[usize]; 4] = [&[2, 4, 5, 0, 6], &[6, 0, 3, 1], &[4, 3, 2, 1, 0], &[5, 2]];
    for expand in [Expand::None, n1, Expand::Neighbours(2), Expand::Parent(3)] {
        for order in orders {
            for budget in 1..=16 {
                let sent = send(&corpus, &chunks, expand, order, Cut::Budget(budget));
                assert!(sent.tokens() <= budget, "{expand} {order:?} at {budget}");
                assert_eq!(sent.tokens(), words(&corpus, &sent, &chunks));
            }
        }
    }
}

fn question(spans: Vec<Location>) -> Question {
    Question {
        line: 1,
        id: "q".into(),
        text: "beta gamma".into(),
        spans: spans
            .into_iter()
            .map(|l| EvidenceSpan { locations: vec![l] })
            .collect(),
        answer: None,
        question_type: None,
        origin: Default::default(),
    }
}

#[test]
fn a_span_only_the_parent_holds_is_covered_and_recalled() {
    let (corpus, chunks) = sections();
    // "beta gamma" = [11, 21): cut by the boundary between c1 and c2
    let q = question(vec![Location {
        doc: 0,
        start: 11,
        end: 21,
    }]);
    let table = ChunkTable::new(&chunks, 1);
    let ranked = Ranked::Top(hits(&[1, 4]));
    let facts = rank_facts(&q, &table, &ranked, MarginScale::Raw);
    assert!(facts.unreachable, "no chunk holds the span whole");
    let score = |expand| {
        let sent = send(&corpus, &chunks, expand, &[1, 4], Cut::K(1));
        let ranges = SentRanges {
            ranges: sent.ranges(),
            tokens: sent.tokens(),
            taken: sent.taken(),
            tie_at_cut: sent.tie_at_cut,
        };
        score_sent(&q, &facts, &ranges)
    };
    // the chunk alone: "beta" of "beta gamma", 4 of 10 characters; IoU 4 / (10 + 6)
    let none = score(Expand::None);
    assert_eq!((none.span_recall, none.coverage), (0.0, 0.4));
    assert_eq!(none.char_iou, 0.25);
    assert_eq!(none.retrieved_tokens, 2);
    // its parent, section A [0, 28): the whole span; IoU 10 / 28
    let parent = score(Expand::Parent(1024));
    assert_eq!((parent.span_recall, parent.coverage), (1.0, 1.0));
    assert!(parent.hit);
    assert_eq!(parent.char_iou, 10.0 / 28.0);
    assert_eq!(parent.char_precision, 10.0 / 28.0);
    assert_eq!(parent.retrieved_tokens, 6);
    assert_eq!(parent.retrieved_chunks, 1);
    // MRR and the margin stay on the ranking: no chunk is correct
    assert_eq!((parent.reciprocal_rank, parent.margin), (0.0, -1.0));
}

/// The tokens of each distinct unit a single hit on a chunk sends alone, under `expand`.
fn unit_tokens(corpus: &Corpus, chunks: &[Chunk], expand: Expand) -> Vec<usize> {
    let tokens = CorpusTokens::new(corpus, TokenizerKind::Words);
    let structure = CorpusStructure::new(corpus);
    let expansion = Expansion::new(expand, corpus, &tokens, &structure);
    Sender {
        expansion: &expansion,
        chunks,
        corpus,
        tokens: &tokens,
    }
    .unit_tokens()
}

#[test]
fn the_units_a_budget_compares_are_each_chunks_window_once() {
    let (corpus, chunks) = windows();
    // c0: c0..c1, c1: c0..c2, c2: c1..c3, c3: c2..c4, c4: c3..c4; c5 and c6 both c5..c6
    assert_eq!(
        unit_tokens(&corpus, &chunks, Expand::Neighbours(1)),
        vec![4, 6, 6, 6, 4, 4]
    );
    assert_eq!(
        unit_tokens(&corpus, &chunks, Expand::None),
        vec![2, 2, 2, 2, 2, 2, 2]
    );
    // sections A (c0–c2, 6 words) and B (c3–c5, 8 words), each once
    let (corpus, chunks) = sections();
    assert_eq!(
        unit_tokens(&corpus, &chunks, Expand::Parent(1024)),
        vec![6, 8]
    );
}
