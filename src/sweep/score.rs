//! One configuration, end to end: chunk, prefix, index, retrieve every question once, score each
//! question at every cut of the one ranked list ([`crate::metrics`]) and aggregate into one
//! sweep.csv row per cut, with the configuration's costs.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use super::error::SweepError;
use super::grid::{ConfigCut, ConfigSpec};
use super::index::{ConfigIndex, RetrievalContext};
use super::rows::{ConfigOutcome, CutOutcome, QuestionRow, StageTimes, SweepRow};
use crate::chunking::enrich::{ChunkKey, ContextCost, Prefix};
use crate::chunking::{self, Chunk, Strategy, semantic};
use crate::corpus::Corpus;
use crate::golden::GoldenSet;
use crate::metrics::{
    self, Aggregate, ChunkTable, Cut, Depth, QuestionMetrics, SentRanges, cut_ranking, rank_facts,
    score_sent,
};
use crate::retrieval::embeddings::EmbedRole;
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

/// Runs one configuration: chunk, prefix, index, retrieve every question once, deep enough for
/// every cut of `cuts` (k and each context budget, in sweep.csv's order), and score each
/// question at each cut from that one ranked list. `tokens` is the corpus's token streams
/// ([`CorpusTokens::new`]), shared by every configuration; `context` holds what the prepare
/// step made (embeddings, model-written contexts; see [`ConfigIndex::build`]). Spans are scored
/// on the chunks' original ranges, whatever the prefix.
///
/// # Errors
/// As [`ConfigIndex::build`] and [`ConfigIndex::rank`].
pub fn run_config(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    config: &ConfigSpec,
    cuts: &[Cut],
    context: &Arc<RetrievalContext>,
    keep_chunks: bool,
) -> Result<ConfigOutcome, SweepError> {
    let started = Instant::now();
    let built = ConfigIndex::build(corpus, tokens, config, context)?;
    let mut times = StageTimes {
        chunk_ms: built.chunk_ms,
        index_ms: built.index_ms,
        ..StageTimes::default()
    };
    let scored = score_cuts(corpus, tokens, golden, &built, cuts, &mut times)?;
    let t = Instant::now();
    let row = config_row(corpus, tokens, golden, &built)?;
    let chunk_tokens = built.chunk_tokens();
    // what a budget is compared with before a hit is taken: its unit (the chunk itself
    // without an expansion)
    let unit_tokens = built.sender(corpus, tokens).map(|s| s.unit_tokens());
    let unit_tokens = unit_tokens.as_deref().unwrap_or(&chunk_tokens);
    let cuts = scored
        .into_iter()
        .map(|s| {
            let agg = metrics::aggregate(&s.metrics);
            let over = |sizes: &[usize]| {
                s.cut
                    .budget_tokens()
                    .map_or(0, |b| sizes.iter().filter(|&&t| t > b).count())
            };
            CutOutcome {
                row: SweepRow {
                    questions_skipped_for_size: s.questions_skipped_for_size,
                    chunks_over_budget: over(&chunk_tokens),
                    n_units: unit_tokens.len(),
                    units_over_budget: over(unit_tokens),
                    ..row_at_cut(&row, s.cut, &s.config_id, &agg)
                },
                cut: s.cut,
                questions: s.questions,
                metrics: s.metrics,
            }
        })
        .collect();
    times.score_ms += ms_since(t);
    Ok(ConfigOutcome {
        config: config.clone(),
        cuts,
        chunks: if keep_chunks {
            built.chunks
        } else {
            Vec::new()
        },
        elapsed_ms: started.elapsed().as_millis() as u64,
        times,
    })
}

/// One cut's per-question rows and metrics, in golden-set order.
#[derive(Debug, Clone)]
pub struct CutScores {
    /// The cut.
    pub cut: Cut,
    /// The configuration's id at the cut ([`ConfigCut::id`]).
    pub config_id: String,
    /// sweep_questions.csv's rows.
    pub questions: Vec<QuestionRow>,
    /// The metrics behind them.
    pub metrics: Vec<QuestionMetrics>,
    /// Questions whose budget cut skipped a chunk larger than the whole budget (0 for top k).
    pub questions_skipped_for_size: usize,
}

/// Retrieves every question of `golden` once through `built`'s retriever, asked deep enough
/// for every cut ([`Depth`]), and scores it at each of `cuts` from that one ranked list
/// (the margin and first correct rank once, from the whole list; the rest per cut). Adds the
/// retrieval and scoring times to `times`.
///
/// # Errors
/// As [`ConfigIndex::rank`].
pub fn score_cuts(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    built: &ConfigIndex,
    cuts: &[Cut],
    times: &mut StageTimes,
) -> Result<Vec<CutScores>, SweepError> {
    let chunks = &built.chunks;
    let chunk_tokens = built.chunk_tokens();
    let depth = Depth::new(cuts, &chunk_tokens);
    let scale = built.retriever.margin_scale();
    let table = ChunkTable::new(chunks, corpus.docs.len());
    let n = golden.questions.len();
    let mut out: Vec<CutScores> = cuts
        .iter()
        .map(|&cut| CutScores {
            cut,
            config_id: ConfigCut {
                config: built.config.clone(),
                cut,
            }
            .id(),
            questions: Vec::with_capacity(n),
            metrics: Vec::with_capacity(n),
            questions_skipped_for_size: 0,
        })
        .collect();
    let sender = built.sender(corpus, tokens);
    let keep_ranking = sender.is_some();
    // Every question ranked first, in parallel (configurations run one at a time), keeping of
    // each ranking only its head and its facts (a whole ranking has a score per chunk), and the
    // whole ranking only when an expansion may read past the head; the first error in question
    // order is returned.
    let t = Instant::now();
    let ranked: Vec<Result<_, SweepError>> = golden
        .questions
        .par_iter()
        .map(|q| {
            let ranked = built.rank(&q.text, depth.ask)?;
            let head = depth.head(&ranked, &chunk_tokens);
            let facts = rank_facts(q, &table, &ranked, scale);
            Ok((head, facts, keep_ranking.then_some(ranked)))
        })
        .collect();
    times.retrieve_ms += ms_since(t);
    for (q, ranked) in golden.questions.iter().zip(ranked) {
        let (head, facts, ranked) = ranked?;
        let t = Instant::now();
        let span_tokens = join(metrics::span_tokens(q, corpus, tokens), |t| t.to_string());
        for at in &mut out {
            let (m, listed, skipped) = match (&sender, &ranked) {
                (None, _) | (_, None) => {
                    let cut = cut_ranking(&head, at.cut, &chunk_tokens);
                    let ranking = &cut.ranking;
                    let listed = Listed {
                        ids: join(&ranking.top, |&i| chunks[i].id(corpus)),
                        scores: join(&ranking.scores, |s| format!("{s:.4}")),
                        ranges: join(&ranking.top, |&i| {
                            format!("{}-{}", chunks[i].start, chunks[i].end)
                        }),
                    };
                    let m = metrics::score_question(q, &table, &facts, &cut);
                    (m, listed, cut.skipped_for_size)
                }
                (Some(sender), Some(ranked)) => {
                    let sent = sender.cut(ranked, &head, at.cut);
                    let expand = built.config.expand;
                    let listed = Listed {
                        ids: join(&sent.units, |u| u.id(corpus, chunks, expand)),
                        scores: join(&sent.units, |u| format!("{:.4}", u.score)),
                        ranges: join(&sent.units, |u| format!("{}-{}", u.start, u.end)),
                    };
                    let ranges = SentRanges {
                        ranges: sent.ranges(),
                        tokens: sent.tokens(),
                        taken: sent.taken(),
                        tie_at_cut: sent.tie_at_cut,
                    };
                    (
                        score_sent(q, &facts, &ranges),
                        listed,
                        sent.skipped_for_size,
                    )
                }
            };
            at.questions_skipped_for_size += usize::from(skipped > 0);
            at.questions.push(QuestionRow {
                config_id: at.config_id.clone(),
                cut: at.cut.kind().into(),
                budget_tokens: at.cut.budget_tokens(),
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
                span_tokens: span_tokens.clone(),
                retrieved_chunk_ids: listed.ids,
                retrieved_scores: listed.scores,
                retrieved_ranges: listed.ranges,
            });
            at.metrics.push(m);
        }
        times.score_ms += ms_since(t);
    }
    Ok(out)
}

/// What a question's row lists of what was sent: ids, scores and code-point ranges, `|`-joined.
struct Listed {
    ids: String,
    scores: String,
    ranges: String,
}

/// `items`, each written by `f`, joined by `|`.
fn join<T>(items: impl IntoIterator<Item = T>, f: impl Fn(T) -> String) -> String {
    items.into_iter().map(f).collect::<Vec<_>>().join("|")
}

/// The columns of a configuration's sweep.csv rows that do not depend on the cut (the cut's
/// columns are left at their defaults for [`row_at_cut`]): chunks, costs, overlap.
///
/// # Errors
/// As [`config_embed_cost`].
fn config_row(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    built: &ConfigIndex,
) -> Result<SweepRow, SweepError> {
    let config = &built.config;
    let params = config.params;
    let chunks = &built.chunks;
    let tokenizer = tokens.counter().kind();
    let embed_cost = config_embed_cost(corpus, golden, config, built)?;
    let context_cost = config_context_cost(built);
    let table = ChunkTable::new(chunks, corpus.docs.len());
    let index_tokens: usize = chunks.iter().map(Chunk::total_tokens).sum();
    let prefix_tokens: usize = chunks.iter().map(|c| c.prefix_tokens).sum();
    let per_chunk = |total: usize| {
        if chunks.is_empty() {
            0.0
        } else {
            total as f64 / chunks.len() as f64
        }
    };
    let size_unit = chunking::unit_of(&params, tokenizer, Some(&built.context.external));
    let (max_chunk_tokens, n_oversize) = chunking::oversize(
        corpus,
        chunks,
        &params,
        tokenizer,
        Some(&built.context.external),
    );
    let (n_docs, single_chunk_docs) = table.single_chunk_docs();
    Ok(SweepRow {
        config_id: String::new(),
        strategy: params.strategy.name().into(),
        chunk_size: params.chunk_size,
        chunk_overlap: params.chunk_overlap,
        size_unit: size_unit.into(),
        realized_overlap: realized_overlap(tokens, chunks),
        prefix: config.prefix.to_string(),
        retriever: config.retriever.name().into(),
        rerank: match config.rerank {
            true => built.context.rerank_model.clone(),
            false => crate::retrieval::rerank::NO_RERANK.into(),
        },
        expand: config.expand.to_string(),
        top_k: 0,
        cut: String::new(),
        budget_tokens: None,
        tokenizer: tokenizer.name().into(),
        n_chunks: chunks.len(),
        max_chunk_tokens,
        n_oversize,
        mean_chunk_tokens: per_chunk(index_tokens),
        mean_prefix_tokens: per_chunk(prefix_tokens),
        index_tokens,
        tokens_per_query: 0.0,
        chunks_retrieved_mean: 0.0,
        chunks_retrieved_max: 0,
        questions_skipped_for_size: 0,
        chunks_over_budget: 0,
        n_units: chunks.len(),
        units_over_budget: 0,
        n_docs,
        single_chunk_docs,
        n_questions: 0,
        span_recall: 0.0,
        span_recall_micro: 0.0,
        hit_rate: 0.0,
        coverage: 0.0,
        coverage_micro: 0.0,
        margin: 0.0,
        mrr: 0.0,
        char_iou: 0.0,
        char_iou_micro: 0.0,
        char_precision: 0.0,
        char_recall: 0.0,
        unreachable: 0,
        ties_at_k: 0,
        embed_tokens: embed_cost.tokens,
        embed_cost_usd: embed_cost.cost_usd,
        embed_ms: embed_cost.ms,
        embed_input: match built.context.embeddings.settings() {
            Some(s) if config.retriever.embeds(true) => s.chunk_input().into(),
            _ => String::new(),
        },
        context_calls: context_cost.0,
        context_tokens: context_cost.1.prompt_tokens + context_cost.1.completion_tokens,
        context_cost_usd: context_cost.1.cost_usd,
    })
}

/// `row` (from [`config_row`]) at one cut: its id, cut columns and the cut's aggregates.
fn row_at_cut(row: &SweepRow, cut: Cut, config_id: &str, agg: &Aggregate) -> SweepRow {
    SweepRow {
        config_id: config_id.to_string(),
        top_k: cut.top_k(),
        cut: cut.kind().into(),
        budget_tokens: cut.budget_tokens(),
        tokens_per_query: agg.tokens_per_query,
        chunks_retrieved_mean: agg.chunks_retrieved_mean,
        chunks_retrieved_max: agg.chunks_retrieved_max,
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
        ..row.clone()
    }
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
    let dense = config
        .retriever
        .embeds(built.context.embeddings.settings().is_some());
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
    for (role, texts) in [(EmbedRole::Document, docs), (EmbedRole::Query, queries)] {
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
