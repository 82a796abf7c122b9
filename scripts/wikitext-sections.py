#!/usr/bin/env python3
"""Splits datasets/chroma-general/corpora/wikitexts.md into one Markdown file per article.

    python3 scripts/wikitext-sections.py

writes datasets/wikitext-sections/articles/NN-<title>.md (the folder is emptied first; the
corpus is that folder, so datasets/wikitext-sections/SOURCE.md is not read as a document). wikitexts.md is WikiText-103 text: a title line ` = Title = `, section lines
` = = Section = = ` and subsection lines ` = = = Subsection = = = `, each with spaces around the
`=` signs, and no blank lines. Here an article starts at each title line; title, section and
subsection lines become `#`, `##` and `###` headings (their text stripped of the surrounding
spaces); every other line is copied unchanged, WikiText's tokenisation included (` @-@ `,
` @,@ `, ` @.@ `, `<unk>`, spaces around punctuation).

One exception: in the 2011–12 Columbus Blue Jackets article, the legend of the two statistics
tables ("Pos = Position ; GP = Games played in ; ...") was broken by WikiText's line splitting
into lines such as ` = Position ; GP = ` that look like titles. A `=` line whose text contains
` ; ` is therefore not a heading and is copied unchanged (7 lines).

The output depends only on wikitexts.md: running the script twice writes the same bytes.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "datasets" / "chroma-general" / "corpora" / "wikitexts.md"
OUT = ROOT / "datasets" / "wikitext-sections" / "articles"
HEADING = re.compile(r"^ (?P<marks>(= )+)(?P<text>.*?)( =)+ $")


def heading(line):
    """The Markdown heading for a WikiText heading line, or None for any other line."""
    m = HEADING.match(line)
    if not m or " ; " in m.group("text"):
        return None
    return "#" * m.group("marks").count("=") + " " + m.group("text")


def slug(title):
    """A file-name form of a title: lower-case ASCII letters and digits joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def articles(lines):
    """The articles of `lines` as (title, Markdown lines), in their order."""
    out = []
    for line in lines:
        h = heading(line)
        if h is not None and h.startswith("# "):
            out.append((h[2:], [h]))
        elif out:
            out[-1][1].append(h if h is not None else line)
        else:
            raise SystemExit(f"{SOURCE}: text before the first title line: {line[:60]!r}")
    return out


def main():
    lines = SOURCE.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    found = articles(lines)
    for n, (title, body) in enumerate(found, start=1):
        path = OUT / f"{n:02d}-{slug(title)}.md"
        path.write_text("\n".join(body) + "\n", encoding="utf-8")
        print(f"{path.relative_to(ROOT)}: {len(body)} lines")
    print(f"{len(found)} articles from {SOURCE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
