"""Baseline for the sweep benchmark: the algorithm of seed 000's harness in plain Python.

Whitespace-word windows, a dictionary BM25 that scores every chunk for every question, and span
recall@k by normalised substring matching, as the seed does. It is what teams run today and is
quadratic (every question scores every chunk), so the benchmark runs it on small corpora only.
This is a baseline for timing, not part of chunksweep.

Usage: python3 baseline_seed000.py CORPUS_DIR QUESTIONS_DF_CSV --sizes 64,128 --overlap 0.15 --k 5
Prints one JSON object per size: size, chunks, recall, seconds.
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


def bm25_index(chunks, k1=1.2, b=0.75):
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
        return [i for s, i in sorted(out, reverse=True)]

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
    args = ap.parse_args()
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
        chunks = [c for text in corpus.values() for c in chunk(text, size, overlap)]
        rank = bm25_index(chunks)
        recall = 0.0
        for question, evidence in golden:
            top = [norm(chunks[i]) for i in rank(question)[:args.k]]
            found = sum(any(norm(e) in c for c in top) for e in evidence)
            recall += found / len(evidence)
        seconds = time.perf_counter() - started
        print(json.dumps({"size": size, "chunks": len(chunks),
                          "recall": recall / len(golden), "seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
