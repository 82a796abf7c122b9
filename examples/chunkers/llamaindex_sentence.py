#!/usr/bin/env python3
"""LlamaIndex's SentenceSplitter as a chunksweep chunker (protocol 1, docs/chunkers.md).

    [[chunkers]]
    name = "li-sentence"
    command = ["python3", "../examples/chunkers/llamaindex_sentence.py"]
    unit = "tokens"    # counts in the grid's tokenizer (cl100k_base, o200k_base); or "characters"

SentenceSplitter keeps sentences whole where it can (NLTK's punkt, whose data llama-index-core
ships, as it ships tiktoken's vocabularies: nothing is downloaded). unit "tokens": a tiktoken
encoding counts; unit "characters": len counts; the tokenizer "words" is refused. Chunks carry
no offsets: chunksweep finds split_text's chunks in the document. Needs requirements.txt beside
this file.
"""
import json
import os
import sys
from importlib.metadata import version


PROTOCOL = {"protocol": "chunksweep-chunker", "version": 1}


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def answer_hello(name, versions):
    """Reads chunksweep's hello line and answers with this chunker's name and versions."""
    hello = json.loads(sys.stdin.buffer.readline() or "null")
    if not isinstance(hello, dict) or {k: hello.get(k) for k in PROTOCOL} != PROTOCOL:
        sys.exit(f"{name}: expected a chunksweep-chunker version 1 hello, got {hello!r}")
    reply({**PROTOCOL, "chunker": name, "versions": versions})


def splitter(size, overlap, unit, tokenizer):
    import llama_index.core
    import tiktoken
    from llama_index.core.node_parser import SentenceSplitter

    if unit == "characters":
        # list: one item per character, so the splitter's length is len.
        return SentenceSplitter(chunk_size=size, chunk_overlap=overlap, tokenizer=list)
    if unit != "tokens" or tokenizer not in ("cl100k_base", "o200k_base"):
        sys.exit(f"llamaindex_sentence: unit {unit!r} with tokenizer {tokenizer!r} is not supported: "
                 "tiktoken counts cl100k_base and o200k_base; for words, declare unit = characters")
    # The vocabularies llama-index-core ships, as its own get_tokenizer() uses them (unless set).
    static = os.path.join(os.path.dirname(llama_index.core.__file__), "_static", "tiktoken_cache")
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", static)
    encoding = tiktoken.get_encoding(tokenizer)
    return SentenceSplitter(chunk_size=size, chunk_overlap=overlap,
                            tokenizer=lambda text: encoding.encode(text, disallowed_special=()))


def main():
    versions = {p: version(p) for p in ("llama-index-core", "nltk", "tiktoken")}  # no import yet
    answer_hello("llamaindex-sentence", versions)
    splitters = {}  # one per (size, overlap, unit, tokenizer)
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        req = json.loads(line)
        key = (req["chunk_size"], req["chunk_overlap"], req["unit"], req.get("tokenizer"))
        if key not in splitters:
            splitters[key] = splitter(*key)
        chunks = splitters[key].split_text(req["text"])
        reply({"id": req["id"], "chunks": [{"text": c} for c in chunks if c.strip()]})


if __name__ == "__main__":
    main()
