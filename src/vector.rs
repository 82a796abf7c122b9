//! Vector arithmetic shared by semantic chunking and dense retrieval.

/// Dot product of two equally long vectors (the cosine when both are unit length).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
