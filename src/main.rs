//! The `chunksweep` command line: parses flags, calls the library, prints.
//!
//! Exit codes: 0 success; 1 a failure while running (writing results, the search engine);
//! 2 invalid input or usage (bad flags or config, missing corpus, golden-set errors, a grid
//! such as overlap >= size or k = 0); 4 a `run` that left work unfinished (transient failures or
//! the budget): rerun the same command to finish it.

mod embed;
mod run_cmd;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use chunksweep::chunking::Strategy;
use chunksweep::chunking::enrich::{ContextMap, Prefix};
use chunksweep::config::{ConfigError, ConfigFile, Overrides, SweepConfig};
use chunksweep::corpus::{self, CorpusError};
use chunksweep::golden::{self, GoldenError, GoldenFormat, Severity};
use chunksweep::llm::{ClientConfig, LlmClient};
use chunksweep::llm_context::{self, ContextError, ContextPrompt, ContextSummary};
use chunksweep::report::decision::{self, Decision, DecisionError};
use chunksweep::report::{self, manifest};
use chunksweep::select::{Rule, SelectionSettings, StabilityStatus};
use chunksweep::sweep::{self, Overlap, QuestionRow, RetrieverKind, SweepError, SweepRow};
use chunksweep::tokenize::{CorpusTokens, TokenizerKind};

#[derive(Parser)]
#[command(
    name = "chunksweep",
    version,
    about = "Choose a RAG chunk size by measurement."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Chunk the corpus at every configuration, retrieve, score, and write CSVs.
    #[command(args_override_self = true)]
    Sweep(SweepArgs),
    /// Check a golden set against a corpus and list every problem with its file and line.
    Validate(InputArgs),
    /// Regenerate selection.csv, report.md and sweep.svg from a run folder's CSVs (no re-run).
    Report(ReportArgs),
    /// Sweep, select, judge the candidates with an LLM, and write the report (resumable).
    Run(run_cmd::RunArgs),
}

#[derive(Args)]
struct ReportArgs {
    /// Run folder holding sweep.csv, sweep_questions.csv and manifest.json.
    #[arg(value_name = "RUN_DIR")]
    run_dir: PathBuf,
    /// Plateau rule: `paired` (not significantly worse than the best on the same questions,
    /// Holm-corrected, and within the recall tolerance) or `seed` (the seeds' literal rule:
    /// within 3% of the best margin and the recall tolerance).
    #[arg(long, value_name = "RULE", default_value = "paired")]
    rule: Rule,
    /// Significance level of the paired tests (default 0.05).
    #[arg(long, value_name = "P", default_value_t = 0.05)]
    alpha: f64,
    /// Rule `seed` only: keep margins >= best − this × |best| (relative; default 0.03 = 3%).
    #[arg(long, value_name = "RATIO", default_value_t = 0.03)]
    margin_tolerance: f64,
    /// Keep span recall@k >= best − this (absolute; default 0.02).
    #[arg(long, value_name = "RECALL", default_value_t = 0.02)]
    recall_tolerance: f64,
    /// Judge candidates, cheapest first (default 3).
    #[arg(long, value_name = "N", default_value_t = 3)]
    candidates: usize,
    /// Random halves for the stability check (default 200).
    #[arg(long, value_name = "N", default_value_t = 200)]
    halves: usize,
    /// Seed of the halves and the bootstrap (default 42).
    #[arg(long, value_name = "N", default_value_t = 42)]
    seed: u64,
}

#[derive(Args)]
struct InputArgs {
    /// TOML config file (flags override it).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Folder of documents (.md .markdown .txt .rst), read recursively.
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
    /// Golden set: JSONL, or Chroma's questions_df.csv.
    #[arg(long, value_name = "FILE")]
    golden: Option<PathBuf>,
    /// Golden-set format (default: chroma for .csv, else jsonl).
    #[arg(long, value_name = "FORMAT")]
    golden_format: Option<GoldenFormat>,
}

#[derive(Args)]
struct SweepArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Chunking strategies, comma-separated: fixed, words, recursive, markdown, sentence,
    /// semantic (needs an embeddings server, see [embed]).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    strategies: Option<Vec<Strategy>>,
    /// Chunk sizes in tokens, comma-separated (default 64,128,256,512,1024).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    sizes: Option<Vec<usize>>,
    /// Overlap: a ratio of the size below 1 (default 0.15) or a whole token count.
    #[arg(long, value_name = "RATIO")]
    overlap: Option<Overlap>,
    /// Chunks retrieved per question (default 5).
    #[arg(long, value_name = "N")]
    k: Option<usize>,
    /// Token unit: cl100k_base (default), o200k_base or words.
    #[arg(long, value_name = "NAME")]
    tokenizer: Option<TokenizerKind>,
    /// Retrievers, comma-separated: bm25 (default), dense, hybrid (dense and hybrid need an
    /// embeddings server, see [embed]).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    retrievers: Option<Vec<RetrieverKind>>,
    /// Embeddings server (default $CHUNKSWEEP_EMBED_BASE_URL, else the [llm] server).
    #[arg(long, value_name = "URL")]
    embed_base_url: Option<String>,
    /// Embedding model for documents (default $CHUNKSWEEP_EMBED_MODEL).
    #[arg(long, value_name = "MODEL")]
    embed_model: Option<String>,
    /// Embedding model for queries (default $CHUNKSWEEP_EMBED_QUERY_MODEL, else --embed-model).
    #[arg(long, value_name = "MODEL")]
    embed_query_model: Option<String>,
    /// Semantic chunking: boundary where the sentence distance exceeds this percentile (default 95).
    #[arg(long, value_name = "P")]
    semantic_percentile: Option<f64>,
    /// Contextual prefixes, comma-separated: none (default), title, heading_path, title_heading,
    /// llm_context (a model-written context per chunk; uses [llm] and [context], cached).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    prefixes: Option<Vec<Prefix>>,
    /// Model that writes llm_context prefixes (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long, value_name = "MODEL")]
    context_model: Option<String>,
    /// Most document tokens shown with a chunk when writing its llm_context (default 2048).
    #[arg(long, value_name = "TOKENS")]
    context_window: Option<usize>,
    /// Run folder (default results/<run-id>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Also write chunks/<config_id>.jsonl for every configuration.
    #[arg(long)]
    dump_chunks: bool,
    /// No progress bar and no summary table.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sweep(args) => run_sweep(args),
        Command::Validate(args) => run_validate(args),
        Command::Report(args) => run_report(args),
        Command::Run(args) => run_cmd::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", describe(&err));
            ExitCode::from(exit_code(&err))
        }
    }
}

/// The error and its causes, each cause added only when the message does not already say it
/// (library errors often print their source themselves).
fn describe(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// 2 for bad input or usage, 1 for anything else.
fn exit_code(err: &anyhow::Error) -> u8 {
    let input = err.chain().any(|e| {
        e.is::<ConfigError>()
            || e.is::<CorpusError>()
            || e.is::<GoldenError>()
            || matches!(
                e.downcast_ref::<SweepError>(),
                Some(
                    SweepError::Chunk { .. }
                        | SweepError::ZeroK
                        | SweepError::EmptyGrid
                        | SweepError::BadOverlap(_)
                        | SweepError::NoQuestions
                        | SweepError::NoPrefix
                )
            )
            || matches!(
                e.downcast_ref::<ContextError>(),
                Some(ContextError::Prompt { .. } | ContextError::Placeholder { .. })
            )
            || matches!(
                e.downcast_ref::<DecisionError>(),
                Some(DecisionError::Read(_) | DecisionError::Select(_))
            )
    });
    if input || run_cmd::is_input_error(err) {
        2
    } else {
        1
    }
}

fn resolve_config(input: &InputArgs, overrides: Overrides) -> Result<SweepConfig> {
    let file = match &input.config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    Ok(SweepConfig::resolve(
        file,
        Overrides {
            corpus: input.corpus.clone(),
            golden: input.golden.clone(),
            golden_format: input.golden_format,
            ..overrides
        },
    )?)
}

fn run_validate(args: InputArgs) -> Result<ExitCode> {
    let cfg = resolve_config(&args, Overrides::default())?;
    let corpus = corpus::load_corpus(&cfg.corpus)?;
    let (set, problems) = golden::load_with_problems(&cfg.golden, cfg.golden_format, &corpus)?;
    for p in &problems {
        println!("{p}");
    }
    let errors = problems
        .iter()
        .filter(|p| p.kind.severity() == Severity::Error)
        .count();
    let spans: usize = set.questions.iter().map(|q| q.spans.len()).sum();
    let ambiguous = set
        .questions
        .iter()
        .flat_map(|q| &q.spans)
        .filter(|s| s.locations.len() > 1)
        .count();
    println!(
        "{}: {} questions, {} evidence spans ({} with several locations) against {} documents; {} error(s), {} warning(s)",
        cfg.golden.display(),
        set.questions.len(),
        spans,
        ambiguous,
        corpus.docs.len(),
        errors,
        problems.len() - errors
    );
    Ok(if errors > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

fn run_sweep(args: SweepArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let started_at = jiff::Timestamp::now();
    let cfg = resolve_config(
        &args.input,
        Overrides {
            out: args.out.clone(),
            strategies: args.strategies.clone(),
            sizes: args.sizes.clone(),
            overlap: args.overlap,
            top_k: args.k,
            tokenizer: args.tokenizer,
            prefixes: args.prefixes.clone(),
            context_model: args.context_model.clone(),
            context_window: args.context_window,
            dump_chunks: args.dump_chunks,
            retrievers: args.retrievers.clone(),
            embed_base_url: args.embed_base_url.clone(),
            embed_model: args.embed_model.clone(),
            embed_query_model: args.embed_query_model.clone(),
            semantic_percentile: args.semantic_percentile,
            ..Overrides::default()
        },
    )?;
    let configs = sweep::plan(&cfg.sweep)?;
    let mut phases = manifest::PhaseTimes::default();
    let t = Instant::now();
    let corpus = corpus::load_corpus(&cfg.corpus)?;
    let golden = golden::load(&cfg.golden, cfg.golden_format, &corpus)?;
    phases.load_ms = ms_since(t);
    let out = match &cfg.out {
        Some(dir) => dir.clone(),
        None => new_run_dir(Path::new("results"), &started_at)?,
    };
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create run folder {}", out.display()))?;

    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(configs.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} sweep [{bar:30}] {pos}/{len} configurations {elapsed} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let t = Instant::now();
    let tokens = CorpusTokens::new(&corpus, cfg.sweep.tokenizer);
    phases.tokenize_ms = ms_since(t);
    let (contexts, context_summary) =
        llm_contexts(&cfg, &args.input, &corpus, &tokens, &out, args.quiet)?;
    let (retrieval, embed_outputs) = embed::embed_step(
        &cfg,
        &args.input,
        &corpus,
        &tokens,
        &golden,
        &out,
        args.quiet,
    )?;
    let retrieval = std::sync::Arc::new(chunksweep::sweep::RetrievalContext {
        contexts,
        ..std::sync::Arc::unwrap_or_clone(retrieval)
    });
    let t = Instant::now();
    let outcomes = sweep::run_sweep_with(
        &corpus,
        &tokens,
        &golden,
        &cfg.sweep,
        &retrieval,
        cfg.dump_chunks,
        |o| {
            bar.set_message(o.row.config_id.clone());
            bar.inc(1);
        },
    )?;
    bar.finish_and_clear();
    phases.configs_ms = ms_since(t);

    let t = Instant::now();
    report::csv::write_sweep(&out, &outcomes)?;
    let mut outputs = vec!["sweep.csv".to_string(), "sweep_questions.csv".to_string()];
    if cfg.dump_chunks {
        report::csv::write_chunks(&out, &corpus, &outcomes)?;
        outputs.push("chunks/".into());
    }
    phases.write_ms = ms_since(t);
    outputs.extend(embed_outputs);
    if context_summary.is_some() {
        outputs.push(CONTEXT_CALLS_FILE.into());
    }
    outputs.push("manifest.json".into());
    outputs.extend(decision::output_names().map(String::from));
    let m = manifest::Manifest {
        tool: "chunksweep",
        version: env!("CARGO_PKG_VERSION"),
        started_at: started_at.to_string(),
        command: std::env::args().collect(),
        config: SweepRunConfig {
            sweep: &cfg,
            llm_context: context_summary.as_ref(),
        },
        inputs: manifest::Inputs::new(&corpus, &cfg.golden, golden.questions.len())?,
        bm25: manifest::Bm25Settings::default(),
        wall_time_s: started.elapsed().as_secs_f64(),
        phase_time_ms: phases,
        config_time_ms: outcomes
            .iter()
            .map(|o| (o.row.config_id.clone(), o.times))
            .collect(),
        outputs,
    };
    manifest::write(&out, &m)?;
    let rows: Vec<SweepRow> = outcomes.iter().map(|o| o.row.clone()).collect();
    let questions: Vec<QuestionRow> = outcomes.iter().flat_map(|o| o.questions.clone()).collect();
    // A judge section left in this folder by an earlier `run` belongs to another sweep.
    let _ = std::fs::remove_file(out.join(decision::JUDGE_SECTION_FILE));
    let decided = decision::write_decision(
        &out,
        &rows,
        &questions,
        Some(&m.command),
        &SelectionSettings::default(),
    )?;

    if !args.quiet {
        print_summary(&outcomes.iter().map(|o| &o.row).collect::<Vec<_>>());
        println!(
            "{} configurations × {} questions in {:.1} s; results in {}",
            outcomes.len(),
            golden.questions.len(),
            started.elapsed().as_secs_f64(),
            out.display()
        );
        print_decision(&decided);
    }
    Ok(ExitCode::SUCCESS)
}

/// File of the llm_context calls (one [`chunksweep::llm::CallRecord`] per distinct chunk).
pub(crate) const CONTEXT_CALLS_FILE: &str = "context_calls.csv";

/// What a sweep's manifest records as its configuration: the resolved settings and, when the
/// grid has llm_context, what generating the contexts did and cost.
#[derive(serde::Serialize)]
struct SweepRunConfig<'a> {
    #[serde(flatten)]
    sweep: &'a SweepConfig,
    #[serde(skip_serializing_if = "Option::is_none")]
    llm_context: Option<&'a ContextSummary>,
}

/// Writes the model-written contexts of every llm_context configuration of the grid (once per
/// distinct chunk, through the cached LLM client), records the calls in context_calls.csv in
/// `out`, and prints what was sent. Without llm_context in the grid: nothing, an empty map.
pub(crate) fn llm_contexts(
    cfg: &SweepConfig,
    input: &InputArgs,
    corpus: &corpus::Corpus,
    tokens: &CorpusTokens,
    out: &Path,
    quiet: bool,
) -> Result<(ContextMap, Option<ContextSummary>)> {
    let Some(settings) = &cfg.context else {
        return Ok((ContextMap::new(), None));
    };
    let llm: ClientConfig = match &input.config {
        Some(path) => ConfigFile::load(path)?.llm.unwrap_or_default(),
        None => ClientConfig::default(),
    };
    let prompt = ContextPrompt::load(&settings.prompt)?;
    let configs = sweep::plan(&cfg.sweep)?;
    let (keys, _) = llm_context::needed_chunks(corpus, tokens, &configs)?;
    let client = LlmClient::new(llm)?;
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(keys.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} llm_context [{bar:30}] {pos}/{len} chunks {elapsed} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let on_call = |r: &chunksweep::llm::CallRecord| {
        bar.inc(1);
        bar.set_message(if r.cache_hit { "cached" } else { "sent" });
    };
    let run = runtime.block_on(llm_context::generate_contexts(
        &client, corpus, tokens, &configs, &prompt, settings, &on_call,
    ));
    bar.finish_and_clear();
    let path = out.join(CONTEXT_CALLS_FILE);
    let records = match &run {
        Ok(r) => r.records.clone(),
        Err(_) => client.records(),
    };
    let file =
        std::fs::File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
    chunksweep::llm::record::write_csv(&records, file)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let run = run?;
    let s = &run.summary;
    if !quiet {
        println!(
            "llm_context: {} distinct chunks ({} over the configurations), {} calls sent, {} from the cache; {} prompt + {} completion tokens; cost {}",
            s.chunks,
            s.chunk_occurrences,
            s.calls_sent,
            s.cache_hits,
            s.prompt_tokens,
            s.completion_tokens,
            s.cost_usd.map_or_else(
                || "unknown (no price in [llm.models])".into(),
                |c| format!("${c:.4}")
            )
        );
    }
    Ok((run.contexts, Some(run.summary)))
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn run_report(args: ReportArgs) -> Result<ExitCode> {
    let settings = SelectionSettings {
        rule: args.rule,
        alpha: args.alpha,
        margin_tolerance: args.margin_tolerance,
        recall_tolerance: args.recall_tolerance,
        candidates: args.candidates,
        halves: args.halves,
        seed: args.seed,
        ..SelectionSettings::default()
    };
    let decided = decision::regenerate(&args.run_dir, &settings)?;
    print_decision(&decided);
    Ok(ExitCode::SUCCESS)
}

fn print_decision(d: &Decision) {
    let sel = &d.selection;
    let w = sel.winner();
    let stability = match sel.stability.status {
        StabilityStatus::Stable => "stable",
        StabilityStatus::Indistinguishable => {
            "indistinguishable from its neighbours; picked on cost"
        }
        StabilityStatus::HalvesDisagree => "halves disagree; see the report",
    };
    println!(
        "pick: {} ({:.0} tokens/query, span recall@k {:.3}); won {:.0}% of {} halves: {}",
        w.config_id,
        w.tokens_per_query,
        w.span_recall,
        sel.stability.winner_share * 100.0,
        sel.stability.halves,
        stability
    );
    for f in &d.files {
        println!("wrote {}", f.display());
    }
}

/// `results/<UTC yyyymmdd-hhmmss>`, with `-2`, `-3`… appended if that folder exists.
fn new_run_dir(root: &Path, at: &jiff::Timestamp) -> Result<PathBuf> {
    let stamp = at.strftime("%Y%m%d-%H%M%S").to_string();
    let mut dir = root.join(&stamp);
    let mut n = 2;
    while dir.exists() {
        dir = root.join(format!("{stamp}-{n}"));
        n += 1;
    }
    Ok(dir)
}

fn print_summary(rows: &[&SweepRow]) {
    println!(
        "{:<34} {:>7} {:>9} {:>8} {:>7} {:>8} {:>7} {:>6} {:>6} {:>5} {:>5}",
        "config",
        "chunks",
        "tok/query",
        "recall@k",
        "hit@k",
        "coverage",
        "margin",
        "mrr",
        "iou",
        "unrch",
        "ties"
    );
    for r in rows {
        println!(
            "{:<34} {:>7} {:>9.0} {:>8.3} {:>7.3} {:>8.3} {:>7.3} {:>6.3} {:>6.3} {:>5} {:>5}",
            r.config_id,
            r.n_chunks,
            r.tokens_per_query,
            r.span_recall,
            r.hit_rate,
            r.coverage,
            r.margin,
            r.mrr,
            r.iou,
            r.unreachable,
            r.ties_at_k
        );
    }
}
