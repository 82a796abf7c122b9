//! The sweep's plain results: one [`SweepRow`] per configuration × cut (sweep.csv), one
//! [`QuestionRow`] per configuration × cut × question (sweep_questions.csv), and a
//! configuration's whole [`ConfigOutcome`].

use serde::{Deserialize, Serialize};

use super::grid::ConfigSpec;
use crate::chunking::Chunk;
use crate::metrics::{Cut, QuestionMetrics};

/// The `cut` of rows written before cuts were recorded: top k.
fn cut_k() -> String {
    "k".into()
}

/// The `rerank` of rows written before reranking was swept.
fn no_rerank() -> String {
    crate::retrieval::rerank::NO_RERANK.into()
}

/// The `expand` of rows written before expansion was swept.
fn no_expand() -> String {
    "none".into()
}

/// One row of sweep.csv: a configuration with its cost and aggregate metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// Configuration id.
    pub config_id: String,
    /// Chunking strategy.
    pub strategy: String,
    /// chunk_size in `tokenizer` units.
    pub chunk_size: usize,
    /// Requested chunk_overlap in `tokenizer` units.
    pub chunk_overlap: usize,
    /// What chunk_size and chunk_overlap count: `tokens`, `words` or, for an external chunker
    /// that counts them, `characters`. Empty in a sweep.csv written before the column existed
    /// (read as [`crate::chunking::size_unit`] of the strategy and tokenizer).
    #[serde(default)]
    pub size_unit: String,
    /// Mean tokens shared with the previous chunk of the same document.
    pub realized_overlap: f64,
    /// Contextual prefix.
    pub prefix: String,
    /// Retriever.
    pub retriever: String,
    /// The reranker model that reordered the retriever's candidates, or `none`
    /// ([`crate::retrieval::rerank`]); `none` in a sweep.csv written before the column existed.
    #[serde(default = "no_rerank")]
    pub rerank: String,
    /// What is sent for each retrieved chunk: `none`, `neighbours:N` or `parent:P`
    /// ([`crate::expand`]); `none` in a sweep.csv written before the column existed.
    #[serde(default = "no_expand")]
    pub expand: String,
    /// top_k (0 for a budget cut).
    pub top_k: usize,
    /// Where the ranked list is cut: `k` (top k) or `budget` (a context budget).
    #[serde(default = "cut_k")]
    pub cut: String,
    /// The budget in tokens per query, for a budget cut.
    #[serde(default)]
    pub budget_tokens: Option<usize>,
    /// Token unit.
    pub tokenizer: String,
    /// Number of chunks.
    pub n_chunks: usize,
    /// Most tokens of one chunk's own text, prefix excluded.
    #[serde(default)]
    pub max_chunk_tokens: usize,
    /// Chunks over `chunk_size` by their own count: single units that cannot be split.
    #[serde(default)]
    pub n_oversize: usize,
    /// Mean tokens per chunk, prefix included.
    pub mean_chunk_tokens: f64,
    /// Mean tokens per chunk that the prefix adds (separator included; 0 for `none`).
    #[serde(default)]
    pub mean_prefix_tokens: f64,
    /// Tokens over all chunks, prefixes included (what indexing or embedding reads once).
    pub index_tokens: usize,
    /// Mean tokens retrieved per question, prefixes included: the context sent per query
    /// (about `top_k × mean_chunk_tokens`, never more than `index_tokens`).
    pub tokens_per_query: f64,
    /// Mean chunks retrieved per question.
    #[serde(default)]
    pub chunks_retrieved_mean: f64,
    /// Most chunks retrieved for one question.
    #[serde(default)]
    pub chunks_retrieved_max: usize,
    /// Budget cuts: questions where a chunk ranked before the cut was skipped because it alone
    /// is larger than the budget (the next chunks in rank order that fit were sent instead; see
    /// [`crate::metrics::fit_budget`]); under an expansion, a hit whose unit (its window or
    /// parent) alone is larger than the budget ([`crate::expand::send`]); 0 for top k and for
    /// runs written before it was counted.
    #[serde(default)]
    pub questions_skipped_for_size: usize,
    /// Budget cuts: chunks of the index larger than the budget, prefixes included (they are
    /// never sent at this cut); 0 for top k.
    #[serde(default)]
    pub chunks_over_budget: usize,
    /// The distinct units a single hit can send alone: without an expansion the chunks
    /// (`n_chunks`); under `neighbours:N` each chunk's window (the chunk with up to N chunks each
    /// side), under `parent:P` each parent (or run of parents a chunk lies across), once however
    /// many chunks share it ([`crate::expand::send::Sender::unit_tokens`]); 0 in a sweep.csv
    /// written before it was counted.
    #[serde(default)]
    pub n_units: usize,
    /// Budget cuts: of those units, the ones larger than the budget, prefixes included (a hit
    /// whose unit it is is never sent at this cut); without an expansion `chunks_over_budget`;
    /// 0 for top k.
    #[serde(default)]
    pub units_over_budget: usize,
    /// Documents in the corpus.
    #[serde(default)]
    pub n_docs: usize,
    /// Documents that are a single chunk.
    #[serde(default)]
    pub single_chunk_docs: usize,
    /// Questions scored.
    pub n_questions: usize,
    /// Macro span recall@k.
    pub span_recall: f64,
    /// Micro span recall@k.
    pub span_recall_micro: f64,
    /// hit@k.
    pub hit_rate: f64,
    /// Macro coverage@k.
    pub coverage: f64,
    /// Micro coverage@k.
    pub coverage_micro: f64,
    /// Mean normalised margin.
    pub margin: f64,
    /// MRR@k.
    pub mrr: f64,
    /// Macro character-level IoU (code points).
    #[serde(alias = "iou")]
    pub char_iou: f64,
    /// Micro character-level IoU.
    #[serde(alias = "iou_micro")]
    pub char_iou_micro: f64,
    /// Macro character-level precision.
    #[serde(alias = "precision")]
    pub char_precision: f64,
    /// Macro character-level recall.
    #[serde(alias = "token_recall")]
    pub char_recall: f64,
    /// Questions with no chunk holding a span whole.
    pub unreachable: usize,
    /// Questions whose top-k cut fell inside tied scores.
    pub ties_at_k: usize,
    /// Tokens this configuration embeds (cl100k count of each distinct text as sent: chunks for
    /// dense and hybrid, the corpus's sentences for semantic, and the questions; 0 for BM25 on
    /// non-semantic chunks), whether or not the cache already held them.
    #[serde(default)]
    pub embed_tokens: usize,
    /// Their cost in USD at the embedding models' input prices (empty when a price is unknown).
    #[serde(default)]
    pub embed_cost_usd: Option<f64>,
    /// Embedding time of those texts, ms: each text's share (by tokens) of its batch's latency
    /// when it was embedded, kept in the cache, so a cached rerun reports the same cost.
    #[serde(default)]
    pub embed_ms: f64,
    /// What dense and hybrid embed of each chunk: `prefixed` (prefix + text, as BM25 indexes
    /// it), `bare` (the text alone, `embed_prefix = false`); empty for BM25.
    #[serde(default)]
    pub embed_input: String,
    /// `llm_context`: calls that write this configuration's contexts (one per distinct chunk),
    /// whether or not the cache answered them (0 for other prefixes).
    #[serde(default)]
    pub context_calls: usize,
    /// Their prompt + completion tokens.
    #[serde(default)]
    pub context_tokens: u64,
    /// Their cost in USD at the context model's prices (empty when it has no price).
    #[serde(default)]
    pub context_cost_usd: Option<f64>,
}

/// One row of sweep_questions.csv: a configuration × question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionRow {
    /// Configuration id.
    pub config_id: String,
    /// `k` or `budget`, as in sweep.csv.
    #[serde(default = "cut_k")]
    pub cut: String,
    /// The budget in tokens per query, for a budget cut.
    #[serde(default)]
    pub budget_tokens: Option<usize>,
    /// Question id.
    pub question_id: String,
    /// Question type tag (empty if none).
    pub question_type: String,
    /// Evidence spans.
    pub n_spans: usize,
    /// 1 when a span lies wholly in a top-k chunk.
    pub hit: u8,
    /// Span recall@k.
    pub span_recall: f64,
    /// Coverage@k.
    pub coverage: f64,
    /// Normalised margin (−1 when unreachable).
    pub margin: f64,
    /// 1 when no chunk holds a span whole.
    pub unreachable: u8,
    /// Rank of the first correct chunk in the whole ranking (empty when unreachable, or when a
    /// retriever that returns only a top-n returned no correct chunk).
    pub first_correct_rank: Option<usize>,
    /// Reciprocal rank at k.
    pub reciprocal_rank: f64,
    /// Character-level IoU (code points).
    #[serde(alias = "iou")]
    pub char_iou: f64,
    /// Character-level precision.
    #[serde(alias = "precision")]
    pub char_precision: f64,
    /// Character-level recall.
    #[serde(alias = "token_recall")]
    pub char_recall: f64,
    /// 1 when the top-k cut fell inside tied scores.
    pub tie_at_k: u8,
    /// Chunks retrieved.
    #[serde(default)]
    pub chunks_retrieved: usize,
    /// Their tokens, prefixes included.
    #[serde(default)]
    pub tokens_retrieved: usize,
    /// Tokens of each evidence span (shortest location), `|`-separated.
    #[serde(default)]
    pub span_tokens: String,
    /// Retrieved chunk ids, best first, `|`-separated.
    pub retrieved_chunk_ids: String,
    /// Their scores, `|`-separated.
    pub retrieved_scores: String,
    /// Their code-point ranges in their documents, `start-end`, `|`-separated (empty in run
    /// folders written before this column existed).
    #[serde(default)]
    pub retrieved_ranges: String,
}

/// Everything one configuration produced: its rows at every cut, from one ranked list per
/// question.
#[derive(Debug, Clone)]
pub struct ConfigOutcome {
    /// The configuration.
    pub config: ConfigSpec,
    /// One per cut, in sweep.csv's order (top k, then each context budget).
    pub cuts: Vec<CutOutcome>,
    /// The chunks (kept for `--dump-chunks`; empty otherwise).
    pub chunks: Vec<Chunk>,
    /// Wall time to chunk, index, retrieve and score this configuration at every cut, in
    /// milliseconds (kept out of sweep.csv so that equal inputs give byte-identical CSVs).
    pub elapsed_ms: u64,
    /// Where that time went.
    pub times: StageTimes,
}

impl ConfigOutcome {
    /// Its sweep.csv rows, one per cut.
    pub fn rows(&self) -> impl Iterator<Item = &SweepRow> {
        self.cuts.iter().map(|c| &c.row)
    }

    /// Its sweep_questions.csv rows, cut by cut, each in golden-set order.
    pub fn question_rows(&self) -> impl Iterator<Item = &QuestionRow> {
        self.cuts.iter().flat_map(|c| &c.questions)
    }
}

/// A configuration read at one cut.
#[derive(Debug, Clone)]
pub struct CutOutcome {
    /// The cut.
    pub cut: Cut,
    /// Its sweep.csv row.
    pub row: SweepRow,
    /// Its sweep_questions.csv rows, in golden-set order.
    pub questions: Vec<QuestionRow>,
    /// Per-question metrics, in golden-set order.
    pub metrics: Vec<QuestionMetrics>,
}

/// Wall time of one configuration's stages, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTimes {
    /// Tokenizing and chunking the corpus (token counts, heading paths included).
    pub chunk_ms: f64,
    /// Building the BM25 index.
    pub index_ms: f64,
    /// Ranking the chunks for every question, deep enough for every cut.
    pub retrieve_ms: f64,
    /// Computing the metrics at every cut (and realized overlap) from the rankings.
    pub score_ms: f64,
}
