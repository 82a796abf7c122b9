//! Exit classes. Every library error enum has an `exit_class` method, an exhaustive `match` over
//! its variants, so a new variant does not compile until it is classified.

/// How a command ended, as the process's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitClass {
    /// 1: a failure while running (writing results, a server that keeps failing), or a judge
    /// that failed its measurement: `judge-check` when no criterion's verdicts can tell pass
    /// from fail (or no item got a pass or fail verdict).
    Failure,
    /// 2: invalid input or usage (flags, config, corpus, golden set, a grid such as overlap ≥ size,
    /// a budget the estimate already exceeds).
    Usage,
    /// 4: a run left unfinished work; the same command again finishes it.
    Incomplete,
}

impl ExitClass {
    /// The process exit code: 1, 2 or 4.
    pub fn code(self) -> u8 {
        match self {
            ExitClass::Failure => 1,
            ExitClass::Usage => 2,
            ExitClass::Incomplete => 4,
        }
    }
}
