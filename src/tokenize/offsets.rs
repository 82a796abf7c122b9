//! A document's sorted offsets (token starts and ends, piece bounds, term starts) stored in one
//! byte each with a sampled index.

/// Nondecreasing offsets into a text (bytes, or code points) in about one byte each: each
/// offset as its position inside its block of [`Offsets::BLOCK`] units (one byte), and per block
/// how many offsets lie below it. Counting the offsets below a position ([`Offsets::below`])
/// searches one block instead of the whole document: the sizers ask this several times per
/// candidate chunk, millions of times per sweep. Reading offset `i` alone ([`Offsets::get`]) is
/// a binary search of the block counts; reading them in order ([`Offsets::iter_from`]) is not.
///
/// A document's token starts took four bytes each when stored as `u32`: for a corpus of
/// English text (about one token per four bytes) that was as many bytes as the text itself.
#[derive(Debug, Clone, Default)]
pub struct Offsets {
    /// Each offset's position in its block (`offset % BLOCK`), in order.
    lows: Vec<u8>,
    /// `blocks[b]`: how many offsets are below `b × BLOCK`.
    blocks: Vec<u32>,
}

/// Builds [`Offsets`] from offsets pushed in nondecreasing order.
#[derive(Debug, Default)]
pub struct OffsetsBuilder {
    lows: Vec<u8>,
    blocks: Vec<u32>,
}

impl OffsetsBuilder {
    /// A builder expecting about `n` offsets.
    pub fn with_capacity(n: usize) -> Self {
        OffsetsBuilder {
            lows: Vec::with_capacity(n),
            blocks: Vec::new(),
        }
    }

    /// Appends `key`, not below the last one pushed.
    pub fn push(&mut self, key: u32) {
        let b = key as usize / Offsets::BLOCK;
        let count = u32::try_from(self.lows.len()).expect("fewer than 2^32 offsets");
        while self.blocks.len() <= b {
            self.blocks.push(count);
        }
        debug_assert!(self.blocks.len() == b + 1, "offsets pushed out of order");
        self.lows.push((key as usize % Offsets::BLOCK) as u8);
    }

    /// The offsets of a text of `len` units (every offset at most `len`), with no spare
    /// capacity (they are kept for the whole sweep).
    pub fn finish(mut self, len: usize) -> Offsets {
        let n_blocks = len / Offsets::BLOCK + 2;
        debug_assert!(
            self.blocks.len() <= n_blocks,
            "an offset past the text's end"
        );
        let count = self.lows.len() as u32;
        while self.blocks.len() < n_blocks {
            self.blocks.push(count);
        }
        self.lows.shrink_to_fit();
        self.blocks.shrink_to_fit();
        Offsets {
            lows: self.lows,
            blocks: self.blocks,
        }
    }
}

impl Offsets {
    /// Units per block (a position inside a block fits in one byte).
    pub const BLOCK: usize = 64;

    /// The index of `keys` (nondecreasing, each at most `len`) in a text of `len` units.
    pub fn new(keys: impl IntoIterator<Item = u32>, len: usize) -> Self {
        let keys = keys.into_iter();
        let mut b = OffsetsBuilder::with_capacity(keys.size_hint().0);
        for k in keys {
            b.push(k);
        }
        b.finish(len)
    }

    /// The range of offsets in the block of `x`, and `x`'s position in it; `None` past the last
    /// block (every offset is below such an `x`).
    fn block_of(&self, x: usize) -> Option<(usize, usize, u8)> {
        let b = x / Self::BLOCK;
        match (self.blocks.get(b), self.blocks.get(b + 1)) {
            (Some(&lo), Some(&hi)) => Some((lo as usize, hi as usize, (x % Self::BLOCK) as u8)),
            _ => None,
        }
    }

    /// How many offsets are below `x`.
    pub fn below(&self, x: usize) -> usize {
        match self.block_of(x) {
            Some((lo, hi, low)) => lo + self.lows[lo..hi].partition_point(|&k| k < low),
            None => self.lows.len(),
        }
    }

    /// The index of the offset equal to `x`, if any (offsets strictly increasing).
    pub fn find(&self, x: usize) -> Option<usize> {
        let (lo, hi, low) = self.block_of(x)?;
        let i = lo + self.lows[lo..hi].partition_point(|&k| k < low);
        (i < hi && self.lows[i] == low).then_some(i)
    }

    /// Offset `i` (a binary search of the block counts).
    pub fn get(&self, i: usize) -> usize {
        let b = self.blocks.partition_point(|&c| c as usize <= i) - 1;
        b * Self::BLOCK + self.lows[i] as usize
    }

    /// Offsets `i`, `i + 1`, … in order.
    pub fn iter_from(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let mut b = if i < self.lows.len() {
            self.blocks.partition_point(|&c| c as usize <= i) - 1
        } else {
            0
        };
        (i..self.lows.len()).map(move |j| {
            while self.blocks[b + 1] as usize <= j {
                b += 1;
            }
            b * Self::BLOCK + self.lows[j] as usize
        })
    }

    /// Number of offsets.
    pub fn len(&self) -> usize {
        self.lows.len()
    }
}
