//! Run events: the one interface between the pipeline and whoever watches it (the command
//! line's progress display, a test). Every stage reports through the same stream, as plain
//! values; nothing is drawn or printed by the library.

/// A step of the pipeline, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// Embedding what dense, hybrid and semantic configurations need.
    Embed,
    /// Writing the `llm_context` prefixes (one call per distinct chunk).
    Contexts,
    /// Reranking the first stage's candidates of reranked configurations (one unit per request).
    Rerank,
    /// Indexing and querying the configurations of external retrievers (one unit per
    /// configuration).
    Retrieve,
    /// Scoring every configuration of the grid.
    Sweep,
    /// Generating and grading answers (one unit per call).
    Judge,
}

impl Step {
    /// Its name, as shown to the user.
    pub fn name(self) -> &'static str {
        match self {
            Step::Embed => "embed",
            Step::Contexts => "llm_context",
            Step::Rerank => "rerank",
            Step::Retrieve => "retrieve",
            Step::Sweep => "sweep",
            Step::Judge => "judge",
        }
    }

    /// What one unit of work is (plural).
    pub fn unit(self) -> &'static str {
        match self {
            Step::Embed => "texts",
            Step::Contexts => "chunks",
            Step::Rerank => "requests",
            Step::Retrieve => "configurations",
            Step::Sweep => "configurations",
            Step::Judge => "calls",
        }
    }
}

/// Something that happened while running.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// A step begins, with `total` units of work expected (an estimate for the judge: retries
    /// and format reminders can add calls).
    Started {
        /// The step.
        step: Step,
        /// Units expected.
        total: u64,
    },
    /// One unit of a step finished: a configuration scored, a call answered.
    Advanced {
        /// The step.
        step: Step,
        /// What finished (a configuration id, a call's stage tag).
        label: String,
        /// What it cost in USD (0 for a cache hit; `None` without a price).
        cost_usd: Option<f64>,
        /// Whether it came from a cache (nothing sent).
        cached: bool,
    },
    /// A step ended; `summary` says what it did in one line.
    Finished {
        /// The step.
        step: Step,
        /// One line: counts, tokens, cost, time.
        summary: String,
    },
    /// A judged question was left unfinished; a rerun of the same command redoes it.
    Unfinished {
        /// The candidate.
        config_id: String,
        /// The question.
        question_id: String,
        /// Why.
        error: String,
    },
    /// A line for the user: what is about to happen, or a conclusion.
    Note(String),
    /// Something about the input the user should fix, shown even when notes are not (for
    /// example byte-identical documents in the corpus).
    Warning(String),
}

/// Where events go: a callback shared by every stage (it may be called from several threads).
pub type Events<'a> = &'a (dyn Fn(RunEvent) + Sync);
