//! Diagnoses for the report, each with the numbers that triggered it (seeds 000 and 001):
//!
//! - **boundary damage**: coverage@k − span recall@k > `boundary_gap` (0.15) for a
//!   configuration: evidence is retrieved in pieces, cut at chunk boundaries. Advice, in seed
//!   000's order: structure-aware (heading) or sentence splitting first, more overlap second,
//!   bigger chunks last.
//! - **flat curve**: every configuration's span recall@k lies inside the pick's 95% bootstrap
//!   interval for span recall, and every margin inside the pick's interval for the margin: the
//!   sweep cannot tell the sizes apart, so chunk size is not the bottleneck (look at the
//!   retriever, query rewriting or reranking).
//! - **winner by question type**: the selection rule, applied to each question type with at
//!   least `min_type_questions` questions, picks different chunk sizes: consider parent-document
//!   retrieval (match on small chunks, return their parent section).
//! - **too few questions**: fewer than `min_questions` (30): interval half-widths are wide, and
//!   the differences seen are likely noise.
//! - **plateau fallback**: no configuration passed both plateau tests (see
//!   [`super::plateau`]).
//! - **edge of the grid**: the pick is at the largest (or smallest) chunk size swept while its
//!   strategy's span recall or margin still improves towards that edge: the best size may lie
//!   outside the grid, so extend `--sizes` before trusting the pick.

use serde::Serialize;

/// Which diagnosis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosisKind {
    /// coverage − span recall above the threshold.
    BoundaryDamage,
    /// Every configuration inside the pick's confidence intervals.
    FlatCurve,
    /// The pick's chunk size differs between question types.
    WinnerByQuestionType,
    /// Fewer questions than the minimum.
    TooFewQuestions,
    /// The plateau's two tests had no configuration in common.
    PlateauFallback,
    /// The pick is at the edge of the swept sizes and the curve still improves towards it.
    EdgeOfGrid,
}

impl DiagnosisKind {
    /// Human title for the report.
    pub fn title(self) -> &'static str {
        match self {
            DiagnosisKind::BoundaryDamage => "Boundary damage",
            DiagnosisKind::FlatCurve => "Flat curve",
            DiagnosisKind::WinnerByQuestionType => "Winner differs by question type",
            DiagnosisKind::TooFewQuestions => "Too few questions",
            DiagnosisKind::PlateauFallback => "Margin and recall disagree",
            DiagnosisKind::EdgeOfGrid => "Pick at the edge of the grid",
        }
    }
}

/// One diagnosis: what triggered it (with numbers) and what to do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosis {
    /// Which diagnosis.
    pub kind: DiagnosisKind,
    /// The triggering numbers, as a sentence.
    pub evidence: String,
    /// What to do about it.
    pub advice: String,
}

/// The advice for boundary damage, in seed 000's order.
pub const BOUNDARY_ADVICE: &str = "boundaries cut the evidence: switch to structure-aware \
(heading) or sentence splitting first, raise overlap second, and raise chunk size last";

/// The advice for a flat curve (seed 001).
pub const FLAT_ADVICE: &str = "chunk size is not the bottleneck: stop tuning it and look at the \
retriever, query rewriting or reranking";

/// The advice for a winner that differs by question type (seeds 000 and 001).
pub const BY_TYPE_ADVICE: &str = "no single size serves every question type: consider \
parent-document retrieval (index small chunks, return their parent section) or expanding to \
neighbouring chunks after retrieval";

/// The advice for too few questions.
pub const FEW_QUESTIONS_ADVICE: &str = "label more questions (seed 000 suggests 50–100) before \
trusting differences this small";

/// The advice for a plateau fallback.
pub const FALLBACK_ADVICE: &str = "the configuration with the best margin is not among those \
with the best span recall; the pick uses span recall alone, so check the margin column by hand";

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

/// Computes the diagnoses of a selection (its `diagnoses` field is ignored), in report order:
/// too few questions, plateau fallback, edge of the grid, flat curve, boundary damage, winner by
/// question type.
pub fn diagnose(sel: &super::Selection) -> Vec<Diagnosis> {
    let s = &sel.settings;
    let w = sel.winner();
    let mut out = Vec::new();

    if sel.n_questions < s.min_questions {
        out.push(Diagnosis {
            kind: DiagnosisKind::TooFewQuestions,
            evidence: format!(
                "{} questions (< {}): the pick's {:.0}% interval for hit@k is {}–{} (±{:.2}), \
                 wider than most differences between configurations",
                sel.n_questions,
                s.min_questions,
                s.confidence * 100.0,
                f3(w.hit_rate_lo),
                f3(w.hit_rate_hi),
                (w.hit_rate_hi - w.hit_rate_lo) / 2.0
            ),
            advice: FEW_QUESTIONS_ADVICE.into(),
        });
    }

    if sel.plateau_fallback {
        out.push(Diagnosis {
            kind: DiagnosisKind::PlateauFallback,
            evidence: format!(
                "no configuration has both margin ≥ {} and span recall ≥ {}",
                f3(sel.margin_floor),
                f3(sel.recall_floor)
            ),
            advice: FALLBACK_ADVICE.into(),
        });
    }

    if let Some(d) = edge_of_grid(sel) {
        out.push(d);
    }

    if sel.configs.len() > 1 {
        let recall_ci = crate::stats::Interval {
            lo: w.span_recall_lo,
            hi: w.span_recall_hi,
        };
        let margin_ci = crate::stats::Interval {
            lo: w.margin_lo,
            hi: w.margin_hi,
        };
        let (rmin, rmax) = min_max(sel.configs.iter().map(|c| c.span_recall));
        let (mmin, mmax) = min_max(sel.configs.iter().map(|c| c.margin));
        if sel
            .configs
            .iter()
            .all(|c| recall_ci.contains(c.span_recall) && margin_ci.contains(c.margin))
        {
            out.push(Diagnosis {
                kind: DiagnosisKind::FlatCurve,
                evidence: format!(
                    "span recall@k ranges {}–{} over all {} configurations, inside the pick's \
                     {:.0}% interval {}–{}; margin ranges {}–{}, inside {}–{}",
                    f3(rmin),
                    f3(rmax),
                    sel.configs.len(),
                    s.confidence * 100.0,
                    f3(recall_ci.lo),
                    f3(recall_ci.hi),
                    f3(mmin),
                    f3(mmax),
                    f3(margin_ci.lo),
                    f3(margin_ci.hi)
                ),
                advice: FLAT_ADVICE.into(),
            });
        }
    }

    let mut damaged: Vec<&super::ConfigSelection> = sel
        .configs
        .iter()
        .filter(|c| c.boundary_gap > s.boundary_gap)
        .collect();
    if !damaged.is_empty() {
        damaged.sort_by(|a, b| b.boundary_gap.total_cmp(&a.boundary_gap));
        let shown: Vec<String> = damaged
            .iter()
            .take(5)
            .map(|c| {
                format!(
                    "{} (coverage {} − span recall {} = {})",
                    c.config_id,
                    f3(c.coverage),
                    f3(c.span_recall),
                    f3(c.boundary_gap)
                )
            })
            .collect();
        let more = if damaged.len() > 5 {
            format!(" and {} more", damaged.len() - 5)
        } else {
            String::new()
        };
        let pick = if w.boundary_gap > s.boundary_gap {
            format!("the pick is one of them (gap {})", f3(w.boundary_gap))
        } else {
            format!("the pick is not (gap {})", f3(w.boundary_gap))
        };
        out.push(Diagnosis {
            kind: DiagnosisKind::BoundaryDamage,
            evidence: format!(
                "coverage − span recall > {} in {} of {} configurations: {}{}; {}",
                super::trim(s.boundary_gap),
                damaged.len(),
                sel.configs.len(),
                shown.join(", "),
                more,
                pick
            ),
            advice: BOUNDARY_ADVICE.into(),
        });
    }

    let sizes: std::collections::BTreeSet<usize> = sel
        .by_type
        .iter()
        .map(|t| sel.configs[t.winner].chunk_size)
        .collect();
    if sizes.len() > 1 {
        let parts: Vec<String> = sel
            .by_type
            .iter()
            .map(|t| {
                format!(
                    "{} ({} questions) → {} (span recall {}; the overall pick gets {})",
                    t.question_type,
                    t.n_questions,
                    sel.configs[t.winner].config_id,
                    f3(t.span_recall),
                    f3(t.overall_pick_span_recall)
                )
            })
            .collect();
        out.push(Diagnosis {
            kind: DiagnosisKind::WinnerByQuestionType,
            evidence: format!(
                "the selection rule picks different chunk sizes per question type: {}",
                parts.join("; ")
            ),
            advice: BY_TYPE_ADVICE.into(),
        });
    }
    out
}

fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    })
}

/// The pick at the largest or smallest size of the grid while its strategy's neighbour (the next
/// size inwards) has a lower span recall or margin.
fn edge_of_grid(sel: &super::Selection) -> Option<Diagnosis> {
    let w = sel.winner();
    let mut sizes: Vec<usize> = sel.configs.iter().map(|c| c.chunk_size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() < 2 {
        return None;
    }
    let (edge, inward, which, advice) = if w.chunk_size == sizes[sizes.len() - 1] {
        (
            w.chunk_size,
            sizes[sizes.len() - 2],
            "largest",
            "sweep larger sizes before trusting the pick, and weigh its cost per query",
        )
    } else if w.chunk_size == sizes[0] {
        (
            w.chunk_size,
            sizes[1],
            "smallest",
            "sweep smaller sizes before trusting the pick",
        )
    } else {
        return None;
    };
    // Same strategy and k at the next size inwards (overlap scales with size, so it differs).
    let neighbour = sel.configs.iter().find(|c| {
        c.strategy == w.strategy
            && c.prefix == w.prefix
            && c.chunk_size == inward
            && c.top_k == w.top_k
    })?;
    let neighbour = if neighbour.span_recall < w.span_recall || neighbour.margin < w.margin {
        neighbour
    } else {
        return None;
    };
    Some(Diagnosis {
        kind: DiagnosisKind::EdgeOfGrid,
        evidence: format!(
            "the pick's chunk size {edge} is the {which} swept, and {} still improves towards it: \
             from {inward} to {edge}, span recall@k {} → {} and margin {} → {}",
            w.strategy,
            f3(neighbour.span_recall),
            f3(w.span_recall),
            f3(neighbour.margin),
            f3(w.margin)
        ),
        advice: format!("the best size may lie outside the grid: {advice}"),
    })
}
