//! A golden set mixing human-written questions and drafts: `sweep` says how many are unreviewed
//! drafts, and report.md compares the configurations' ranking on each part (Kendall τ-b with a
//! bootstrap interval), computed from sweep_questions.csv's rows as written.

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;
use chunksweep::report::drafts::kendall_tau_b;

const HANDBOOK: &str = "# Office\n\nThe office opens at eight in the morning and closes at six in the evening on weekdays.\n\nVisitors sign in at the front desk and wear a badge at all times inside the building.\n\n## Parking\n\nParking is free on weekends and costs two euros per hour on weekdays in the north lot.\n\n## Lunch\n\nThe canteen on the second floor serves lunch from noon until two o'clock every weekday.\n";

fn line(id: &str, question: &str, evidence: &str, origin: &str) -> String {
    format!(
        "{{\"id\": \"{id}\", \"question\": \"{question}\", \"evidence\": [\"{evidence}\"]{origin}}}\n"
    )
}

fn write_inputs(root: &Path) {
    std::fs::create_dir_all(root.join("corpus")).unwrap();
    std::fs::write(root.join("corpus/office.md"), HANDBOOK).unwrap();
    let draft =
        ", \"source\": \"draft\", \"model\": \"m\", \"prompt_sha256\": \"ab\", \"reviewed\": false";
    let reviewed =
        ", \"source\": \"draft\", \"model\": \"m\", \"prompt_sha256\": \"ab\", \"reviewed\": true";
    let golden = [
        line(
            "h1",
            "When does the office open?",
            "The office opens at eight in the morning",
            "",
        ),
        line(
            "h2",
            "Where do visitors sign in?",
            "Visitors sign in at the front desk",
            "",
        ),
        line(
            "h3",
            "What does weekday parking cost?",
            "costs two euros per hour on weekdays",
            "",
        ),
        line(
            "d1",
            "When is lunch served?",
            "serves lunch from noon until two o'clock",
            draft,
        ),
        line(
            "d2",
            "Is parking free on weekends?",
            "Parking is free on weekends",
            reviewed,
        ),
        line(
            "d3",
            "Must visitors wear a badge?",
            "wear a badge at all times inside the building",
            draft,
        ),
    ]
    .concat();
    std::fs::write(root.join("golden.jsonl"), golden).unwrap();
}

#[test]
fn sweep_counts_unreviewed_drafts_and_the_report_compares_both_rankings() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_inputs(root);
    let run = root.join("run");
    let out = Command::cargo_bin("chunksweep")
        .unwrap()
        .arg("sweep")
        .arg("--corpus")
        .arg(root.join("corpus"))
        .arg("--golden")
        .arg(root.join("golden.jsonl"))
        .args([
            "--strategies",
            "fixed",
            "--sizes",
            "6,12,24,96",
            "--overlap",
            "0",
        ])
        .args(["--k", "1", "--tokenizer", "words", "--out"])
        .arg(&run)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: 2 of 6 questions are unreviewed drafts"),
        "{stderr}"
    );

    // Each configuration's mean span recall on the human questions and on the drafts.
    let mut reader = csv::Reader::from_path(run.join("sweep_questions.csv")).unwrap();
    let mut sums: BTreeMap<String, [f64; 2]> = BTreeMap::new();
    for r in reader.deserialize::<BTreeMap<String, String>>() {
        let r = r.unwrap();
        let part = usize::from(r["question_id"].starts_with('d'));
        sums.entry(r["config_id"].clone()).or_default()[part] +=
            r["span_recall"].parse::<f64>().unwrap() / 3.0;
    }
    assert_eq!(sums.len(), 4);
    let human: Vec<f64> = sums.values().map(|s| s[0]).collect();
    let drafts: Vec<f64> = sums.values().map(|s| s[1]).collect();
    let tau = kendall_tau_b(&human, &drafts).unwrap();

    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    let section = &md[md.find("## Drafted questions\n").expect("the section")..];
    assert!(
        section.contains("3 of 6 questions were drafted by a model (`\"source\": \"draft\"`); 2 of them not reviewed by a person: review them with `chunksweep golden review` before trusting the pick"),
        "{section}"
    );
    assert!(
        section.contains(&format!(
            "the 4 configurations order alike on the 3 human-written questions and the 3 drafted ones at Kendall τ-b = {tau:.2} (95% bootstrap interval ["
        )),
        "τ {tau}: {section}"
    );
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("<h2>Drafted questions</h2>"));
}

#[test]
fn a_golden_set_without_drafts_gets_no_such_section_and_no_warning() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_inputs(root);
    let human: String = std::fs::read_to_string(root.join("golden.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"draft\""))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(root.join("golden.jsonl"), human).unwrap();
    let run = root.join("run");
    let out = Command::cargo_bin("chunksweep")
        .unwrap()
        .arg("sweep")
        .arg("--corpus")
        .arg(root.join("corpus"))
        .arg("--golden")
        .arg(root.join("golden.jsonl"))
        .args([
            "--strategies",
            "fixed",
            "--sizes",
            "12,24",
            "--overlap",
            "0",
        ])
        .args(["--k", "1", "--tokenizer", "words", "--quiet", "--out"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("unreviewed"));
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(!md.contains("Drafted questions"));
}
