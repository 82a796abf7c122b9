#!/usr/bin/env python3
"""Chonkie's RecursiveChunker as a chunksweep chunker (protocol 1, docs/chunkers.md).

    [[chunkers]]
    name = "chonkie-recursive"
    command = ["python3", "../examples/chunkers/chonkie_chunker.py"]
    unit = "tokens"    # counts in the grid's tokenizer (cl100k_base, o200k_base); or "characters"

RecursiveChunker splits on paragraphs, then sentences, then words, and has no overlap: it ignores
chunk_overlap (and says so on stderr). Chunks carry Chonkie's start_index/end_index as offsets.
Not TokenChunker: it decodes token windows, so a character cut between two windows comes back as
U+FFFD and the offsets of the chunks after it drift (chunksweep stops at the mismatch).
Token counts come from a tiktoken encoding handed to Chonkie (Chonkie's own loader for
"cl100k_base" fetches a tokenizer from the Hugging Face hub); the tokenizer "words" is refused.
Needs requirements.txt beside this file. tiktoken downloads its vocabulary on first use; offline,
set TIKTOKEN_CACHE_DIR to a folder holding it (scripts/external-chunkers.sh points it at the copy
llama-index-core ships).
"""
import json
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


def chunker(size, overlap, unit, tokenizer):
    import chonkie
    import tiktoken

    if unit == "characters":
        counter = "character"
    elif unit == "tokens" and tokenizer in ("cl100k_base", "o200k_base"):
        counter = tiktoken.get_encoding(tokenizer)
    else:
        sys.exit(f"chonkie_chunker: unit {unit!r} with tokenizer {tokenizer!r} is not supported: "
                 "tiktoken counts cl100k_base and o200k_base; for words, declare unit = characters")
    if overlap:
        print(f"chonkie_chunker: RecursiveChunker has no overlap: chunk_overlap {overlap} ignored",
              file=sys.stderr)
    return chonkie.RecursiveChunker(tokenizer=counter, chunk_size=size)


def main():
    versions = {p: version(p) for p in ("chonkie", "chonkie-core", "tiktoken")}  # no import yet
    answer_hello("chonkie-recursive", versions)
    chunkers = {}  # one per (size, overlap, unit, tokenizer)
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        req = json.loads(line)
        key = (req["chunk_size"], req["chunk_overlap"], req["unit"], req.get("tokenizer"))
        if key not in chunkers:
            chunkers[key] = chunker(*key)
        chunks = chunkers[key].chunk(req["text"])
        chunks = [{"text": c.text, "start": c.start_index, "end": c.end_index} for c in chunks]
        reply({"id": req["id"], "chunks": [c for c in chunks if c["text"].strip()]})


if __name__ == "__main__":
    main()
