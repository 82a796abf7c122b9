//! The binary's side: flags ([`args`]), the progress display ([`progress`]) and what is printed
//! ([`print`]). Each command resolves its [`Plan`], calls the library's pipeline and prints.

pub mod args;
pub mod golden;
pub mod print;
pub mod progress;

use std::process::ExitCode;

use anyhow::{Context, Result};

use chunksweep::config::RunOptions;
use chunksweep::golden::Severity;
use chunksweep::pipeline::{self, judge_step::JudgeOutcome};
use chunksweep::plan::Plan;

use args::{
    CheckArgs, ExtractArgs, InputArgs, JudgeCheckArgs, MergeArgs, PromptsCommand, ReportArgs,
    RunArgs, SweepArgs,
};
use chunksweep::sweep::shard::ShardFlag;
use progress::Progress;

fn command_line() -> Vec<String> {
    std::env::args().collect()
}

/// `sweep --shard` and `run --shard`: the shard swept into its folder.
fn sweep_shard(plan: &Plan, flag: ShardFlag, quiet: bool) -> Result<ExitCode> {
    let shard = flag
        .resolve(|name| std::env::var(name).ok())
        .map_err(chunksweep::error::Error::from)?;
    let progress = Progress::new(quiet);
    let out = pipeline::sweep_shard(plan, shard, &command_line(), &|e| progress.handle(e))
        .with_context(|| format!("shard {shard} into {}", plan.run_dir.display()))?;
    progress.clear();
    if !quiet {
        println!(
            "shard {}: {} of {} configurations × {} questions in {:.1} s; results in {} (join every shard with `chunksweep merge`)",
            out.shard,
            out.configs.len(),
            plan.configs.len(),
            out.n_questions,
            out.wall_s,
            out.dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `chunksweep merge`.
pub fn merge(args: MergeArgs) -> Result<ExitCode> {
    let out = pipeline::merge::merge(&args.shards, &args.out, &command_line())
        .with_context(|| format!("merge into {}", args.out.display()))?;
    if !args.quiet {
        print::summary(&out.rows);
        println!(
            "{} shards merged: {} configurations × {} questions in {:.1} s; results in {}",
            out.shards,
            out.rows.len(),
            out.n_questions,
            out.wall_s,
            out.run_dir.display()
        );
        print::decision(&out.decision);
    }
    Ok(ExitCode::SUCCESS)
}

/// `chunksweep sweep`.
pub fn sweep(args: SweepArgs) -> Result<ExitCode> {
    let plan = Plan::load(
        args.input.config.as_deref(),
        args.layer(),
        RunOptions::default(),
        jiff::Timestamp::now(),
    )?;
    if let Some(flag) = args.shard {
        return sweep_shard(&plan, flag, args.quiet);
    }
    let progress = Progress::new(args.quiet);
    let out = pipeline::sweep(&plan, &command_line(), &|e| progress.handle(e))
        .with_context(|| format!("sweep into {}", plan.run_dir.display()))?;
    progress.clear();
    if !args.quiet {
        print::summary(&out.rows);
        println!(
            "{} configurations × {} questions in {:.1} s; results in {}",
            out.rows.len(),
            out.n_questions,
            out.wall_s,
            out.run_dir.display()
        );
        print::decision(&out.decision);
    }
    Ok(ExitCode::SUCCESS)
}

/// `chunksweep run`.
pub fn run(args: RunArgs) -> Result<ExitCode> {
    let plan = Plan::load(
        args.sweep.input.config.as_deref(),
        args.layer(),
        args.options.clone(),
        jiff::Timestamp::now(),
    )?;
    let quiet = args.sweep.quiet;
    // a shard's run stops after its sweep step: the judge stage runs on the merged folder
    if let Some(flag) = args.sweep.shard {
        return sweep_shard(&plan, flag, quiet);
    }
    let progress = Progress::new(quiet);
    let out = pipeline::run(&plan, &command_line(), &|e| progress.handle(e))
        .with_context(|| format!("run into {}", plan.run_dir.display()))?;
    progress.clear();
    match &out.judge {
        JudgeOutcome::DryRun(d) => print::dry_run(d),
        JudgeOutcome::Judged(j) => {
            if !quiet {
                print::judged(j, &plan.run_dir);
            }
            if let Some(note) = &j.incomplete {
                eprintln!("incomplete: {note}");
            }
        }
    }
    Ok(out
        .exit_class()
        .map_or(ExitCode::SUCCESS, |c| ExitCode::from(c.code())))
}

/// `chunksweep report`.
pub fn report(args: ReportArgs) -> Result<ExitCode> {
    let reported = pipeline::report(&args.run_dir, &args.selection, args.candidates)
        .with_context(|| format!("report of {}", args.run_dir.display()))?;
    for warning in &reported.warnings {
        eprintln!("warning: {warning}");
    }
    print::decision(&reported.decision);
    Ok(ExitCode::SUCCESS)
}

/// `chunksweep judge-check`.
pub fn judge_check(args: JudgeCheckArgs) -> Result<ExitCode> {
    let progress = Progress::new(false);
    let out = pipeline::judge_accuracy::judge_check(
        args.config.as_deref(),
        args.layer(),
        &args.labels,
        pipeline::judge_accuracy::Sending {
            dry_run: args.dry_run,
            batch: args.batch,
        },
        &|e| progress.handle(e),
    )
    .with_context(|| format!("judge-check of {}", args.labels.display()))?;
    progress.clear();
    print::judge_check(&out);
    let unasked = out.not_started_for_budget();
    if unasked > 0 {
        eprintln!(
            "incomplete: {unasked} item(s) not asked: the spend would have passed --max-cost; raise it and rerun with the same --out (answered calls come from the cache)"
        );
    }
    let errors = out.errors() - unasked;
    if errors > 0 {
        eprintln!(
            "warning: {errors} verdict(s) were errors (see judge_check_items.csv and calls.csv), \
             counted in no figure; check the server and rerun with the same --out"
        );
    }
    Ok(out
        .exit_class()
        .map_or(ExitCode::SUCCESS, |c| ExitCode::from(c.code())))
}

/// `chunksweep check`: prints check.md; exit 1 when the check fails.
/// `chunksweep extract`: the texts and extract.json; one line per document, then the warnings.
pub fn extract(args: ExtractArgs) -> Result<ExitCode> {
    let request = pipeline::extract::ExtractRequest {
        config: args.config,
        corpus: args.corpus,
        out: args.out,
        skip_unreadable: args.skip_unreadable,
    };
    let done = pipeline::extract::run(&request).with_context(|| match &request.corpus {
        Some(corpus) => format!("extract {}", corpus.display()),
        None => "extract".to_string(),
    })?;
    print::extraction(&done, &request.out);
    Ok(ExitCode::SUCCESS)
}

pub fn check(args: CheckArgs) -> Result<ExitCode> {
    if args.margin.is_some() {
        eprintln!(
            "warning: --margin is deprecated and will be removed in the next release: use --delta (the same non-inferiority margin δ, named as the selection names it)"
        );
    }
    let request = pipeline::check::CheckRequest {
        baseline: args.baseline.clone(),
        config: args.input.config.clone(),
        flags: args.layer(),
        settings: args.gate(),
        judge: args.judge,
        junit: args.junit.clone(),
    };
    let progress = Progress::new(args.quiet);
    let out = pipeline::check::check(&request, &command_line(), &|e| progress.handle(e))
        .with_context(|| format!("check against {}", args.baseline.display()))?;
    progress.clear();
    for warning in &out.warnings {
        eprintln!("warning: {warning}");
    }
    print!("{}", out.markdown);
    println!("check.md and check.json in {}", out.run_dir.display());
    if out.check.verdict.outcome == chunksweep::check::verdict::RetrievalOutcome::Inconclusive {
        eprintln!(
            "warning: the retrieval check is inconclusive (see check.md); {}",
            if out.check.verdict.fails {
                "it fails the check (--fail-on-inconclusive)"
            } else {
                "it fails the check only with --fail-on-inconclusive"
            }
        );
    }
    if let Some(j) = &out.check.judge {
        for c in &j.criteria {
            if let Some(why) = c.outcome.cannot_gate() {
                eprintln!("warning: the judge cannot gate on {}: {why}", c.criterion);
            }
            if c.outcome == chunksweep::check::judged::CriterionOutcome::Inconclusive {
                eprintln!(
                    "warning: answer quality on {} is inconclusive: {} error verdict(s) decide it (see check.md); {}",
                    c.criterion,
                    c.errors,
                    if out.check.settings.fail_on_inconclusive {
                        "it fails the check (--fail-on-inconclusive)"
                    } else {
                        "it fails the check only with --fail-on-inconclusive"
                    }
                );
            }
        }
        if !j.judged && out.check.settings.fail_on_inconclusive {
            eprintln!(
                "the judge can gate on no criterion: the check fails (--fail-on-inconclusive)"
            );
        }
        let regressions: Vec<&str> = j
            .criteria
            .iter()
            .filter(|c| c.outcome == chunksweep::check::judged::CriterionOutcome::Regression)
            .map(|c| c.criterion.as_str())
            .collect();
        if !regressions.is_empty() {
            eprintln!(
                "answer quality regression on {} (see check.md): the check fails",
                regressions.join(", ")
            );
        }
        if out.check.is_unfinished() {
            eprintln!(
                "{} of {} answers under test have no verdict yet: rerun the same command to finish them (exit 4)",
                j.unfinished, j.questions
            );
        }
    }
    Ok(ExitCode::from(out.check.exit_code()))
}

/// `chunksweep prompts export DIR`.
pub fn prompts(command: PromptsCommand) -> Result<ExitCode> {
    match command {
        PromptsCommand::Export { dir } => {
            let criteria: Vec<(String, String)> = chunksweep::judge::criteria::builtin()
                .into_iter()
                .map(|c| (c.file_name(), c.default_prompt))
                .collect();
            let written =
                chunksweep::prompts::export(&dir, &criteria).map_err(chunksweep::Error::from)?;
            for path in written {
                println!("wrote {}", path.display());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `chunksweep validate`: exit 2 when the golden set has an error.
pub fn validate(args: InputArgs) -> Result<ExitCode> {
    let plan = Plan::load(
        args.config.as_deref(),
        args.layer(),
        RunOptions::default(),
        jiff::Timestamp::now(),
    )?;
    let v = pipeline::validate(&plan)?;
    let errors = v
        .problems
        .iter()
        .filter(|p| p.kind.severity() == Severity::Error)
        .count();
    print::validation(&v, &plan.golden, errors);
    Ok(if errors > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
