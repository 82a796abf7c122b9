//! Exactness against the Python baseline (`benches/baseline_seed000.py`, seed 000's harness):
//! on `datasets/chroma-general` with the `seed` analyzer and the `words` strategy at 64–1024
//! words (overlap 0.15, k = 5), every question's top 5 (chunk ids, in order), their BM25 scores
//! (to 1e-9) and its hit equal the baseline's at every size. The baseline runs with
//! `--ties first` (equal scores in chunk order, chunksweep's tie-break); the seed's own order puts
//! the later chunk first. Needs `python3` on the PATH (as `cargo bench --bench sweep` does).

use std::path::Path;
use std::process::Command;

use chunksweep::chunking::Strategy;
use chunksweep::corpus::load_corpus;
use chunksweep::golden::{self, GoldenFormat};
use chunksweep::metrics::Cut;
use chunksweep::retrieval::{AnalyzerKind, Bm25Settings};
use std::sync::Arc;

use chunksweep::sweep::{
    ConfigIndex, Grid, Overlap, RetrievalContext, RetrieverKind, SweepSpec, expand, run_sweep,
};
use chunksweep::tokenize::{CorpusTokens, TokenizerKind};
use serde_json::Value;

#[test]
fn seed_analyzer_and_words_match_the_python_baseline_question_by_question() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = root.join("datasets/chroma-general");
    let dir = tempfile::tempdir().unwrap();
    let detail = dir.path().join("per_question.jsonl");
    let status = Command::new("python3")
        .arg(root.join("benches/baseline_seed000.py"))
        .arg(data.join("corpora"))
        .arg(data.join("questions_df.csv"))
        .args([
            "--sizes",
            "64,128,256,512,1024",
            "--overlap",
            "0.15",
            "--k",
            "5",
        ])
        .args(["--ties", "first", "--per-question"])
        .arg(&detail)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("python3 runs (the baseline needs Python 3)");
    assert!(status.success());
    let baseline: Vec<Value> = std::fs::read_to_string(&detail)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();

    let corpus = load_corpus(&data.join("corpora"), &Default::default()).unwrap();
    let golden = golden::load(
        &data.join("questions_df.csv"),
        GoldenFormat::Chroma,
        &corpus,
    )
    .unwrap();
    let spec = SweepSpec {
        strategies: vec![Strategy::Words],
        sizes: vec![64, 128, 256, 512, 1024],
        overlap: Overlap::Ratio(0.15),
        top_k: 5,
        tokenizer: TokenizerKind::Words,
        retrievers: vec![RetrieverKind::Bm25],
        bm25: Bm25Settings {
            analyzer: AnalyzerKind::Seed,
            stem: false,
            ..Bm25Settings::default()
        },
        ..SweepSpec::default()
    };
    let tokens = CorpusTokens::new(&corpus, spec.tokenizer);
    let configs = expand(&spec).unwrap();
    let context = Arc::new(RetrievalContext::for_spec(&corpus, &spec, &golden));
    let outcomes = run_sweep(
        &corpus,
        &tokens,
        &golden,
        Grid {
            configs: &configs,
            cuts: &spec.cuts(),
        },
        &context,
        false,
        |_| {},
    )
    .unwrap();
    let n_q = golden.questions.len();
    assert_eq!(n_q, 276);
    assert_eq!(baseline.len(), 5 * n_q);

    let mut mismatches = Vec::new();
    let mut hits = Vec::new();
    for (c, (config, outcome)) in configs.iter().zip(&outcomes).enumerate() {
        let index = ConfigIndex::build(&corpus, &tokens, config, &context).unwrap();
        let mut n_hits = 0;
        for (q, question) in golden.questions.iter().enumerate() {
            let want = &baseline[c * n_q + q];
            assert_eq!(want["size"].as_u64(), Some(config.params.chunk_size as u64));
            assert_eq!(want["question"].as_u64(), Some(q as u64));
            let ranking = index.retrieve(&question.text, Cut::K(5)).unwrap();
            let ids: Vec<String> = ranking
                .top
                .iter()
                .map(|&i| index.chunks[i].id(&corpus))
                .collect();
            let want_ids: Vec<String> = want["top"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let want_scores: Vec<f64> = want["scores"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let scores_equal = ranking.scores.len() == want_scores.len()
                && ranking
                    .scores
                    .iter()
                    .zip(&want_scores)
                    .all(|(g, w)| (g - w).abs() <= 1e-9 * w.abs().max(1.0));
            let hit = outcome.cuts[0].questions[q].hit == 1;
            n_hits += usize::from(hit);
            if ids != want_ids || !scores_equal || Some(hit) != want["hit"].as_bool() {
                mismatches.push(format!(
                    "size {} question {q}: chunksweep {ids:?} {:?} hit {hit}; baseline {want}",
                    config.params.chunk_size, ranking.scores
                ));
            }
        }
        hits.push(n_hits);
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} differ; first: {:#?}",
        mismatches.len(),
        5 * n_q,
        &mismatches[..mismatches.len().min(5)]
    );
    // Printed for the record (`cargo test --test python_baseline -- --nocapture`).
    println!("hits per size (64..1024): {hits:?} of {n_q}");
}
