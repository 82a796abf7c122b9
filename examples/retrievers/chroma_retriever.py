#!/usr/bin/env python3
"""A Chroma server's HNSW index as a chunksweep retriever (protocol chunksweep-retriever 1,
docs/retrievers.md).

    [[retrievers]]
    name = "chroma"
    command = ["python3", "../examples/retrievers/chroma_retriever.py"]

Each configuration's chunks go into a collection of their own (named after the configuration,
replaced when indexed again), with the vectors chunksweep embedded, cosine space; each question
is answered by the collection's nearest neighbours of its vector (Chroma's approximate HNSW
search), scored 1 - cosine distance, so the scores are cosine similarities as `dense`'s.

Needs the `chromadb` package (scripts/chroma.sh installs it in its own venv and starts a server;
run this script with that venv's python) and a server at CHROMA_URL (default
http://127.0.0.1:8094). The index settings are Chroma's defaults unless set:
CHROMA_EF_SEARCH (100), CHROMA_EF_CONSTRUCTION (100), CHROMA_MAX_NEIGHBORS (16); they are
reported in the hello, so a change is a new retriever identity (nothing stale from the cache).
When the server cannot be reached, the reply is an error naming it (chunksweep stops; answered
configurations stay cached).
"""
import json
import os
import re
import sys
from importlib.metadata import version
from urllib.parse import urlparse

PROTOCOL = {"protocol": "chunksweep-retriever", "version": 1}
URL = os.environ.get("CHROMA_URL", "http://127.0.0.1:8094")
HNSW = {
    "space": "cosine",
    "ef_search": int(os.environ.get("CHROMA_EF_SEARCH", "100")),
    "ef_construction": int(os.environ.get("CHROMA_EF_CONSTRUCTION", "100")),
    "max_neighbors": int(os.environ.get("CHROMA_MAX_NEIGHBORS", "16")),
}
BATCH = 1000


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def collection_name(config):
    """A Chroma collection name (3-512 of [a-zA-Z0-9._-], alphanumeric at both ends)."""
    name = re.sub(r"[^a-zA-Z0-9._-]", "_", "cs-" + config)
    return name[:500] + "-x"


NO_VECTORS = ("chroma_retriever.py searches the vectors chunksweep sends, and this run sends none: "
              "set an embeddings model ([embed] model, --embed-model or $CHUNKSWEEP_EMBED_MODEL)")


def main():
    hello = json.loads(sys.stdin.readline() or "null")
    if not isinstance(hello, dict) or {k: hello.get(k) for k in PROTOCOL} != PROTOCOL:
        sys.exit(f"chroma_retriever: expected a chunksweep-retriever version 1 hello, got {hello!r}")
    versions = {"chromadb": version("chromadb")}
    versions.update({f"hnsw:{k}": str(v) for k, v in HNSW.items()})
    reply({**PROTOCOL, "retriever": "chroma-hnsw", "versions": versions, "scores": "raw"})

    import chromadb  # after the hello: importing takes a second or two

    url = urlparse(URL)
    client = None
    collections = {}
    for line in sys.stdin:
        req = json.loads(line)
        if any("vector" not in c for c in req.get("chunks", [req])):
            reply({"op": "error", "message": NO_VECTORS})
            continue
        try:
            if client is None:
                client = chromadb.HttpClient(host=url.hostname, port=url.port or 8000)
            if req["op"] == "index":
                name = collection_name(req["config"])
                try:
                    client.delete_collection(name)
                except Exception:  # not there yet
                    pass
                col = client.create_collection(
                    name, configuration={"hnsw": HNSW}, embedding_function=None)
                chunks = req["chunks"]
                for at in range(0, len(chunks), BATCH):
                    part = chunks[at:at + BATCH]
                    col.add(ids=[str(c["id"]) for c in part],
                            embeddings=[c["vector"] for c in part])
                collections[req["config"]] = col
                reply({"op": "indexed", "config": req["config"], "chunks": col.count()})
            elif req["op"] == "query":
                col = collections[req["config"]]
                found = col.query(query_embeddings=[req["vector"]],
                                  n_results=req["top_n"], include=["distances"])
                hits = [{"index": int(i), "score": 1.0 - float(d)}
                        for i, d in zip(found["ids"][0], found["distances"][0])]
                reply({"op": "hits", "id": req["id"], "hits": hits})
        except Exception as e:  # the server down or gone: say so, chunksweep stops
            reply({"op": "error", "message": f"Chroma at {URL}: {type(e).__name__}: {e}"})


if __name__ == "__main__":
    main()
