//! Planting a failure of faithfulness in an answer ([`plant`]): change one fact that the
//! retrieved context states, so that the changed answer contradicts its context; or, when the
//! answer states no such fact, add a claim the context does not hold.
//!
//! An answer is read as terms: its whitespace-separated words stripped of the punctuation at
//! their edges (and of a possessive `'s`). A term is
//! - a **list marker** when it begins a line and ends in `.` or `)` (`1.`, `2)`, `a)`): never
//!   changed;
//! - an **identifier or file name** when it holds any character other than letters and digits
//!   (`A-b16-x`, `01-installation.md`, `user_id`, `v2.1`), apart from a number's own separators
//!   (`1,750`, `2.5`), or mixes letters and digits (`b16`, `A1`): never changed;
//! - a **number** (digits, `1,750`, `2.5`), a **number word** (zero to twelve, any case) or a
//!   **name** (a capitalised word of two letters or more that does not begin a sentence or a
//!   line).
//!
//! The fact changed is the first number of the answer that the context states (as a term of its
//! own, or as a part of a hyphenated term such as `14-day`), increased by one (by more when the
//! context states that value too); else the first such number word, made the next one the
//! context does not state; else the first such name, replaced by `Quillmoor` (or `Brackenridge`
//! when the context names Quillmoor or the name is Quillmoor). Terms the context does not state
//! are never changed: changing them could leave the answer as faithful as before.

use std::collections::HashSet;

/// What [`plant`] did to an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planted {
    /// One fact the context states changed: the answer after the change.
    Changed(String),
    /// No such fact: the answer with a sentence appended that the context does not hold.
    Added(String),
}

/// Number words changed by [`plant`], each into a later one.
const NUMBER_WORDS: [&str; 14] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen",
];

/// The name a name is changed into (or [`OTHER_NAME_2`] when that one is taken).
const OTHER_NAME: &str = "Quillmoor";
const OTHER_NAME_2: &str = "Brackenridge";

/// A term of a text: its byte range and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Term {
    start: usize,
    end: usize,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A list marker, an identifier or a file name: never changed.
    Fixed,
    Number,
    NumberWord,
    Name,
    /// Any other word.
    Word,
}

/// Plants a failure in `answer` against `context` (fenced retrieved chunks, as given to the
/// judge; the `<document id="…">` lines are not part of what the context states). See the
/// module documentation. Deterministic.
pub fn plant(answer: &str, context: &str) -> Planted {
    let stated = stated_terms(context);
    if let Some(changed) = change_fact(answer, &stated) {
        return Planted::Changed(changed);
    }
    let name = if stated.contains(OTHER_NAME) {
        OTHER_NAME_2
    } else {
        OTHER_NAME
    };
    Planted::Added(format!(
        "{} It also needs a {name} licence, renewed every year.",
        answer.trim_end()
    ))
}

/// `answer` with its first number, number word or name that `stated` holds changed; `None` when
/// it has none.
fn change_fact(answer: &str, stated: &HashSet<String>) -> Option<String> {
    let terms = terms(answer);
    let is_stated = |t: &Term| stated.contains(&normal(&answer[t.start..t.end], t.kind));
    for kind in [Kind::Number, Kind::NumberWord, Kind::Name] {
        let Some(t) = terms.iter().find(|t| t.kind == kind && is_stated(t)) else {
            continue;
        };
        let old = &answer[t.start..t.end];
        let new = match kind {
            Kind::Number => next_number(old, stated),
            Kind::NumberWord => next_number_word(old, stated),
            _ => {
                if old == OTHER_NAME || stated.contains(OTHER_NAME) {
                    OTHER_NAME_2.to_string()
                } else {
                    OTHER_NAME.to_string()
                }
            }
        };
        return Some(format!("{}{new}{}", &answer[..t.start], &answer[t.end..]));
    }
    None
}

/// A term as compared with the context: a number without its thousands separators, a number
/// word in lower case, anything else as written.
fn normal(term: &str, kind: Kind) -> String {
    match kind {
        Kind::Number => term.replace(',', ""),
        Kind::NumberWord => term.to_lowercase(),
        _ => term.to_string(),
    }
}

/// What the context states: each term of its text (document fence lines left out) in its
/// [`normal`] form, and the parts of a term made of words and numbers joined by `-` (`14-day`
/// states `14`), each part that is only digits or only letters.
fn stated_terms(context: &str) -> HashSet<String> {
    let text: String = context
        .lines()
        .filter(|l| {
            let l = l.trim();
            !(l.starts_with("<document id=") && l.ends_with('>')) && l != "</document>"
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = HashSet::new();
    for t in terms(&text) {
        let term = &text[t.start..t.end];
        out.insert(normal(term, t.kind));
        if t.kind == Kind::Fixed && term.chars().all(|c| c.is_alphanumeric() || c == '-') {
            for part in term.split('-') {
                let digits = !part.is_empty() && part.chars().all(|c| c.is_ascii_digit());
                let letters = !part.is_empty() && part.chars().all(char::is_alphabetic);
                if digits || letters {
                    out.insert(part.to_string());
                    out.insert(part.to_lowercase());
                }
            }
        }
    }
    out
}

/// The terms of `text`, in order (see the module documentation).
fn terms(text: &str) -> Vec<Term> {
    let mut out = Vec::new();
    let mut sentence_start = true;
    let mut line_start = true;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let Some(c) = rest.chars().next() else { break };
        if c.is_whitespace() {
            if c == '\n' {
                line_start = true;
                sentence_start = true;
            }
            i += c.len_utf8();
            continue;
        }
        let len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..len];
        let lead = word.len()
            - word
                .trim_start_matches(|c: char| !c.is_alphanumeric())
                .len();
        let mut core = word[lead..].trim_end_matches(|c: char| !c.is_alphanumeric());
        for suffix in ["'s", "\u{2019}s"] {
            core = core.strip_suffix(suffix).unwrap_or(core);
        }
        if !core.is_empty() {
            let marker = line_start
                && lead == 0
                && core.chars().count() <= 3
                && word[core.len()..].starts_with(['.', ')'])
                && word.len() == core.len() + 1;
            let kind = if marker {
                Kind::Fixed
            } else {
                classify(core, sentence_start)
            };
            out.push(Term {
                start: i + lead,
                end: i + lead + core.len(),
                kind,
            });
        }
        line_start = false;
        sentence_start = word.ends_with(['.', '!', '?', ':']);
        i += len;
    }
    out
}

/// What a term (stripped of edge punctuation) is; `sentence_start` when it begins a sentence.
fn classify(core: &str, sentence_start: bool) -> Kind {
    if is_number(core) {
        return Kind::Number;
    }
    let letters = core.chars().all(char::is_alphabetic);
    if !letters {
        return Kind::Fixed;
    }
    if NUMBER_WORDS.contains(&core.to_lowercase().as_str()) {
        return Kind::NumberWord;
    }
    let capitalised = core.chars().next().is_some_and(char::is_uppercase);
    if capitalised && !sentence_start && core.chars().count() >= 2 {
        Kind::Name
    } else {
        Kind::Word
    }
}

/// Digits, optionally grouped by thousands (`1,750`) or with one decimal point (`2.5`).
fn is_number(s: &str) -> bool {
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if digits(s) {
        return true;
    }
    if let Some((a, b)) = s.split_once('.') {
        return digits(a) && digits(b);
    }
    let groups: Vec<&str> = s.split(',').collect();
    groups.len() > 1
        && digits(groups[0])
        && groups[0].len() <= 3
        && groups[1..].iter().all(|g| g.len() == 3 && digits(g))
}

/// `number` with its last run of digits increased by one, by more while the context states the
/// result (`1750` → `1751`, `9` → `10`, `2.5` → `2.6`, `1,750` → `1,751`).
fn next_number(number: &str, stated: &HashSet<String>) -> String {
    let cut = number
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    let (head, mut digits) = (&number[..cut], number[cut..].to_string());
    loop {
        digits = bump_digits(&digits);
        let candidate = format!("{head}{digits}");
        if !stated.contains(&normal(&candidate, Kind::Number)) {
            return candidate;
        }
    }
}

/// The next number word after `word` (same capitalisation) that the context does not state.
fn next_number_word(word: &str, stated: &HashSet<String>) -> String {
    let lower = word.to_lowercase();
    let at = NUMBER_WORDS.iter().position(|n| *n == lower).unwrap_or(0);
    let next = NUMBER_WORDS[at + 1..]
        .iter()
        .find(|n| !stated.contains(**n))
        .copied()
        .unwrap_or("fourteen");
    if word.starts_with(char::is_uppercase) {
        let mut cs = next.chars();
        let first = cs.next().expect("not empty").to_ascii_uppercase();
        format!("{first}{}", cs.as_str())
    } else {
        next.to_string()
    }
}

/// A run of decimal digits plus one, as digits (`"0099"` → `"0100"`, `"99"` → `"100"`).
fn bump_digits(digits: &str) -> String {
    let mut out: Vec<u8> = digits.bytes().collect();
    for b in out.iter_mut().rev() {
        if *b == b'9' {
            *b = b'0';
        } else {
            *b += 1;
            return String::from_utf8(out).expect("ascii");
        }
    }
    format!("1{}", String::from_utf8(out).expect("ascii"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::prompts::fence_context;

    fn ctx(text: &str) -> String {
        fence_context([("01-installation.md#3", text)])
    }

    fn changed(answer: &str, context: &str) -> String {
        match plant(answer, &ctx(context)) {
            Planted::Changed(a) => a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_number_the_context_states_is_changed_never_an_identifier_or_a_file_name() {
        let context = "Install from 01-installation.md. The build A-b16-x needs 4 CPU cores and runs as user 1750.";
        let answer = "1. See 01-installation.md: build A-b16-x needs 4 cores.";
        let out = changed(answer, context);
        assert_eq!(
            out,
            "1. See 01-installation.md: build A-b16-x needs 5 cores."
        );
        assert!(out.contains("01-installation.md") && out.contains("A-b16-x"));
        // the list marker and identifiers are skipped; a number the context does not state too
        assert_eq!(
            changed("2) Use 3 workers as user 1750.", context),
            "2) Use 3 workers as user 1751."
        );
        // a value the context also states is stepped over
        assert_eq!(
            changed("It needs 4 cores.", "It needs 4 cores, or 5 on ARM."),
            "It needs 6 cores."
        );
        assert_eq!(changed("Up to 99 or 5.", "99 at most"), "Up to 100 or 5.");
        assert_eq!(
            changed("About 1,750 users.", "1750 users"),
            "About 1,751 users."
        );
        assert_eq!(
            changed("Refunds take 14 days.", "a 14-day window"),
            "Refunds take 15 days."
        );
    }

    #[test]
    fn else_a_number_word_then_a_name_the_context_states() {
        let context = "Larkspur needs two CPU cores and three gigabytes.";
        assert_eq!(
            changed("Two cores, says the Larkspur guide.", context),
            "Four cores, says the Larkspur guide."
        );
        assert_eq!(
            changed("It is run by Larkspur. Settings live in TOML.", context),
            "It is run by Quillmoor. Settings live in TOML."
        );
        assert_eq!(
            changed("Ask Quillmoor.", "Quillmoor knows"),
            "Ask Brackenridge."
        );
    }

    #[test]
    fn an_answer_without_a_stated_fact_gets_a_claim_the_context_does_not_hold() {
        let context = "Refunds are issued quickly by Larkspur.";
        // the name begins the sentence, TOML is not in the context, 30 neither
        assert_eq!(
            plant("Larkspur issues them in 30 days via TOML.", &ctx(context)),
            Planted::Added(
                "Larkspur issues them in 30 days via TOML. It also needs a Quillmoor licence, renewed every year."
                    .into()
            )
        );
        // the file name's digits are not a number of the context
        assert!(matches!(
            plant(
                "See 01-installation.md.",
                &ctx("See 01-installation.md for 1 step.")
            ),
            Planted::Added(_)
        ));
    }
}
