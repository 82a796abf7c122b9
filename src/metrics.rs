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
//!   possible value (see [`crate::retrieval::hybrid`]). For a retriever that returns only a
//!   top-n, the margin is read from its list as [`crate::retrieval::retriever`] states. When no
//!   chunk holds any
//!   span whole (the splitter cut every span) the question is **unreachable** and its margin is
//!   −1, the worst value on this scale.
//! - **MRR@k**: 1 / rank of the first correct chunk among the hits the cut takes, its rank in
//!   the whole ranking, else 0. At top k that is 1 / the first correct rank when it is at most k;
//!   a budget cut that skips a correct chunk larger than the whole budget counts the first
//!   correct chunk it does send (rank 1 skipped, rank 3 sent: 1/3), or 0.
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
//! context budget in tokens per query ([`cut_ranking`], [`fit_budget`]: chunks in rank order while
//! their tokens, prefixes included, fit the budget, skipping any chunk larger than the whole
//! budget; a cut never sends more than its budget). With the ranking cut, the
//! metrics above read "@cut" instead of "@k". A question is retrieved once and every cut is
//! read from that one ranked list: the margin and the first correct rank come from the whole
//! list ([`rank_facts`]), the rest from the cut ([`score_question`]). Under an expansion
//! ([`crate::expand`]) the rest reads the units sent instead of the chunks ([`score_sent`]);
//! MRR still reads ranks in the ranking, of the hits taken at the cut (a hit whose window is
//! larger than the whole budget is not taken).

use serde::Serialize;

use crate::chunking::Chunk;
use crate::corpus::Corpus;
use crate::golden::{Location, Question};
pub use crate::retrieval::MarginScale;
use crate::tokenize::CorpusTokens;
pub use ranked::{CutList, Depth, RankFacts, cut_ranking, rank_facts};

mod ranked;

/// Where the ranked list is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Cut {
    /// The top k chunks.
    K(usize),
    /// As many chunks, in rank order, as fit this many tokens per query ([`fit_budget`]).
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

    /// sweep.csv's `top_k`: k for a top-k cut, 0 for a budget cut.
    pub fn top_k(self) -> usize {
        match self {
            Cut::K(k) => k,
            Cut::Budget(_) => 0,
        }
    }

    /// The cut as a configuration id ends: `k<k>` or `b<budget>` (e.g. `k5`, `b2000`).
    pub fn tag(self) -> String {
        match self {
            Cut::K(k) => format!("k{k}"),
            Cut::Budget(b) => format!("b{b}"),
        }
    }
}

/// Which chunks of a ranked list a context budget takes ([`fit_budget`]); positions are 0-based
/// ranks in the list given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BudgetFit {
    /// Positions taken, in rank order; their tokens sum to at most the budget.
    pub taken: Vec<usize>,
    /// Chunks passed over because each alone is larger than the whole budget, ranked before
    /// the cut (before `stop`, or anywhere in the list when nothing stopped it).
    pub skipped_for_size: usize,
    /// Position of the first chunk that fits the budget on its own but not what is left of it:
    /// where the list is cut (`None` when the list ran out first).
    pub stop: Option<usize>,
}

/// Which of `tokens` (chunk token counts in rank order, prefixes included) fit `budget`, so that
/// a cut never sends more than its budget: chunks are taken in rank order while the running
/// total stays within the budget; a chunk larger than the whole budget is skipped (and counted),
/// and the next ones in rank order are considered; the first chunk that fits the budget alone
/// but not what is left of it ends the cut (the list is cut, not packed). A list whose every
/// chunk is larger than the budget sends nothing for that question.
///
/// Example: `[300, 500, 400, 100]` at 1,000 → positions 0 and 1 (300 + 500; + 400 would be 1,200,
/// and the 100 after it is not considered); `[1500, 300, 800]` at 1,000 → position 1 only, one
/// chunk skipped for size, stopped at position 2.
pub fn fit_budget(tokens: impl IntoIterator<Item = usize>, budget: usize) -> BudgetFit {
    let mut fit = BudgetFit::default();
    let mut total = 0usize;
    for (i, t) in tokens.into_iter().enumerate() {
        if t > budget {
            fit.skipped_for_size += 1;
        } else if total + t > budget {
            fit.stop = Some(i);
            break;
        } else {
            total += t;
            fit.taken.push(i);
        }
    }
    fit
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
    /// `1 / rank` of the first correct chunk among the hits the cut took (its rank in the
    /// ranking), else 0: at top k, `1 / first_correct_rank` when that rank is at most k.
    pub reciprocal_rank: f64,
    /// `|G ∩ R|` in code points.
    pub intersection_chars: usize,
    /// `Σ|chunk|` over the top-k, in code points.
    pub retrieved_chars: usize,
    /// Chunks retrieved at the cut (`min(k, chunks in the index)` for a top-k cut); under an
    /// expansion, the units sent ([`crate::expand`]).
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

/// Scores one question at one cut: `facts` from its whole ranked list ([`rank_facts`]) and
/// `cut`, the list cut ([`cut_ranking`]). The reciprocal rank is `1 / rank` of the first correct
/// chunk among the chunks the cut sends ([`score_sent`]).
pub fn score_question(
    question: &Question,
    table: &ChunkTable<'_>,
    facts: &RankFacts,
    cut: &CutList,
) -> QuestionMetrics {
    let chunks = table.chunks();
    let ranking = &cut.ranking;
    let sent = SentRanges {
        ranges: ranking
            .top
            .iter()
            .map(|&i| (chunks[i].doc, chunks[i].start, chunks[i].end))
            .collect(),
        tokens: ranking.top.iter().map(|&i| chunks[i].total_tokens()).sum(),
        taken: cut
            .ranks
            .iter()
            .copied()
            .zip(ranking.top.iter().copied())
            .collect(),
        tie_at_cut: ranking.tie_at_k,
    };
    score_sent(question, facts, &sent)
}

/// What one cut of a question's ranked list sends, as the metrics read it: the chunks at the
/// cut, or under an expansion ([`crate::expand`]) the units sent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SentRanges {
    /// `(document, first code point, end)` of each chunk or unit sent, best first.
    pub ranges: Vec<(usize, usize, usize)>,
    /// Tokens sent in all, prefixes included.
    pub tokens: usize,
    /// The hits of the ranking taken at the cut, in rank order, as `(1-based rank in the
    /// ranked list, chunk index)`: MRR reads the first correct chunk among them. A budget cut
    /// skips a hit larger than the whole budget (under an expansion: whose window is), so the
    /// ranks taken need not run 1, 2, 3, ….
    pub taken: Vec<(usize, usize)>,
    /// The cut fell inside tied scores.
    pub tie_at_cut: bool,
}

/// Scores one question from what its cut sends (`sent`) and its whole list's `facts`: span
/// recall, hit, coverage and character IoU read the ranges sent; the margin and the first
/// correct rank stay on the whole ranking; the reciprocal rank is `1 / rank` of the first
/// correct chunk among the hits taken (`sent.taken`), its rank in the ranking, else 0.
///
/// Example: rank 1 is correct but larger than the whole budget and skipped, ranks 2 and 3 are
/// taken and rank 3 is correct → reciprocal rank 1/3 (first correct rank still 1).
pub fn score_sent(question: &Question, facts: &RankFacts, sent: &SentRanges) -> QuestionMetrics {
    let top = &sent.ranges;
    let mut m = QuestionMetrics {
        n_spans: question.spans.len(),
        tie_at_k: sent.tie_at_cut,
        unreachable: facts.unreachable,
        margin: facts.margin,
        first_correct_rank: facts.first_correct_rank,
        reciprocal_rank: sent
            .taken
            .iter()
            .find(|(_, chunk)| facts.correct.binary_search(chunk).is_ok())
            .map_or(0.0, |&(rank, _)| 1.0 / rank as f64),
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
            .map(|loc| (covered(loc, top), loc))
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
    m.retrieved_chunks = top.len();
    m.retrieved_tokens = sent.tokens;
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
