//! The JUnit XML file of a [`Check`]: one test case per gate, for CI systems that show test
//! results.

use std::fmt::Write;

use super::Check;
use super::judged::CriterionOutcome;
use super::render::{headline, judge_headline, markdown};

/// How a JUnit test case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Passed,
    Failed,
    Skipped,
}

impl Case {
    /// Failed when `fails`, else skipped when the gate decided nothing, else passed.
    fn of(fails: bool, undecided: bool) -> Case {
        if fails {
            Case::Failed
        } else if undecided {
            Case::Skipped
        } else {
            Case::Passed
        }
    }
}

/// The JUnit XML file: one test suite `chunksweep check` with a test case per gate (`retrieval`,
/// and `answer quality` with `--judge`), each failed when its gate fails, the answer-quality case
/// skipped when it decided nothing (the judge cannot gate, answers unfinished, error verdicts
/// deciding it), its message the gate's line; the retrieval case's output is check.md.
pub fn junit(check: &Check) -> String {
    let name = format!(
        "{} vs {} at {}",
        check.changes.chunker.candidate, check.changes.chunker.baseline, check.cut
    );
    let mut cases = vec![(
        format!("retrieval: {name}"),
        Case::of(check.verdict.fails, false),
        headline(check),
    )];
    if let Some(e) = &check.judge_error {
        cases.push((
            format!("answer quality: {name}"),
            Case::Failed,
            format!("answer quality: not judged: {e}"),
        ));
    }
    if let Some(j) = &check.judge {
        // skipped: the gate decided nothing (cannot gate, unfinished, inconclusive)
        let undecided = !j.judged
            || j.unfinished > 0
            || j.criteria.iter().any(|c| {
                matches!(
                    c.outcome,
                    CriterionOutcome::Inconclusive | CriterionOutcome::Unfinished
                )
            });
        cases.push((
            format!("answer quality: {name}"),
            Case::of(j.fails, undecided),
            judge_headline(j, check.settings.alpha),
        ));
    }
    let failures = cases.iter().filter(|c| c.1 == Case::Failed).count();
    let skipped = cases.iter().filter(|c| c.1 == Case::Skipped).count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"chunksweep check\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\">",
        cases.len()
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"chunksweep check\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\">",
        cases.len()
    );
    for (i, (case, state, line)) in cases.iter().enumerate() {
        let _ = writeln!(
            xml,
            "    <testcase classname=\"chunksweep.check\" name=\"{}\">",
            escape(case)
        );
        match state {
            Case::Failed => {
                let _ = writeln!(xml, "      <failure message=\"{}\"/>", escape(line));
            }
            Case::Skipped => {
                let _ = writeln!(xml, "      <skipped message=\"{}\"/>", escape(line));
            }
            Case::Passed => {}
        }
        if i == 0 {
            let _ = writeln!(
                xml,
                "      <system-out>{}</system-out>",
                escape(&markdown(check))
            );
        }
        xml.push_str("    </testcase>\n");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// `text` with XML's five special characters escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_special_characters_are_escaped() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;"
        );
    }
}
