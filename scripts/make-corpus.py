#!/usr/bin/env python3
"""Writes a benchmark corpus of about --mb megabytes of distinct text, from Chroma's data.

    python3 scripts/make-corpus.py --mb 1000 --out /tmp/corpus-1000mb

OUT/corpora/ holds datasets/chroma-general's three documents unchanged (the 276 questions of
OUT/questions_df.csv point at them), then copies `copy<NNNNN>-<name>` until the corpus reaches
--mb * 10^6 bytes. No copy repeats another: in copy c, each distinct word of four letters or more
gets, with probability 1/2 decided by a hash of (c, word), a two-letter suffix drawn from the same
hash ("settings" -> "settingsqk"). Words keep their places, so the Markdown structure and the
length of each copy stay those of the original, while the vocabulary, every BM25 posting list
and every ranking differ from copy to copy (the documents' texts are all different, as a real
corpus's are). The same --mb always writes the same bytes.
"""
import argparse
import hashlib
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "datasets" / "chroma-general"
WORD = re.compile(r"([A-Za-z]{4,})")
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def mutation(copy, words):
    """For copy `copy`, the suffixed form of each word in `words` that gets one."""
    out = {}
    for w in words:
        h = hashlib.blake2b(f"{copy}\0{w}".encode(), digest_size=4).digest()
        if h[0] & 1:
            out[w] = w + LETTERS[h[1] % 26] + LETTERS[h[2] % 26]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, required=True, help="size in MB (10^6 bytes)")
    ap.add_argument("--out", type=Path, required=True, help="folder to write (replaced)")
    args = ap.parse_args()
    target = int(args.mb * 1_000_000)
    if args.out.exists():
        shutil.rmtree(args.out)
    corpora = args.out / "corpora"
    corpora.mkdir(parents=True)
    files = sorted((SOURCE / "corpora").iterdir())
    texts = [(f.name, f.read_text(encoding="utf-8")) for f in files]
    parts = [(name, WORD.split(text)) for name, text in texts]
    vocab = sorted({p for _, ps in parts for p in ps[1::2]})
    total = 0
    for name, text in texts:
        total += (corpora / name).write_bytes(text.encode()) or len(text.encode())
    copy = 1
    while total < target:
        m = mutation(copy, vocab)
        for name, ps in parts:
            # split() with a group alternates text and words: words at odd positions
            out = "".join(m.get(p, p) if i % 2 else p for i, p in enumerate(ps))
            data = out.encode()
            (corpora / f"copy{copy:05}-{name}").write_bytes(data)
            total += len(data)
        copy += 1
    shutil.copy(SOURCE / "questions_df.csv", args.out / "questions_df.csv")
    n = len(list(corpora.iterdir()))
    print(f"{args.out}: {n} documents, {total} bytes")


if __name__ == "__main__":
    main()
