//! The report's text as typed blocks ([`DocSection`], [`Block`], [`Prose`]), made once from the
//! run's [`crate::report::outcome::Outcome`] and rendered twice: as Markdown by [`to_markdown`]
//! (report.md) and as HTML by [`crate::report::html`] (report.html), so that neither format is
//! made from the other.

/// A piece of running text.
#[derive(Debug, Clone, PartialEq)]
pub enum Inline {
    /// Plain text, written as it is (Markdown: verbatim; HTML: escaped).
    Text(String),
    /// Code: a configuration id, a setting, a file name.
    Code(String),
    /// Strong emphasis.
    Strong(Prose),
    /// Emphasis.
    Em(Prose),
}

/// Running text: a sequence of [`Inline`]s, built with the chained methods below.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prose(pub Vec<Inline>);

impl Prose {
    /// Empty text.
    pub fn new() -> Self {
        Self::default()
    }

    /// Plain text `s`.
    pub fn text(s: impl Into<String>) -> Self {
        Self::new().t(s)
    }

    /// Appends plain text.
    pub fn t(mut self, s: impl Into<String>) -> Self {
        self.0.push(Inline::Text(s.into()));
        self
    }

    /// Appends code.
    pub fn c(mut self, s: impl Into<String>) -> Self {
        self.0.push(Inline::Code(s.into()));
        self
    }

    /// Appends strongly emphasised text.
    pub fn b(mut self, p: Prose) -> Self {
        self.0.push(Inline::Strong(p));
        self
    }

    /// Appends emphasised text.
    pub fn i(mut self, p: Prose) -> Self {
        self.0.push(Inline::Em(p));
        self
    }

    /// Appends the inlines of `p`.
    pub fn p(mut self, p: Prose) -> Self {
        self.0.extend(p.0);
        self
    }

    /// Appends a sentence of the selection stage ([`crate::select`]), which writes
    /// configuration ids between backticks (its reasons, diagnoses and evidence): each
    /// backticked stretch becomes code, the rest text; an unpaired backtick stays text. This is
    /// the one place that reads that convention, so that report.md shows the sentence byte for
    /// byte and report.html shows the ids as code.
    pub fn ticked(mut self, s: &str) -> Self {
        let pieces: Vec<&str> = s.split('`').collect();
        let paired = pieces.len() % 2 == 1;
        for (i, piece) in pieces.iter().enumerate() {
            let last = i + 1 == pieces.len();
            if i % 2 == 1 && (paired || !last) {
                self.0.push(Inline::Code((*piece).to_string()));
            } else if i % 2 == 1 {
                self.0.push(Inline::Text(format!("`{piece}")));
            } else if !piece.is_empty() {
                self.0.push(Inline::Text((*piece).to_string()));
            }
        }
        self
    }
}

/// How a table column's cells align.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// The reader's default (left).
    Default,
    /// Right, for numbers.
    Right,
    /// Centred.
    Center,
}

/// A table: a header, each column's alignment, rows of cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column headings.
    pub head: Vec<String>,
    /// Alignment per column (as many as `head`).
    pub align: Vec<Align>,
    /// Rows, each with as many cells as `head`.
    pub rows: Vec<Vec<Prose>>,
}

/// A block of a section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A subheading (level 3).
    Subheading(String),
    /// A paragraph.
    Para(Prose),
    /// A bulleted list.
    List(Vec<Prose>),
    /// A numbered list (1, 2, …).
    Numbered(Vec<Prose>),
    /// A table.
    Table(Table),
    /// A block of shell commands, one a line.
    Shell(Vec<String>),
    /// A figure: a file next to report.md (report.html shows the figure inline instead).
    Image {
        /// What it shows.
        alt: String,
        /// Its file name.
        file: String,
    },
}

/// A section of the report: a level-2 heading and its blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct DocSection {
    /// The heading.
    pub title: String,
    /// The blocks, in order.
    pub blocks: Vec<Block>,
}

impl DocSection {
    /// A section titled `title` with `blocks`.
    pub fn new(title: impl Into<String>, blocks: Vec<Block>) -> Self {
        Self {
            title: title.into(),
            blocks,
        }
    }
}

/// `sections` as Markdown: each section's heading and blocks, every block followed by a blank
/// line but the last, which ends with a line break.
pub fn to_markdown(sections: &[DocSection]) -> String {
    let mut blocks = Vec::new();
    for s in sections {
        blocks.push(format!("## {}\n", s.title));
        blocks.extend(s.blocks.iter().map(block_markdown));
    }
    blocks.join("\n")
}

fn block_markdown(block: &Block) -> String {
    match block {
        Block::Subheading(t) => format!("### {t}\n"),
        Block::Para(p) => format!("{}\n", inline_markdown(p, false)),
        Block::List(items) => items
            .iter()
            .map(|p| format!("- {}\n", inline_markdown(p, false)))
            .collect(),
        Block::Numbered(items) => items
            .iter()
            .enumerate()
            .map(|(n, p)| format!("{}. {}\n", n + 1, inline_markdown(p, false)))
            .collect(),
        Block::Table(t) => {
            let mut out = format!("| {} |\n", t.head.join(" | "));
            let align: Vec<&str> = t
                .align
                .iter()
                .map(|a| match a {
                    Align::Default => "---",
                    Align::Right => "---:",
                    Align::Center => ":---:",
                })
                .collect();
            out.push_str(&format!("|{}|\n", align.join("|")));
            for row in &t.rows {
                let cells: Vec<String> = row.iter().map(|c| inline_markdown(c, true)).collect();
                out.push_str(&format!("| {} |\n", cells.join(" | ")));
            }
            out
        }
        Block::Shell(lines) => {
            let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
            format!("```sh\n{body}```\n")
        }
        Block::Image { alt, file } => format!("![{alt}]({file})\n"),
    }
}

/// `p` as Markdown; in a table cell every `|` is escaped.
fn inline_markdown(p: &Prose, in_cell: bool) -> String {
    let escape = |s: &str| {
        if in_cell {
            s.replace('|', "\\|")
        } else {
            s.to_string()
        }
    };
    p.0.iter()
        .map(|i| match i {
            Inline::Text(s) => escape(s),
            Inline::Code(s) => format!("`{}`", escape(s)),
            Inline::Strong(p) => format!("**{}**", inline_markdown(p, in_cell)),
            Inline::Em(p) => format!("*{}*", inline_markdown(p, in_cell)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticked_sentences_split_into_text_and_code_and_write_back_unchanged() {
        let p = Prose::new().ticked("dropped: worse than `a-1` and `b|2`.");
        assert_eq!(
            p.0,
            vec![
                Inline::Text("dropped: worse than ".into()),
                Inline::Code("a-1".into()),
                Inline::Text(" and ".into()),
                Inline::Code("b|2".into()),
                Inline::Text(".".into()),
            ]
        );
        assert_eq!(
            inline_markdown(&p, false),
            "dropped: worse than `a-1` and `b|2`."
        );
        assert_eq!(
            inline_markdown(&p, true),
            "dropped: worse than `a-1` and `b\\|2`."
        );
        // An unpaired backtick stays text.
        let odd = Prose::new().ticked("a `b` c `d");
        assert_eq!(inline_markdown(&odd, false), "a `b` c `d");
        assert_eq!(odd.0[3], Inline::Text("`d".into()));
    }

    #[test]
    fn sections_are_blocks_separated_by_blank_lines() {
        let s = DocSection::new(
            "T",
            vec![
                Block::Para(Prose::new().b(Prose::text("Use ").c("x")).t(".")),
                Block::Table(Table {
                    head: vec!["a".into(), "b".into()],
                    align: vec![Align::Right, Align::Center],
                    rows: vec![vec![Prose::text("1"), Prose::new().i(Prose::text("y"))]],
                }),
                Block::Numbered(vec![Prose::text("one"), Prose::text("two")]),
                Block::Shell(vec!["chunksweep report x".into()]),
            ],
        );
        assert_eq!(
            to_markdown(&[s]),
            "## T\n\n**Use `x`**.\n\n| a | b |\n|---:|:---:|\n| 1 | *y* |\n\n1. one\n2. two\n\n\
             ```sh\nchunksweep report x\n```\n"
        );
    }
}
