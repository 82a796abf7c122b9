//! Command-line flags (clap). The settings' flags are declared once, by the library's config
//! sections ([`chunksweep::config::sections`]), flattened here into each command; each command
//! turns its flags into a layer over the config file ([`ConfigFile`], `layer`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use chunksweep::budget::MaxCostFlag;
use chunksweep::check::verdict::GateSettings;
use chunksweep::config::{
    ConfigFile, ContextSection, EmbedSection, JudgeSection, RerankSection, RunOptions,
    SelectionSection, SweepSection,
};
use chunksweep::golden::GoldenFormat;
use chunksweep::judge::JudgeMode;
use chunksweep::select::DEFAULT_DELTA;
use chunksweep::sweep::shard::ShardFlag;

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
    Sweep(Box<SweepArgs>),
    /// Join the shard folders of a `sweep --shard I/N` into one run folder, then select and
    /// report as the whole sweep would have.
    #[command(
        after_help = "Refuses (exit 2, nothing written) shards of another corpus, golden set, grid, settings or chunksweep version, a shard missing or given twice, and a shard that did not finish (no shard.json) or whose files changed since. The merged folder equals the whole sweep's byte for byte except where its folder, command line, start time and times are written (docs/shards.md)."
    )]
    Merge(MergeArgs),
    /// Check a golden set against a corpus and list every problem with its file and line.
    Validate(InputArgs),
    /// Regenerate selection.csv, report.md, sweep.svg and report.html from a run folder's CSVs
    /// (no re-run), with the settings its manifest.json records.
    #[command(
        after_help = "Without a flag, each selection setting is the run's own, as its manifest.json records it (config.selection); the defaults named above are those of a new sweep. A setting missing from the manifest is an error naming it, or, for a manifest written by an older chunksweep, a warning naming it and the default read in its place."
    )]
    Report(ReportArgs),
    /// Sweep, select, judge the candidates with an LLM, and write the report (resumable).
    Run(Box<RunArgs>),
    /// The prompt templates compiled into the binary.
    #[command(subcommand)]
    Prompts(PromptsCommand),
    /// Measure the judge on human-labelled items: per criterion, whether its verdicts can tell
    /// pass from fail, with balanced accuracy, true-positive and true-negative rates, Cohen's κ,
    /// the majority-label baseline and parroted replies (judge_check.csv). Exits 1 when no
    /// criterion can tell pass from fail.
    JudgeCheck(JudgeCheckArgs),
    /// Draft a golden set with a model, and review it in the browser.
    #[command(subcommand)]
    Golden(super::golden::GoldenCommand),
    /// Gate a chunking change in CI: sweep one chunker (the baseline's pick, or the one the
    /// flags give) on today's corpus and golden set at the baseline's cut, compare it question
    /// by question with the baseline run, and exit 1 on a regression (check.md, check.json);
    /// with --judge, answer quality too.
    #[command(
        after_help = "Exit codes: 0 pass (non-inferior within the margin, or inconclusive with a warning); 1 regression (significantly worse at --alpha, worse by more than --delta, or a mean span recall drop over --max-drop, each with at least two questions worse), or inconclusive with --fail-on-inconclusive; with --judge also a criterion the judge gates on that is significantly worse (one-sided exact McNemar at --alpha), and with --fail-on-inconclusive one that the error verdicts decide or a judge that can gate on nothing; 2 a baseline that cannot be read (no manifest.json, a manifest without its settings, no sweep_questions.csv; with --judge, no judged answer of its pick or damaged judge files), flags that give other than one chunker or another cut, --out at the baseline, or no question shared unchanged, or a --max-cost that the check's sweep's estimate passes or that has no prices to check (nothing sent); with --judge also a server that refuses the key or a --max-cost the estimate passes or that has no prices to check (check.md then holds the retrieval verdict), or an --out holding judged answers of other inputs (refused before anything is written); 4 with --judge, answers under test still without a verdict (rerun the same command). With --judge, 0 also when the judge cannot gate or error verdicts leave a criterion inconclusive (warnings; exit 1 with --fail-on-inconclusive)."
    )]
    Check(Box<CheckArgs>),
    /// Read every document of a corpus folder (PDF, HTML, DOCX, text) and write the text
    /// chunksweep sweeps, with extract.json: each file's SHA-256, reader and version, page
    /// starts and warnings.
    Extract(ExtractArgs),
}

/// Flags of `chunksweep extract`.
#[derive(Args)]
pub struct ExtractArgs {
    /// TOML config file: its [corpus] path, readers and skip_unreadable, and [llm] cache_path
    /// (the document cache sits beside it).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Folder of documents, read recursively (default: [corpus] path of --config).
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Folder to write the texts and extract.json to: new, empty, or an earlier extract's
    /// output (whose files this run no longer writes are removed); not inside the corpus.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Skip the corpus's files that no reader reads (listed in a warning) instead of failing.
    #[arg(long)]
    pub skip_unreadable: bool,
}

/// Flags of `chunksweep check`.
#[derive(Args)]
#[command(mut_arg("max_cost", |a| a.help(
    "Spending cap in USD over the check's paid calls: its sweep's embeddings, contexts and rerank requests (refused, exit 2, before anything is sent when their estimate passes it) and, with --judge, the judge stage's too (refused when the estimate passes it; answers stop starting once the spend would)"
)))]
pub struct CheckArgs {
    /// The baseline run folder (a `sweep` or `run` output, e.g. committed under ci/baseline).
    #[arg(long, value_name = "RUN_DIR")]
    pub baseline: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// The chunker under test: the baseline's pick with these changed (one configuration).
    #[command(flatten)]
    pub sweep: SweepSection,
    /// Non-inferiority margin δ on span recall (the selection's --delta).
    #[arg(long, value_name = "DELTA", default_value_t = DEFAULT_DELTA)]
    pub delta: f64,
    /// Deprecated name of --delta, kept for one release (prints a warning).
    #[arg(long, value_name = "DELTA", hide = true, conflicts_with = "delta")]
    pub margin: Option<f64>,
    /// One-sided significance level of the tests.
    #[arg(long, value_name = "P", default_value_t = GateSettings::default().alpha)]
    pub alpha: f64,
    /// Largest drop of mean span recall that passes (at least two questions worse to fail).
    #[arg(long, value_name = "RECALL", default_value_t = GateSettings::default().max_drop)]
    pub max_drop: f64,
    /// Exit 1 when neither test can tell (default: pass with a warning).
    #[arg(long)]
    pub fail_on_inconclusive: bool,
    /// Gate on answer quality too: judge the baseline's judged questions again for the chunker
    /// under test (needs a `run` baseline and its server; cached calls are reused).
    #[arg(long)]
    pub judge: bool,
    #[command(flatten)]
    pub budget: MaxCostFlag,
    /// Run folder of the chunker under test (default results/<run-id>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write a JUnit XML file (one test case per gate: retrieval, and answer quality with
    /// --judge).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// No progress bar; check.md is still printed.
    #[arg(long)]
    pub quiet: bool,
}

impl CheckArgs {
    /// The inputs, `out`, the `[sweep]` flags and `--max-cost` as a layer over the config file.
    pub fn layer(&self) -> ConfigFile {
        ConfigFile {
            out: self.out.clone(),
            sweep: self.sweep.clone(),
            judge: JudgeSection {
                max_cost_usd: self.budget.max_cost,
                ..JudgeSection::default()
            },
            ..self.input.layer()
        }
    }

    /// The gate's settings (`--margin`, when given, as `--delta`).
    pub fn gate(&self) -> GateSettings {
        GateSettings {
            delta: self.margin.unwrap_or(self.delta),
            alpha: self.alpha,
            max_drop: self.max_drop,
            fail_on_inconclusive: self.fail_on_inconclusive,
        }
    }
}

/// Flags of `chunksweep judge-check`.
#[derive(Args)]
pub struct JudgeCheckArgs {
    /// Labelled items: a JSONL labelled set, or a run's judge_questions.csv with
    /// human_label_faithfulness / human_label_relevancy / human_label_correctness columns (each
    /// row's question and context are rebuilt from the run's manifest.json beside it, or from
    /// --config, the run's config file).
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
    /// Print the number of calls and the estimated tokens and cost, then stop (nothing is sent).
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub budget: MaxCostFlag,
    /// Send the verdicts through the Batch API ([llm] batch = true): half the price, results
    /// within the completion window; a rerun with the same --out polls the batches submitted.
    #[arg(long)]
    pub batch: bool,
}

impl JudgeCheckArgs {
    /// The flags as a layer over the config file: `[judge]`'s judge_model, mode, prompts and
    /// max_cost_usd, and `out`.
    pub fn layer(&self) -> ConfigFile {
        ConfigFile {
            judge: JudgeSection {
                judge_model: self.judge_model.clone(),
                mode: self.judge_mode,
                prompts_dir: self.prompts.clone(),
                max_cost_usd: self.budget.max_cost,
                ..JudgeSection::default()
            },
            out: self.out.clone(),
            ..ConfigFile::default()
        }
    }
}

/// `chunksweep prompts ...`.
#[derive(Subcommand)]
pub enum PromptsCommand {
    /// Write the built-in templates into DIR (created if needed; nothing is overwritten), to edit
    /// them and pass the folder back with `run --prompts DIR`.
    Export {
        /// Folder to write generate.md, faithfulness.md, relevancy.md, correctness.md,
        /// context.md, combined.md, draft.md and draft_check.md into.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

/// Flags of `chunksweep report`: the selection flags of `sweep`, each overriding the run's
/// recorded setting (its manifest's `selection`) for this report.
#[derive(Args)]
pub struct ReportArgs {
    /// Run folder holding sweep.csv, sweep_questions.csv and manifest.json.
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,
    /// Selection settings (default: the run's own).
    #[command(flatten)]
    pub selection: SelectionSection,
    /// Judge candidates, cheapest first (default: the run's own, its [judge] candidates).
    #[arg(long, value_name = "N")]
    pub candidates: Option<usize>,
}

/// Flags naming the inputs (`validate`, and through [`SweepArgs`] `sweep` and `run`).
#[derive(Args)]
pub struct InputArgs {
    /// TOML config file (flags override it).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Folder of documents (.md .markdown .txt .rst .html .docx .pdf), read recursively.
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Skip the corpus's files that no reader reads (listed in a warning) instead of failing.
    #[arg(long)]
    pub skip_unreadable: bool,
    /// Golden set: JSONL, or Chroma's questions_df.csv.
    #[arg(long, value_name = "FILE")]
    pub golden: Option<PathBuf>,
    /// Golden-set format (default: chroma for .csv, else jsonl).
    #[arg(long, value_name = "FORMAT")]
    pub golden_format: Option<GoldenFormat>,
}

impl InputArgs {
    /// The input flags as a layer over the config file.
    pub fn layer(&self) -> ConfigFile {
        ConfigFile {
            corpus: chunksweep::config::CorpusSection {
                path: self.corpus.clone(),
                skip_unreadable: self.skip_unreadable.then_some(true),
                ..Default::default()
            },
            golden: self.golden.clone(),
            golden_format: self.golden_format,
            ..ConfigFile::default()
        }
    }
}

/// Flags of `chunksweep sweep`: the inputs, then the `[sweep]`, `[embed]`, `[context]`,
/// `[rerank]` and `[selection]` sections' flags.
#[derive(Args)]
#[command(mut_arg("max_cost", |a| a.help(
    "Spending cap in USD over the paid calls of the sweep (embeddings, contexts, rerank requests) and, in `run`, of the judge stage too: one cap for the whole run. Refuse before sending anything when the estimate (plus any spend already recorded in the run folder) passes it or a model has no price"
)))]
pub struct SweepArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub sweep: SweepSection,
    #[command(flatten)]
    pub embed: EmbedSection,
    #[command(flatten)]
    pub context: ContextSection,
    #[command(flatten)]
    pub rerank: RerankSection,
    #[command(flatten)]
    pub selection: SelectionSection,
    #[command(flatten)]
    pub budget: MaxCostFlag,
    /// Run folder (default results/<run-id>); with --shard, the folder under which the shard
    /// writes its own, shard-I-of-N.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Sweep only part I of N of the grid (I from 0; env/N reads I from
    /// $CHUNKSWEEP_SHARD_INDEX, $JOB_COMPLETION_INDEX or $SLURM_ARRAY_TASK_ID) into
    /// <out>/shard-I-of-N, without selection or report; `chunksweep merge` joins the shards.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<ShardFlag>,
    /// No progress bar and no summary table.
    #[arg(long)]
    pub quiet: bool,
}

/// Flags of `chunksweep merge`.
#[derive(Args)]
pub struct MergeArgs {
    /// The shard folders of one `sweep --shard I/N` command (<out>/shard-I-of-N), every one
    /// of the N once.
    #[arg(value_name = "SHARD_DIR", required = true)]
    pub shards: Vec<PathBuf>,
    /// The merged run folder.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// No summary table.
    #[arg(long)]
    pub quiet: bool,
}

impl SweepArgs {
    /// The sweep's flags as a layer over the config file.
    pub fn layer(&self) -> ConfigFile {
        ConfigFile {
            out: self.out.clone(),
            sweep: self.sweep.clone(),
            embed: self.embed.clone(),
            context: self.context.clone(),
            rerank: self.rerank.clone(),
            selection: self.selection.clone(),
            judge: JudgeSection {
                max_cost_usd: self.budget.max_cost,
                ..JudgeSection::default()
            },
            ..self.input.layer()
        }
    }
}

/// Flags of `chunksweep run`: the sweep's, the `[judge]` section's, and `run`'s options.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub sweep: SweepArgs,
    #[command(flatten)]
    pub judge: JudgeSection,
    #[command(flatten)]
    pub options: RunOptions,
}

impl RunArgs {
    /// Every setting flag of `run` as a layer over the config file: the sweep's, then the
    /// judge's.
    pub fn layer(&self) -> ConfigFile {
        ConfigFile {
            judge: JudgeSection {
                max_cost_usd: self.sweep.budget.max_cost,
                ..self.judge.clone()
            },
            ..self.sweep.layer()
        }
    }
}

#[cfg(test)]
mod tests;
