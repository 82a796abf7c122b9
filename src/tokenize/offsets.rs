//! A document's sorted byte offsets (token starts and ends, piece bounds) with a sampled index.

/// A document's pre-tokenizer pieces (the regex split that BPE encodes piece by piece): piece
/// `k` is the bytes `bounds.get(k)..bounds.get(k + 1)` and has `tokens[k + 1] - tokens[k]`
/// tokens.
#[derive(Debug, Clone, Default)]
pub(super) struct Pieces {
    pub(super) bounds: Offsets,
    pub(super) tokens: Vec<u32>,
}

/// Nondecreasing byte offsets of a document with a sampled index, so that counting the offsets
/// below a byte ([`Offsets::below`]) searches one block of [`Offsets::BLOCK`] bytes instead of
/// the whole document: the sizers ask this several times per candidate chunk, millions of
/// times per sweep.
#[derive(Debug, Clone, Default)]
pub(super) struct Offsets {
    keys: Vec<u32>,
    /// `blocks[b]`: how many keys are below byte `b × BLOCK`.
    blocks: Vec<u32>,
}

impl Offsets {
    const BLOCK: usize = 64;

    /// The index of `keys` (nondecreasing) in a text of `len` bytes.
    pub(super) fn new(keys: Vec<u32>, len: usize) -> Self {
        let n_blocks = len / Self::BLOCK + 2;
        let mut blocks = Vec::with_capacity(n_blocks);
        let mut i = 0;
        for b in 0..n_blocks {
            while i < keys.len() && (keys[i] as usize) < b * Self::BLOCK {
                i += 1;
            }
            blocks.push(i as u32);
        }
        Offsets { keys, blocks }
    }

    /// How many keys are below byte `x` (`keys.partition_point(|k| k < x)`).
    pub(super) fn below(&self, x: usize) -> usize {
        let b = x / Self::BLOCK;
        let (lo, hi) = match (self.blocks.get(b), self.blocks.get(b + 1)) {
            (Some(&lo), Some(&hi)) => (lo as usize, hi as usize),
            _ => (
                self.blocks.last().map_or(0, |&l| l as usize),
                self.keys.len(),
            ),
        };
        lo + self.keys[lo..hi].partition_point(|&k| (k as usize) < x)
    }

    /// The index of the key equal to `x`, if any (keys strictly increasing).
    pub(super) fn find(&self, x: usize) -> Option<usize> {
        let i = self.below(x);
        (self.keys.get(i) == Some(&(x as u32))).then_some(i)
    }

    pub(super) fn get(&self, i: usize) -> usize {
        self.keys[i] as usize
    }

    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }
}
