//! Per-question retrieval metrics and their aggregates.
//!
//! Definitions (offsets and lengths in code points):
//! - **span recall@k** (seed 000): share of the question's evidence spans that lie wholly inside
//!   at least one top-k chunk (any of a span's locations counts).
//! - **hit@k** (seed 001): 1 when at least one evidence span lies wholly inside a top-k chunk.
//! - **coverage@k** (seed 000): share of evidence characters covered by the union of the top-k
//!   chunks, each span at its best-covered location; partial credit for evidence a boundary cut.
//! - **margin** (seed 001): score of the best correct chunk (one that wholly holds an evidence
//!   span) minus the score of the best other chunk, over the whole index, divided by the query's
//!   top score so it is comparable across sizes (0 when no chunk scores). That is BM25's scale
//!   ([`MarginScale::TopScore`]); each retriever keeps its own scale ([`MarginScale`]): dense
//!   cosines are used as they are, and the hybrid's fusion scores are divided by their maximum
//!   possible value (see [`crate::retrieval::hybrid`]). When no chunk holds any
//!   span whole (the splitter cut every span) the question is **unreachable** and its margin is
//!   −1, the worst value on this scale.
//! - **MRR@k**: 1 / rank of the first correct chunk when that rank is at most k, else 0.
//! - **char IoU, char precision, char recall** (Chroma's "token-level" evaluation, seed 004,
//!   computed, as Chroma's code does, over characters: code points here): with `G` the
//!   union of the evidence ranges (each span at its location best covered by the retrieval) and
//!   `R` the union of the top-k chunk ranges, `precision = |G ∩ R| / Σ|chunk|`,
//!   `recall = |G ∩ R| / Σ|span|` and `IoU = |G ∩ R| / (Σ|chunk| + |G \ R|)`. As in Chroma's code,
//!   the denominators add the chunks' lengths one by one, so text shared by overlapping chunks
//!   counts once per chunk: overlap costs precision and IoU.
//!
//! Questions are averaged with equal weight (macro mean); the micro means pool spans, characters
//! and ranges over all questions instead.
//!
//! Every metric is computed at a **cut** of the ranked list ([`Cut`]): the top k chunks, or a
//! context budget in tokens per query ([`budget_ranking`]: chunks in rank order while their
//! tokens, prefixes included, fit the budget, and at least one). With the ranking cut, the
//! metrics above read "@cut" instead of "@k".

use serde::Serialize;

use crate::chunking::Chunk;
use crate::corpus::Corpus;
use crate::golden::{Location, Question};
use crate::retrieval::Ranking;
use crate::retrieval::rank::{full_rank, rank_top_k};
use crate::tokenize::CorpusTokens;

/// Where the ranked list is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Cut {
    /// The top k chunks.
    K(usize),
    /// As many chunks, in rank order, as fit this many tokens per query (at least one).
    Budget(usize),
}

impl Cut {
    /// `k` or `budget`: the kind of cut, as sweep.csv's `cut` column writes it.
    pub fn kind(self) -> &'static str {
        match self {
            Cut::K(_) => "k",
            Cut::Budget(_) => "budget",
        }
    }

    /// The budget in tokens per query, for a budget cut.
    pub fn budget_tokens(self) -> Option<usize> {
        match self {
            Cut::K(_) => None,
            Cut::Budget(b) => Some(b),
        }
    }
}

/// How many of `tokens` (chunk token counts in rank order) fit `budget`: chunks are taken in rank
/// order while the running total stays within the budget, and the first chunk is taken whatever
/// its size (a cut that retrieves nothing answers nothing). Empty input gives 0.
///
/// Example: `[300, 500, 400, 100]` at 1,000 → 2 (300 + 500 fit; + 400 would be 1,200; the 100
/// after it is not considered: the list is cut, not packed).
pub fn fit_budget(tokens: impl IntoIterator<Item = usize>, budget: usize) -> usize {
    let mut total = 0usize;
    let mut taken = 0;
    for t in tokens {
        total = total.saturating_add(t);
        if taken > 0 && total > budget {
            break;
        }
        taken += 1;
    }
    taken
}

/// The ranking of `scores` (one per chunk) cut at a token budget: [`rank_top_k`]'s order and tie
/// flag, with k the number of leading chunks that [fit](fit_budget) `budget` given each chunk's
/// `chunk_tokens` (prefixes included). Never more chunks than the index holds.
///
/// # Panics
/// If `chunk_tokens` is shorter than `scores`.
pub fn budget_ranking(scores: &[f64], chunk_tokens: &[usize], budget: usize) -> Ranking {
    let n = scores.len();
    // Rank a prefix of the list and grow it until the budget is exceeded inside it.
    let mut k = n.min(16);
    loop {
        let r = rank_top_k(scores, k);
        let taken = fit_budget(r.top.iter().map(|&i| chunk_tokens[i]), budget);
        if taken < r.top.len() {
            return rank_top_k(scores, taken);
        }
        if k >= n {
            return r;
        }
        k = (k * 2).min(n);
    }
}

/// Chunks of one configuration, with each document's slice of them for lookups.
pub struct ChunkTable<'a> {
    chunks: &'a [Chunk],
    by_doc: Vec<std::ops::Range<usize>>,
}

impl<'a> ChunkTable<'a> {
    /// Indexes `chunks` (in document order, as [`crate::chunking::chunk_corpus`] returns them) for
    /// a corpus of `n_docs` documents.
    pub fn new(chunks: &'a [Chunk], n_docs: usize) -> Self {
        let mut by_doc = vec![0..0; n_docs];
        let mut i = 0;
        while i < chunks.len() {
            let d = chunks[i].doc;
            let start = i;
            while i < chunks.len() && chunks[i].doc == d {
                i += 1;
            }
            by_doc[d] = start..i;
        }
        ChunkTable { chunks, by_doc }
    }

    /// The chunks.
    pub fn chunks(&self) -> &'a [Chunk] {
        self.chunks
    }

    /// Documents of the corpus, and how many of them are a single chunk (every strategy scores
    /// alike on those: the chunk is the document).
    pub fn single_chunk_docs(&self) -> (usize, usize) {
        let one = self.by_doc.iter().filter(|r| r.len() == 1).count();
        (self.by_doc.len(), one)
    }

    /// Indices of the chunks that wholly contain `loc`.
    pub fn containing(&self, loc: &Location) -> impl Iterator<Item = usize> + '_ {
        let range = self.by_doc.get(loc.doc).cloned().unwrap_or(0..0);
        let loc = *loc;
        range.filter(move |&i| {
            let c = &self.chunks[i];
            c.start <= loc.start && loc.end <= c.end
        })
    }
}

/// Tokens of each evidence span of `question`, at its shortest location, in the unit of
/// `tokens` (the corpus's token streams): what a chunk must hold to contain the span whole.
pub fn span_tokens(question: &Question, corpus: &Corpus, tokens: &CorpusTokens) -> Vec<usize> {
    question
        .spans
        .iter()
        .map(|span| {
            span.locations
                .iter()
                .map(|loc| {
                    let doc = &corpus.docs[loc.doc];
                    tokens
                        .doc(loc.doc)
                        .count_in(doc.char_to_byte(loc.start), doc.char_to_byte(loc.end))
                })
                .min()
                .unwrap_or(0)
        })
        .collect()
}

/// Metrics of one question under one configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QuestionMetrics {
    /// Evidence spans of the question.
    pub n_spans: usize,
    /// Spans wholly inside a top-k chunk.
    pub spans_found: usize,
    /// `spans_found / n_spans`.
    pub span_recall: f64,
    /// Whether any span was found.
    pub hit: bool,
    /// Evidence code points covered by the top-k chunks.
    pub covered_chars: usize,
    /// Evidence code points in all.
    pub evidence_chars: usize,
    /// `covered_chars / evidence_chars`.
    pub coverage: f64,
    /// Normalised margin in [−1, 1]; −1 when unreachable.
    pub margin: f64,
    /// No chunk of the index holds any evidence span whole.
    pub unreachable: bool,
    /// 1-based rank of the first correct chunk in the whole ranking; `None` when unreachable.
    pub first_correct_rank: Option<usize>,
    /// `1 / first_correct_rank` when it is at most k, else 0.
    pub reciprocal_rank: f64,
    /// `|G ∩ R|` in code points.
    pub intersection_chars: usize,
    /// `Σ|chunk|` over the top-k, in code points.
    pub retrieved_chars: usize,
    /// Chunks retrieved at the cut (`min(k, chunks in the index)` for a top-k cut).
    pub retrieved_chunks: usize,
    /// Their tokens, prefixes included: what this question sends to the generator.
    pub retrieved_tokens: usize,
    /// `Σ|span|`, in code points.
    pub gold_chars: usize,
    /// `|G \ R|`, in code points.
    pub unused_gold_chars: usize,
    /// Character-level IoU: `|G ∩ R| / (Σ|chunk| + |G \ R|)`, over code points.
    pub char_iou: f64,
    /// Character-level precision: `|G ∩ R| / Σ|chunk|`, over code points.
    pub char_precision: f64,
    /// Character-level recall: `|G ∩ R| / Σ|span|`, over code points.
    pub char_recall: f64,
    /// The top-k cut fell inside a group of tied scores.
    pub tie_at_k: bool,
}

fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

/// Length of the part of `loc` covered by the union of `ranges` (same document only).
fn covered(loc: &Location, ranges: &[(usize, usize, usize)]) -> usize {
    let mut parts: Vec<(usize, usize)> = ranges
        .iter()
        .filter(|r| r.0 == loc.doc)
        .map(|r| (r.1.max(loc.start), r.2.min(loc.end)))
        .filter(|(s, e)| s < e)
        .collect();
    union_len(&mut parts)
}

fn union_len(parts: &mut [(usize, usize)]) -> usize {
    parts.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(usize, usize)> = None;
    for &(s, e) in parts.iter() {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

/// How a retriever's score difference becomes the margin, so that it is comparable across chunk
/// sizes on that retriever's own scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MarginScale {
    /// Divided by the query's top score (0 when no chunk scores above 0): BM25, whose raw
    /// scores depend on the query and the index statistics.
    TopScore,
    /// As it is: cosine similarity (dense), already on a fixed scale.
    Raw,
    /// Divided by a fixed positive number: the reciprocal-rank-fusion maximum
    /// `(w_bm25 + w_dense) / (k + 1)` for hybrid.
    Divide(f64),
}

/// Scores one question given the dense `scores` (one per chunk) and the top-k `ranking`, with
/// BM25's margin scale ([`MarginScale::TopScore`]).
pub fn score_question(
    question: &Question,
    table: &ChunkTable<'_>,
    scores: &[f64],
    ranking: &Ranking,
) -> QuestionMetrics {
    score_question_scaled(question, table, scores, ranking, MarginScale::TopScore)
}

/// [`score_question`] with the retriever's margin scale.
pub fn score_question_scaled(
    question: &Question,
    table: &ChunkTable<'_>,
    scores: &[f64],
    ranking: &Ranking,
    scale: MarginScale,
) -> QuestionMetrics {
    let chunks = table.chunks();
    let k = ranking.top.len();
    let top: Vec<(usize, usize, usize)> = ranking
        .top
        .iter()
        .map(|&i| (chunks[i].doc, chunks[i].start, chunks[i].end))
        .collect();
    let mut m = QuestionMetrics {
        n_spans: question.spans.len(),
        tie_at_k: ranking.tie_at_k,
        ..Default::default()
    };

    // Recall, coverage and the location each span is judged at.
    let mut chosen: Vec<Location> = Vec::with_capacity(question.spans.len());
    for span in &question.spans {
        let found = span.locations.iter().any(|loc| {
            top.iter()
                .any(|&(d, s, e)| d == loc.doc && s <= loc.start && loc.end <= e)
        });
        if found {
            m.spans_found += 1;
        }
        let best = span
            .locations
            .iter()
            .map(|loc| (covered(loc, &top), loc))
            .fold(
                None,
                |acc: Option<(usize, &Location)>, (c, loc)| match acc {
                    Some((bc, _)) if bc >= c => acc,
                    _ => Some((c, loc)),
                },
            );
        if let Some((c, loc)) = best {
            m.covered_chars += c;
            m.evidence_chars += loc.len();
            chosen.push(*loc);
        }
    }
    m.span_recall = ratio(m.spans_found, m.n_spans);
    m.hit = m.spans_found > 0;
    m.coverage = ratio(m.covered_chars, m.evidence_chars);

    // Margin, rank of the first correct chunk, MRR@k.
    let mut correct: Vec<usize> = question
        .spans
        .iter()
        .flat_map(|s| s.locations.iter())
        .flat_map(|loc| table.containing(loc))
        .collect();
    correct.sort_unstable();
    correct.dedup();
    if correct.is_empty() {
        m.unreachable = true;
        m.margin = -1.0;
    } else {
        let best_correct = correct
            .iter()
            .copied()
            .fold(correct[0], |b, i| if scores[i] > scores[b] { i } else { b });
        // one pass: the top score (at least 0) and the best score of a chunk not in `correct`
        // (sorted, so walked alongside)
        let mut top_score = 0.0f64;
        let mut best_wrong: Option<f64> = None;
        let mut next_correct = correct.iter().copied().peekable();
        for (i, &s) in scores.iter().enumerate() {
            top_score = top_score.max(s);
            if next_correct.next_if_eq(&i).is_none() {
                best_wrong = Some(best_wrong.map_or(s, |a| a.max(s)));
            }
        }
        let diff = scores[best_correct] - best_wrong.unwrap_or(0.0);
        m.margin = match scale {
            MarginScale::TopScore if top_score > 0.0 => diff / top_score,
            MarginScale::TopScore => 0.0,
            MarginScale::Raw => diff,
            MarginScale::Divide(d) => diff / d,
        };
        let rank = full_rank(scores, best_correct);
        m.first_correct_rank = Some(rank);
        m.reciprocal_rank = if rank <= k { 1.0 / rank as f64 } else { 0.0 };
    }

    // Character-level IoU, precision and recall over code-point ranges.
    let mut gold: Vec<(usize, usize, usize)> =
        chosen.iter().map(|l| (l.doc, l.start, l.end)).collect();
    gold.sort_unstable();
    let mut inter = 0;
    let mut gold_union = 0;
    let mut doc_start = 0;
    while doc_start < gold.len() {
        let d = gold[doc_start].0;
        let mut doc_end = doc_start;
        while doc_end < gold.len() && gold[doc_end].0 == d {
            doc_end += 1;
        }
        let mut g: Vec<(usize, usize)> = gold[doc_start..doc_end]
            .iter()
            .map(|r| (r.1, r.2))
            .collect();
        let mut r: Vec<(usize, usize)> = top
            .iter()
            .filter(|t| t.0 == d)
            .map(|t| (t.1, t.2))
            .collect();
        let g_len = union_len(&mut g);
        let r_len = union_len(&mut r);
        let mut both: Vec<(usize, usize)> = g.iter().chain(r.iter()).copied().collect();
        inter += g_len + r_len - union_len(&mut both);
        gold_union += g_len;
        doc_start = doc_end;
    }
    m.intersection_chars = inter;
    m.retrieved_chars = top.iter().map(|t| t.2 - t.1).sum();
    m.retrieved_chunks = ranking.top.len();
    m.retrieved_tokens = ranking.top.iter().map(|&i| chunks[i].total_tokens()).sum();
    m.gold_chars = chosen.iter().map(Location::len).sum();
    m.unused_gold_chars = gold_union - inter;
    m.char_precision = ratio(inter, m.retrieved_chars);
    m.char_recall = ratio(inter, m.gold_chars);
    m.char_iou = ratio(inter, m.retrieved_chars + m.unused_gold_chars);
    m
}

/// Aggregates over the questions of one configuration.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Aggregate {
    /// Questions scored.
    pub n_questions: usize,
    /// Macro mean of span recall@k.
    pub span_recall: f64,
    /// Spans found over all spans (micro).
    pub span_recall_micro: f64,
    /// Share of questions with a hit (hit@k).
    pub hit_rate: f64,
    /// Macro mean of coverage@k.
    pub coverage: f64,
    /// Covered evidence characters over all evidence characters (micro).
    pub coverage_micro: f64,
    /// Macro mean of the normalised margin (unreachable questions count −1).
    pub margin: f64,
    /// Mean reciprocal rank at k.
    pub mrr: f64,
    /// Macro mean character-level IoU.
    pub char_iou: f64,
    /// Micro character-level IoU: pooled intersections over pooled denominators.
    pub char_iou_micro: f64,
    /// Macro mean character-level precision.
    pub char_precision: f64,
    /// Macro mean character-level recall.
    pub char_recall: f64,
    /// Questions with no chunk holding any evidence span whole.
    pub unreachable: usize,
    /// Questions whose top-k cut fell inside tied scores.
    pub ties_at_k: usize,
    /// Mean tokens retrieved per question, prefixes included (never more than the index).
    pub tokens_per_query: f64,
    /// Mean chunks retrieved per question.
    pub chunks_retrieved_mean: f64,
    /// Most chunks retrieved for one question.
    pub chunks_retrieved_max: usize,
}

/// Averages per-question metrics (macro means, with micro means beside them).
pub fn aggregate(questions: &[QuestionMetrics]) -> Aggregate {
    let n = questions.len();
    let mean = |f: &dyn Fn(&QuestionMetrics) -> f64| {
        if n == 0 {
            0.0
        } else {
            questions.iter().map(f).sum::<f64>() / n as f64
        }
    };
    let sum = |f: &dyn Fn(&QuestionMetrics) -> usize| questions.iter().map(f).sum::<usize>();
    Aggregate {
        n_questions: n,
        span_recall: mean(&|q| q.span_recall),
        span_recall_micro: ratio(sum(&|q| q.spans_found), sum(&|q| q.n_spans)),
        hit_rate: mean(&|q| f64::from(u8::from(q.hit))),
        coverage: mean(&|q| q.coverage),
        coverage_micro: ratio(sum(&|q| q.covered_chars), sum(&|q| q.evidence_chars)),
        margin: mean(&|q| q.margin),
        mrr: mean(&|q| q.reciprocal_rank),
        char_iou: mean(&|q| q.char_iou),
        char_iou_micro: ratio(
            sum(&|q| q.intersection_chars),
            sum(&|q| q.retrieved_chars + q.unused_gold_chars),
        ),
        char_precision: mean(&|q| q.char_precision),
        char_recall: mean(&|q| q.char_recall),
        unreachable: sum(&|q| usize::from(q.unreachable)),
        ties_at_k: sum(&|q| usize::from(q.tie_at_k)),
        tokens_per_query: mean(&|q| q.retrieved_tokens as f64),
        chunks_retrieved_mean: mean(&|q| q.retrieved_chunks as f64),
        chunks_retrieved_max: questions
            .iter()
            .map(|q| q.retrieved_chunks)
            .max()
            .unwrap_or(0),
    }
}

#[cfg(test)]
mod tests;
