//! The grid of a sweep: what to sweep ([`SweepSpec`]), one configuration of it ([`ConfigSpec`],
//! with its stable id), and the expansion of the one into the other, validated before any work.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::SweepError;
use crate::chunking::enrich::Prefix;
use crate::chunking::external::ExternalName;
use crate::chunking::semantic::SemanticSettings;
use crate::chunking::{ChunkParams, Strategy};
use crate::expand::Expand;
use crate::expand::left_out::{join_sizes, left_out};
use crate::metrics::Cut;
use crate::retrieval::Bm25Settings;
use crate::retrieval::hybrid::HybridSettings;
use crate::retrieval::rerank::NO_RERANK;
use crate::tokenize::TokenizerKind;

/// Requested overlap: a ratio of chunk_size, or a token count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Overlap {
    /// A token count (the same for every size).
    Tokens(usize),
    /// A ratio of chunk_size in [0, 1): `floor(ratio × chunk_size)` tokens.
    Ratio(f64),
}

impl Default for Overlap {
    fn default() -> Self {
        Overlap::Ratio(0.15)
    }
}

impl Overlap {
    /// The overlap in tokens for a chunk size.
    pub fn tokens_for(&self, chunk_size: usize) -> usize {
        match *self {
            Overlap::Tokens(n) => n,
            Overlap::Ratio(r) => (r * chunk_size as f64).floor() as usize,
        }
    }
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Overlap::Tokens(n) => write!(f, "{n}"),
            Overlap::Ratio(r) => write!(f, "{r}"),
        }
    }
}

impl FromStr for Overlap {
    type Err = String;
    /// `"0.15"` is a ratio (must be below 1); `"32"` is a token count.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Ok(n) = s.parse::<usize>() {
            return Ok(Overlap::Tokens(n));
        }
        match s.parse::<f64>() {
            Ok(r) if (0.0..1.0).contains(&r) => Ok(Overlap::Ratio(r)),
            Ok(r) => Err(format!(
                "overlap ratio {r} must be at least 0 and below 1 (or give a whole token count)"
            )),
            Err(_) => Err(format!(
                "overlap {s:?} is neither a ratio such as 0.15 nor a token count such as 32"
            )),
        }
    }
}

/// The retriever of a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(try_from = "String", into = "String")]
pub enum RetrieverKind {
    /// Textbook BM25 over the chunks ([`crate::retrieval::bm25`]).
    #[default]
    Bm25,
    /// Exact cosine over chunk embeddings ([`crate::retrieval::dense`]).
    Dense,
    /// Reciprocal rank fusion of BM25 and dense ([`crate::retrieval::hybrid`]).
    Hybrid,
    /// The user's own engine, by the name it was declared under (`[[retrievers]]`,
    /// [`crate::retrieval::external`]).
    External(ExternalName),
}

impl RetrieverKind {
    /// Every built-in retriever.
    pub const ALL: [RetrieverKind; 3] = [
        RetrieverKind::Bm25,
        RetrieverKind::Dense,
        RetrieverKind::Hybrid,
    ];

    /// Name used in CSVs.
    pub fn name(self) -> &'static str {
        match self {
            RetrieverKind::Bm25 => "bm25",
            RetrieverKind::Dense => "dense",
            RetrieverKind::Hybrid => "hybrid",
            RetrieverKind::External(name) => name.as_str(),
        }
    }

    /// Whether it cannot run without chunk and question embeddings (dense and hybrid; an
    /// external retriever is sent them only when the run has an embeddings model, see
    /// [`RetrieverKind::embeds`]).
    pub fn needs_embeddings(self) -> bool {
        matches!(self, RetrieverKind::Dense | RetrieverKind::Hybrid)
    }

    /// Whether its configurations' chunks and questions are embedded in a run that has an
    /// embeddings model (`model`) or not: always for dense and hybrid, for an external retriever
    /// only with a model (it is then sent the vectors; docs/retrievers.md), never for BM25.
    pub fn embeds(self, model: bool) -> bool {
        self.needs_embeddings() || (model && self.is_external())
    }

    /// Whether it is the user's own engine.
    pub fn is_external(self) -> bool {
        matches!(self, RetrieverKind::External(_))
    }
}

impl From<RetrieverKind> for String {
    fn from(r: RetrieverKind) -> String {
        r.name().to_string()
    }
}

impl TryFrom<String> for RetrieverKind {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl FromStr for RetrieverKind {
    type Err = String;
    /// A built-in retriever by its name, else an external retriever's name (whether one of
    /// that name is declared is checked with the plan).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some(r) = RetrieverKind::ALL.into_iter().find(|r| r.name() == s) {
            return Ok(r);
        }
        crate::retrieval::external::spec::checked_name(s)
            .map(RetrieverKind::External)
            .map_err(|why| {
                format!(
                    "unknown retriever {s:?}: use bm25, dense, hybrid, or the name of a retriever declared with [[retrievers]] ({why})"
                )
            })
    }
}

/// What to sweep. A key missing when it is deserialised takes its [`Default`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SweepSpec {
    /// Chunking strategies.
    pub strategies: Vec<Strategy>,
    /// Chunk sizes, in tokens of `tokenizer` (words for the `words` strategy).
    pub sizes: Vec<usize>,
    /// Overlap, a ratio of the size or a token count.
    pub overlap: Overlap,
    /// Chunks retrieved per question.
    pub top_k: usize,
    /// Context budgets in tokens per query (prefixes included): every configuration is also
    /// cut at each, taking chunks in rank order while they fit (at least one). Empty: top-k only.
    #[serde(default)]
    pub budgets: Vec<usize>,
    /// Unit of sizes and costs.
    pub tokenizer: TokenizerKind,
    /// The retrievers (default `[bm25]`); every strategy × size runs with each.
    pub retrievers: Vec<RetrieverKind>,
    /// Reciprocal rank fusion settings of the `hybrid` retriever.
    #[serde(default)]
    pub hybrid: HybridSettings,
    /// Settings of the `semantic` strategy.
    #[serde(default)]
    pub semantic: SemanticSettings,
    /// Contextual prefixes (default `[none]`); every strategy × size runs with each.
    #[serde(default = "default_prefixes")]
    pub prefixes: Vec<Prefix>,
    /// BM25's analyzer, k1 and b (one setting for the whole sweep).
    #[serde(default)]
    pub bm25: Bm25Settings,
    /// Reranking (default `[none]`): `none` and at most one reranker model; every retriever
    /// runs with each ([`crate::retrieval::rerank`]).
    #[serde(default = "default_rerank")]
    pub rerank: Vec<String>,
    /// What is sent for each retrieved chunk (default `[none]`): `none`, `neighbours:N`,
    /// `parent:P` ([`crate::expand`]); every retriever and rerank value runs with each.
    #[serde(default = "default_expand")]
    pub expand: Vec<Expand>,
    /// The configurations of precomputed chunks files (`--chunks DIR`): an external strategy
    /// named here is swept at these parameters (those whose chunk_size is in `sizes`) instead
    /// of at every size with the overlap rule. Set by the plan from the files; not recorded.
    #[serde(skip)]
    pub precomputed: Vec<ChunkParams>,
}

fn default_prefixes() -> Vec<Prefix> {
    vec![Prefix::None]
}

fn default_expand() -> Vec<Expand> {
    vec![Expand::None]
}

fn default_rerank() -> Vec<String> {
    vec![NO_RERANK.to_string()]
}

impl SweepSpec {
    /// Where every configuration's ranked list is cut, in sweep.csv's order: top k, then each
    /// context budget in the given order (a repeated budget once).
    pub fn cuts(&self) -> Vec<Cut> {
        let mut cuts = vec![Cut::K(self.top_k)];
        for &b in &self.budgets {
            if !cuts.contains(&Cut::Budget(b)) {
                cuts.push(Cut::Budget(b));
            }
        }
        cuts
    }

    /// The reranker model swept, if any: the one value of `rerank` other than `none`.
    ///
    /// # Errors
    /// [`SweepError::Settings`] for more than one model.
    pub fn rerank_model(&self) -> Result<Option<&str>, SweepError> {
        let mut models: Vec<&str> = self
            .rerank
            .iter()
            .map(|m| m.trim())
            .filter(|m| *m != NO_RERANK)
            .collect();
        models.dedup();
        match models.as_slice() {
            [] => Ok(None),
            [m] if !m.is_empty() => Ok(Some(m)),
            _ => Err(SweepError::Settings(format!(
                "rerank: one reranker model per sweep, beside none (got {})",
                self.rerank.join(",")
            ))),
        }
    }

    /// Whether any configuration cannot run without embeddings (a dense or hybrid retriever,
    /// or semantic chunking; an external retriever runs without).
    pub fn needs_embeddings(&self) -> bool {
        self.retrievers.iter().any(|r| r.needs_embeddings())
            || self.strategies.contains(&Strategy::Semantic)
    }
}

impl Default for SweepSpec {
    fn default() -> Self {
        SweepSpec {
            strategies: vec![Strategy::Fixed, Strategy::Recursive, Strategy::Markdown],
            sizes: vec![64, 128, 256, 512, 1024],
            overlap: Overlap::default(),
            top_k: 5,
            budgets: Vec::new(),
            tokenizer: TokenizerKind::default(),
            retrievers: vec![RetrieverKind::default()],
            hybrid: HybridSettings::default(),
            semantic: SemanticSettings::default(),
            prefixes: default_prefixes(),
            bm25: Bm25Settings::default(),
            rerank: default_rerank(),
            expand: default_expand(),
            precomputed: Vec::new(),
        }
    }
}

/// One configuration of the grid: what is chunked, indexed and retrieved once. Where its
/// ranked list is cut (k, a context budget) is not part of it: every cut is read from the one
/// ranked list ([`ConfigCut`] names a configuration at one cut, as sweep.csv's rows do).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSpec {
    /// Chunking parameters (overlap resolved to tokens).
    #[serde(skip)]
    pub params: ChunkParams,
    /// Contextual prefix put before each chunk's text (indexed and shown to the generator).
    pub prefix: Prefix,
    /// The retriever.
    pub retriever: RetrieverKind,
    /// BM25's analyzer, k1 and b.
    pub bm25: Bm25Settings,
    /// Whether the retriever's candidates are reranked (by the sweep's one reranker model,
    /// [`SweepSpec::rerank_model`]).
    pub rerank: bool,
    /// What is sent for each retrieved chunk ([`crate::expand`]).
    #[serde(skip_serializing_if = "is_not_expanded")]
    pub expand: Expand,
}

fn is_not_expanded(e: &Expand) -> bool {
    !e.is_expanded()
}

impl ConfigSpec {
    /// The configuration whose ranked list this one reads: itself without its expansion (an
    /// expansion changes what is sent, never the ranking).
    pub fn ranked(&self) -> ConfigSpec {
        ConfigSpec {
            expand: Expand::None,
            ..self.clone()
        }
    }

    /// Stable, readable id: `<strategy>-<size>-o<overlap>-<prefix>-<retriever>`. BM25 settings
    /// that differ from the default follow the retriever, joined by `+`: the analyzer (`seed`),
    /// `stem`, `k1_<k1>`, `b_<b>` (e.g. `words-64-o9-none-bm25+seed`), then `rerank` for a
    /// reranked configuration (`recursive-256-o38-none-dense+rerank`), then the expansion when
    /// there is one ([`Expand::id_tag`]: `recursive-128-o19-none-bm25+parent1024`). A row of
    /// sweep.csv adds its cut ([`ConfigCut::id`]).
    pub fn id(&self) -> String {
        let d = Bm25Settings::default();
        let mut retriever = self.retriever.name().to_string();
        if self.bm25.analyzer != d.analyzer {
            retriever += &format!("+{}", self.bm25.analyzer);
        }
        if self.bm25.stem {
            retriever += "+stem";
        }
        if self.bm25.k1 != d.k1 {
            retriever += &format!("+k1_{}", self.bm25.k1);
        }
        if self.bm25.b != d.b {
            retriever += &format!("+b_{}", self.bm25.b);
        }
        if self.rerank {
            retriever += "+rerank";
        }
        if let Some(tag) = self.expand.id_tag() {
            retriever += &format!("+{tag}");
        }
        format!(
            "{}-{}-o{}-{}-{}",
            self.params.strategy,
            self.params.chunk_size,
            self.params.chunk_overlap,
            self.prefix,
            retriever,
        )
    }
}

/// A configuration read at one cut of its ranked list: the identity of one row of sweep.csv
/// and selection.csv, and what the judge retrieves with.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigCut {
    /// The configuration.
    pub config: ConfigSpec,
    /// Where its ranked list is cut.
    pub cut: Cut,
}

impl ConfigCut {
    /// `<configuration id>-k<k>`, or `…-b<budget>` for a budget cut (e.g.
    /// `recursive-256-o38-none-bm25-k5`, `recursive-256-o38-none-bm25-b2000`): sweep.csv's
    /// `config_id`.
    pub fn id(&self) -> String {
        format!("{}-{}", self.config.id(), self.cut.tag())
    }
}

/// The retriever part of a configuration id, read back.
type RetrieverPart = (RetrieverKind, Bm25Settings, bool, Expand);

/// Parses the retriever part of a configuration id: `bm25`, `bm25+seed+stem+k1_0.9+b_0.4`,
/// `dense+rerank`, `bm25+parent1024`, ….
fn parse_retriever(part: &str) -> Result<RetrieverPart, String> {
    let mut pieces = part.split('+');
    let retriever: RetrieverKind = pieces.next().unwrap_or_default().parse()?;
    let mut bm25 = Bm25Settings::default();
    let mut rerank = false;
    let mut expand = Expand::None;
    for p in pieces {
        if p == "rerank" {
            rerank = true;
            continue;
        }
        if let Some(e) = Expand::from_id_tag(p) {
            expand = e;
            continue;
        }
        let number = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("{p:?} is not a number"))
        };
        if p == "stem" {
            bm25.stem = true;
        } else if let Some(v) = p.strip_prefix("k1_") {
            bm25.k1 = number(v)?;
        } else if let Some(v) = p.strip_prefix("b_") {
            bm25.b = number(v)?;
        } else {
            bm25.analyzer = p.parse()?;
        }
    }
    bm25.validate()?;
    Ok((retriever, bm25, rerank, expand))
}

impl FromStr for ConfigCut {
    type Err = String;
    /// Parses an id written by [`ConfigCut::id`], e.g. `recursive-256-o38-none-bm25-k5` or
    /// `recursive-256-o38-none-bm25-b2000`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            format!(
                "configuration id {s:?}: {why} (expected <strategy>-<size>-o<overlap>-<prefix>-<retriever>-k<k>, e.g. recursive-256-o38-none-bm25-k5)"
            )
        };
        let all: Vec<&str> = s.trim().split('-').collect();
        // an external chunker's name may hold dashes, never a part that is only digits: the
        // first such part is the size
        let size_at = all
            .iter()
            .position(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
            .filter(|&i| i > 0)
            .ok_or_else(|| bad("no size"))?;
        let strategy: Strategy = all[..size_at]
            .join("-")
            .parse()
            .map_err(|e: String| bad(&e))?;
        let parts = &all[size_at - 1..];
        if parts.len() < 6 {
            return Err(bad("too few parts"));
        }
        let n = parts.len();
        let chunk_size: usize = parts[1].parse().map_err(|_| bad("size is not a number"))?;
        let chunk_overlap: usize = parts[2]
            .strip_prefix('o')
            .and_then(|o| o.parse().ok())
            .ok_or_else(|| bad("overlap must be o<tokens>"))?;
        let prefix: Prefix = parts[3..n - 2]
            .join("-")
            .parse()
            .map_err(|e: String| bad(&e))?;
        let (retriever, bm25, rerank, expand) =
            parse_retriever(parts[n - 2]).map_err(|e| bad(&e))?;
        let cut = |tag: char| {
            parts[n - 1]
                .strip_prefix(tag)
                .and_then(|k| k.parse::<usize>().ok())
                .filter(|&k| k > 0)
        };
        let cut = match (cut('k'), cut('b')) {
            (Some(k), _) => Cut::K(k),
            (None, Some(b)) => Cut::Budget(b),
            (None, None) => {
                return Err(bad(
                    "the cut must be k<n> (top k) or b<n> (a token budget) with n >= 1",
                ));
            }
        };
        let params = ChunkParams {
            strategy,
            chunk_size,
            chunk_overlap,
        };
        params.validate().map_err(|e| bad(&e.to_string()))?;
        Ok(ConfigCut {
            config: ConfigSpec {
                params,
                prefix,
                retriever,
                bm25,
                rerank,
                expand,
            },
            cut,
        })
    }
}

/// Expands and validates the grid (strategies in the given order, then sizes, prefixes,
/// retrievers, rerank values and expansions), before any work. Each configuration is read at every cut of
/// [`SweepSpec::cuts`]. A strategy with precomputed chunks ([`SweepSpec::precomputed`]) is
/// taken at the sizes of its files that the grid lists, with each file's own overlap.
///
/// # Errors
/// [`SweepError::ZeroK`], [`SweepError::EmptyGrid`], or [`SweepError::InvalidConfigs`] naming
/// every strategy and size whose parameters are invalid (a size of 0, an overlap not below the
/// size), not only the first.
pub fn expand(spec: &SweepSpec) -> Result<Vec<ConfigSpec>, SweepError> {
    if spec.top_k == 0 {
        return Err(SweepError::ZeroK);
    }
    if spec.budgets.contains(&0) {
        return Err(SweepError::Settings(
            "a context budget (--budget) must be at least 1 token".into(),
        ));
    }
    if spec.strategies.is_empty() || spec.sizes.is_empty() {
        return Err(SweepError::EmptyGrid);
    }
    if spec.retrievers.is_empty() {
        return Err(SweepError::Settings(
            "no retriever to sweep: give at least one of bm25, dense, hybrid".into(),
        ));
    }
    if spec.prefixes.is_empty() {
        return Err(SweepError::NoPrefix);
    }
    if spec.rerank.is_empty() {
        return Err(SweepError::Settings(
            "no rerank value to sweep: give none, a reranker model, or both".into(),
        ));
    }
    spec.rerank_model()?;
    if spec.expand.is_empty() {
        return Err(SweepError::Settings(
            "no expansion to sweep: give none, neighbours:N, parent:P, or several".into(),
        ));
    }
    let reranks: Vec<bool> = spec.rerank.iter().map(|m| m.trim() != NO_RERANK).collect();
    spec.hybrid.validate().map_err(SweepError::Settings)?;
    spec.bm25.validate().map_err(SweepError::Settings)?;
    if !(0.0..=100.0).contains(&spec.semantic.percentile) {
        return Err(SweepError::Settings(format!(
            "semantic.percentile {} must be between 0 and 100",
            spec.semantic.percentile
        )));
    }
    if let Overlap::Ratio(r) = spec.overlap
        && !(0.0..1.0).contains(&r)
    {
        return Err(SweepError::BadOverlap(r));
    }
    let mut out = Vec::new();
    let mut invalid = Vec::new();
    for &strategy in &spec.strategies {
        let files: Vec<ChunkParams> = spec
            .precomputed
            .iter()
            .filter(|p| p.strategy == strategy)
            .copied()
            .collect();
        for &size in &spec.sizes {
            // every precomputed file at this size (each with its own overlap), else the rule's
            let all = match files.is_empty() {
                true => vec![ChunkParams {
                    strategy,
                    chunk_size: size,
                    chunk_overlap: spec.overlap.tokens_for(size),
                }],
                false => files
                    .iter()
                    .filter(|p| p.chunk_size == size)
                    .copied()
                    .collect(),
            };
            for params in all {
                if let Err(source) = params.validate() {
                    let problem = SweepError::Chunk {
                        strategy,
                        size,
                        source,
                    };
                    let problem = problem.to_string();
                    if !invalid.contains(&problem) {
                        invalid.push(problem);
                    }
                    continue;
                }
                for &prefix in &spec.prefixes {
                    for &retriever in &spec.retrievers {
                        for (&rerank, &expand) in reranks
                            .iter()
                            .flat_map(|r| spec.expand.iter().map(move |e| (r, e)))
                            .filter(|(_, e)| e.sends_more_than(params.chunk_size))
                        {
                            let config = ConfigSpec {
                                params,
                                prefix,
                                retriever,
                                bm25: spec.bm25,
                                rerank,
                                expand,
                            };
                            if !out.contains(&config) {
                                out.push(config);
                            }
                        }
                    }
                }
            }
        }
    }
    if !invalid.is_empty() {
        return Err(SweepError::InvalidConfigs(invalid));
    }
    if let Some((e, sizes)) = left_out(&spec.expand, &spec.sizes)
        .into_iter()
        .find(|(e, _)| !out.iter().any(|c| c.expand == *e))
    {
        return Err(SweepError::Settings(format!(
            "the expansion {e} has no configuration left to sweep: every chunk size swept ({}) is at least {} \
             tokens, and a parent no larger than its chunk sends nothing more; give a parent \
             larger than the chunk sizes (for example parent:{}) or leave {e} out of the expansions",
            join_sizes(&sizes),
            e.parent_cap().unwrap_or_default(),
            (sizes.iter().max().copied().unwrap_or(0) * 2).max(1024),
        )));
    }
    Ok(out)
}
