//! Fingerprints of a run, recorded in its manifest.json under `fingerprints` and compared by
//! `chunksweep check` with a baseline's: the chunker of the run's pick ([`ChunkerFingerprint`]),
//! the corpus (a SHA-256 per document) and the golden set (a SHA-256 per question).
//!
//! Seed 002's production checklist: "Version your chunker. A silent change to chunking
//! invalidates your index and your eval baseline." A chunker is its settings and the code that
//! applies them, so its fingerprint holds the strategy, chunk_size, chunk_overlap, unit and
//! tokenizer, prefix, retriever, cut and expansion, BM25's analyzer and parameters, the version of
//! chunksweep and the versions of the libraries that split and tokenize for that strategy, as
//! Cargo.lock resolved them when this binary was built ([`LIBRARIES`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::chunking::external::{Identity, SizeUnit};
use crate::chunking::semantic::SemanticSettings;
use crate::chunking::{Strategy, size_unit};
use crate::corpus::Corpus;
use crate::golden::{GoldenSet, Question};
use crate::retrieval::Bm25Settings;
use crate::retrieval::embeddings::EmbedSettings;
use crate::retrieval::external::RetrieverIdentity;
use crate::retrieval::hybrid::HybridSettings;
use crate::sweep::grid::{ConfigCut, RetrieverKind, SweepSpec};
use crate::tokenize::TokenizerKind;

/// The libraries that split and tokenize, with their versions as Cargo.lock resolved them
/// when this binary was built (build.rs): `name=version` pairs joined by `;`, several versions
/// of one crate joined by `,`.
pub const LIBRARIES: &str = env!("CHUNKSWEEP_LIBRARIES");

/// Every library of [`LIBRARIES`], by crate name, with its version.
pub fn built_libraries() -> BTreeMap<String, String> {
    LIBRARIES
        .split(';')
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, version)| (name.to_string(), version.to_string()))
        .collect()
}

/// The libraries of `all` whose version can move a chunk boundary or change a token count for
/// a configuration of this strategy and tokenizer: pulldown-cmark (document structure and
/// heading paths) and unicode-segmentation (sentences, BM25's terms) always; bpe-openai and bpe
/// for a BPE tokenizer; text-splitter and icu_segmenter (its sentence boundaries) for every
/// built-in strategy but the `fixed` and `words` windows; rust-stemmers when BM25 stems. An
/// external chunker's own versions are in [`Chunker::external`].
pub fn libraries_for(
    strategy: Strategy,
    tokenizer: TokenizerKind,
    bm25: &Bm25Settings,
    all: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut names = vec!["pulldown-cmark", "unicode-segmentation"];
    if tokenizer != TokenizerKind::Words {
        names.extend(["bpe-openai", "bpe"]);
    }
    if !matches!(
        strategy,
        Strategy::Fixed | Strategy::Words | Strategy::External(_)
    ) {
        names.extend(["text-splitter", "icu_segmenter"]);
    }
    if bm25.stem {
        names.push("rust-stemmers");
    }
    names
        .into_iter()
        .map(|n| {
            let version = all.get(n).cloned().unwrap_or_else(|| "unknown".into());
            (n.to_string(), version)
        })
        .collect()
}

/// What makes a chunker: the settings of one configuration at one cut, and the code versions
/// that apply them. Sizes and overlaps are in `size_unit` (tokens of `tokenizer`, or words).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunker {
    /// The configuration id at its cut (sweep.csv's `config_id`).
    pub config_id: String,
    /// Chunking strategy.
    pub strategy: String,
    /// chunk_size, in `size_unit`.
    pub chunk_size: usize,
    /// chunk_overlap, in `size_unit`.
    pub chunk_overlap: usize,
    /// `tokens` or `words`.
    pub size_unit: String,
    /// The tokenizer sizes and costs are counted with.
    pub tokenizer: String,
    /// Contextual prefix.
    pub prefix: String,
    /// Retriever.
    pub retriever: String,
    /// Where the ranked list is cut: `k<k>` or `b<budget>`.
    pub cut: String,
    /// What is sent for each retrieved chunk (`neighbours:N`, `parent:P`); absent for `none`,
    /// so fingerprints written before the factor existed keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expand: Option<String>,
    /// BM25's analyzer, stemming, k1 and b.
    pub bm25: Bm25Settings,
    /// Reciprocal rank fusion, for the `hybrid` retriever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<HybridSettings>,
    /// The `semantic` strategy's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic: Option<SemanticSettings>,
    /// The embedding models (documents, then queries when they differ), for a dense or hybrid
    /// retriever or the `semantic` strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_model: Option<String>,
    /// An external chunker's command, hashed files and reported versions (docs/chunkers.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<Identity>,
    /// An external retriever's command, hashed files and reported versions (index settings
    /// included; docs/retrievers.md), when the configuration's retriever is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_retriever: Option<RetrieverIdentity>,
    /// chunksweep's version.
    pub chunksweep: String,
    /// The splitting and tokenizing libraries this chunker uses, with their versions
    /// ([`libraries_for`]).
    pub libraries: BTreeMap<String, String>,
}

impl Chunker {
    /// The same chunker retrieved by the external retriever of `identity` (none: unchanged).
    pub fn with_retriever(mut self, identity: Option<&RetrieverIdentity>) -> Chunker {
        self.external_retriever = identity.cloned();
        self
    }

    /// The chunker of `config` in a sweep of `spec` (its tokenizer, hybrid and semantic
    /// settings) with `embed` (when the sweep embeds), with the library versions taken from
    /// `libraries` ([`built_libraries`] for this binary), and for an external strategy the
    /// identity of the chunker that made its chunks (`external`).
    pub fn new(
        config: &ConfigCut,
        spec: &SweepSpec,
        embed: Option<&EmbedSettings>,
        libraries: &BTreeMap<String, String>,
        external: Option<&Identity>,
    ) -> Chunker {
        let c = &config.config;
        let strategy = c.params.strategy;
        let semantic = strategy == Strategy::Semantic;
        let embeds = semantic || c.retriever.embeds(embed.is_some());
        Chunker {
            config_id: config.id(),
            strategy: strategy.name().to_string(),
            chunk_size: c.params.chunk_size,
            chunk_overlap: c.params.chunk_overlap,
            size_unit: match external.map(|e| e.unit) {
                Some(SizeUnit::Characters) => SizeUnit::Characters.name().to_string(),
                _ => size_unit(strategy.name(), spec.tokenizer.name()).to_string(),
            },
            tokenizer: spec.tokenizer.name().to_string(),
            prefix: c.prefix.name().to_string(),
            retriever: c.retriever.name().to_string(),
            cut: config.cut.tag(),
            expand: c.expand.is_expanded().then(|| c.expand.to_string()),
            bm25: c.bm25,
            hybrid: (c.retriever == RetrieverKind::Hybrid).then_some(spec.hybrid),
            semantic: semantic.then_some(spec.semantic),
            embed_model: embed.filter(|_| embeds).map(|e| match &e.query_model {
                Some(q) if q != &e.model => format!("{} / {q}", e.model),
                _ => e.model.clone(),
            }),
            external: external.cloned(),
            external_retriever: None,
            chunksweep: env!("CARGO_PKG_VERSION").to_string(),
            libraries: libraries_for(strategy, spec.tokenizer, &c.bm25, libraries),
        }
    }
}

/// A chunker and the SHA-256 of its canonical JSON (every field of [`Chunker`], in declaration
/// order, maps sorted by key): equal settings and versions give equal hashes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkerFingerprint {
    /// The chunker.
    #[serde(flatten)]
    pub chunker: Chunker,
    /// SHA-256 of `chunker`'s canonical JSON, hex.
    pub sha256: String,
}

impl ChunkerFingerprint {
    /// Fingerprints `chunker`.
    pub fn new(chunker: Chunker) -> ChunkerFingerprint {
        let json = serde_json::to_vec(&chunker).expect("a chunker serialises");
        ChunkerFingerprint {
            sha256: hex::encode(Sha256::digest(&json)),
            chunker,
        }
    }
}

/// The fingerprints of a run (manifest.json's `fingerprints`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprints {
    /// The chunker of the run's pick (of `check`: the chunker under test).
    pub chunker: ChunkerFingerprint,
    /// SHA-256 of each document's text (UTF-8, without a byte-order mark), by document id.
    pub corpus: BTreeMap<String, String>,
    /// SHA-256 of each question ([`question_sha256`]), by question id.
    pub golden: BTreeMap<String, String>,
    /// The reader and its version of each converted document (PDF, HTML, DOCX), as
    /// `<reader> <version>` (`pdf 0.3.78+r1`), by document id; text files are not listed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub readers: BTreeMap<String, String>,
}

impl Fingerprints {
    /// The fingerprints of a run of `chunker` on `corpus` and `golden` (resolved against it).
    pub fn new(chunker: Chunker, corpus: &Corpus, golden: &GoldenSet) -> Fingerprints {
        Fingerprints {
            chunker: ChunkerFingerprint::new(chunker),
            corpus: corpus
                .docs
                .iter()
                .map(|d| (d.id.clone(), hex::encode(Sha256::digest(d.text.as_bytes()))))
                .collect(),
            golden: golden
                .questions
                .iter()
                .map(|q| (q.id.clone(), question_sha256(q, corpus)))
                .collect(),
            readers: corpus
                .docs
                .iter()
                .filter_map(|d| Some((d, d.source.as_ref()?)))
                .filter(|(_, s)| s.reader.converts())
                .map(|(d, s)| (d.id.clone(), format!("{} {}", s.reader, s.version)))
                .collect(),
        }
    }
}

/// SHA-256 of what a question's retrieval scores depend on: its text, and for each evidence
/// span every acceptable location as its document id and its text in the corpus, each field
/// prefixed with its length in bytes. The reference answer, the type tag and the origin (drafted,
/// reviewed) are not part of it (no retrieval metric reads them), and neither are the locations'
/// offsets: a document edited elsewhere moves a span without changing the question.
pub fn question_sha256(question: &Question, corpus: &Corpus) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(question.text.as_bytes());
    for span in &question.spans {
        field(b"span");
        for loc in &span.locations {
            let doc = &corpus.docs[loc.doc];
            field(doc.id.as_bytes());
            field(doc.slice_chars(loc.start, loc.end).as_bytes());
        }
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunking::ChunkParams;
    use crate::chunking::enrich::Prefix;
    use crate::corpus::Document;
    use crate::golden::{EvidenceSpan, Location};
    use crate::metrics::Cut;
    use crate::sweep::grid::ConfigSpec;

    fn cut(strategy: Strategy, size: usize) -> ConfigCut {
        ConfigCut {
            config: ConfigSpec {
                params: ChunkParams {
                    strategy,
                    chunk_size: size,
                    chunk_overlap: size * 15 / 100,
                },
                prefix: Prefix::None,
                retriever: RetrieverKind::Bm25,
                bm25: Bm25Settings::default(),
                rerank: false,
                expand: Default::default(),
            },
            cut: Cut::K(3),
        }
    }

    fn libraries(text_splitter: &str) -> BTreeMap<String, String> {
        let mut all = built_libraries();
        all.insert("text-splitter".into(), text_splitter.into());
        all
    }

    #[test]
    fn the_build_records_every_library_with_a_version() {
        let all = built_libraries();
        for name in [
            "text-splitter",
            "pulldown-cmark",
            "bpe-openai",
            "unicode-segmentation",
        ] {
            let v = &all[name];
            assert!(
                v.chars().next().is_some_and(|c| c.is_ascii_digit()),
                "{name} {v}"
            );
        }
    }

    #[test]
    fn a_setting_or_a_splitting_library_changes_the_hash_and_nothing_else_does() {
        let spec = SweepSpec::default();
        let fp = |c: &ConfigCut, libs: &BTreeMap<String, String>| {
            ChunkerFingerprint::new(Chunker::new(c, &spec, None, libs, None)).sha256
        };
        let base = fp(&cut(Strategy::Markdown, 256), &libraries("0.33.1"));
        assert_eq!(
            base,
            fp(&cut(Strategy::Markdown, 256), &libraries("0.33.1"))
        );
        assert_ne!(
            base,
            fp(&cut(Strategy::Markdown, 128), &libraries("0.33.1"))
        );
        assert_ne!(
            base,
            fp(&cut(Strategy::Markdown, 256), &libraries("0.34.0"))
        );
        // the fixed windows do not use text-splitter: its version is not part of them
        let fixed = fp(&cut(Strategy::Fixed, 32), &libraries("0.33.1"));
        assert_eq!(fixed, fp(&cut(Strategy::Fixed, 32), &libraries("0.34.0")));
        let chunker = Chunker::new(
            &cut(Strategy::Fixed, 32),
            &spec,
            None,
            &libraries("0"),
            None,
        );
        assert!(!chunker.libraries.contains_key("text-splitter"));
        assert_eq!(chunker.config_id, "fixed-32-o4-none-bm25-k3");
        assert_eq!((chunker.chunk_overlap, chunker.cut.as_str()), (4, "k3"));
    }

    #[test]
    fn a_question_is_its_text_and_its_evidence_text_not_where_it_sits() {
        let corpus = |text: &str| Corpus::from_documents("c", vec![Document::new("a.md", text)]);
        let question = |start: usize| Question {
            line: 1,
            id: "q".into(),
            text: "Which colour?".into(),
            spans: vec![EvidenceSpan {
                locations: vec![Location {
                    doc: 0,
                    start,
                    end: start + 4,
                }],
            }],
            answer: None,
            question_type: None,
            origin: Default::default(),
        };
        let before = question_sha256(&question(4), &corpus("The blue sky"));
        // the document grew before the span: the same question
        let moved = question_sha256(&question(11), &corpus("Intro. The blue sky"));
        assert_eq!(before, moved);
        // the evidence text changed: an edited question
        assert_ne!(
            before,
            question_sha256(&question(4), &corpus("The grey sky"))
        );
        let mut answered = question(4);
        answered.answer = Some("blue".into());
        assert_eq!(before, question_sha256(&answered, &corpus("The blue sky")));
    }
}
