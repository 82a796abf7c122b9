//! `parent:P` with chunk sizes of P tokens or more: a parent of at most P tokens is no larger
//! than such a chunk, so it would send nothing more. The grid ([`crate::sweep::grid::expand`])
//! leaves these combinations out, names them in one line ([`left_out_note`]) and refuses an
//! expansion they leave nothing of.

use super::Expand;

/// Each `parent:P` of `expand` with the chunk sizes of `sizes` it is left out of the grid at
/// (those of at least P tokens), for the values that have any, in the order given.
pub fn left_out(expand: &[Expand], sizes: &[usize]) -> Vec<(Expand, Vec<usize>)> {
    expand
        .iter()
        .map(|&e| {
            let at: Vec<usize> = (sizes.iter().copied())
                .filter(|&size| !e.sends_more_than(size))
                .collect();
            (e, at)
        })
        .filter(|(_, at)| !at.is_empty())
        .collect()
}

/// The line that names what [`left_out`] finds, e.g. `left out of the grid: parent:256 on chunk
/// size 256, 512 (a parent no larger than its chunk sends nothing more)`; `None` when nothing
/// is left out.
pub fn left_out_note(expand: &[Expand], sizes: &[usize]) -> Option<String> {
    let left = left_out(expand, sizes);
    (!left.is_empty()).then(|| {
        let parts: Vec<String> = left
            .iter()
            .map(|(e, at)| format!("{e} on chunk size {}", join_sizes(at)))
            .collect();
        format!(
            "left out of the grid: {} (a parent no larger than its chunk sends nothing more)",
            parts.join("; ")
        )
    })
}

/// `128, 256`.
pub fn join_sizes(sizes: &[usize]) -> String {
    sizes
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
