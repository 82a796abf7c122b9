//! Resolution of the plan from a config file and flags.

use super::*;
use crate::chunking::enrich::Prefix;
use crate::config::{ContextSection, SweepSection};
use crate::sweep::grid::Overlap;

fn now() -> jiff::Timestamp {
    jiff::Timestamp::UNIX_EPOCH
}

#[test]
fn flags_override_the_file_and_paths_are_relative_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(
        &path,
        "corpus = \"docs\"\ngolden = \"g.csv\"\n[sweep]\nsizes = [32, 64]\noverlap = 8\ntop_k = 3\n",
    )
    .unwrap();
    let file = ConfigFile::load(&path).unwrap();
    let cfg = Plan::resolve(
        file,
        ConfigFile {
            sweep: SweepSection {
                top_k: Some(7),
                ..SweepSection::default()
            },
            ..ConfigFile::default()
        },
        RunOptions::default(),
        now(),
    )
    .unwrap();
    assert_eq!(cfg.corpus, dir.path().join("docs"));
    assert_eq!(cfg.golden_format, GoldenFormat::Chroma);
    assert_eq!(cfg.sweep.sizes, vec![32, 64]);
    assert_eq!(cfg.sweep.overlap, Overlap::Tokens(8));
    assert_eq!(cfg.sweep.top_k, 7);
    assert_eq!(cfg.sweep.prefixes, vec![Prefix::None]);
    assert!(cfg.context.is_none());
}

#[test]
fn prefixes_and_context_settings_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(
        &path,
        "corpus = \"docs\"\ngolden = \"g.jsonl\"\n[sweep]\nprefixes = [\"none\", \"heading_path\"]\n[context]\nwindow_tokens = 512\nprompt = \"p/context.md\"\n",
    )
    .unwrap();
    let cfg = Plan::resolve(
        ConfigFile::load(&path).unwrap(),
        ConfigFile::default(),
        RunOptions::default(),
        now(),
    )
    .unwrap();
    assert_eq!(cfg.sweep.prefixes, vec![Prefix::None, Prefix::HeadingPath]);
    assert!(cfg.context.is_none(), "no llm_context, no context settings");
    let cfg = Plan::resolve(
        ConfigFile::load(&path).unwrap(),
        ConfigFile {
            sweep: SweepSection {
                prefixes: Some(vec![Prefix::LlmContext]),
                ..SweepSection::default()
            },
            context: ContextSection {
                model: Some("small".into()),
                ..ContextSection::default()
            },
            ..ConfigFile::default()
        },
        RunOptions::default(),
        now(),
    )
    .unwrap();
    let c = cfg.context.unwrap();
    assert_eq!(c.model, "small");
    assert_eq!(c.window_tokens, 512);
    assert_eq!(c.prompt, Some(dir.path().join("p/context.md")));
}

#[test]
fn the_default_run_folder_is_stamped_and_never_an_existing_one() {
    let dir = tempfile::tempdir().unwrap();
    let at: jiff::Timestamp = "2026-12-01T16:12:29Z".parse().unwrap();
    assert_eq!(
        new_run_dir(dir.path(), at),
        dir.path().join("20261201-161229")
    );
    std::fs::create_dir(dir.path().join("20261201-161229")).unwrap();
    assert_eq!(
        new_run_dir(dir.path(), at),
        dir.path().join("20261201-161229-2")
    );
}

#[test]
fn a_grid_that_cannot_run_is_refused_before_any_work() {
    let flags = ConfigFile {
        corpus: crate::config::CorpusSection::at("docs"),
        golden: Some("g.jsonl".into()),
        sweep: SweepSection {
            sizes: Some(vec![16]),
            overlap: Some(Overlap::Tokens(16)),
            ..SweepSection::default()
        },
        ..ConfigFile::default()
    };
    let err =
        Plan::resolve(ConfigFile::default(), flags, RunOptions::default(), now()).unwrap_err();
    assert_eq!(err.exit_class(), crate::exit::ExitClass::Usage);
    assert!(err.to_string().contains("chunk_overlap 16"), "{err}");
}

#[test]
fn an_external_retriever_embeds_only_when_a_model_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(
        &path,
        "corpus = \"docs\"\ngolden = \"g.jsonl\"\n[sweep]\nretrievers = [\"es\"]\n\
         [[retrievers]]\nname = \"es\"\ncommand = [\"es-bm25\"]\n",
    )
    .unwrap();
    let resolve = |model: Option<&str>| {
        let flags = ConfigFile {
            embed: crate::config::EmbedSection {
                model: model.map(str::to_string),
                ..crate::config::EmbedSection::default()
            },
            ..ConfigFile::default()
        };
        Plan::resolve(
            ConfigFile::load(&path).unwrap(),
            flags,
            RunOptions::default(),
            now(),
        )
        .unwrap()
    };
    // $CHUNKSWEEP_EMBED_MODEL names a model as the flag does
    let from_env = std::env::var("CHUNKSWEEP_EMBED_MODEL").is_ok_and(|m| !m.is_empty());
    assert_eq!(resolve(None).embed.is_some(), from_env);
    let named = resolve(Some("e5-passage"))
        .embed
        .expect("a named model embeds");
    assert_eq!(named.model, "e5-passage");
}

#[test]
fn a_runs_cap_and_batch_mode_are_not_carried_to_a_command_that_rereads_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(
        &path,
        "corpus = \"docs\"\ngolden = \"g.csv\"\n[llm]\nbatch = true\n[judge]\ngenerator_model = \"gen-of-the-run\"\nmax_cost_usd = 0.5\n",
    )
    .unwrap();
    let run = Plan::load(
        Some(&path),
        ConfigFile::default(),
        RunOptions::default(),
        now(),
    )
    .unwrap();
    assert_eq!(run.judge.max_cost_usd, Some(0.5));
    assert!(run.llm.batch.enabled);
    let reread = run
        .clone()
        .with_judge_flags(&ConfigFile::default(), now())
        .unwrap();
    assert_eq!(reread.judge.generator_model, "gen-of-the-run");
    assert_eq!(
        reread.judge.max_cost_usd, None,
        "no cap unless this command sets one"
    );
    assert!(
        !reread.llm.batch.enabled,
        "no batches unless this command asks"
    );
    let capped = ConfigFile {
        judge: crate::config::JudgeSection {
            max_cost_usd: Some(2.0),
            ..Default::default()
        },
        ..ConfigFile::default()
    };
    let reread = run.with_judge_flags(&capped, now()).unwrap();
    assert_eq!(reread.judge.max_cost_usd, Some(2.0));
}
