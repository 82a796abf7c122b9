//! Which passages the model drafts from: cut every document into passages at paragraph breaks,
//! then pick them stratified by document and by position, with tables and lists among them and
//! short and long evidence asked for in turn.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::corpus::Corpus;

/// Where a passage lies in its document: the first, middle or last third (by its first code
/// point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// The first third.
    Start,
    /// The middle third.
    Middle,
    /// The last third.
    End,
}

/// What a passage mostly holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Paragraphs.
    Prose,
    /// Two or more list items (`- `, `* `, `+ `, `1. `).
    List,
    /// Two or more table rows (lines starting with `|`).
    Table,
}

/// How much evidence the model is asked to quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// One sentence or table row.
    Short,
    /// Several sentences, list items or rows, in up to three quotes.
    Long,
}

/// One passage to draft from: a code-point range of a document (end exclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// Index into the corpus's documents.
    pub doc: usize,
    /// First code point.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
    /// Its third of the document.
    pub position: Position,
    /// Prose, list or table.
    pub kind: Kind,
    /// The evidence length asked for.
    pub length: Length,
}

impl Position {
    /// Its name in the drafting CSV.
    pub fn name(self) -> &'static str {
        match self {
            Position::Start => "start",
            Position::Middle => "middle",
            Position::End => "end",
        }
    }
}

impl Kind {
    /// Its name in the drafting CSV.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Prose => "prose",
            Kind::List => "list",
            Kind::Table => "table",
        }
    }
}

impl Length {
    /// Its name in the drafting CSV.
    pub fn name(self) -> &'static str {
        match self {
            Length::Short => "short",
            Length::Long => "long",
        }
    }
}

/// Passages of at most about `max_chars` code points (a single longer paragraph stays whole),
/// cut at blank lines; passages under 40 non-blank code points (a lone heading) are left out.
pub fn passages(corpus: &Corpus, max_chars: usize) -> Vec<Vec<Passage>> {
    corpus
        .docs
        .iter()
        .enumerate()
        .map(|(d, doc)| {
            let text = &doc.text;
            let mut blocks: Vec<(usize, usize)> = Vec::new();
            let mut start = None;
            let mut offset = 0;
            for line in text.split_inclusive('\n') {
                let blank = line.trim().is_empty();
                match (blank, start) {
                    (false, None) => start = Some(offset),
                    (true, Some(s)) => {
                        blocks.push((s, offset));
                        start = None;
                    }
                    _ => {}
                }
                offset += line.len();
            }
            if let Some(s) = start {
                blocks.push((s, text.len()));
            }
            let mut out = Vec::new();
            let mut current: Option<(usize, usize)> = None;
            for (s, e) in blocks {
                current = match current {
                    Some((cs, _)) if text[cs..e].chars().count() <= max_chars => Some((cs, e)),
                    Some(done) => {
                        out.push(done);
                        Some((s, e))
                    }
                    None => Some((s, e)),
                };
            }
            out.extend(current);
            let total = doc.char_len().max(1);
            out.into_iter()
                .filter(|&(s, e)| text[s..e].chars().filter(|c| !c.is_whitespace()).count() >= 40)
                .map(|(s, e)| {
                    let start = doc.byte_to_char(s);
                    let third = 3 * start / total;
                    Passage {
                        doc: d,
                        start,
                        end: doc.byte_to_char(e),
                        position: [Position::Start, Position::Middle, Position::End][third.min(2)],
                        kind: kind_of(&text[s..e]),
                        length: Length::Short,
                    }
                })
                .collect()
        })
        .collect()
}

fn kind_of(text: &str) -> Kind {
    let lines = || text.lines().map(str::trim_start);
    if lines().filter(|l| l.starts_with('|')).count() >= 2 {
        return Kind::Table;
    }
    let item = |l: &str| {
        ["- ", "* ", "+ "].iter().any(|m| l.starts_with(m))
            || l.split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    if lines().filter(|l| item(l)).count() >= 2 {
        Kind::List
    } else {
        Kind::Prose
    }
}

/// Picks `n` passages (fewer when the corpus has fewer), seeded by `seed`: documents in a
/// shuffled order, one passage from each per round; in each round a document gives a passage
/// from the next third in turn (start, middle, end, shifted by the document's place); every
/// third pick takes a table or list when the document has one left. Evidence lengths alternate
/// short, long. The same corpus, `n` and `seed` give the same passages.
pub fn sample(per_doc: Vec<Vec<Passage>>, n: usize, seed: u64) -> Vec<Passage> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pools: Vec<Vec<Passage>> = per_doc.into_iter().filter(|p| !p.is_empty()).collect();
    pools.shuffle(&mut rng);
    for pool in &mut pools {
        pool.shuffle(&mut rng);
    }
    let thirds = [Position::Start, Position::Middle, Position::End];
    let mut picked: Vec<Passage> = Vec::with_capacity(n);
    let mut round = 0;
    while picked.len() < n && pools.iter().any(|p| !p.is_empty()) {
        for (rank, pool) in pools.iter_mut().enumerate() {
            if picked.len() == n || pool.is_empty() {
                continue;
            }
            let want = thirds[(round + rank) % 3];
            let structured = picked.len() % 3 == 2;
            let at = pool
                .iter()
                .position(|p| structured && p.kind != Kind::Prose)
                .or_else(|| pool.iter().position(|p| p.position == want))
                .unwrap_or(0);
            let mut passage = pool.remove(at);
            passage.length = if picked.len().is_multiple_of(2) {
                Length::Short
            } else {
                Length::Long
            };
            picked.push(passage);
        }
        round += 1;
    }
    picked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Document;

    fn para(word: &str) -> String {
        format!("{} ", word).repeat(20)
    }

    #[test]
    fn passages_are_cut_at_blank_lines_and_tables_and_lists_are_recognised() {
        let text = format!(
            "# Title\n\n{}\n\n| a | b |\n|---|---|\n| 1 | 2 | {}\n\n- one {}\n- two\n",
            para("alpha"),
            para("cell"),
            para("item")
        );
        let corpus = Corpus::from_documents("root", vec![Document::new("a.md", &text)]);
        let got = passages(&corpus, 10);
        let kinds: Vec<Kind> = got[0].iter().map(|p| p.kind).collect();
        // The lone heading is too short; each paragraph is longer than 10 code points, so each
        // is its own passage.
        assert_eq!(kinds, vec![Kind::Prose, Kind::Table, Kind::List]);
        let first = &got[0][0];
        assert_eq!(
            corpus.docs[0].slice_chars(first.start, first.end),
            format!("{}\n", para("alpha"))
        );
        assert_eq!(got[0][0].position, Position::Start);
        assert_eq!(got[0][2].position, Position::End);
    }

    #[test]
    fn sampling_visits_every_document_before_a_second_passage_and_is_seeded() {
        let docs: Vec<Document> = (0..3)
            .map(|d| {
                let text = (0..4)
                    .map(|i| para(&format!("d{d}p{i}")))
                    .collect::<Vec<_>>()
                    .join("\n\n");
                Document::new(format!("d{d}.md"), text)
            })
            .collect();
        let corpus = Corpus::from_documents("root", docs);
        let first = sample(passages(&corpus, 10), 5, 7);
        let mut docs: Vec<usize> = first[..3].iter().map(|p| p.doc).collect();
        docs.sort();
        assert_eq!(docs, vec![0, 1, 2]);
        assert_eq!(first.len(), 5);
        let lengths: Vec<Length> = first.iter().map(|p| p.length).collect();
        assert_eq!(
            lengths,
            vec![
                Length::Short,
                Length::Long,
                Length::Short,
                Length::Long,
                Length::Short
            ]
        );
        assert_eq!(sample(passages(&corpus, 10), 5, 7), first);
        assert_eq!(sample(passages(&corpus, 10), 100, 7).len(), 12);
    }
}
