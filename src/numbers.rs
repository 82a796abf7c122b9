//! Number formatting shared by every stage's text (reports, step lines, dry runs).

/// A whole number with thousands separators: 8971.4 → "8,971" (report.md, report.html and the
/// lines a command prints; CSVs keep plain numbers).
pub(crate) fn thousands(x: f64) -> String {
    let digits = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if x < -0.5 { format!("-{out}") } else { out }
}
