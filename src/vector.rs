//! Vector arithmetic shared by semantic chunking and dense retrieval.

/// Dot product of two equally long vectors (the cosine when both are unit length).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Cosine similarity of two equally long vectors of any length, in f64 (0 when either is the
/// zero vector).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot = |x: &[f32], y: &[f32]| -> f64 {
        x.iter()
            .zip(y)
            .map(|(p, q)| f64::from(*p) * f64::from(*q))
            .sum()
    };
    let norm = (dot(a, a) * dot(b, b)).sqrt();
    if norm == 0.0 { 0.0 } else { dot(a, b) / norm }
}
