"""Baseline for the sweep benchmark: the algorithm of seed 000's harness in plain Python.

Whitespace-word windows, a dictionary BM25 that scores every chunk for every question, and span
recall@k by normalised substring matching, as the seed does. It is what teams run today and is
quadratic (every question scores every chunk), so the benchmark runs it on small corpora only.
This is a baseline for timing, not part of chunksweep.

Usage: python3 baseline_seed000.py CORPUS_DIR QUESTIONS_DF_CSV --sizes 64,128 --overlap 0.15 --k 5
    [--per-question FILE] [--ties first]
Prints one JSON object per size: size, chunks, recall, seconds.

--per-question FILE writes one JSON object per size and question (size, question index, the
top-k chunk ids `<doc>#<ordinal>` best first, their scores, and hit: whether at least one
evidence span is inside a top-k chunk), for checking chunksweep's `seed` analyzer against this
harness question by question. --ties first orders equal scores by chunk order (chunksweep's
tie-break) instead of the seed's reverse chunk order.
"""
import argparse
import csv
import json
import math
import os
import re
import time
from collections import Counter


def words(text):
    return re.findall(r"[a-z0-9_.~/-]+", text.lower())


def chunk(text, size, overlap):
    toks = text.split()
    step = max(1, size - overlap)
    return [" ".join(toks[i:i + size]) for i in range(0, max(1, len(toks) - overlap), step)]


def bm25_index(chunks, k1=1.2, b=0.75, ties="last"):
    docs = [Counter(words(c)) for c in chunks]
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / n
    df = Counter(t for d in docs for t in d)

    def score(query):
        out = []
        for i, d in enumerate(docs):
            dl = sum(d.values())
            s = 0.0
            for t in set(words(query)):
                if t in d:
                    idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                    s += idf * d[t] * (k1 + 1) / (d[t] + k1 * (1 - b + b * dl / avg))
            out.append((s, i))
        if ties == "first":
            return sorted(out, key=lambda x: (-x[0], x[1]))
        return sorted(out, reverse=True)

    return score


def norm(s):
    return " ".join(words(s))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("questions")
    ap.add_argument("--sizes", default="64,128,256,512,1024")
    ap.add_argument("--overlap", type=float, default=0.15)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--per-question")
    ap.add_argument("--ties", choices=["last", "first"], default="last")
    args = ap.parse_args()
    detail = open(args.per_question, "w", encoding="utf-8") if args.per_question else None
    corpus = {}
    for root, _, files in os.walk(args.corpus):
        for f in sorted(files):
            if f.endswith((".md", ".markdown", ".txt", ".rst")):
                path = os.path.join(root, f)
                corpus[os.path.relpath(path, args.corpus)] = open(path, encoding="utf-8").read()
    with open(args.questions, encoding="utf-8") as fh:
        golden = [(r["question"], [x["content"] for x in json.loads(r["references"])])
                  for r in csv.DictReader(fh)]
    for size in (int(s) for s in args.sizes.split(",")):
        started = time.perf_counter()
        overlap = math.floor(args.overlap * size)
        chunks, ids = [], []
        for doc, text in corpus.items():
            for ordinal, c in enumerate(chunk(text, size, overlap)):
                chunks.append(c)
                ids.append(f"{doc}#{ordinal}")
        rank = bm25_index(chunks, ties=args.ties)
        recall = 0.0
        for q, (question, evidence) in enumerate(golden):
            ranked = rank(question)[:args.k]
            top = [norm(chunks[i]) for _, i in ranked]
            found = sum(any(norm(e) in c for c in top) for e in evidence)
            recall += found / len(evidence)
            if detail:
                detail.write(json.dumps({"size": size, "question": q,
                                         "top": [ids[i] for _, i in ranked],
                                         "scores": [s for s, _ in ranked],
                                         "hit": found > 0}) + "\n")
        seconds = time.perf_counter() - started
        print(json.dumps({"size": size, "chunks": len(chunks),
                          "recall": recall / len(golden), "seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
