//! One configuration, end to end: chunk, prefix, index, retrieve top-k for every question, score
//! each question ([`crate::metrics`]) and aggregate into its sweep.csv row, with its costs.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use super::error::SweepError;
use super::grid::ConfigSpec;
use super::index::{ConfigIndex, RetrievalContext};
use super::rows::{ConfigOutcome, QuestionRow, StageTimes, SweepRow};
use crate::chunking::enrich::{ChunkKey, ContextCost, Prefix};
use crate::chunking::{self, Chunk, Strategy, semantic};
use crate::corpus::Corpus;
use crate::golden::GoldenSet;
use crate::metrics::{self, Aggregate, ChunkTable};
use crate::retrieval::embeddings::Role;
use crate::tokenize::CorpusTokens;

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Mean tokens shared by each chunk with the previous chunk of the same document (0 when no
/// document has two chunks), counted in the documents' token streams.
pub fn realized_overlap(tokens: &CorpusTokens, chunks: &[Chunk]) -> f64 {
    let mut pairs = 0usize;
    let mut shared = 0usize;
    for w in chunks.windows(2) {
        let (prev, cur) = (&w[0], &w[1]);
        if prev.doc != cur.doc {
            continue;
        }
        pairs += 1;
        if prev.byte_end > cur.byte_start {
            let end = prev.byte_end.min(cur.byte_end);
            shared += tokens.doc(cur.doc).count_in(cur.byte_start, end);
        }
    }
    if pairs == 0 {
        0.0
    } else {
        shared as f64 / pairs as f64
    }
}

/// Runs one configuration: chunk, prefix, index, retrieve top-k for every question, score.
/// `tokens` is the corpus's token streams ([`CorpusTokens::new`]), shared by every
/// configuration; `context` holds what the prepare step made (embeddings, model-written
/// contexts; see [`ConfigIndex::build`]). Spans are scored on the chunks' original ranges,
/// whatever the prefix.
///
/// # Errors
/// As [`ConfigIndex::build`] and [`ConfigIndex::scores`].
pub fn run_config(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    config: &ConfigSpec,
    context: &Arc<RetrievalContext>,
    keep_chunks: bool,
) -> Result<ConfigOutcome, SweepError> {
    let started = Instant::now();
    let tokenizer = tokens.counter().kind();
    let params = config.params;
    let built = ConfigIndex::build(corpus, tokens, config, context)?;
    let scale = built.margin_scale();
    let embed_cost = config_embed_cost(corpus, golden, config, &built)?;
    let context_cost = config_context_cost(&built);
    let (chunk_ms, index_ms) = (built.chunk_ms, built.index_ms);
    let chunks = &built.chunks;
    let mut times = StageTimes {
        chunk_ms,
        index_ms,
        ..StageTimes::default()
    };
    let table = ChunkTable::new(chunks, corpus.docs.len());
    let config_id = config.id();
    let mut metrics = Vec::with_capacity(golden.questions.len());
    let mut rows = Vec::with_capacity(golden.questions.len());
    for q in &golden.questions {
        let t = Instant::now();
        let scores = built.scores(&q.text)?;
        let ranking = built.rank(&scores);
        times.retrieve_ms += ms_since(t);
        let t = Instant::now();
        let m = metrics::score_question_scaled(q, &table, &scores, &ranking, scale);
        rows.push(QuestionRow {
            config_id: config_id.clone(),
            cut: config.cut().kind().into(),
            budget_tokens: config.budget,
            question_id: q.id.clone(),
            question_type: q.question_type.clone().unwrap_or_default(),
            n_spans: m.n_spans,
            hit: u8::from(m.hit),
            span_recall: m.span_recall,
            coverage: m.coverage,
            margin: m.margin,
            unreachable: u8::from(m.unreachable),
            first_correct_rank: m.first_correct_rank,
            reciprocal_rank: m.reciprocal_rank,
            char_iou: m.char_iou,
            char_precision: m.char_precision,
            char_recall: m.char_recall,
            tie_at_k: u8::from(m.tie_at_k),
            chunks_retrieved: m.retrieved_chunks,
            tokens_retrieved: m.retrieved_tokens,
            span_tokens: metrics::span_tokens(q, corpus, tokens)
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join("|"),
            retrieved_chunk_ids: ranking
                .top
                .iter()
                .map(|&i| chunks[i].id(corpus))
                .collect::<Vec<_>>()
                .join("|"),
            retrieved_scores: ranking
                .scores
                .iter()
                .map(|s| format!("{s:.4}"))
                .collect::<Vec<_>>()
                .join("|"),
            retrieved_ranges: ranking
                .top
                .iter()
                .map(|&i| format!("{}-{}", chunks[i].start, chunks[i].end))
                .collect::<Vec<_>>()
                .join("|"),
        });
        metrics.push(m);
        times.score_ms += ms_since(t);
    }
    let t = Instant::now();
    let agg: Aggregate = metrics::aggregate(&metrics);
    let index_tokens: usize = chunks.iter().map(Chunk::total_tokens).sum();
    let prefix_tokens: usize = chunks.iter().map(|c| c.prefix_tokens).sum();
    let per_chunk = |total: usize| {
        if chunks.is_empty() {
            0.0
        } else {
            total as f64 / chunks.len() as f64
        }
    };
    let mean_chunk_tokens = per_chunk(index_tokens);
    let mean_prefix_tokens = per_chunk(prefix_tokens);
    let (max_chunk_tokens, n_oversize) = chunking::oversize(corpus, chunks, &params, tokenizer);
    let row = SweepRow {
        config_id,
        strategy: params.strategy.name().into(),
        chunk_size: params.chunk_size,
        chunk_overlap: params.chunk_overlap,
        realized_overlap: realized_overlap(tokens, chunks),
        prefix: config.prefix.to_string(),
        retriever: config.retriever.name().into(),
        top_k: config.top_k,
        cut: config.cut().kind().into(),
        budget_tokens: config.budget,
        tokenizer: tokenizer.name().into(),
        n_chunks: chunks.len(),
        max_chunk_tokens,
        n_oversize,
        mean_chunk_tokens,
        mean_prefix_tokens,
        index_tokens,
        tokens_per_query: agg.tokens_per_query,
        chunks_retrieved_mean: agg.chunks_retrieved_mean,
        chunks_retrieved_max: agg.chunks_retrieved_max,
        n_docs: table.single_chunk_docs().0,
        single_chunk_docs: table.single_chunk_docs().1,
        n_questions: agg.n_questions,
        span_recall: agg.span_recall,
        span_recall_micro: agg.span_recall_micro,
        hit_rate: agg.hit_rate,
        coverage: agg.coverage,
        coverage_micro: agg.coverage_micro,
        margin: agg.margin,
        mrr: agg.mrr,
        char_iou: agg.char_iou,
        char_iou_micro: agg.char_iou_micro,
        char_precision: agg.char_precision,
        char_recall: agg.char_recall,
        unreachable: agg.unreachable,
        ties_at_k: agg.ties_at_k,
        embed_tokens: embed_cost.tokens,
        embed_cost_usd: embed_cost.cost_usd,
        embed_ms: embed_cost.ms,
        embed_input: match (
            config.retriever.needs_embeddings(),
            context.embeddings.settings(),
        ) {
            (true, Some(s)) => s.chunk_input().into(),
            _ => String::new(),
        },
        context_calls: context_cost.0,
        context_tokens: context_cost.1.prompt_tokens + context_cost.1.completion_tokens,
        context_cost_usd: context_cost.1.cost_usd,
    };
    times.score_ms += ms_since(t);
    Ok(ConfigOutcome {
        config: config.clone(),
        row,
        questions: rows,
        metrics,
        chunks: if keep_chunks {
            built.chunks.clone()
        } else {
            Vec::new()
        },
        elapsed_ms: started.elapsed().as_millis() as u64,
        times,
    })
}

/// What writing the `llm_context` contexts of `built`'s distinct chunks costs: the number of
/// calls and their summed tokens and USD (`None` when a call has no price). Zero calls for other
/// prefixes.
pub fn config_context_cost(built: &ConfigIndex) -> (usize, ContextCost) {
    let mut total = ContextCost {
        cost_usd: Some(0.0),
        ..ContextCost::default()
    };
    if built.config.prefix != Prefix::LlmContext {
        return (0, total);
    }
    let costs = &built.context.context_costs;
    let keys: HashSet<ChunkKey> = built.chunks.iter().map(ChunkKey::of).collect();
    for key in &keys {
        let c = costs.get(key).copied().unwrap_or_default();
        total.prompt_tokens += c.prompt_tokens;
        total.completion_tokens += c.completion_tokens;
        total.cost_usd = total.cost_usd.zip(c.cost_usd).map(|(a, b)| a + b);
    }
    (keys.len(), total)
}

/// Embedding cost of one configuration (see [`SweepRow::embed_tokens`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EmbedCost {
    /// cl100k tokens of the distinct texts as sent.
    pub tokens: usize,
    /// USD at the models' input prices; `None` when a side used has no price.
    pub cost_usd: Option<f64>,
    /// Embedding time attributed to those texts, ms.
    pub ms: f64,
}

/// What embedding `built`'s configuration costs: its distinct chunk texts as embedded (with their
/// prefixes unless `embed_prefix = false`; dense, hybrid), the
/// corpus's sentences (semantic) and the questions (dense, hybrid). Zero for BM25 on other
/// strategies.
///
/// # Errors
/// [`SweepError::Embed`] for a text not embedded.
pub fn config_embed_cost(
    corpus: &Corpus,
    golden: &GoldenSet,
    config: &ConfigSpec,
    built: &ConfigIndex,
) -> Result<EmbedCost, SweepError> {
    let dense = config.retriever.needs_embeddings();
    let semantic = config.params.strategy == Strategy::Semantic;
    if !dense && !semantic {
        return Ok(EmbedCost {
            cost_usd: Some(0.0),
            ..EmbedCost::default()
        });
    }
    let emb = &built.context.embeddings;
    let mut docs: Vec<Cow<'_, str>> = Vec::new();
    let mut queries: Vec<Cow<'_, str>> = Vec::new();
    if semantic {
        docs.extend(
            semantic::corpus_sentences(corpus)
                .into_iter()
                .map(Cow::Borrowed),
        );
    }
    if dense {
        // each chunk as embedded: with its prefix unless embed_prefix = false
        if let Some(settings) = emb.settings() {
            docs.extend(built.chunks.iter().map(|c| settings.chunk_text(c, corpus)));
        }
        queries.extend(
            golden
                .questions
                .iter()
                .map(|q| Cow::Borrowed(q.text.as_str())),
        );
    }
    let mut cost = EmbedCost {
        cost_usd: Some(0.0),
        ..EmbedCost::default()
    };
    for (role, texts) in [(Role::Document, docs), (Role::Query, queries)] {
        let mut seen = HashSet::new();
        let mut role_tokens = 0;
        for t in &texts {
            if !seen.insert(t.as_ref()) {
                continue;
            }
            let e = emb.get(role, t)?;
            role_tokens += e.tokens;
            cost.ms += e.ms;
        }
        cost.tokens += role_tokens;
        if role_tokens > 0 {
            cost.cost_usd = match (cost.cost_usd, emb.cost_usd(role, role_tokens)) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
    }
    Ok(cost)
}
