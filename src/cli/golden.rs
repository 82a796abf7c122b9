//! `chunksweep golden draft` and `chunksweep golden review`: their flags and what they print.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use chunksweep::budget::MaxCostFlag;
use chunksweep::config::flag_values;
use chunksweep::golden::draft::{DraftSettings, defaults};
use chunksweep::pipeline::golden_set::{self, DraftOutcome, DraftRequest};

use super::progress::Progress;

/// `chunksweep golden ...`.
#[derive(Subcommand)]
pub enum GoldenCommand {
    /// Draft a golden set from a bare corpus with a model: sampled passages, verbatim quotes
    /// verified against the documents, filters counted; every item marked "source": "draft",
    /// "reviewed": false (review them with `golden review`).
    Draft(Box<DraftArgs>),
    /// Write one offline page to accept, reject or edit golden-set items with their evidence in
    /// context, and download the reviewed set.
    Review(ReviewArgs),
}

/// Flags of `chunksweep golden draft`.
#[derive(Args)]
pub struct DraftArgs {
    /// Folder of documents (.md .markdown .txt .rst), read recursively.
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,
    /// Golden set to write (JSONL); the drafting CSV goes beside it (NAME.draft.csv).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Passages to draft from, one call each: the most questions kept.
    #[arg(long, value_name = "N", default_value_t = defaults::QUESTIONS, value_parser = flag_values::at_least_one)]
    pub questions: usize,
    /// Chat model (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Seed of the passage sampling (also sent to the model).
    #[arg(long, value_name = "SEED", default_value_t = defaults::SEED)]
    pub seed: u64,
    /// TOML config file: its [llm] section (server, limits, prices, cache) and [embed]'s
    /// base_url and query_prefix.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Most quotes per item.
    #[arg(long, value_name = "N", default_value_t = defaults::MAX_QUOTES, value_parser = flag_values::at_least_one)]
    pub max_quotes: usize,
    /// Fewest characters (code points) per quote.
    #[arg(long, value_name = "N", default_value_t = defaults::MIN_EVIDENCE_CHARS)]
    pub min_evidence_chars: usize,
    /// Largest share of a question's word trigrams found in its evidence (0 to 1).
    #[arg(long, value_name = "SHARE", default_value_t = defaults::MAX_COPIED_SHARE, value_parser = flag_values::unit_share)]
    pub max_copied_share: f64,
    /// Word Jaccard at which a question is a near-duplicate of one kept before it.
    #[arg(long, value_name = "J", default_value_t = defaults::MAX_JACCARD, value_parser = flag_values::unit_share)]
    pub max_jaccard: f64,
    /// Embedding model for the near-duplicate filter (cosine instead of word Jaccard).
    #[arg(long, value_name = "MODEL")]
    pub embed_model: Option<String>,
    /// Embedding cosine at which a question is a near-duplicate (with --embed-model).
    #[arg(long, value_name = "C", default_value_t = defaults::MAX_COSINE, value_parser = flag_values::unit_share)]
    pub max_cosine: f64,
    /// Ask the model whether the evidence supports each answer it does not contain verbatim.
    #[arg(long)]
    pub check_answers: bool,
    #[command(flatten)]
    pub budget: MaxCostFlag,
    /// Print the number of calls and the estimated tokens and cost, then stop (nothing sent).
    #[arg(long)]
    pub dry_run: bool,
}

/// Flags of `chunksweep golden review`.
#[derive(Args)]
pub struct ReviewArgs {
    /// The golden set to review (JSONL).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Folder of documents the evidence is in.
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,
    /// Page to write (default review.html beside FILE).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `chunksweep golden ...`.
pub fn golden(command: GoldenCommand) -> Result<ExitCode> {
    match command {
        GoldenCommand::Draft(args) => draft(*args),
        GoldenCommand::Review(args) => review(args),
    }
}

fn draft(args: DraftArgs) -> Result<ExitCode> {
    let defaults = DraftSettings::default();
    let req = DraftRequest {
        corpus: args.corpus,
        out: args.out,
        config: args.config,
        settings: DraftSettings {
            questions: args.questions,
            model: args.model.unwrap_or(defaults.model),
            seed: args.seed,
            max_quotes: args.max_quotes,
            min_evidence_chars: args.min_evidence_chars,
            max_copied_share: args.max_copied_share,
            max_jaccard: args.max_jaccard,
            max_cosine: args.max_cosine,
            embed_model: args.embed_model,
            check_answers: args.check_answers,
            ..defaults
        },
        dry_run: args.dry_run,
        max_cost_usd: args.budget.max_cost,
    };
    let progress = Progress::new(false);
    let outcome = golden_set::draft(&req, &|e| progress.handle(e))
        .with_context(|| format!("golden draft into {}", req.out.display()))?;
    progress.clear();
    match outcome {
        DraftOutcome::DryRun {
            passages,
            documents,
            estimate,
            server,
            model,
            refused,
        } => {
            println!("dry run: {passages} passage(s) from {documents} document(s); nothing sent");
            println!(
                "{}",
                chunksweep::golden::draft::ask::drafting_line(&estimate, &server, &model)
            );
            super::print::refusal(refused.as_deref());
        }
        DraftOutcome::Drafted {
            drafted,
            out,
            csv,
            wall_s,
        } => {
            let kept = drafted.kept().count();
            println!(
                "drafted {} item(s), kept {kept}, in {wall_s:.1} s ({} call(s) sent, {} from the cache; {} answered but unusable, {} without a reply{})",
                drafted.items.len(),
                drafted.sent_calls,
                drafted.cached_calls,
                drafted.unusable_calls,
                drafted.failed_calls,
                drafted
                    .spent_usd
                    .map(|c| format!(", ${c:.4}"))
                    .unwrap_or_default()
            );
            for (reason, n) in drafted.rejected() {
                println!("  rejected, {:<20} {n}", reason.name());
            }
            println!("  kept{:>28}", kept);
            println!(
                "wrote {} (every item \"reviewed\": false: review them with `chunksweep golden review {} --corpus DIR`) and {}",
                out.display(),
                out.display(),
                csv.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn review(args: ReviewArgs) -> Result<ExitCode> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.file.with_file_name("review.html"));
    let written = golden_set::review(&args.file, &args.corpus, &out)
        .with_context(|| format!("golden review of {}", args.file.display()))?;
    println!(
        "wrote {} ({} item(s), {} already reviewed); open it in a browser, review, then download the reviewed set",
        out.display(),
        written.items,
        written.reviewed
    );
    Ok(ExitCode::SUCCESS)
}
