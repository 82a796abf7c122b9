#!/usr/bin/env python3
"""Exact cosine over the vectors chunksweep sends: the smallest chunksweep retriever
(protocol chunksweep-retriever 1, docs/retrievers.md), in plain Python.

    [[retrievers]]
    name = "cosine"
    command = ["python3", "../examples/retrievers/cosine.py"]

It ranks as chunksweep's own `dense` does (equal scores: lower chunk index first), so a sweep
with `--retrievers dense,cosine` gives both the same metrics. Copy it to put your own engine
behind the same metrics: replace `index` and `query`.
"""
import json
import math
import sys

PROTOCOL = {"protocol": "chunksweep-retriever", "version": 1}
NO_VECTORS = ("cosine.py ranks by the vectors chunksweep sends, and this run sends none: "
              "set an embeddings model ([embed] model, --embed-model or $CHUNKSWEEP_EMBED_MODEL)")


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()  # one line per reply, flushed: chunksweep waits for each


def unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v] if n > 0 else v


def main():
    hello = json.loads(sys.stdin.readline() or "null")
    if not isinstance(hello, dict) or {k: hello.get(k) for k in PROTOCOL} != PROTOCOL:
        sys.exit(f"cosine.py: expected a chunksweep-retriever version 1 hello, got {hello!r}")
    reply({**PROTOCOL, "retriever": "exact-cosine", "versions": {"cosine.py": "1"},
           "scores": "raw"})
    indexes = {}  # configuration id -> unit vectors in chunk order
    for line in sys.stdin:
        req = json.loads(line)
        if any("vector" not in c for c in req.get("chunks", [req])):
            reply({"op": "error", "message": NO_VECTORS})
            continue
        if req["op"] == "index":
            indexes[req["config"]] = [unit(c["vector"]) for c in req["chunks"]]
            reply({"op": "indexed", "config": req["config"], "chunks": len(req["chunks"])})
        elif req["op"] == "query":
            q = unit(req["vector"])
            scores = [sum(a * b for a, b in zip(q, v)) for v in indexes[req["config"]]]
            best = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[: req["top_n"]]
            reply({"op": "hits", "id": req["id"],
                   "hits": [{"index": i, "score": scores[i]} for i in best]})


if __name__ == "__main__":
    main()
