//! Prompt templates with named placeholders (`{question}`, `{context}`, …), shared by the judge
//! stage and the prepare step's model-written contexts.

/// Replaces each `{name}` whose name is one of `values` in a single left-to-right pass; any other
/// brace text is kept as written, and substituted values are never scanned again.
pub fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hit = after.find('}').and_then(|close| {
            let name = &after[..close];
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (close, *v))
        });
        match hit {
            Some((close, value)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn render_is_single_pass_and_keeps_other_braces() {
        let t = "Q: {question}\nA: {answer}\nJSON: {\"verdict\": \"pass\"} {unknown}";
        let s = render(t, &[("question", "what is {answer}?"), ("answer", "42")]);
        assert_eq!(
            s,
            "Q: what is {answer}?\nA: 42\nJSON: {\"verdict\": \"pass\"} {unknown}"
        );
        assert_eq!(render("{", &[]), "{");
        assert_eq!(render("a{b", &[("b", "x")]), "a{b");
    }
}
