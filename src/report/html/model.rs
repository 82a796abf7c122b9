//! Formatting shared by the page's parts.

/// A number with three decimals, as the tables show metrics.
pub fn fmt3(x: f64) -> String {
    format!("{x:.3}")
}

/// `value` as JSON that is safe inside a `<script>` element: every `<` is written `\u003c`, so
/// no text can close the element or open a comment.
pub fn script_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "null".into())
        .replace('<', "\\u003c")
}
