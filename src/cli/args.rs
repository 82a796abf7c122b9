//! Command-line flags (clap), and their translation into the library's [`Overrides`]: the flags
//! that `sweep` and `run` share are declared once ([`SweepArgs`]).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use chunksweep::chunking::Strategy;
use chunksweep::chunking::enrich::Prefix;
use chunksweep::config::{ComparePrefix, Overrides};
use chunksweep::golden::GoldenFormat;
use chunksweep::judge::JudgeMode;
use chunksweep::retrieval::AnalyzerKind;
use chunksweep::select::Rule;
use chunksweep::sweep::{ConfigSpec, Overlap, RetrieverKind};
use chunksweep::tokenize::TokenizerKind;

#[derive(Parser)]
#[command(
    name = "chunksweep",
    version,
    about = "Choose a RAG chunk size by measurement."
)]
pub struct Cli {
    #[command(subcommand)]
    /// The command.
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Chunk the corpus at every configuration, retrieve, score, and write CSVs.
    #[command(args_override_self = true)]
    Sweep(SweepArgs),
    /// Check a golden set against a corpus and list every problem with its file and line.
    Validate(InputArgs),
    /// Regenerate selection.csv, report.md, sweep.svg and report.html from a run folder's CSVs
    /// (no re-run).
    Report(ReportArgs),
    /// Sweep, select, judge the candidates with an LLM, and write the report (resumable).
    Run(RunArgs),
    /// The prompt templates compiled into the binary.
    #[command(subcommand)]
    Prompts(PromptsCommand),
    /// Measure the judge on human-labelled items: balanced accuracy, true-positive and
    /// true-negative rates, Cohen's κ and the majority-label baseline (judge_check.csv).
    JudgeCheck(JudgeCheckArgs),
}

/// Flags of `chunksweep judge-check`.
#[derive(Args)]
pub struct JudgeCheckArgs {
    /// Labelled items: a JSONL labelled set, or a run's judge_questions.csv with
    /// human_label_faithfulness / human_label_relevancy / human_label_correctness columns (then
    /// --config must be the run's config file, to rebuild each row's question and context).
    #[arg(long, value_name = "FILE")]
    pub labels: PathBuf,
    /// TOML config file: its [llm] and [judge] sections (flags override them).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Model that grades (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long, value_name = "MODEL")]
    pub judge_model: Option<String>,
    /// per-criterion (default) or combined: ask each item's verdict as `run` would in that
    /// mode, to compare their accuracy.
    #[arg(long, value_name = "MODE")]
    pub judge_mode: Option<JudgeMode>,
    /// Folder of prompt templates overriding the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
    /// Output folder (default results/<run-id>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the number of calls and the estimated tokens and cost, then stop.
    #[arg(long)]
    pub dry_run: bool,
}

impl JudgeCheckArgs {
    /// The flags as overrides.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            judge_model: self.judge_model.clone(),
            judge_mode: self.judge_mode,
            prompts: self.prompts.clone(),
            out: self.out.clone(),
            ..Overrides::default()
        }
    }
}

/// `chunksweep prompts ...`.
#[derive(Subcommand)]
pub enum PromptsCommand {
    /// Write the built-in templates into DIR (created if needed; nothing is overwritten), to edit
    /// them and pass the folder back with `run --prompts DIR`.
    Export {
        /// Folder to write generate.md, faithfulness.md, relevancy.md, correctness.md and
        /// context.md into.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

#[derive(Args)]
pub struct ReportArgs {
    /// Run folder holding sweep.csv, sweep_questions.csv and manifest.json.
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,
    /// Plateau rule: `paired` (not significantly worse than the best on the same questions,
    /// Holm-corrected, and within the recall tolerance) or `seed` (the seeds' literal rule:
    /// within 3% of the best margin and the recall tolerance).
    #[arg(long, value_name = "RULE", default_value = "paired")]
    pub rule: Rule,
    /// Significance level of the paired tests (default 0.05).
    #[arg(long, value_name = "P", default_value_t = 0.05)]
    pub alpha: f64,
    /// Rule `seed` only: keep margins >= best − this × |best| (relative; default 0.03 = 3%).
    #[arg(long, value_name = "RATIO", default_value_t = 0.03)]
    pub margin_tolerance: f64,
    /// Keep span recall@k >= best − this (absolute; default 0.02).
    #[arg(long, value_name = "RECALL", default_value_t = 0.02)]
    pub recall_tolerance: f64,
    /// Judge candidates, cheapest first (default: the run's own, its [judge] candidates; 3 for
    /// a run folder without a manifest).
    #[arg(long, value_name = "N")]
    pub candidates: Option<usize>,
    /// Random halves for the stability check (default 200).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub halves: usize,
    /// Seed of the halves and the bootstrap (default 42).
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,
}

#[derive(Args)]
pub struct InputArgs {
    /// TOML config file (flags override it).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Folder of documents (.md .markdown .txt .rst), read recursively.
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Golden set: JSONL, or Chroma's questions_df.csv.
    #[arg(long, value_name = "FILE")]
    pub golden: Option<PathBuf>,
    /// Golden-set format (default: chroma for .csv, else jsonl).
    #[arg(long, value_name = "FORMAT")]
    pub golden_format: Option<GoldenFormat>,
}

#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Chunking strategies, comma-separated: fixed, words, recursive, markdown, sentence,
    /// semantic (needs an embeddings server, see [embed]).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub strategies: Option<Vec<Strategy>>,
    /// Chunk sizes in tokens, comma-separated (default 64,128,256,512,1024).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub sizes: Option<Vec<usize>>,
    /// Overlap: a ratio of the size below 1 (default 0.15) or a whole token count.
    #[arg(long, value_name = "RATIO")]
    pub overlap: Option<Overlap>,
    /// Chunks retrieved per question (default 5).
    #[arg(long, value_name = "N")]
    pub k: Option<usize>,
    /// Context budgets in tokens per query, comma-separated (e.g. 1000,2000,4000): every
    /// configuration is also cut at each (chunks in rank order while they fit); the first
    /// budget decides and the judge retrieves with it.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub budget: Option<Vec<usize>>,
    /// Token unit: cl100k_base (default), o200k_base or words.
    #[arg(long, value_name = "NAME")]
    pub tokenizer: Option<TokenizerKind>,
    /// Retrievers, comma-separated: bm25 (default), dense, hybrid (dense and hybrid need an
    /// embeddings server, see [embed]).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub retrievers: Option<Vec<RetrieverKind>>,
    /// Embeddings server (default $CHUNKSWEEP_EMBED_BASE_URL, else the [llm] server).
    #[arg(long, value_name = "URL")]
    pub embed_base_url: Option<String>,
    /// Embedding model for documents (default $CHUNKSWEEP_EMBED_MODEL).
    #[arg(long, value_name = "MODEL")]
    pub embed_model: Option<String>,
    /// Embedding model for queries (default $CHUNKSWEEP_EMBED_QUERY_MODEL, else --embed-model).
    #[arg(long, value_name = "MODEL")]
    pub embed_query_model: Option<String>,
    /// Embed each chunk's bare text instead of its prefix + text (as BM25 indexes it), so a
    /// prefix reaches BM25 and the generator only ([embed] embed_prefix = false).
    #[arg(long)]
    pub no_embed_prefix: bool,
    /// Semantic chunking: boundary where the sentence distance exceeds this percentile (default 95).
    #[arg(long, value_name = "P")]
    pub semantic_percentile: Option<f64>,
    /// BM25 analyzer: standard (default: Unicode words, identifiers split and kept whole, CJK
    /// bigrams) or seed (seed 000's regex).
    #[arg(long, value_name = "NAME")]
    pub analyzer: Option<AnalyzerKind>,
    /// English stemming of BM25 terms.
    #[arg(long)]
    pub stem: bool,
    /// BM25 term saturation k1 (default 1.2).
    #[arg(long, value_name = "K1")]
    pub bm25_k1: Option<f64>,
    /// BM25 length normalisation b, 0 to 1 (default 0.75).
    #[arg(long, value_name = "B")]
    pub bm25_b: Option<f64>,
    /// Contextual prefixes, comma-separated: none (default), title, heading_path, title_heading,
    /// llm_context (a model-written context per chunk; uses [llm] and [context], cached).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub prefixes: Option<Vec<Prefix>>,
    /// Model that writes llm_context prefixes (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long, value_name = "MODEL")]
    pub context_model: Option<String>,
    /// Most document tokens shown with a chunk when writing its llm_context (default 2048).
    #[arg(long, value_name = "TOKENS")]
    pub context_window: Option<usize>,
    /// Run folder (default results/<run-id>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write chunks/<config_id>.jsonl for every configuration.
    #[arg(long)]
    pub dump_chunks: bool,
    /// No progress bar and no summary table.
    #[arg(long)]
    pub quiet: bool,
}

/// Flags of `chunksweep run`.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub sweep: SweepArgs,
    /// Judge these configuration ids instead of the selection's candidates, comma-separated
    /// (e.g. recursive-256-o38-none-bm25-k5).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub candidates: Option<Vec<ConfigSpec>>,
    /// How many of the selection's candidates to judge (default 3).
    #[arg(long, value_name = "N")]
    pub n_candidates: Option<usize>,
    /// Model that writes the answers (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long, value_name = "MODEL")]
    pub generator_model: Option<String>,
    /// Model that grades them (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long, value_name = "MODEL")]
    pub judge_model: Option<String>,
    /// per-criterion (default: one verdict call per criterion) or combined (one call returns
    /// every criterion's verdict).
    #[arg(long, value_name = "MODE")]
    pub judge_mode: Option<JudgeMode>,
    /// Stop cleanly before the estimate or the spend passes this many USD.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Judge only the first N questions of the golden set (the sweep still scores all).
    #[arg(long, value_name = "N")]
    pub judge_questions: Option<usize>,
    /// Print the number of calls and the estimated tokens and cost, then stop (no judge-stage
    /// call is sent; the sweep still sends and caches the embeddings and contexts its grid needs).
    #[arg(long)]
    pub dry_run: bool,
    /// Folder of prompt templates overriding the built-in ones (`chunksweep prompts export DIR`
    /// writes those out for editing).
    #[arg(long, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
    /// Judge the selection's pick with and without a prefix, on the same questions: its
    /// strategy, size and overlap with prefix none and with PREFIX, or, given without a value,
    /// with the prefix whose span recall@k gained most at that strategy and size in the sweep.
    /// Replaces the selection's candidates.
    #[arg(long, value_name = "PREFIX", num_args = 0..=1, default_missing_value = "best")]
    pub compare_prefix: Option<ComparePrefix>,
}

impl InputArgs {
    /// The input flags as overrides.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            corpus: self.corpus.clone(),
            golden: self.golden.clone(),
            golden_format: self.golden_format,
            ..Overrides::default()
        }
    }
}

impl SweepArgs {
    /// The sweep flags as overrides.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            out: self.out.clone(),
            strategies: self.strategies.clone(),
            sizes: self.sizes.clone(),
            overlap: self.overlap,
            top_k: self.k,
            budgets: self.budget.clone(),
            tokenizer: self.tokenizer,
            prefixes: self.prefixes.clone(),
            context_model: self.context_model.clone(),
            context_window: self.context_window,
            dump_chunks: self.dump_chunks,
            retrievers: self.retrievers.clone(),
            embed_base_url: self.embed_base_url.clone(),
            embed_model: self.embed_model.clone(),
            embed_query_model: self.embed_query_model.clone(),
            embed_prefix: self.no_embed_prefix.then_some(false),
            semantic_percentile: self.semantic_percentile,
            analyzer: self.analyzer,
            stem: self.stem,
            bm25_k1: self.bm25_k1,
            bm25_b: self.bm25_b,
            ..self.input.overrides()
        }
    }
}

impl RunArgs {
    /// Every flag of `run` as overrides: the sweep's, then the judge's.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            generator_model: self.generator_model.clone(),
            judge_model: self.judge_model.clone(),
            judge_mode: self.judge_mode,
            max_cost_usd: self.max_cost,
            prompts: self.prompts.clone(),
            n_candidates: self.n_candidates,
            judge_questions: self.judge_questions,
            candidates: self.candidates.clone(),
            compare_prefix: self.compare_prefix,
            dry_run: self.dry_run,
            ..self.sweep.overrides()
        }
    }
}

#[cfg(test)]
mod tests;
