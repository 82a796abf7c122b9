//! Every setting that has both a flag and a config key gives the same [`Plan`] either way.

use clap::Parser;

use chunksweep::config::ConfigFile;
use chunksweep::plan::Plan;

use super::{Cli, Command};

fn now() -> jiff::Timestamp {
    jiff::Timestamp::UNIX_EPOCH
}

/// The plan of `chunksweep run <flags>` with no config file.
fn from_flags(flags: &[&str]) -> Plan {
    let argv = [
        "chunksweep",
        "run",
        "--corpus",
        "docs",
        "--golden",
        "g.jsonl",
    ]
    .iter()
    .chain(flags);
    let Command::Run(args) = Cli::try_parse_from(argv).expect("flags parse").command else {
        unreachable!("a run command")
    };
    Plan::resolve(ConfigFile::default(), args.layer(), args.options, now())
        .expect("plan from flags")
}

/// The plan of `chunksweep run --config <file holding toml>`, with paths as the file's folder
/// makes them.
fn from_file(dir: &std::path::Path, toml: &str) -> Plan {
    let path = dir.join("c.toml");
    std::fs::write(
        &path,
        format!("corpus = \"docs\"\ngolden = \"g.jsonl\"\n{toml}"),
    )
    .unwrap();
    let argv = ["chunksweep", "run", "--config", path.to_str().unwrap()];
    let Command::Run(args) = Cli::try_parse_from(argv).expect("flags parse").command else {
        unreachable!("a run command")
    };
    Plan::load(
        args.sweep.input.config.as_deref(),
        args.layer(),
        args.options,
        now(),
    )
    .expect("plan from file")
}

#[test]
fn flags_and_config_keys_give_the_same_plan() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let prompts = format!("{d}/p");
    let out = format!("{d}/out");
    // (flags, the same settings as config keys)
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["--golden-format", "chroma"], "golden_format = \"chroma\"".into()),
        (vec!["--out", &out], "out = \"out\"".into()),
        (
            vec!["--strategies", "sentence,words"],
            "[sweep]\nstrategies = [\"sentence\", \"words\"]".into(),
        ),
        (vec!["--sizes", "32,96"], "[sweep]\nsizes = [32, 96]".into()),
        (vec!["--overlap", "0.25"], "[sweep]\noverlap = 0.25".into()),
        (vec!["--overlap", "7"], "[sweep]\noverlap = 7".into()),
        (vec!["--k", "3"], "[sweep]\ntop_k = 3".into()),
        (vec!["--budget", "1000,2000"], "[sweep]\nbudgets = [1000, 2000]".into()),
        (vec!["--tokenizer", "o200k_base"], "[sweep]\ntokenizer = \"o200k_base\"".into()),
        (vec!["--dump-chunks"], "[sweep]\ndump_chunks = true".into()),
        (
            vec!["--prefixes", "none,title"],
            "[sweep]\nprefixes = [\"none\", \"title\"]".into(),
        ),
        (
            vec!["--prefixes", "llm_context", "--context-model", "m1", "--context-window", "99"],
            "[sweep]\nprefixes = [\"llm_context\"]\n[context]\nmodel = \"m1\"\nwindow_tokens = 99"
                .into(),
        ),
        (
            vec![
                "--retrievers",
                "dense,hybrid",
                "--embed-base-url",
                "http://127.0.0.1:1/v1",
                "--embed-model",
                "e5-passage",
                "--embed-query-model",
                "e5-query",
            ],
            "[sweep]\nretrievers = [\"dense\", \"hybrid\"]\n[embed]\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"e5-passage\"\nquery_model = \"e5-query\""
                .into(),
        ),
        (
            vec!["--retrievers", "dense", "--embed-model", "e5", "--no-embed-prefix"],
            "[sweep]\nretrievers = [\"dense\"]\n[embed]\nmodel = \"e5\"\nembed_prefix = false"
                .into(),
        ),
        (
            vec![
                "--strategies",
                "semantic",
                "--semantic-percentile",
                "80",
                "--embed-model",
                "e5",
            ],
            "[sweep]\nstrategies = [\"semantic\"]\n[sweep.semantic]\npercentile = 80.0\n[embed]\nmodel = \"e5\""
                .into(),
        ),
        (vec!["--analyzer", "seed"], "[sweep.bm25]\nanalyzer = \"seed\"".into()),
        (vec!["--stem"], "[sweep.bm25]\nstem = true".into()),
        (
            vec!["--bm25-k1", "0.9", "--bm25-b", "0.4"],
            "[sweep.bm25]\nk1 = 0.9\nb = 0.4".into(),
        ),
        (
            vec!["--generator-model", "g1", "--judge-model", "j1"],
            "[judge]\ngenerator_model = \"g1\"\njudge_model = \"j1\"".into(),
        ),
        (vec!["--max-cost", "2.5"], "[judge]\nmax_cost_usd = 2.5".into()),
        (vec!["--prompts", &prompts], "[judge]\nprompts = \"p\"".into()),
        (vec!["--n-candidates", "2"], "[judge]\ncandidates = 2".into()),
        (vec!["--judge-questions", "8"], "[judge]\nmax_questions = 8".into()),
        (vec!["--judge-mode", "combined"], "[judge]\nmode = \"combined\"".into()),
        (
            vec!["--rule", "seed", "--alpha", "0.1"],
            "[selection]\nrule = \"seed\"\nalpha = 0.1".into(),
        ),
        (
            vec!["--margin-tolerance", "0.5", "--recall-tolerance", "0.1"],
            "[selection]\nmargin_tolerance = 0.5\nrecall_tolerance = 0.1".into(),
        ),
        (
            vec!["--halves", "20", "--seed", "3"],
            "[selection]\nhalves = 20\nseed = 3".into(),
        ),
    ];
    for (flags, toml) in &cases {
        let mut a = from_flags(flags);
        let mut b = from_file(dir.path(), toml);
        // The file's own paths are relative to its folder; the flags' are as given.
        for p in [&mut a, &mut b] {
            p.corpus = "docs".into();
            p.golden = "g.jsonl".into();
        }
        assert_eq!(a, b, "flags {flags:?} vs config {toml:?}");
        assert_ne!(a, from_flags(&[]), "{flags:?} changes the plan");
    }
}

#[test]
fn a_flag_wins_over_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(
        &path,
        "corpus = \"docs\"\ngolden = \"g.jsonl\"\n[sweep]\ntop_k = 3\nretrievers = [\"bm25\"]\n",
    )
    .unwrap();
    let argv = [
        "chunksweep",
        "run",
        "--config",
        path.to_str().unwrap(),
        "--k",
        "9",
        "--retrievers",
        "dense",
        "--embed-model",
        "e5",
    ];
    let Command::Run(args) = Cli::try_parse_from(argv).unwrap().command else {
        unreachable!()
    };
    let plan = Plan::load(Some(&path), args.layer(), args.options, now()).unwrap();
    assert_eq!(plan.sweep.top_k, 9);
    assert_eq!(plan.configs.len(), 15);
    assert!(plan.configs.iter().all(|c| c.retriever.name() == "dense"));
    assert_eq!(plan.embed.as_ref().map(|e| e.model.as_str()), Some("e5"));
}
