//! The outcome of a run, built once: the selection at every cut, the prefix comparison, the
//! judge's part, the per-question drill-down and how the run is named and reproduced. Every
//! report renders from it: report.md ([`crate::report::markdown`]), report.html
//! ([`crate::report::html`]), selection.csv and prefix_comparison.csv (its rows), the figures
//! ([`crate::report::plot`]).

use std::collections::HashMap;

use super::drill::{self, DrillDown};
use super::texts::{Texts, TextsError};
use crate::chunking::external::PlacementCounts;
use crate::judge::summary::JudgeSummary;
use crate::select::engines::{self, EngineComparison};
use crate::select::expand::{self, Expansions};
use crate::select::prefix::PrefixComparison;
use crate::select::rerank::{self, Reranking};
use crate::select::tradeoff::Tradeoff;
use crate::select::{ConfigSelection, Cuts, Selection, SelectionSettings};
use crate::sweep::rows::{QuestionRow, SweepRow};

/// Everything the reports of a run show; it borrows the judge's summary that the judge stage
/// (or the run folder's journal) made.
#[derive(Debug, Clone)]
pub struct Outcome<'a> {
    /// The run's name (its folder's name), heading the reports and the figures.
    pub run_name: String,
    /// The run folder as the reader should type it (its `--out` as given).
    pub label: String,
    /// The command line that made the run, its program path first, when known.
    pub command: Option<Vec<String>>,
    /// The selection settings.
    pub settings: SelectionSettings,
    /// The selection at the primary cut (see [`Cuts`]), which decides.
    pub selection: Selection,
    /// The selections at the other cuts (other budgets, then top k).
    pub other_cuts: Vec<Selection>,
    /// The budget trade-off, when the sweep has two budgets or more.
    pub tradeoff: Option<Tradeoff>,
    /// The prefix comparison at the primary cut (empty when the grid has no prefix but
    /// `none`).
    pub prefixes: Vec<PrefixComparison>,
    /// The rerank comparison at the primary cut, when the grid reranks.
    pub reranking: Option<Reranking>,
    /// The expansion comparison at every cut, when the grid has an expansion.
    pub expansions: Option<Expansions>,
    /// External retrievers against exact cosine at the primary cut (empty without one).
    pub engines: Vec<EngineComparison>,
    /// The retriever of each configuration, by configuration id.
    pub retrievers: HashMap<String, String>,
    /// The judge's summary, when the run has judged answers: rendered by
    /// [`crate::report::judge_section`] (report.md's and report.html's judge section); its
    /// judged questions' verdicts are in the drill-down.
    pub judge: Option<&'a JudgeSummary>,
    /// Per question, each candidate's retrieved chunks, evidence, answer and verdicts.
    pub drill: DrillDown,
    /// How each external configuration's chunks were placed (chunkers.csv; empty without
    /// external chunkers).
    pub chunkers: Vec<PlacementCounts>,
    /// The golden set's drafted questions and how they rank the configurations against the
    /// human-written ones ([`super::drafts`]); `None` without a draft or without the texts.
    pub drafts: Option<super::drafts::DraftCheck>,
    /// The golden set's whole-page evidence spans ([`super::page_evidence`]); `None` without
    /// one or without the texts.
    pub page_evidence: Option<super::page_evidence::PageEvidence>,
}

/// What the outcome is built from besides the selection: tables and texts borrowed for the
/// build (`'a`), and the judge's summary, which the outcome keeps borrowing (`'j`).
pub struct Inputs<'a, 'j> {
    /// How the run folder is named in the report (its `--out` as given, so a report
    /// regenerated from another working directory is byte-identical).
    pub label: &'a str,
    /// The command line that made the run.
    pub command: Option<&'a [String]>,
    /// sweep.csv's rows.
    pub rows: &'a [SweepRow],
    /// sweep_questions.csv's rows.
    pub questions: &'a [QuestionRow],
    /// The corpus and golden set, or why they could not be read (the drill-down then says so
    /// and shows the questions without their texts).
    pub texts: Result<Texts<'a>, &'a TextsError>,
    /// chunkers.csv's rows (empty without external chunkers).
    pub chunkers: &'a [PlacementCounts],
    /// The judge's summary, when the run has judged answers: made by this run's judge stage
    /// ([`crate::pipeline::judge_step::judge`]), or rebuilt from the run folder
    /// ([`crate::pipeline::judge_step::summary_from_folder`]).
    pub judge: Option<&'j JudgeSummary>,
}

impl<'j> Outcome<'j> {
    /// Builds the outcome of the run named `run_name` (its folder's name) from the selection at
    /// every cut (`cuts`, as [`crate::select::select_cuts`] made it), the prefix comparison at
    /// the primary cut and `inputs`.
    pub fn build(
        run_name: &str,
        cuts: Cuts,
        prefixes: Vec<PrefixComparison>,
        settings: &SelectionSettings,
        inputs: Inputs<'_, 'j>,
    ) -> Self {
        let tradeoff = cuts.tradeoff;
        let mut selections = cuts.selections.into_iter();
        let selection = selections.next().expect("at least one cut");
        let other_cuts: Vec<Selection> = selections.collect();
        let judge_rows = inputs.judge.map_or(&[][..], |j| &j.questions[..]);
        let drafts = inputs
            .texts
            .ok()
            .and_then(|t| super::drafts::check(t.golden, &selection, inputs.questions));
        let page_evidence =
            (inputs.texts.ok()).and_then(|t| super::page_evidence::find(&t, &selection));
        let drill = drill::build(&selection, inputs.questions, judge_rows, inputs.texts);
        let reranking = rerank::compare(
            inputs.rows,
            inputs.questions,
            selection.budget_tokens(),
            settings,
        );
        let engines = engines::compare(
            inputs.rows,
            inputs.questions,
            selection.budget_tokens(),
            settings,
        );
        Outcome {
            run_name: run_name.to_string(),
            label: inputs.label.to_string(),
            command: inputs.command.map(<[String]>::to_vec),
            settings: settings.clone(),
            retrievers: inputs
                .rows
                .iter()
                .map(|r| (r.config_id.clone(), r.retriever.clone()))
                .collect(),
            judge: inputs.judge,
            selection,
            other_cuts,
            tradeoff,
            prefixes,
            reranking,
            expansions: expand::compare(inputs.rows, inputs.questions, settings),
            engines,
            drill,
            chunkers: inputs.chunkers.to_vec(),
            drafts,
            page_evidence,
        }
    }

    /// selection.csv's rows: every configuration at every cut, the deciding cut first.
    pub fn selection_rows(&self) -> Vec<&ConfigSelection> {
        std::iter::once(&self.selection)
            .chain(&self.other_cuts)
            .flat_map(|s| &s.configs)
            .collect()
    }

    /// The retriever of configuration `config_id` (empty when sweep.csv has no row for it).
    pub fn retriever(&self, config_id: &str) -> &str {
        self.retrievers.get(config_id).map_or("", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::rows::test_row;
    use crate::judge::settings::JudgeSettings;
    use crate::judge::summary::SummaryInputs;
    use crate::judge::table::CandidateInfo;
    use crate::report::{html, judge_section, markdown};
    use crate::select::select_cuts;
    use crate::select::tests::{Fake, tables};

    /// The judge's summary of both configurations on the six questions: both pass everything
    /// but `fixed-64`'s faithfulness on q002.
    fn judge_summary() -> JudgeSummary {
        let settings = JudgeSettings {
            generator_model: "gen".into(),
            judge_model: "judge".into(),
            ..JudgeSettings::default()
        };
        let criteria = crate::judge::criteria::names(&settings.criteria);
        let mut questions = Vec::new();
        for q in 0..6 {
            for cfg in ["fixed-64", "fixed-256"] {
                let f = if cfg == "fixed-64" && q == 2 {
                    "fail"
                } else {
                    "pass"
                };
                let mut row = test_row(cfg, q, f, "pass", "na");
                row.question_id = format!("q{q:03}");
                questions.push(row);
            }
        }
        let info = |id: &str, size, tokens_per_query| CandidateInfo {
            config_id: id.into(),
            chunk_size: size,
            tokens_per_query,
            span_recall: 1.0,
        };
        JudgeSummary::build(SummaryInputs {
            candidates: &[info("fixed-64", 64, 300.0), info("fixed-256", 256, 1200.0)],
            criteria: &criteria,
            questions,
            probes: Vec::new(),
            settings: &settings,
            pick: Some("fixed-64"),
            incomplete: None,
        })
    }

    /// Two configurations on six questions, with the judge's summary `judge` and no texts.
    fn outcome(judge: &JudgeSummary) -> Outcome<'_> {
        let fakes = [
            Fake::new(
                "fixed-64",
                64,
                300.0,
                vec![1., 1., 0., 1., 1., 1.],
                vec![0.2; 6],
            ),
            Fake::new("fixed-256", 256, 1200.0, vec![1.; 6], vec![0.4; 6]),
        ];
        let (rows, questions) = tables(&fakes);
        let settings = SelectionSettings::default();
        let cuts = select_cuts(&rows, &questions, &settings).unwrap();
        let missing = TextsError::from(
            crate::corpus::load_corpus(std::path::Path::new("no-such-corpus"), &Default::default())
                .unwrap_err(),
        );
        Outcome::build(
            "tiny",
            cuts,
            Vec::new(),
            &settings,
            Inputs {
                label: "runs/tiny",
                command: None,
                rows: &rows,
                questions: &questions,
                texts: Err(&missing),
                chunkers: &[],
                judge: Some(judge),
            },
        )
    }

    #[test]
    fn report_md_and_report_html_render_the_same_sections_from_the_outcome() {
        let summary = judge_summary();
        let o = outcome(&summary);
        let md = markdown::render(&o);
        let page = html::render(&o, None);
        let pick = &o.selection.winner().config_id;
        assert!(
            md.starts_with(&format!(
                "# chunksweep report: tiny\n\n## Decision\n\n**At k = 5 use `{pick}` (fixed chunking"
            )),
            "{md}"
        );
        let judge_md = judge_section::markdown(&summary);
        assert!(
            md.ends_with(&format!("\n\n{judge_md}")),
            "the judge's section closes report.md"
        );
        assert!(
            judge_md.contains("\n**Decision: `fixed-64`, not confirmed: the judge's accuracy was not measured (see below).**\n"),
            "{judge_md}"
        );
        assert!(md.contains("\nchunksweep report runs/tiny\n"));
        // The page has every section of report.md, in the same order, as headings.
        let titles: Vec<&str> = md.lines().filter_map(|l| l.strip_prefix("## ")).collect();
        assert_eq!(
            titles,
            [
                "Decision",
                "The rule",
                "Configurations",
                "Diagnoses",
                "Reproduce",
                "Answer quality (judge)"
            ]
        );
        let mut at = 0;
        for t in [
            "Decision",
            "Answer quality (judge)",
            "The rule",
            "Configurations",
        ]
        .into_iter()
        .chain(["Diagnoses", "Reproduce", "Questions"])
        {
            let found = page[at..].find(&format!("<h2>{t}</h2>"));
            assert!(found.is_some(), "no heading {t} after byte {at}");
            at += found.unwrap();
        }
        // Typed text, not Markdown: code and emphasis are elements, and no Markdown syntax is
        // left in the page (its script has no backtick either), the judge's section included.
        assert!(page.contains(&format!(
            "<p><strong>At k = 5 use <code>{pick}</code> (fixed chunking"
        )));
        assert!(page.contains(&judge_section::html(&summary).into_string()));
        assert!(
            page.contains("<section class=\"judge\" id=\"judge\"><h2>Answer quality (judge)</h2>")
        );
        assert!(page.contains("<strong>Decision: <code>fixed-64</code>, not confirmed: the judge's accuracy was not measured (see below).</strong>"));
        assert!(!page.contains("**") && !page.contains('`'));
        // No texts: the drill-down says why and still lists the candidates' questions.
        assert_eq!(o.drill.candidates.len(), o.selection.candidates.len());
        assert_eq!(o.drill.questions.len(), 6);
        assert!(o.drill.texts.is_empty());
        // The drill-down's verdicts are the summary's judged questions.
        let q2 = o.drill.questions.iter().find(|q| q.id == "q002").unwrap();
        let at = |config: &str| q2.cells.iter().find(|c| c.config == config).unwrap();
        let verdicts = |config: &str| -> Vec<(String, &str)> {
            at(config)
                .verdicts
                .iter()
                .map(|v| (v.criterion.clone(), v.verdict))
                .collect()
        };
        assert_eq!(
            verdicts("fixed-64"),
            [
                ("faithfulness".into(), "fail"),
                ("relevancy".into(), "pass")
            ]
        );
        assert_eq!(
            verdicts("fixed-256"),
            [
                ("faithfulness".into(), "pass"),
                ("relevancy".into(), "pass")
            ]
        );
        let note = o.drill.texts_note.as_deref().unwrap();
        assert!(
            note.starts_with("The questions' and chunks' texts are not shown: ")
                && note.contains("no-such-corpus"),
            "{note}"
        );
    }

    #[test]
    fn selection_rows_are_every_cut_deciding_cut_first() {
        let summary = judge_summary();
        let o = outcome(&summary);
        let rows = o.selection_rows();
        assert_eq!(rows.len(), 2 * (1 + o.other_cuts.len()));
        assert_eq!(rows[0].cut, o.selection.configs[0].cut);
        assert_eq!(o.retriever("fixed-64"), "bm25");
        assert_eq!(o.retriever("nothing"), "");
    }
}
