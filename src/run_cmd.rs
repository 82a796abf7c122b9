//! `chunksweep run`: sweep → selection → judge → report, with one progress display.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use chunksweep::chunking::enrich::Prefix;
use chunksweep::config::{ConfigFile, JudgeOverrides, Overrides, SweepConfig, resolve_judge};
use chunksweep::corpus;
use chunksweep::golden;
use chunksweep::judge::summary::{self, CandidateInfo};
use chunksweep::judge::{
    self, Fingerprint, JudgeError, JudgeEvent, JudgeSettings, PromptSet, estimate,
};
use chunksweep::llm::{ClientConfig, LlmClient};
use chunksweep::report::{self, manifest};
use chunksweep::select::SelectionSettings;
use chunksweep::sweep::{self, ConfigSpec, SweepRow};
use chunksweep::tokenize::CorpusTokens;

use crate::SweepArgs;

/// Flags of `chunksweep run`.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    sweep: SweepArgs,
    /// Judge these configuration ids instead of the selection's candidates, comma-separated
    /// (e.g. recursive-256-o38-none-bm25-k5).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    candidates: Option<Vec<ConfigSpec>>,
    /// How many of the selection's candidates to judge (default 3).
    #[arg(long, value_name = "N")]
    n_candidates: Option<usize>,
    /// Model that writes the answers (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long, value_name = "MODEL")]
    generator_model: Option<String>,
    /// Model that grades them (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long, value_name = "MODEL")]
    judge_model: Option<String>,
    /// Stop cleanly before the estimate or the spend passes this many USD.
    #[arg(long, value_name = "USD")]
    max_cost: Option<f64>,
    /// Judge only the first N questions of the golden set (the sweep still scores all).
    #[arg(long, value_name = "N")]
    pub judge_questions: Option<usize>,
    /// Print the number of calls and the estimated tokens and cost, then stop (nothing is sent).
    #[arg(long)]
    dry_run: bool,
    /// Folder of prompt templates (default prompts).
    #[arg(long, value_name = "DIR")]
    prompts: Option<PathBuf>,
    /// Judge the selection's pick with and without a prefix, on the same questions: its
    /// strategy, size and overlap with prefix none and with PREFIX, or, given without a value,
    /// with the prefix whose span recall@k gained most at that strategy and size in the sweep.
    /// Replaces the selection's candidates.
    #[arg(long, value_name = "PREFIX", num_args = 0..=1, default_missing_value = "best")]
    compare_prefix: Option<String>,
}

/// What the manifest of a run records as its configuration.
#[derive(Serialize)]
struct RunConfig<'a> {
    #[serde(flatten)]
    sweep: &'a SweepConfig,
    llm: &'a ClientConfig,
    judge: &'a JudgeSettings,
    prompt_sha256: BTreeMap<String, String>,
    candidates: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    llm_context: Option<&'a chunksweep::llm_context::ContextSummary>,
}

fn bar(mp: &MultiProgress, len: u64, template: &str) -> ProgressBar {
    let b = mp.add(ProgressBar::new(len));
    b.set_style(
        ProgressStyle::with_template(template)
            .expect("valid template")
            .progress_chars("=> "),
    );
    b
}

/// Exit code for judge errors that are the user's to fix.
pub fn is_input_error(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        matches!(
            e.downcast_ref::<JudgeError>(),
            Some(
                JudgeError::Prompt(_)
                    | JudgeError::SettingsChanged { .. }
                    | JudgeError::OverBudget { .. }
                    | JudgeError::Unpriced { .. }
            )
        )
    })
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let started_at = jiff::Timestamp::now();
    let file = match &args.sweep.input.config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    let llm_cfg = file.llm.clone().unwrap_or_default();
    let settings = resolve_judge(
        &file.judge,
        JudgeOverrides {
            generator_model: args.generator_model.clone(),
            judge_model: args.judge_model.clone(),
            max_cost_usd: args.max_cost,
            prompts: args.prompts.clone(),
            candidates: args.n_candidates,
            max_questions: args.judge_questions,
        },
    )?;
    let s = &args.sweep;
    let cfg = crate::resolve_config(
        &s.input,
        Overrides {
            out: s.out.clone(),
            strategies: s.strategies.clone(),
            sizes: s.sizes.clone(),
            overlap: s.overlap,
            top_k: s.k,
            tokenizer: s.tokenizer,
            prefixes: s.prefixes.clone(),
            context_model: s.context_model.clone(),
            context_window: s.context_window,
            dump_chunks: s.dump_chunks,
            ..Overrides::default()
        },
    )?;
    let prompts = PromptSet::load(&settings.prompts_dir).map_err(JudgeError::from)?;
    sweep::plan(&cfg.sweep)?;
    let t = Instant::now();
    let corpus = corpus::load_corpus(&cfg.corpus)?;
    let golden = golden::load(&cfg.golden, cfg.golden_format, &corpus)?;
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let out = match &cfg.out {
        Some(dir) => dir.clone(),
        None => crate::new_run_dir(Path::new("results"), &started_at)?,
    };
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create run folder {}", out.display()))?;

    let mp = MultiProgress::new();
    if s.quiet {
        mp.set_draw_target(ProgressDrawTarget::hidden());
    }
    let n_configs = sweep::plan(&cfg.sweep)?.len() as u64;
    let sweep_bar = bar(
        &mp,
        n_configs,
        "sweep  [{bar:30}] {pos}/{len} configurations {elapsed} {msg}",
    );
    let t = Instant::now();
    let tokens = CorpusTokens::new(&corpus, cfg.sweep.tokenizer);
    let tokenize_ms = t.elapsed().as_secs_f64() * 1e3;
    let (contexts, context_summary) =
        mp.suspend(|| crate::llm_contexts(&cfg, &s.input, &corpus, &tokens, &out, s.quiet))?;
    let t = Instant::now();
    let outcomes = sweep::run_sweep(
        &corpus,
        &tokens,
        &golden,
        &cfg.sweep,
        &contexts,
        cfg.dump_chunks,
        |o| {
            sweep_bar.set_message(o.row.config_id.clone());
            sweep_bar.inc(1);
        },
    )?;
    let configs_ms = t.elapsed().as_secs_f64() * 1e3;
    sweep_bar.finish_with_message("done");
    report::csv::write_sweep(&out, &outcomes)?;

    // selection, or the candidates named on the command line
    let select_bar = bar(&mp, 1, "select [{bar:30}] {pos}/{len} {msg}");
    let rows: Vec<SweepRow> = outcomes.iter().map(|o| o.row.clone()).collect();
    let questions: Vec<_> = outcomes.iter().flat_map(|o| o.questions.clone()).collect();
    let command: Vec<String> = std::env::args().collect();
    let selection_settings = SelectionSettings {
        candidates: settings.candidates,
        ..SelectionSettings::default()
    };
    // A judge section left by an earlier run in this folder is stale until the judge finishes.
    let _ = std::fs::remove_file(out.join(report::decision::JUDGE_SECTION_FILE));
    let decided = report::decision::write_decision(
        &out,
        &rows,
        &questions,
        Some(&command),
        &selection_settings,
    )?;
    let selection = &decided.selection;
    let candidates: Vec<ConfigSpec> = match (&args.candidates, &args.compare_prefix) {
        (Some(list), _) => list.clone(),
        (None, Some(choice)) => {
            let pick = &outcomes[selection.winner].config;
            let prefix = if choice == "best" {
                let best = report::prefix::best_prefix(
                    &decided.prefixes,
                    pick.params.strategy.name(),
                    pick.params.chunk_size,
                )
                .with_context(|| {
                    format!(
                        "--compare-prefix: the sweep has no prefixed configuration at {} {}; add --prefixes none,heading_path (say) or name the prefix (--compare-prefix heading_path)",
                        pick.params.strategy, pick.params.chunk_size
                    )
                })?;
                best.prefix.parse::<Prefix>().map_err(anyhow::Error::msg)?
            } else {
                choice.parse::<Prefix>().map_err(anyhow::Error::msg)?
            };
            if prefix == Prefix::None {
                bail!("--compare-prefix needs a prefix other than none");
            }
            vec![
                ConfigSpec {
                    prefix: Prefix::None,
                    ..pick.clone()
                },
                ConfigSpec {
                    prefix,
                    ..pick.clone()
                },
            ]
        }
        (None, None) => selection
            .candidates
            .iter()
            .map(|&i| outcomes[i].config.clone())
            .collect(),
    };
    if candidates.is_empty() {
        bail!("no candidate to judge");
    }
    let mut infos = Vec::new();
    for c in &candidates {
        let id = c.id();
        let row = match outcomes.iter().find(|o| o.row.config_id == id) {
            Some(o) => o.row.clone(),
            None => sweep::run_config(&corpus, &tokens, &golden, c, &contexts, false)?.row,
        };
        infos.push(CandidateInfo {
            config_id: id,
            chunk_size: row.chunk_size,
            tokens_per_query: row.tokens_per_query,
            span_recall: row.span_recall,
        });
    }
    select_bar.finish_with_message(format!(
        "{} candidate(s): {}",
        infos.len(),
        infos
            .iter()
            .map(|i| i.config_id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));

    // judge
    let judged = match settings.max_questions {
        Some(n) if n < golden.questions.len() => golden::GoldenSet {
            questions: golden.questions[..n].to_vec(),
            ..golden.clone()
        },
        _ => golden.clone(),
    };
    let jobs = judge::plan_jobs(&corpus, &judged, &candidates, &tokens, &contexts)?;
    let client = LlmClient::new(llm_cfg.clone()).map_err(JudgeError::from)?;
    let finished = judge::load_finished(&out)?;
    let done: std::collections::HashSet<(String, String)> = finished
        .iter()
        .map(|r| (r.config_id.clone(), r.question_id.clone()))
        .collect();
    let todo: Vec<_> = jobs
        .iter()
        .filter(|j| !done.contains(&(j.config_id.clone(), j.question_id.clone())))
        .cloned()
        .collect();
    let est = estimate(&todo, &prompts, &settings, &client);
    let cost_text = est
        .cost_usd
        .map(|c| format!("${c:.4}"))
        .unwrap_or_else(|| "unknown (no price for a model in [llm.models])".into());
    if args.dry_run {
        mp.clear().ok();
        println!(
            "dry run: {} candidate(s) × {} question(s); {} already done, {} to run",
            candidates.len(),
            judged.questions.len(),
            jobs.len() - todo.len(),
            todo.len()
        );
        println!(
            "candidates: {}",
            candidates
                .iter()
                .map(ConfigSpec::id)
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!(
            "{} chat calls (generator {}, judge {}); about {} prompt tokens and at most {} completion tokens; estimated cost {} (cache hits would cost nothing)",
            est.calls,
            settings.generator_model,
            settings.judge_model,
            est.prompt_tokens,
            est.completion_tokens,
            cost_text
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(max) = settings.max_cost_usd {
        let Some(c) = est.cost_usd else {
            return Err(JudgeError::Unpriced {
                max,
                models: format!("{} and {}", settings.generator_model, settings.judge_model),
            }
            .into());
        };
        if c > max {
            return Err(JudgeError::OverBudget { estimate: c, max }.into());
        }
    }
    Fingerprint::new(&settings, &prompts).check_and_store(&out)?;

    let judge_bar = bar(
        &mp,
        est.calls as u64,
        "judge  [{bar:30}] {pos}/{len} calls {elapsed} {msg}",
    );
    let spent_micro = AtomicU64::new(0);
    let on_event = |e: JudgeEvent| match e {
        JudgeEvent::Call(r) => {
            judge_bar.inc(1);
            if judge_bar.position() > judge_bar.length().unwrap_or(0) {
                judge_bar.set_length(judge_bar.position());
            }
            let micro = (r.cost_usd.unwrap_or(0.0) * 1e6).round() as u64;
            let total = spent_micro.fetch_add(micro, Ordering::Relaxed) + micro;
            judge_bar.set_message(format!("spent ${:.4}", total as f64 / 1e6));
        }
        JudgeEvent::Question(_) => {}
        JudgeEvent::Unfinished {
            config_id,
            question_id,
            error,
        } => {
            // Printed, not drawn: progress bars are hidden when stderr is not a terminal.
            eprintln!("unfinished {config_id} {question_id} (a rerun will redo it): {error}");
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let run = runtime.block_on(judge::run_judge(
        &out,
        &jobs,
        Arc::new(prompts.clone()),
        Arc::new(settings.clone()),
        &client,
        &on_event,
    ))?;
    judge_bar.finish();

    // report
    let report_bar = bar(&mp, 1, "report [{bar:30}] {pos}/{len} {msg}");
    let table = summary::summarise(&infos, &run.rows);
    report::csv::write_rows(&out.join("judge.csv"), &table)?;
    let decision = summary::decide(&infos, &run.rows, settings.alpha);
    let incomplete = (!run.is_complete()).then(|| {
        format!(
            "{} question(s) unfinished after transient failures and {} not started for the budget; rerun the same command to finish them.",
            run.unfinished.len(),
            run.skipped_for_budget
        )
    });
    if run.rows.is_empty() && !run.unfinished.is_empty() {
        let (config_id, question_id, error) = &run.unfinished[0];
        bail!(
            "no question could be judged; the first failure ({config_id}, {question_id}): {error}. Check the server ({}) and the model names, then run the same command again",
            client.base_url()
        );
    }
    let section = summary::markdown(
        &table,
        &decision,
        &settings.generator_model,
        &settings.judge_model,
        incomplete.as_deref(),
    );
    let section_path = out.join(report::decision::JUDGE_SECTION_FILE);
    std::fs::write(&section_path, &section)
        .with_context(|| format!("cannot write {}", section_path.display()))?;
    report::decision::write_decision(&out, &rows, &questions, Some(&command), &selection_settings)?;
    let m = manifest::Manifest {
        tool: "chunksweep",
        version: env!("CARGO_PKG_VERSION"),
        started_at: started_at.to_string(),
        command,
        config: RunConfig {
            sweep: &cfg,
            llm: &llm_cfg,
            judge: &settings,
            prompt_sha256: prompts.hashes(),
            candidates: infos.iter().map(|i| i.config_id.clone()).collect(),
            llm_context: context_summary.as_ref(),
        },
        inputs: manifest::Inputs::new(&corpus, &cfg.golden, golden.questions.len())?,
        bm25: manifest::Bm25Settings::default(),
        wall_time_s: started.elapsed().as_secs_f64(),
        phase_time_ms: manifest::PhaseTimes {
            load_ms,
            tokenize_ms,
            configs_ms,
            write_ms: 0.0,
        },
        config_time_ms: outcomes
            .iter()
            .map(|o| (o.row.config_id.clone(), o.times))
            .collect(),
        outputs: [
            "sweep.csv",
            "sweep_questions.csv",
            "selection.csv",
            "judge_questions.csv",
            "judge.csv",
            "calls.csv",
            report::decision::JUDGE_SECTION_FILE,
            "report.md",
            "sweep.svg",
            "manifest.json",
        ]
        .map(String::from)
        .to_vec(),
    };
    manifest::write(&out, &m)?;
    report_bar.finish_with_message("report.md");

    if !s.quiet {
        mp.clear().ok();
        println!("{section}");
        println!(
            "{} judged question(s) ({} resumed), ${:.4} spent; results in {}",
            run.rows.len(),
            run.resumed,
            run.spent_usd,
            out.display()
        );
    }
    Ok(if run.is_complete() {
        ExitCode::SUCCESS
    } else {
        if let Some(note) = &incomplete {
            eprintln!("incomplete: {note}");
        }
        ExitCode::from(4)
    })
}
