//! The names of the files in a run folder, in one place. Column meanings are in the README.

/// What the run was: version, resolved plan, input hashes, timings, the files written.
pub const MANIFEST: &str = "manifest.json";
/// One row per configuration.
pub const SWEEP: &str = "sweep.csv";
/// One row per configuration × question.
pub const SWEEP_QUESTIONS: &str = "sweep_questions.csv";
/// The selection: every configuration with its status, intervals and stability.
pub const SELECTION: &str = "selection.csv";
/// Each prefix against `none` at equal strategy and size (when the grid has prefixes).
pub const PREFIX_COMPARISON: &str = "prefix_comparison.csv";
/// The decision and its reasons.
pub const REPORT: &str = "report.md";
/// The page for reviewers: report.md's content, the figure, the configuration table and, per
/// question, each candidate's chunks with the evidence marked, answers and verdicts.
pub const HTML: &str = "report.html";
/// Span recall, coverage, margin and tokens per query against chunk size.
pub const PLOT: &str = "sweep.svg";
/// Span recall against tokens per query, with the cost–quality frontier and the pick.
pub const FRONTIER: &str = "frontier.svg";
/// The judge stage per candidate: pass rates, intervals, latency, tokens, cost.
pub const JUDGE: &str = "judge.csv";
/// The judge stage per candidate × question (the resumable journal).
pub const JUDGE_QUESTIONS: &str = "judge_questions.csv";
/// The planted controls and repeats of the judge stage, one verdict per row (never in a pass
/// rate).
pub const JUDGE_CHECKS: &str = "judge_checks.csv";
/// `judge-check`: the judge's accuracy on labelled items, per criterion.
pub const JUDGE_CHECK: &str = "judge_check.csv";
/// `judge-check`: every labelled item's verdict.
pub const JUDGE_CHECK_ITEMS: &str = "judge_check_items.csv";
/// Every chat call of the judge stage.
pub const CALLS: &str = "calls.csv";
/// Every embedding request of the prepare step.
pub const EMBED_CALLS: &str = "embed_calls.csv";
/// Each expanded configuration against the same configuration sending its chunks alone.
pub const EXPAND_COMPARISON: &str = "expand_comparison.csv";
/// Each reranked configuration against the same configuration without reranking.
pub const RERANK_COMPARISON: &str = "rerank_comparison.csv";
/// Each configuration of an external retriever against the same configuration under exact
/// cosine.
pub const RETRIEVER_COMPARISON: &str = "retriever_comparison.csv";
/// Every rerank request of the prepare step (cache hits included).
pub const RERANK_CALLS: &str = "rerank_calls.csv";
/// What the rerank step did: counts, tokens, cost, time.
pub const RERANK: &str = "rerank.json";
/// What the embedding step did: counts, tokens, cost, time, settings.
pub const EMBEDDINGS: &str = "embeddings.json";
/// `chunksweep extract`'s record of what it wrote (docs/documents.md); at the top of a corpus
/// folder it is not a document.
pub const EXTRACT_JSON: &str = "extract.json";
/// Every call that wrote an `llm_context` prefix.
pub const CONTEXT_CALLS: &str = "context_calls.csv";
/// Per external configuration: its chunker and versions, and how its chunks were placed in their
/// documents (docs/chunkers.md).
pub const CHUNKERS: &str = "chunkers.csv";
/// `chunks/<config_id>.jsonl` with `--dump-chunks`.
pub const CHUNKS_DIR: &str = "chunks";
/// The judge stage's settings (models, caps, prompt hashes) that the journal was made with.
pub const JUDGE_SETTINGS: &str = "judge_settings.json";
/// The batches of `run --batch`: each batch's id, input file, calls and state, written when it is
/// submitted, so that a rerun polls it instead of submitting its calls again.
pub const BATCHES: &str = "batches.json";
/// Where batches.json is written before it is renamed into place.
pub const BATCHES_TMP: &str = "batches.json.tmp";
/// `check --judge`: the fingerprints of the inputs (chunker, documents, questions) its judged
/// answers were made from; a rerun into the folder resumes only from answers of the same inputs.
pub const JUDGE_INPUTS: &str = "judge_inputs.json";
/// `check`: the verdict, the questions that got worse and what changed since the baseline.
pub const CHECK_MD: &str = "check.md";
/// `check`: everything check.md says, with every question compared.
pub const CHECK_JSON: &str = "check.json";
/// A shard's record (`sweep --shard`): which part of which grid, the fingerprints of its
/// inputs and of its files; written last, so a shard folder without it is incomplete.
pub const SHARD: &str = "shard.json";
/// shard.json while it is written (renamed to [`SHARD`] when whole).
pub const SHARD_TMP: &str = "shard.json.tmp";
/// The run folder's advisory lock (held by the process writing the folder; never an output).
pub const LOCK: &str = ".chunksweep.lock";

/// Every name chunksweep writes at the top of a run folder (files and the chunks folder): a
/// folder holding anything else (judge-check's judge_check.csv and judge_check_items.csv
/// included, whose calls.csv a run would mix with its own) is not a run folder, and `sweep` and
/// `run` refuse to write into it ([`crate::report::run_dir::RunDir::check_out`] with [`RUN_OUTPUTS`]).
pub const RUN_FILES: &[&str] = &[
    MANIFEST,
    SWEEP,
    SWEEP_QUESTIONS,
    SELECTION,
    PREFIX_COMPARISON,
    REPORT,
    HTML,
    PLOT,
    FRONTIER,
    JUDGE,
    JUDGE_QUESTIONS,
    JUDGE_CHECKS,
    CALLS,
    EMBED_CALLS,
    EMBEDDINGS,
    RERANK_CALLS,
    RERANK,
    RERANK_COMPARISON,
    EXPAND_COMPARISON,
    RETRIEVER_COMPARISON,
    CONTEXT_CALLS,
    CHUNKERS,
    CHUNKS_DIR,
    JUDGE_SETTINGS,
    BATCHES,
    BATCHES_TMP,
    CHECK_MD,
    CHECK_JSON,
    JUDGE_INPUTS,
    SHARD,
    SHARD_TMP,
    LOCK,
];

/// What `chunksweep judge-check` writes into its folder: a folder holding anything else (a run's
/// files included, whose calls.csv judge-check would replace) is refused.
pub const JUDGE_CHECK_FILES: &[&str] = &[JUDGE_CHECK, JUDGE_CHECK_ITEMS, CALLS, LOCK];

/// The names a command may find at the top of its output folder, and who writes them (for the
/// message that refuses a folder holding anything else).
#[derive(Debug, Clone, Copy)]
pub struct Outputs {
    /// Whose files they are, as a message names them: `a chunksweep run`, `judge-check`.
    pub owner: &'static str,
    /// The names.
    pub names: &'static [&'static str],
}

/// `sweep` and `run`'s folder.
pub const RUN_OUTPUTS: Outputs = Outputs {
    owner: "a chunksweep run",
    names: RUN_FILES,
};

/// `judge-check`'s folder.
pub const JUDGE_CHECK_OUTPUTS: Outputs = Outputs {
    owner: "judge-check",
    names: JUDGE_CHECK_FILES,
};
