//! The report's typed sections ([`crate::report::doc`]) as HTML: headings, paragraphs, lists,
//! tables (numeric columns right-aligned), shell commands; a figure's file link is left out (the
//! page shows the figure inline). Every text is escaped by maud.

use maud::{Markup, html};

use crate::report::doc::{Align, Block, DocSection, Inline, Prose};

/// A section: its heading and blocks.
pub fn section(s: &DocSection) -> Markup {
    html! {
        h2 { (s.title) }
        @for b in &s.blocks { (block(b)) }
    }
}

fn block(b: &Block) -> Markup {
    html! {
        @match b {
            Block::Subheading(t) => h3 { (t) },
            Block::Para(p) => p { (prose(p)) },
            Block::List(items) => ul { @for i in items { li { (prose(i)) } } },
            Block::Numbered(items) => ol { @for i in items { li { (prose(i)) } } },
            Block::Table(t) => table {
                thead { tr {
                    @for (h, a) in t.head.iter().zip(&t.align) { th style=[style(*a)] { (h) } }
                } }
                tbody {
                    @for row in &t.rows { tr {
                        @for (c, a) in row.iter().zip(&t.align) { td style=[style(*a)] { (prose(c)) } }
                    } }
                }
            },
            Block::Shell(lines) => pre { code class="language-sh" {
                @for l in lines { (l) "\n" }
            } },
            Block::Image { .. } => {},
        }
    }
}

fn style(a: Align) -> Option<&'static str> {
    match a {
        Align::Default => None,
        Align::Right => Some("text-align: right"),
        Align::Center => Some("text-align: center"),
    }
}

fn prose(p: &Prose) -> Markup {
    html! {
        @for i in &p.0 {
            @match i {
                Inline::Text(t) => (t),
                Inline::Code(t) => code { (t) },
                Inline::Strong(p) => strong { (prose(p)) },
                Inline::Em(p) => em { (prose(p)) },
            }
        }
    }
}
