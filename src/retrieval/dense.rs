//! Exact dense retrieval: cosine similarity between a query vector and every chunk vector.
//!
//! Vectors are kept as `f32` and normalised to unit length once, when the index is built (and
//! the query once per query), so the cosine is a dot product. The scores are cosines in
//! [−1, 1] (unit vectors from most embedding models give [0, 1] in practice); the margin uses
//! them as they are (see [`crate::metrics::MarginScale::Raw`]). Search is exhaustive (no
//! approximate index): exact top-k, the same on every run.

use thiserror::Error;

use crate::vector::dot;

/// Errors building or querying a [`DenseIndex`].
#[derive(Debug, Error, PartialEq)]
pub enum DenseError {
    /// Two vectors of different lengths.
    #[error("embedding dimension mismatch: expected {expected}, got {got}")]
    Dimension {
        /// Dimension of the first vector.
        expected: usize,
        /// Dimension of the offending vector.
        got: usize,
    },
    /// A vector of length 0, or with a zero or non-finite norm, has no direction.
    #[error("an embedding has zero or non-finite norm; the server returned an unusable vector")]
    Degenerate,
}

/// Normalises `v` to unit Euclidean length in place.
///
/// # Errors
/// [`DenseError::Degenerate`] for an empty vector or a zero or non-finite norm.
pub fn normalise(v: &mut [f32]) -> Result<(), DenseError> {
    let norm = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if v.is_empty() || !norm.is_finite() || norm == 0.0 {
        return Err(DenseError::Degenerate);
    }
    for x in v.iter_mut() {
        *x = (f64::from(*x) / norm) as f32;
    }
    Ok(())
}

/// Unit-length chunk vectors of one configuration, row-major in chunk order.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseIndex {
    dim: usize,
    data: Vec<f32>,
}

impl DenseIndex {
    /// Builds the index from one vector per chunk, in chunk order; each is normalised here
    /// (already unit vectors stay as they are up to rounding).
    ///
    /// # Errors
    /// [`DenseError::Dimension`] when the vectors differ in length, [`DenseError::Degenerate`]
    /// for a zero vector.
    pub fn build<'a>(vectors: impl IntoIterator<Item = &'a [f32]>) -> Result<Self, DenseError> {
        let mut dim = 0;
        let mut data = Vec::new();
        for (i, v) in vectors.into_iter().enumerate() {
            if i == 0 {
                dim = v.len();
            } else if v.len() != dim {
                return Err(DenseError::Dimension {
                    expected: dim,
                    got: v.len(),
                });
            }
            let start = data.len();
            data.extend_from_slice(v);
            normalise(&mut data[start..])?;
        }
        Ok(DenseIndex { dim, data })
    }

    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// Whether the index holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Vector dimension (0 for an empty index).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Cosine of `query` with every chunk, in chunk order. `query` is normalised here.
    ///
    /// # Errors
    /// [`DenseError::Dimension`] if the query's length is not the index's,
    /// [`DenseError::Degenerate`] for a zero query vector.
    pub fn scores(&self, query: &[f32]) -> Result<Vec<f32>, DenseError> {
        if self.is_empty() {
            return Ok(Vec::new());
        }
        if query.len() != self.dim {
            return Err(DenseError::Dimension {
                expected: self.dim,
                got: query.len(),
            });
        }
        let mut q = query.to_vec();
        normalise(&mut q)?;
        Ok(self
            .data
            .chunks_exact(self.dim)
            .map(|c| dot(c, &q))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_order_is_known_by_hand() {
        // Query along x. Chunk 0 at 90°, chunk 1 at 0° (scaled), chunk 2 at 45°, chunk 3 at 180°.
        let vs: [&[f32]; 4] = [&[0.0, 2.0], &[5.0, 0.0], &[1.0, 1.0], &[-3.0, 0.0]];
        let idx = DenseIndex::build(vs).unwrap();
        assert_eq!(idx.len(), 4);
        let s = idx.scores(&[0.5, 0.0]).unwrap();
        assert!((s[0] - 0.0).abs() < 1e-6);
        assert!((s[1] - 1.0).abs() < 1e-6);
        assert!((s[2] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert!((s[3] + 1.0).abs() < 1e-6);
        let r = crate::retrieval::rank_top_k(&s, 3);
        assert_eq!(r.top, vec![1, 2, 0]);
    }

    #[test]
    fn mismatched_and_zero_vectors_are_errors() {
        let vs: [&[f32]; 2] = [&[1.0, 0.0], &[1.0, 0.0, 0.0]];
        assert_eq!(
            DenseIndex::build(vs).unwrap_err(),
            DenseError::Dimension {
                expected: 2,
                got: 3
            }
        );
        let zero: [&[f32]; 1] = [&[0.0, 0.0]];
        assert_eq!(DenseIndex::build(zero).unwrap_err(), DenseError::Degenerate);
        let idx = DenseIndex::build([&[1.0f32, 0.0][..]]).unwrap();
        assert!(idx.scores(&[1.0]).is_err());
    }
}
