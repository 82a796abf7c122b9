//! Tests of the grid, and of prefixes through whole configurations.

mod grid {
    use super::super::*;
    use crate::metrics::Cut;

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
    fn every_invalid_configuration_of_the_grid_is_named() {
        use crate::chunking::Strategy;
        // The grid of `--strategies fixed,recursive --sizes 0,32,40,64 --overlap 32`: size 0 and
        // size 32 (overlap not below the size) are invalid for both strategies.
        let spec = SweepSpec {
            strategies: vec![Strategy::Fixed, Strategy::Recursive],
            sizes: vec![0, 32, 40, 64],
            overlap: Overlap::Tokens(32),
            ..SweepSpec::default()
        };
        let Err(SweepError::InvalidConfigs(invalid)) = expand(&spec) else {
            panic!("four invalid configurations expected");
        };
        assert_eq!(invalid.len(), 4, "{invalid:?}");
        for (i, (strategy, size)) in [
            ("fixed", 0),
            ("fixed", 32),
            ("recursive", 0),
            ("recursive", 32),
        ]
        .into_iter()
        .enumerate()
        {
            assert!(
                invalid[i].starts_with(&format!("{strategy} at chunk_size {size}: ")),
                "{}",
                invalid[i]
            );
        }
        assert!(invalid[1].contains("chunk_overlap 32 must be smaller than chunk_size 32"));
        let message = SweepError::InvalidConfigs(invalid).to_string();
        assert!(
            message.starts_with("4 invalid configuration(s) in the grid:\n  fixed at chunk_size 0"),
            "{message}"
        );
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
            "fixed-64-o9-none-bm25"
        );
        // Cuts are read from each configuration's one ranking: k first, then each budget once.
        let spec = SweepSpec {
            budgets: vec![2000, 1000, 2000],
            ..SweepSpec::default()
        };
        assert_eq!(expand(&spec).unwrap().len(), 15);
        assert_eq!(
            spec.cuts(),
            [Cut::K(5), Cut::Budget(2000), Cut::Budget(1000)]
        );
    }

    #[test]
    fn config_ids_parse_back() {
        for config in expand(&SweepSpec::default()).unwrap() {
            for cut in [Cut::K(5), Cut::Budget(2000)] {
                let at = ConfigCut {
                    config: config.clone(),
                    cut,
                };
                assert_eq!(at.id().parse::<ConfigCut>().unwrap(), at);
            }
        }
        let c: ConfigCut = "recursive-256-o38-none-bm25-k5".parse().unwrap();
        assert_eq!(c.config.params.chunk_size, 256);
        assert_eq!(c.config.params.chunk_overlap, 38);
        assert_eq!(c.cut, Cut::K(5));
        let b: ConfigCut = "recursive-256-o38-none-bm25-b2000".parse().unwrap();
        assert_eq!((b.config, b.cut), (c.config, Cut::Budget(2000)));
        assert!(
            "recursive-256-o300-none-bm25-k5"
                .parse::<ConfigCut>()
                .is_err()
        );
        assert_eq!(
            "recursive-256-o38-none-hybrid-k5"
                .parse::<ConfigCut>()
                .unwrap()
                .config
                .retriever,
            RetrieverKind::Hybrid
        );
        // an unknown retriever name reads as an external retriever's (whether one is declared
        // is checked with the plan); one that could not be a retriever's name is refused
        let colbert: ConfigCut = "recursive-256-o38-none-colbert-k5".parse().unwrap();
        assert!(colbert.config.retriever.is_external());
        assert_eq!(colbert.id(), "recursive-256-o38-none-colbert-k5");
        assert!(
            "recursive-256-o38-none-ColBERT-k5"
                .parse::<ConfigCut>()
                .is_err()
        );
        // an external chunker's name may hold dashes; a name that breaks the rule is refused
        let ext: ConfigCut = "lc-recursive-256-o38-none-bm25-k5".parse().unwrap();
        assert_eq!(ext.config.params.strategy.name(), "lc-recursive");
        assert!(ext.config.params.strategy.is_external());
        assert_eq!(ext.config.params.chunk_size, 256);
        assert_eq!(ext.id(), "lc-recursive-256-o38-none-bm25-k5");
        assert!("Blob-256-o38-none-bm25-k5".parse::<ConfigCut>().is_err());
        assert!("256-o38-none-bm25-k5".parse::<ConfigCut>().is_err());
    }

    #[test]
    fn bm25_settings_other_than_the_default_are_in_the_id_and_parse_back() {
        use crate::chunking::Strategy;
        use crate::retrieval::{AnalyzerKind, Bm25Settings};
        let spec = SweepSpec {
            strategies: vec![Strategy::Words],
            sizes: vec![64],
            bm25: Bm25Settings {
                analyzer: AnalyzerKind::Seed,
                stem: true,
                k1: 0.9,
                b: 0.4,
            },
            ..SweepSpec::default()
        };
        let c = ConfigCut {
            config: expand(&spec).unwrap().remove(0),
            cut: Cut::K(5),
        };
        assert_eq!(c.id(), "words-64-o9-none-bm25+seed+stem+k1_0.9+b_0.4-k5");
        assert_eq!(c.id().parse::<ConfigCut>().unwrap(), c);
        let d = "words-64-o9-title_heading-hybrid+k1_2-k3"
            .parse::<ConfigCut>()
            .unwrap()
            .config;
        assert_eq!(
            (d.retriever, d.bm25.k1, d.bm25.b),
            (RetrieverKind::Hybrid, 2.0, 0.75)
        );
        assert!(
            "words-64-o9-none-bm25+b_1.5-k5"
                .parse::<ConfigCut>()
                .is_err()
        );
        assert!(
            "words-64-o9-none-bm25+porter-k5"
                .parse::<ConfigCut>()
                .is_err()
        );
        let bad = SweepSpec {
            bm25: Bm25Settings {
                k1: -1.0,
                ..Bm25Settings::default()
            },
            ..spec
        };
        assert!(matches!(expand(&bad), Err(SweepError::Settings(_))));
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
    use crate::metrics::Cut;
    use crate::tokenize::{CorpusTokens, TokenizerKind};

    const A: &str = "# Billing\n\n## Refunds\n\nIt takes fourteen days to arrive.\n\n## Invoices\n\nIt is sent on the first of the month.\n";
    const Z: &str = "# Sync\n\n## Conflicts\n\nIt keeps both copies side by side.\n";

    /// BM25 without model-written contexts: nothing for the prepare step to make.
    fn nothing_prepared(corpus: &Corpus, golden: &GoldenSet) -> Arc<RetrievalContext> {
        Arc::new(RetrievalContext::for_spec(
            corpus,
            &SweepSpec::default(),
            golden,
        ))
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
            origin: Default::default(),
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

    fn config(prefix: Prefix) -> ConfigSpec {
        ConfigSpec {
            params: ChunkParams {
                strategy: Strategy::Recursive,
                chunk_size: 12,
                chunk_overlap: 0,
            },
            prefix,
            retriever: RetrieverKind::Bm25,
            bm25: Default::default(),
            rerank: false,
            expand: Default::default(),
        }
    }

    /// The configuration with `prefix` read at top `k` (chunks kept with `keep_chunks`).
    fn run(
        prefix: Prefix,
        k: usize,
        context: &Arc<RetrievalContext>,
        keep_chunks: bool,
    ) -> Result<(ConfigOutcome, CutOutcome), SweepError> {
        let (corpus, tokens, golden) = setup();
        let mut o = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(prefix),
            &[Cut::K(k)],
            context,
            keep_chunks,
        )?;
        let at = o.cuts.remove(0);
        Ok((o, at))
    }

    #[test]
    fn the_prefix_never_shifts_ranges_and_spans_are_scored_on_the_original_text() {
        let (corpus, _, golden) = setup();
        let (none, none_k2) =
            run(Prefix::None, 2, &nothing_prepared(&corpus, &golden), true).unwrap();
        let (head, head_k2) = run(
            Prefix::HeadingPath,
            2,
            &nothing_prepared(&corpus, &golden),
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
        assert_eq!(head_k2.row.index_tokens, none_k2.row.index_tokens + extra);
        // Tokens per query counts the prefixes of the chunks actually retrieved.
        for q in &head_k2.questions {
            let ids: Vec<&str> = q.retrieved_chunk_ids.split('|').collect();
            let sum: usize = head
                .chunks
                .iter()
                .filter(|c| ids.contains(&c.id(&corpus).as_str()))
                .map(crate::chunking::Chunk::total_tokens)
                .sum();
            assert_eq!(q.tokens_retrieved, sum);
        }
        let mean = head_k2
            .questions
            .iter()
            .map(|q| q.tokens_retrieved as f64)
            .sum::<f64>()
            / head_k2.questions.len() as f64;
        assert!((head_k2.row.tokens_per_query - mean).abs() < 1e-9);
        // Only the heading names "conflicts": without the prefix the body is not retrieved, with
        // it the body is, and the span (on the original text) is found whole.
        assert_eq!(none_k2.questions[0].hit, 0, "{:?}", none_k2.questions[0]);
        assert_eq!(head_k2.questions[0].hit, 1, "{:?}", head_k2.questions[0]);
        assert_eq!(head_k2.questions[0].coverage, 1.0);

        // Retrieving every chunk, every metric computed from ranges is the same with and without
        // the prefix (a shifted range would change coverage and token precision).
        let all = none.chunks.len();
        let (_, none) = run(
            Prefix::None,
            all,
            &nothing_prepared(&corpus, &golden),
            false,
        )
        .unwrap();
        let (_, title) = run(
            Prefix::TitleHeading,
            all,
            &nothing_prepared(&corpus, &golden),
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
        let Err(err) = run(
            Prefix::LlmContext,
            2,
            &nothing_prepared(&corpus, &golden),
            false,
        ) else {
            panic!("llm_context without its context ran");
        };
        assert!(
            matches!(err, SweepError::Enrich(EnrichError::MissingContext { .. })),
            "{err}"
        );
        let chunks = chunking::chunk_corpus(
            &corpus,
            &tokens,
            &config(Prefix::None).params,
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
        let context = Arc::new(RetrievalContext {
            contexts,
            ..RetrievalContext::for_spec(&corpus, &SweepSpec::default(), &golden)
        });
        let (o, at) = run(Prefix::LlmContext, 2, &context, true).unwrap();
        assert_eq!(o.chunks.len(), chunks.len());
        assert_eq!(
            o.chunks[0].indexed_text(&corpus).split("\n\n").next(),
            Some("From a.md.")
        );
        assert_eq!(at.row.prefix, "llm_context");
        assert_eq!(at.row.config_id, "recursive-12-o0-llm_context-bm25-k2");
        assert_eq!(
            "recursive-12-o0-llm_context-bm25-k2"
                .parse::<ConfigCut>()
                .unwrap()
                .config
                .prefix,
            Prefix::LlmContext
        );
    }

    #[test]
    fn a_parent_no_larger_than_its_chunk_is_left_out_of_the_grid() {
        use crate::chunking::Strategy;
        use crate::exit::ExitClass;
        use crate::expand::Expand;
        let spec = SweepSpec {
            strategies: vec![Strategy::Fixed],
            sizes: vec![128, 256, 512],
            expand: vec![Expand::None, Expand::Parent(256)],
            ..SweepSpec::default()
        };
        let ids: Vec<String> = expand(&spec).unwrap().iter().map(ConfigSpec::id).collect();
        assert_eq!(
            ids,
            [
                "fixed-128-o19-none-bm25",
                "fixed-128-o19-none-bm25+parent256",
                "fixed-256-o38-none-bm25",
                "fixed-512-o76-none-bm25",
            ]
        );
        assert_eq!(
            crate::expand::left_out::left_out(&spec.expand, &spec.sizes),
            [(Expand::Parent(256), vec![256, 512])]
        );
        assert_eq!(
            crate::expand::left_out::left_out_note(&spec.expand, &spec.sizes).unwrap(),
            "left out of the grid: parent:256 on chunk size 256, 512 (a parent no larger than \
             its chunk sends nothing more)"
        );
        // every size at or above the cap: an error, not an empty expansion
        let none_left = SweepSpec {
            expand: vec![Expand::None, Expand::Parent(128)],
            sizes: vec![128, 256],
            ..spec.clone()
        };
        let err = expand(&none_left).unwrap_err();
        assert_eq!(err.exit_class(), ExitClass::Usage);
        assert_eq!(
            err.to_string(),
            "the expansion parent:128 has no configuration left to sweep: every chunk size \
             swept (128, 256) is at least 128 tokens, and a parent no larger than its chunk sends \
             nothing more; give a parent larger than the chunk sizes (for example parent:1024) or \
             leave parent:128 out of the expansions"
        );
        // neighbours and parents above every size leave nothing out
        let all_in = SweepSpec {
            expand: vec![Expand::Neighbours(1), Expand::Parent(1024)],
            ..spec
        };
        assert_eq!(expand(&all_in).unwrap().len(), 6);
        assert_eq!(
            crate::expand::left_out::left_out_note(&all_in.expand, &all_in.sizes),
            None
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
                "fixed-64-o9-none-bm25",
                "fixed-64-o9-title-bm25",
                "fixed-128-o19-none-bm25",
                "fixed-128-o19-title-bm25"
            ]
        );
        let spec = SweepSpec {
            prefixes: vec![],
            ..SweepSpec::default()
        };
        assert!(matches!(expand(&spec), Err(SweepError::NoPrefix)));
    }

    #[test]
    fn an_expanded_configuration_scores_what_it_sends_and_never_exceeds_its_budget() {
        use crate::expand::Expand;
        let (corpus, tokens, golden) = setup();
        let context = nothing_prepared(&corpus, &golden);
        let cuts = [Cut::K(1), Cut::Budget(30)];
        let outcome = |expand| {
            let config = ConfigSpec {
                expand,
                ..config(Prefix::None)
            };
            run_config(&corpus, &tokens, &golden, &config, &cuts, &context, false).unwrap()
        };
        let none = outcome(Expand::None);
        let parent = outcome(Expand::Parent(1024));
        let k1 = &parent.cuts[0];
        assert_eq!(k1.row.config_id, "recursive-12-o0-none-bm25+parent1024-k1");
        assert_eq!(k1.row.expand, "parent:1024");
        assert_eq!(none.cuts[0].row.expand, "none");
        // "how many days" finds the recursive chunk "It takes fourteen days to arrive.\n\n##
        // Invoices", which crosses a heading: both its sections are sent, from "## Refunds" to
        // the end of the Invoices body, as one unit
        let refunds = &k1.questions[1];
        assert_eq!(refunds.retrieved_chunk_ids, "a.md#parent1-2");
        let start = A.find("## Refunds").unwrap();
        let end = A.find("month.").unwrap() + "month.".len();
        assert_eq!(refunds.retrieved_ranges, format!("{start}-{end}"));
        let sent = tokens.counter().count(&A[start..end]);
        assert_eq!(refunds.tokens_retrieved, sent);
        assert_eq!(refunds.span_recall, 1.0);
        // "conflicts" ranks "# Sync\n\n## Conflicts" first, which holds no evidence: alone it
        // misses; its two parents are the whole of z.md, which holds the span
        let conflicts = &k1.questions[0];
        assert_eq!(conflicts.retrieved_chunk_ids, "z.md#parent0-1");
        assert_eq!(
            (none.cuts[0].questions[0].span_recall, conflicts.span_recall),
            (0.0, 1.0)
        );
        // the same ranking: MRR and the margin do not move
        assert_eq!(k1.row.mrr, none.cuts[0].row.mrr);
        assert_eq!(k1.row.margin, none.cuts[0].row.margin);
        for o in [&none, &parent, &outcome(Expand::Neighbours(1))] {
            for q in &o.cuts[1].questions {
                assert!(
                    q.tokens_retrieved <= 30,
                    "{} {}",
                    q.config_id,
                    q.tokens_retrieved
                );
            }
        }
    }
}

mod rerank {
    use super::super::*;

    #[test]
    fn reranking_doubles_the_grid_and_its_ids_read_back() {
        let spec = SweepSpec {
            strategies: vec![crate::chunking::Strategy::Recursive],
            sizes: vec![256],
            retrievers: vec![RetrieverKind::Dense],
            rerank: vec!["none".into(), "bge-reranker-base".into()],
            ..SweepSpec::default()
        };
        assert_eq!(spec.rerank_model().unwrap(), Some("bge-reranker-base"));
        let configs = expand(&spec).unwrap();
        let ids: Vec<String> = configs.iter().map(ConfigSpec::id).collect();
        assert_eq!(
            ids,
            [
                "recursive-256-o38-none-dense",
                "recursive-256-o38-none-dense+rerank"
            ]
        );
        let at = ConfigCut {
            config: configs[1].clone(),
            cut: crate::metrics::Cut::K(5),
        };
        assert_eq!(at.id().parse::<ConfigCut>().unwrap(), at);
        let two = SweepSpec {
            rerank: vec!["a".into(), "b".into()],
            ..spec.clone()
        };
        let e = expand(&two).unwrap_err().to_string();
        assert!(e.contains("one reranker model per sweep"), "{e}");
        let empty = SweepSpec {
            rerank: Vec::new(),
            ..spec
        };
        assert!(expand(&empty).is_err());
    }
}

mod expansion {
    use super::super::*;
    use crate::expand::Expand;

    #[test]
    fn expansions_multiply_the_grid_and_their_ids_read_back() {
        let spec = SweepSpec {
            strategies: vec![crate::chunking::Strategy::Recursive],
            sizes: vec![128],
            rerank: vec!["none".into(), "m".into()],
            expand: vec![Expand::None, Expand::Neighbours(1), Expand::Parent(1024)],
            ..SweepSpec::default()
        };
        let configs = expand(&spec).unwrap();
        let ids: Vec<String> = configs.iter().map(ConfigSpec::id).collect();
        assert_eq!(
            ids,
            [
                "recursive-128-o19-none-bm25",
                "recursive-128-o19-none-bm25+neighbours1",
                "recursive-128-o19-none-bm25+parent1024",
                "recursive-128-o19-none-bm25+rerank",
                "recursive-128-o19-none-bm25+rerank+neighbours1",
                "recursive-128-o19-none-bm25+rerank+parent1024",
            ]
        );
        for c in &configs {
            for cut in [crate::metrics::Cut::K(5), crate::metrics::Cut::Budget(2000)] {
                let at = ConfigCut {
                    config: c.clone(),
                    cut,
                };
                assert_eq!(at.id().parse::<ConfigCut>().unwrap(), at);
            }
            // an expansion reads the ranking of its configuration without it
            assert_eq!(c.ranked().id(), ids[if c.rerank { 3 } else { 0 }]);
        }
        let seeded: ConfigCut = "words-64-o9-none-bm25+seed+stem+parent512-b1000"
            .parse()
            .unwrap();
        assert_eq!(seeded.config.expand, Expand::Parent(512));
        assert!(seeded.config.bm25.stem);
        let empty = SweepSpec {
            expand: Vec::new(),
            ..spec
        };
        let e = expand(&empty).unwrap_err().to_string();
        assert!(e.contains("no expansion to sweep"), "{e}");
    }
}
