//! What changed between a baseline run and the run under test, from their fingerprints
//! ([`crate::fingerprint`]): the chunker's settings and library versions, the corpus's
//! documents by name, and the golden set's questions by id; and which questions both share
//! unchanged (the only ones compared question by question).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::fingerprint::{ChunkerFingerprint, Fingerprints};

/// One chunker setting (or library version) that differs: its name as a dotted path into the
/// fingerprint (`chunk_size`, `bm25.k1`, `libraries.text-splitter`) and the two values as text,
/// `None` where one side has no such setting (a library the other strategy does not use).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingChange {
    /// The setting.
    pub name: String,
    /// The baseline's value.
    pub before: Option<String>,
    /// The value under test.
    pub after: Option<String>,
}

/// The chunker's changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChunkerChanges {
    /// The baseline's configuration id at its cut (its pick).
    pub baseline: String,
    /// The configuration under test, at the same cut.
    pub candidate: String,
    /// The baseline's chunker fingerprint (`None` when its manifest has none).
    pub baseline_sha256: Option<String>,
    /// The chunker fingerprint under test.
    pub candidate_sha256: String,
    /// Every setting or library version that differs, in the fingerprint's order (empty when
    /// the baseline has no fingerprint: then only the ids can be compared).
    pub settings: Vec<SettingChange>,
}

impl ChunkerChanges {
    /// Whether the chunker differs: a setting or version, or its fingerprint, or without one
    /// its configuration id.
    pub fn changed(&self) -> bool {
        !self.settings.is_empty()
            || match &self.baseline_sha256 {
                Some(sha) => sha != &self.candidate_sha256,
                None => self.baseline != self.candidate,
            }
    }
}

/// Names added, removed or changed between two fingerprint maps (documents or questions).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NameChanges {
    /// Present only now.
    pub added: Vec<String>,
    /// Present only in the baseline.
    pub removed: Vec<String>,
    /// Present in both with different hashes (a document's text, a question's text or evidence).
    pub changed: Vec<String>,
}

impl NameChanges {
    /// Compares two maps of name → SHA-256, each list sorted by name.
    pub fn between(
        before: &BTreeMap<String, String>,
        after: &BTreeMap<String, String>,
    ) -> NameChanges {
        NameChanges {
            added: after
                .keys()
                .filter(|k| !before.contains_key(*k))
                .cloned()
                .collect(),
            removed: before
                .keys()
                .filter(|k| !after.contains_key(*k))
                .cloned()
                .collect(),
            changed: after
                .iter()
                .filter(|(k, v)| before.get(*k).is_some_and(|b| b != *v))
                .map(|(k, _)| k.clone())
                .collect(),
        }
    }

    /// Whether nothing was added, removed or changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// A reader whose version changed between the runs, and what that did to its documents' texts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReaderChange {
    /// The reader (`pdf`, `html`, `docx`).
    pub reader: String,
    /// Its version in the baseline.
    pub before: String,
    /// Its version now.
    pub after: String,
    /// Documents read by it in both runs.
    pub documents: usize,
    /// Of those, the documents whose text changed.
    pub changed: usize,
}

/// The readers whose version differs between `before` and `now` (their `readers` and `corpus`
/// fingerprints), each with its documents read in both runs and how many of their texts
/// changed, in reader order.
fn reader_changes(before: &Fingerprints, now: &Fingerprints) -> Vec<ReaderChange> {
    version_changes(
        (&before.readers, &before.corpus),
        (&now.readers, &now.corpus),
    )
}

/// A map of document id → value.
type ByDoc = BTreeMap<String, String>;

/// [`reader_changes`] on the two sides' (readers, corpus) maps.
fn version_changes(before: (&ByDoc, &ByDoc), now: (&ByDoc, &ByDoc)) -> Vec<ReaderChange> {
    let mut out: BTreeMap<(String, String, String), (usize, usize)> = BTreeMap::new();
    for (doc, after) in now.0 {
        let Some(was) = before.0.get(doc) else {
            continue;
        };
        let (Some((reader, a)), Some((reader_before, b))) =
            (after.split_once(' '), was.split_once(' '))
        else {
            continue;
        };
        if reader != reader_before || a == b {
            continue;
        }
        let entry = out
            .entry((reader.to_string(), b.to_string(), a.to_string()))
            .or_default();
        entry.0 += 1;
        entry.1 += usize::from(before.1.get(doc) != now.1.get(doc));
    }
    out.into_iter()
        .map(
            |((reader, before, after), (documents, changed))| ReaderChange {
                reader,
                before,
                after,
                documents,
                changed,
            },
        )
        .collect()
}

/// Everything that changed since the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Changes {
    /// Whether the baseline's manifest records fingerprints (schema 4 and later). Without them
    /// the corpus cannot be compared and questions are matched by id alone.
    pub baseline_fingerprinted: bool,
    /// The chunker.
    pub chunker: ChunkerChanges,
    /// Documents by id (`None` without the baseline's fingerprints).
    pub corpus: Option<NameChanges>,
    /// Readers whose version changed ([`ReaderChange`]; empty without the baseline's
    /// fingerprints).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub readers: Vec<ReaderChange>,
    /// Questions by id (`changed`: edited text or evidence).
    pub questions: NameChanges,
    /// Question ids both runs have, unchanged (or, without the baseline's fingerprints, both
    /// runs have), in the order of the run under test: the questions compared.
    pub shared: Vec<String>,
}

/// What the comparison knows of one side: its configuration id at the cut, its question ids in
/// golden-set order (from its sweep_questions.csv rows), and its fingerprints when recorded.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// Configuration id at the cut.
    pub config_id: &'a str,
    /// Question ids, in golden-set order.
    pub questions: &'a [String],
    /// The fingerprints (`None` for a baseline written before they were recorded).
    pub fingerprints: Option<&'a Fingerprints>,
}

/// What changed from `baseline` to `candidate` (whose fingerprints are always known).
pub fn changes(baseline: Side<'_>, candidate: Side<'_>, now: &Fingerprints) -> Changes {
    let before = baseline.fingerprints;
    let chunker = ChunkerChanges {
        baseline: baseline.config_id.to_string(),
        candidate: candidate.config_id.to_string(),
        baseline_sha256: before.map(|f| f.chunker.sha256.clone()),
        candidate_sha256: now.chunker.sha256.clone(),
        settings: before.map_or_else(Vec::new, |f| setting_changes(&f.chunker, &now.chunker)),
    };
    // Questions: by hash when the baseline has them, else by id from the rows.
    let ids = |ids: &[String]| -> BTreeMap<String, String> {
        ids.iter().map(|id| (id.clone(), String::new())).collect()
    };
    let questions = match before {
        Some(f) => NameChanges::between(&f.golden, &now.golden),
        None => NameChanges::between(&ids(baseline.questions), &ids(candidate.questions)),
    };
    let in_baseline: BTreeSet<&String> = baseline.questions.iter().collect();
    let shared = candidate
        .questions
        .iter()
        .filter(|id| in_baseline.contains(id) && !questions.changed.contains(id))
        .cloned()
        .collect();
    Changes {
        baseline_fingerprinted: before.is_some(),
        chunker,
        corpus: before.map(|f| NameChanges::between(&f.corpus, &now.corpus)),
        readers: before.map_or_else(Vec::new, |f| reader_changes(f, now)),
        questions,
        shared,
    }
}

/// The settings of two chunker fingerprints that differ, as dotted paths in the fingerprint's
/// field order (the configuration id and the hash left out: they follow from the rest).
fn setting_changes(before: &ChunkerFingerprint, after: &ChunkerFingerprint) -> Vec<SettingChange> {
    let flat = |f: &ChunkerFingerprint| {
        let mut out = Vec::new();
        flatten(
            "",
            &serde_json::to_value(&f.chunker).expect("serialises"),
            &mut out,
        );
        out
    };
    let (before, after) = (flat(before), flat(after));
    let mut names: Vec<&String> = before.iter().map(|(k, _)| k).collect();
    for (k, _) in &after {
        if !names.contains(&k) {
            names.push(k);
        }
    }
    let value = |side: &[(String, String)], name: &str| {
        side.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    };
    // the fingerprint's own order: the settings, then the versions
    names.sort_by_key(|n| {
        let top = n.split('.').next().unwrap_or_default();
        ORDER.iter().position(|o| *o == top).unwrap_or(ORDER.len())
    });
    names
        .into_iter()
        .filter(|n| n.as_str() != "config_id")
        .filter_map(|name| {
            let (b, a) = (value(&before, name), value(&after, name));
            (b != a).then(|| SettingChange {
                name: name.clone(),
                before: b,
                after: a,
            })
        })
        .collect()
}

/// The fields of [`crate::fingerprint::Chunker`] in declaration order, the order changes are
/// listed in.
const ORDER: &[&str] = &[
    "strategy",
    "chunk_size",
    "chunk_overlap",
    "size_unit",
    "tokenizer",
    "prefix",
    "retriever",
    "cut",
    "bm25",
    "hybrid",
    "semantic",
    "embed_model",
    "external",
    "external_retriever",
    "chunksweep",
    "libraries",
];

/// Flattens a JSON object into `(dotted path, value as text)` pairs, strings unquoted.
fn flatten(at: &str, value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                flatten(&path, v, out);
            }
        }
        Value::String(s) => out.push((at.to_string(), s.clone())),
        other => out.push((at.to_string(), other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn documents_added_removed_and_changed_are_named() {
        let before = map(&[("a.md", "1"), ("b.md", "2"), ("c.md", "3")]);
        let after = map(&[("a.md", "1"), ("b.md", "9"), ("d.md", "4")]);
        let d = NameChanges::between(&before, &after);
        assert_eq!(d.added, ["d.md"]);
        assert_eq!(d.removed, ["c.md"]);
        assert_eq!(d.changed, ["b.md"]);
        assert!(NameChanges::between(&before, &before).is_empty());
    }

    #[test]
    fn a_new_reader_version_counts_the_documents_whose_text_changed() {
        let readers_before = map(&[
            ("a.pdf", "pdf 0.3.60+r1"),
            ("b.pdf", "pdf 0.3.60+r1"),
            ("c.pdf", "pdf 0.3.60+r1"),
            ("d.html", "html 0.5.6+r1"),
        ]);
        let readers_now = map(&[
            ("a.pdf", "pdf 0.3.66+r1"),
            ("b.pdf", "pdf 0.3.66+r1"),
            ("c.pdf", "pdf 0.3.60+r1"),
            ("d.html", "html 0.5.6+r1"),
        ]);
        let corpus_before = map(&[
            ("a.pdf", "1"),
            ("b.pdf", "2"),
            ("c.pdf", "3"),
            ("d.html", "4"),
        ]);
        let corpus_now = map(&[
            ("a.pdf", "1"),
            ("b.pdf", "9"),
            ("c.pdf", "3"),
            ("d.html", "5"),
        ]);
        let changes = version_changes(
            (&readers_before, &corpus_before),
            (&readers_now, &corpus_now),
        );
        assert_eq!(
            changes,
            vec![ReaderChange {
                reader: "pdf".into(),
                before: "0.3.60+r1".into(),
                after: "0.3.66+r1".into(),
                documents: 2,
                changed: 1,
            }]
        );
    }

    #[test]
    fn flattening_names_nested_settings_by_path() {
        let mut out = Vec::new();
        let v =
            serde_json::json!({"chunk_size": 256, "bm25": {"k1": 1.2}, "tokenizer": "cl100k_base"});
        flatten("", &v, &mut out);
        let names: Vec<(&str, &str)> = out.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert!(names.contains(&("chunk_size", "256")), "{names:?}");
        assert!(names.contains(&("bm25.k1", "1.2")), "{names:?}");
        assert!(names.contains(&("tokenizer", "cl100k_base")), "{names:?}");
    }
}
