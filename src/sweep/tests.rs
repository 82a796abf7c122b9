//! Tests of the grid, and of prefixes through whole configurations.

mod grid {
    use super::super::*;

    #[test]
    fn overlap_parses_ratios_and_counts() {
        assert_eq!("0.15".parse::<Overlap>(), Ok(Overlap::Ratio(0.15)));
        assert_eq!("32".parse::<Overlap>(), Ok(Overlap::Tokens(32)));
        assert!("1.5".parse::<Overlap>().is_err());
        assert!("x".parse::<Overlap>().is_err());
        assert_eq!(Overlap::Ratio(0.25).tokens_for(12), 3);
        assert_eq!(Overlap::Ratio(0.15).tokens_for(64), 9);
    }

    #[test]
    fn plan_rejects_overlap_not_below_size_and_zero_k() {
        let spec = SweepSpec {
            sizes: vec![64, 16],
            overlap: Overlap::Tokens(16),
            ..SweepSpec::default()
        };
        let err = expand(&spec).unwrap_err();
        assert!(
            err.to_string()
                .contains("chunk_overlap 16 must be smaller than chunk_size 16"),
            "{err}"
        );
        let spec = SweepSpec {
            top_k: 0,
            ..SweepSpec::default()
        };
        assert!(matches!(expand(&spec), Err(SweepError::ZeroK)));
        assert_eq!(expand(&SweepSpec::default()).unwrap().len(), 15);
        assert_eq!(
            expand(&SweepSpec::default()).unwrap()[0].id(),
            "fixed-64-o9-none-bm25-k5"
        );
    }

    #[test]
    fn config_ids_parse_back() {
        for c in expand(&SweepSpec::default()).unwrap() {
            assert_eq!(c.id().parse::<ConfigSpec>().unwrap(), c);
        }
        let c: ConfigSpec = "recursive-256-o38-none-bm25-k5".parse().unwrap();
        assert_eq!(c.params.chunk_size, 256);
        assert_eq!(c.params.chunk_overlap, 38);
        assert_eq!(c.top_k, 5);
        assert!(
            "recursive-256-o300-none-bm25-k5"
                .parse::<ConfigSpec>()
                .is_err()
        );
        assert_eq!(
            "recursive-256-o38-none-hybrid-k5"
                .parse::<ConfigSpec>()
                .unwrap()
                .retriever,
            RetrieverKind::Hybrid
        );
        assert!(
            "recursive-256-o38-none-colbert-k5"
                .parse::<ConfigSpec>()
                .is_err()
        );
        assert!("blob-256-o38-none-bm25-k5".parse::<ConfigSpec>().is_err());
    }
}

mod prefixes {
    //! The prefix is indexed but never moves a range: the same configuration with and without a
    //! prefix has the same chunks (ranges, token counts of the text) and its spans are scored on
    //! the original text.
    use std::sync::Arc;

    use super::super::*;
    use crate::chunking::enrich::{self, ContextMap, EnrichError, Prefix};
    use crate::chunking::{self, ChunkContext, ChunkParams, Strategy};
    use crate::corpus::{Corpus, Document};
    use crate::golden::{EvidenceSpan, GoldenSet, Location, Question};
    use crate::tokenize::{CorpusTokens, TokenizerKind};

    const A: &str = "# Billing\n\n## Refunds\n\nIt takes fourteen days to arrive.\n\n## Invoices\n\nIt is sent on the first of the month.\n";
    const Z: &str = "# Sync\n\n## Conflicts\n\nIt keeps both copies side by side.\n";

    /// BM25 without model-written contexts: nothing for the prepare step to make.
    fn nothing_prepared() -> Arc<RetrievalContext> {
        Arc::new(RetrievalContext::default())
    }

    fn setup() -> (Corpus, CorpusTokens, GoldenSet) {
        let corpus = Corpus::from_documents(
            "t",
            vec![Document::new("a.md", A), Document::new("z.md", Z)],
        );
        let tokens = CorpusTokens::new(&corpus, TokenizerKind::Cl100kBase);
        let span = |doc: usize, text: &str, needle: &str| {
            let start = text.find(needle).unwrap();
            EvidenceSpan {
                locations: vec![Location {
                    doc,
                    start,
                    end: start + needle.len(),
                }],
            }
        };
        let q = |id: &str, text: &str, spans| Question {
            line: 1,
            id: id.into(),
            text: text.into(),
            spans,
            answer: None,
            question_type: None,
        };
        let golden = GoldenSet {
            path: "g.jsonl".into(),
            questions: vec![
                q(
                    "conflicts",
                    "conflicts",
                    vec![span(1, Z, "It keeps both copies side by side.")],
                ),
                q(
                    "refunds",
                    "how many days",
                    vec![span(0, A, "It takes fourteen days to arrive.")],
                ),
            ],
            trimmed_spans: 0,
        };
        (corpus, tokens, golden)
    }

    fn config(prefix: Prefix, top_k: usize) -> ConfigSpec {
        ConfigSpec {
            params: ChunkParams {
                strategy: Strategy::Recursive,
                chunk_size: 12,
                chunk_overlap: 0,
            },
            prefix,
            retriever: RetrieverKind::Bm25,
            top_k,
        }
    }

    #[test]
    fn the_prefix_never_shifts_ranges_and_spans_are_scored_on_the_original_text() {
        let (corpus, tokens, golden) = setup();
        let none = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::None, 2),
            &nothing_prepared(),
            true,
        )
        .unwrap();
        let head = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::HeadingPath, 2),
            &nothing_prepared(),
            true,
        )
        .unwrap();
        let ranges = |o: &ConfigOutcome| -> Vec<(usize, usize, usize, usize, usize)> {
            o.chunks
                .iter()
                .map(|c| (c.doc, c.start, c.end, c.byte_start, c.tokens))
                .collect()
        };
        assert_eq!(ranges(&none), ranges(&head));
        // The body of the Conflicts section is its own chunk; its prefix is the heading path and
        // its indexed text is the prefix, a blank line, then the untouched text.
        let body = head
            .chunks
            .iter()
            .find(|c| c.text(&corpus) == "It keeps both copies side by side.")
            .expect("the section body is one chunk");
        assert_eq!(body.prefix, "Sync > Conflicts");
        assert_eq!(
            body.indexed_text(&corpus),
            "Sync > Conflicts\n\nIt keeps both copies side by side."
        );
        assert_eq!(
            &Z[body.byte_start..body.byte_end],
            "It keeps both copies side by side."
        );
        assert!(
            none.chunks
                .iter()
                .all(|c| c.prefix.is_empty() && c.prefix_tokens == 0)
        );
        // Costs include the prefix tokens: "Sync > Conflicts\n\n" is 5 cl100k tokens.
        assert_eq!(body.prefix_tokens, 5);
        let extra: usize = head.chunks.iter().map(|c| c.prefix_tokens).sum();
        assert_eq!(head.row.index_tokens, none.row.index_tokens + extra);
        assert!(
            (head.row.tokens_per_query
                - none.row.tokens_per_query
                - 2.0 * extra as f64 / head.chunks.len() as f64)
                .abs()
                < 1e-9
        );
        // Only the heading names "conflicts": without the prefix the body is not retrieved, with
        // it the body is, and the span (on the original text) is found whole.
        assert_eq!(none.questions[0].hit, 0, "{:?}", none.questions[0]);
        assert_eq!(head.questions[0].hit, 1, "{:?}", head.questions[0]);
        assert_eq!(head.questions[0].coverage, 1.0);

        // Retrieving every chunk, every metric computed from ranges is the same with and without
        // the prefix (a shifted range would change coverage and token precision).
        let all = none.chunks.len();
        let none = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::None, all),
            &nothing_prepared(),
            false,
        )
        .unwrap();
        let title = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::TitleHeading, all),
            &nothing_prepared(),
            false,
        )
        .unwrap();
        for (a, b) in none.metrics.iter().zip(&title.metrics) {
            assert_eq!(a.span_recall, 1.0);
            assert_eq!(
                (
                    a.span_recall,
                    a.coverage,
                    a.char_iou,
                    a.char_precision,
                    a.char_recall,
                    a.unreachable
                ),
                (
                    b.span_recall,
                    b.coverage,
                    b.char_iou,
                    b.char_precision,
                    b.char_recall,
                    b.unreachable
                )
            );
        }
    }

    #[test]
    fn llm_context_without_its_context_is_an_error_and_with_it_is_the_prefix() {
        let (corpus, tokens, golden) = setup();
        let err = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::LlmContext, 2),
            &nothing_prepared(),
            false,
        )
        .unwrap_err();
        assert!(
            matches!(err, SweepError::Enrich(EnrichError::MissingContext { .. })),
            "{err}"
        );
        let chunks = chunking::chunk_corpus(
            &corpus,
            &tokens,
            &config(Prefix::None, 2).params,
            &ChunkContext::default(),
        )
        .unwrap();
        let contexts: ContextMap = chunks
            .iter()
            .map(|c| {
                (
                    enrich::ChunkKey::of(c),
                    format!("From {}.", corpus.docs[c.doc].id),
                )
            })
            .collect();
        let o = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::LlmContext, 2),
            &Arc::new(RetrievalContext {
                contexts,
                ..RetrievalContext::default()
            }),
            true,
        )
        .unwrap();
        assert_eq!(o.chunks.len(), chunks.len());
        assert_eq!(
            o.chunks[0].indexed_text(&corpus).split("\n\n").next(),
            Some("From a.md.")
        );
        assert_eq!(o.row.prefix, "llm_context");
        assert_eq!(o.row.config_id, "recursive-12-o0-llm_context-bm25-k2");
        assert_eq!(
            "recursive-12-o0-llm_context-bm25-k2"
                .parse::<ConfigSpec>()
                .unwrap()
                .prefix,
            Prefix::LlmContext
        );
    }

    #[test]
    fn the_grid_crosses_prefixes_with_strategies_and_sizes() {
        let spec = SweepSpec {
            strategies: vec![Strategy::Fixed],
            sizes: vec![64, 128],
            prefixes: vec![Prefix::None, Prefix::Title],
            ..SweepSpec::default()
        };
        let ids: Vec<String> = expand(&spec).unwrap().iter().map(ConfigSpec::id).collect();
        assert_eq!(
            ids,
            [
                "fixed-64-o9-none-bm25-k5",
                "fixed-64-o9-title-bm25-k5",
                "fixed-128-o19-none-bm25-k5",
                "fixed-128-o19-title-bm25-k5"
            ]
        );
        let spec = SweepSpec {
            prefixes: vec![],
            ..SweepSpec::default()
        };
        assert!(matches!(expand(&spec), Err(SweepError::NoPrefix)));
    }
}
