//! reStructuredText section titles, found by docutils' adornment rules (no Rust crate exposes
//! reST section titles with their source offsets, so the few rules are kept here):
//!
//! - a title is one non-blank line **underlined**, and optionally **overlined**, by a run of one
//!   punctuation character from [`ADORNMENT`], at least as long as the title (in code points);
//!   an overline must equal its underline;
//! - a title without an overline starts at the beginning of a line (an indented line is a block
//!   quote or literal block, never a title); with an overline the title may be inset;
//! - a title stands at the start of the document or after a blank line (text directly above an
//!   underline is a paragraph, which docutils rejects as a title);
//! - levels follow the order in which adornment styles (character, with or without overline)
//!   first appear, the first style seen being level 1.
//!
//! `~~~~` under a title is an adornment like any other: reST has no `~~~` code fences.

/// Characters that may adorn a section title.
pub const ADORNMENT: &[char] = &[
    '=', '-', '`', ':', '\'', '"', '~', '^', '_', '*', '+', '#', '<', '>',
];

/// One section title: the byte offset of its first line (the overline when there is one), its
/// level (1 outermost) and its text.
pub type Title = (usize, u8, String);

/// Every section title of `text`, in order.
pub fn titles(text: &str) -> Vec<Title> {
    let lines: Vec<(usize, &str)> = line_starts(text);
    let mut styles: Vec<(char, bool)> = Vec::new();
    let mut out = Vec::new();
    let blank_before = |i: usize| i == 0 || lines[i - 1].1.trim().is_empty();
    let mut i = 0;
    while i < lines.len() {
        let found = if blank_before(i) {
            overlined(&lines, i).or_else(|| underlined(&lines, i))
        } else {
            None
        };
        match found {
            Some((style, title, used)) => {
                let level = match styles.iter().position(|s| *s == style) {
                    Some(p) => p + 1,
                    None => {
                        styles.push(style);
                        styles.len()
                    }
                };
                out.push((
                    lines[i].0,
                    u8::try_from(level).unwrap_or(u8::MAX),
                    title.to_string(),
                ));
                i += used;
            }
            None => i += 1,
        }
    }
    out
}

/// `(byte offset, line without its line break)` of every line.
fn line_starts(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        out.push((start, line.trim_end_matches(['\n', '\r'])));
        start += line.len();
    }
    out
}

/// The adornment character of `line` when it is a run of one adornment character (trailing
/// whitespace allowed), with the run's length.
fn adornment(line: &str) -> Option<(char, usize)> {
    let run = line.trim_end();
    let c = run.chars().next()?;
    (ADORNMENT.contains(&c) && run.chars().all(|x| x == c)).then(|| (c, run.chars().count()))
}

/// A title line: not blank and not itself an adornment run.
fn title_text(line: &str) -> Option<&str> {
    let t = line.trim();
    (!t.is_empty() && adornment(t).is_none()).then_some(t)
}

type Found<'a> = ((char, bool), &'a str, usize);

/// Overline at `i`, title at `i + 1`, equal underline at `i + 2`.
fn overlined<'a>(lines: &[(usize, &'a str)], i: usize) -> Option<Found<'a>> {
    let (c, len) = adornment(lines[i].1)?;
    let title = title_text(lines.get(i + 1)?.1)?;
    let (u, ulen) = adornment(lines.get(i + 2)?.1)?;
    (u == c && ulen == len && len >= title.chars().count()).then_some(((c, true), title, 3))
}

/// Title at `i` (not indented), underline at `i + 1`.
fn underlined<'a>(lines: &[(usize, &'a str)], i: usize) -> Option<Found<'a>> {
    let line = lines[i].1;
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let title = title_text(line)?;
    let (c, len) = adornment(lines.get(i + 1)?.1)?;
    (len >= title.chars().count()).then_some(((c, false), title, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> Vec<Title> {
        titles(text)
    }

    #[test]
    fn underlines_overlines_and_levels_by_first_appearance() {
        let text = "=====\nGuide\n=====\n\nIntro text.\n\nInstall\n-------\n\nSteps.\n\nOn Linux\n~~~~~~~~\n\nUse apt.\n\nUsage\n-----\n\nRun it.\n";
        assert_eq!(
            summary(text),
            vec![
                (0, 1, "Guide".to_string()),
                (32, 2, "Install".to_string()),
                (57, 3, "On Linux".to_string()),
                (86, 2, "Usage".to_string()),
            ]
        );
        assert_eq!(&text[57..65], "On Linux");
        assert_eq!(&text[86..91], "Usage");
    }

    #[test]
    fn short_underlines_indented_lines_paragraph_lines_and_transitions_are_not_titles() {
        // underline shorter than the title
        assert!(titles("A long title\n=====\n").is_empty());
        // indented: a literal block or block quote
        assert!(titles("Code::\n\n    x = 1\n    =====\n").is_empty());
        // the second line of a paragraph
        assert!(titles("First line\nsecond line\n===========\n").is_empty());
        // a transition between paragraphs
        assert!(titles("Text.\n\n----------\n\nMore.\n").is_empty());
        // a run of a character outside the adornment set
        assert!(titles("Title\n.....\n").is_empty());
        // overline and underline must match
        assert!(titles("=======\nTitle\n-------\n").is_empty());
    }

    #[test]
    fn inset_title_under_an_overline_and_non_ascii_lengths() {
        assert_eq!(
            summary("----------\n  Résumé  \n----------\n"),
            vec![(0, 1, "Résumé".to_string())]
        );
        // "Café" is 4 code points (5 bytes): a 4-character underline is long enough
        assert_eq!(summary("Café\n^^^^\n"), vec![(0, 1, "Café".to_string())]);
    }
}
