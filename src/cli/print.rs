//! What the commands print to standard output: the sweep table, the decision, the judge
//! section, the dry run's estimate, the validation's problems.

use chunksweep::pipeline::Validation;
use chunksweep::pipeline::decide::Decision;
use chunksweep::pipeline::judge_accuracy::JudgeCheckOutcome;
use chunksweep::pipeline::judge_step::{DryRun, Judged};
use chunksweep::report::judge_section;
use chunksweep::select::StabilityStatus;
use chunksweep::sweep::SweepRow;
use chunksweep::tokenize::TokenizerKind;

/// The pick, its stability, and the decision files written.
pub fn decision(d: &Decision) {
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
        "pick: {} ({:.0} {}/query, span recall@k {:.3}); won {:.0}% of {} halves: {}",
        w.config_id,
        w.tokens_per_query,
        per_query_unit(&w.tokenizer),
        w.span_recall,
        sel.stability.winner_share * 100.0,
        sel.stability.halves,
        stability
    );
    for f in &d.files {
        println!("wrote {}", f.display());
    }
}

/// What tokens per query count: words for the `words` tokenizer, else BPE tokens.
fn per_query_unit(tokenizer: &str) -> &'static str {
    if tokenizer == TokenizerKind::Words.name() {
        "words"
    } else {
        "tokens"
    }
}

/// The sweep table: one line per configuration (one tokenizer per sweep), the id column as wide
/// as the longest id (at least 34).
pub fn summary(rows: &[SweepRow]) {
    let per_query = match rows.first().map(|r| per_query_unit(&r.tokenizer)) {
        Some("words") => "words/query",
        _ => "tok/query",
    };
    let w = rows
        .iter()
        .map(|r| r.config_id.len())
        .max()
        .unwrap_or(0)
        .max(34);
    println!(
        "{:<w$} {:>7} {:>11} {:>8} {:>7} {:>8} {:>7} {:>6} {:>6} {:>5} {:>5}",
        "config",
        "chunks",
        per_query,
        "recall@k",
        "hit@k",
        "coverage",
        "margin",
        "mrr",
        "c_iou",
        "unrch",
        "ties"
    );
    for r in rows {
        println!(
            "{:<w$} {:>7} {:>11.0} {:>8.3} {:>7.3} {:>8.3} {:>7.3} {:>6.3} {:>6.3} {:>5} {:>5}",
            r.config_id,
            r.n_chunks,
            r.tokens_per_query,
            r.span_recall,
            r.hit_rate,
            r.coverage,
            r.margin,
            r.mrr,
            r.char_iou,
            r.unreachable,
            r.ties_at_k
        );
    }
}

/// The judge section and what the judge stage did.
pub fn judged(j: &Judged, run_dir: &std::path::Path) {
    println!("{}", judge_section::markdown(&j.summary));
    println!(
        "{} judged question(s) ({} resumed), ${:.4} spent; results in {}",
        j.run.rows.len(),
        j.run.resumed,
        j.run.spent_usd,
        run_dir.display()
    );
}

/// The dry run's estimate: what the sweep sends (or would), then the judge stage's.
pub fn dry_run(d: &DryRun) {
    if let Some(line) = d.sweep.as_ref().and_then(|s| s.summary()) {
        println!("dry run: {line}");
    }
    println!(
        "dry run: {} candidate(s) × {} question(s); {} already done, {} to run",
        d.candidates.len(),
        d.questions,
        d.done,
        d.todo
    );
    match &d.unswept {
        Some(why) => println!("candidates: not known before the sweep: {why}"),
        None => println!("candidates: {}", d.candidates.join(", ")),
    }
    println!(
        "with {} planted control call(s) and {} repeat call(s) measuring the judge",
        d.control_calls, d.repeat_calls
    );
    println!(
        "{}",
        chunksweep::judge::estimate_line(
            &d.estimate,
            &d.server,
            Some(&d.generator_model),
            &d.judge_model
        )
    );
    if let Some(b) = &d.batch {
        println!("{b}");
    }
    refusal(d.refused.as_deref());
}

/// In a dry run, that the real run would be refused by `--max-cost` and why (exit stays 0).
pub fn refusal(refused: Option<&str>) {
    if let Some(why) = refused {
        println!("dry run: the real run would be refused by --max-cost: {why}");
    }
}

/// Every problem, then the counts.
pub fn validation(v: &Validation, golden: &std::path::Path, errors: usize) {
    for p in &v.problems {
        println!("{p}");
    }
    for d in v.reading.iter().chain(&v.duplicates) {
        println!("warning: {d}");
    }
    for (line, id) in &v.unreviewed {
        println!(
            "{}:{line}: unreviewed draft {id:?}: review it with `chunksweep golden review`",
            golden.display()
        );
    }
    if !v.unreviewed.is_empty() {
        println!(
            "{} of {} questions are unreviewed drafts (\"source\": \"draft\", \"reviewed\" not true)",
            v.unreviewed.len(),
            v.questions
        );
    }
    println!(
        "{}: {} questions, {} evidence spans ({} with several locations, {} found only with whitespace forgiven, {} trimmed of whitespace at their edges) against {} documents; {} error(s), {} warning(s)",
        golden.display(),
        v.questions,
        v.spans,
        v.ambiguous,
        v.problems
            .iter()
            .filter(|p| p.kind == chunksweep::golden::ProblemKind::WhitespaceForgiven)
            .count(),
        v.trimmed,
        v.documents,
        errors,
        v.problems.len() - errors + v.duplicates.len() + v.reading.len()
    );
}

/// `value [lo, hi]`; `value, no interval` when there is none (κ when every resample gave the
/// same value); `n/a` when undefined.
fn with_interval(v: Option<f64>, lo: Option<f64>, hi: Option<f64>) -> String {
    match (v, lo, hi) {
        (Some(v), Some(l), Some(h)) => format!("{v:.2} [{l:.2}, {h:.2}]"),
        (Some(v), _, _) => format!("{v:.2}, no interval"),
        _ => "n/a".into(),
    }
}

/// The columns of judge-check's table: header and width.
const CHECK_COLUMNS: [(&str, usize); 12] = [
    ("criterion", 13),
    ("labelled pass", 13),
    ("labelled fail", 13),
    ("said pass", 9),
    ("said fail", 9),
    ("errors", 6),
    ("unfinished", 10),
    ("TNR (caught failures)", 21),
    ("TPR (passes passed)", 20),
    ("balanced accuracy", 18),
    ("Cohen's kappa", 18),
    ("majority baseline", 18),
];

/// One line of judge-check's table: text columns left-aligned, counts right-aligned.
fn check_line(cells: &[String]) -> String {
    cells
        .iter()
        .zip(CHECK_COLUMNS)
        .enumerate()
        .map(|(i, (c, (_, w)))| {
            if (1..=6).contains(&i) {
                format!("{c:>w$}")
            } else {
                format!("{c:<w$}")
            }
        })
        .collect::<Vec<_>>()
        .join("  ")
        .trim_end()
        .to_string()
}

/// judge-check's table, the verdict per criterion, parroting warnings (or its estimate) and
/// where it was written.
pub fn judge_check(out: &JudgeCheckOutcome) {
    match out {
        JudgeCheckOutcome::DryRun {
            items,
            estimate,
            unsent,
            judge_model,
            server,
            refused,
        } => {
            println!("dry run: {items} labelled item(s)");
            match estimate {
                Some(e) => println!(
                    "{}",
                    chunksweep::judge::estimate_line(e, server, None, judge_model)
                ),
                None => println!(
                    "the labelled rows' retrieved contexts cannot be rebuilt from the caches ({}); {items} chat call(s) to judge {judge_model} at {server}, their tokens and cost not estimated; nothing was sent",
                    unsent
                        .as_deref()
                        .unwrap_or("the caches lack what the grid needs")
                ),
            }
            refusal(refused.as_deref());
        }
        JudgeCheckOutcome::Checked {
            table,
            dir,
            min_lower,
            ..
        } => {
            println!(
                "Positive class: pass. TNR (caught failures) = fails among items labelled fail; TPR = passes among items labelled pass. FaithBench and LLM-AggreFact take fail as positive: their TPR is the TNR here, their TNR the TPR."
            );
            let header: Vec<String> = CHECK_COLUMNS.iter().map(|(h, _)| h.to_string()).collect();
            println!("{}", check_line(&header));
            for r in table {
                let cells = [
                    r.criterion.clone(),
                    r.labelled_pass.to_string(),
                    r.labelled_fail.to_string(),
                    r.said_pass.to_string(),
                    r.said_fail.to_string(),
                    r.errors.to_string(),
                    r.unfinished.to_string(),
                    with_interval(r.tnr, r.tnr_lo, r.tnr_hi),
                    with_interval(r.tpr, r.tpr_lo, r.tpr_hi),
                    with_interval(
                        r.balanced_accuracy,
                        r.balanced_accuracy_lo,
                        r.balanced_accuracy_hi,
                    ),
                    with_interval(r.kappa, r.kappa_lo, r.kappa_hi),
                    with_interval(
                        r.majority_baseline,
                        r.majority_baseline_lo,
                        r.majority_baseline_hi,
                    ),
                ];
                println!("{}", check_line(&cells));
            }
            println!(
                "\nA criterion can tell pass from fail when the 95% lower bounds of both its TNR and its TPR are at least {min_lower} ([judge] min_control_tnr):"
            );
            for r in table.iter().filter(|r| !r.verdict.is_empty()) {
                let sep = if r.not_measured() { ":" } else { " —" };
                println!("{}: {}{sep} {}.", r.criterion, r.verdict, r.verdict_reason);
            }
            for r in table.iter().filter(|r| !r.verdict.is_empty()) {
                if let Some(w) = r.parroting().warning(&r.criterion) {
                    println!("warning: parroted replies: {w}; see judge_check_items.csv.");
                }
            }
            let code = out.exit_class().map_or(0, |c| c.code());
            if out.unfinished() > 0 {
                println!(
                    "{} item(s) unfinished (no reply from the judge): nothing is concluded from them; rerun the same command (exit {code}).",
                    out.unfinished()
                );
            } else if out.no_criterion_tells() {
                println!(
                    "No criterion can tell pass from fail: this judge's verdicts on these criteria cannot confirm a chunk size (exit {code})."
                );
            }
            if let Some(r) = table.first() {
                println!(
                    "judge model {} ({}); wrote {}",
                    r.judge_model,
                    r.judge_mode,
                    dir.join(chunksweep::files::JUDGE_CHECK).display()
                );
            }
        }
    }
}

/// `extract`'s summary: a line per document (reader, version, pages, code points, cached),
/// the warnings, the skipped files, the files of an earlier extract removed, and where
/// extract.json is.
pub fn extraction(x: &chunksweep::pipeline::extract::Extraction, out: &std::path::Path) {
    for d in &x.documents {
        let pages = match d.pages.len() {
            0 => String::new(),
            n => format!(", {n} pages"),
        };
        let cached = if d.cached { ", from the cache" } else { "" };
        println!(
            "{} → {}: {} {}{pages}, {} code points{cached}",
            d.id, d.file, d.reader, d.version, d.chars
        );
    }
    for d in &x.documents {
        for w in &d.warnings {
            println!("warning: {}: {w}", d.id);
        }
    }
    if !x.skipped.is_empty() {
        println!(
            "warning: {} file(s) skipped, no reader reads them: {}",
            x.skipped.len(),
            x.skipped.join(", ")
        );
    }
    if !x.removed.is_empty() {
        println!(
            "removed {} file(s) the earlier extract wrote there that this one did not: {}",
            x.removed.len(),
            x.removed.join(", ")
        );
    }
    println!(
        "wrote {} document(s) and {}",
        x.documents.len(),
        out.join(chunksweep::files::EXTRACT_JSON).display()
    );
}
