#!/usr/bin/env python3
"""LangChain's RecursiveCharacterTextSplitter as a chunksweep chunker (protocol 1 of
docs/chunkers.md).

    [[chunkers]]
    name = "lc-recursive"
    command = ["python3", "../examples/chunkers/langchain_recursive.py"]
    unit = "tokens"    # counts in the grid's tokenizer (cl100k_base, o200k_base); or "characters"

unit "tokens": RecursiveCharacterTextSplitter.from_tiktoken_encoder(encoding_name=<tokenizer>);
unit "characters": the splitter's default length (len). The tokenizer "words" is refused.
Chunks carry no offsets: chunksweep finds split_text's chunks in the document (LangChain's own
start_index is -1 for many chunks). Needs requirements.txt beside this file. tiktoken downloads
its vocabulary on first use; offline, set TIKTOKEN_CACHE_DIR to a folder holding it
(scripts/external-chunkers.sh points it at the copy llama-index-core ships).
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


def splitter(size, overlap, unit, tokenizer):
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    if unit == "characters":
        return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
    if unit != "tokens" or tokenizer not in ("cl100k_base", "o200k_base"):
        sys.exit(f"langchain_recursive: unit {unit!r} with tokenizer {tokenizer!r} is not supported: "
                 "tiktoken counts cl100k_base and o200k_base; for words, declare unit = characters")
    # disallowed_special=(): text such as "<|endoftext|>" is counted as plain text, not refused.
    return RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=tokenizer, chunk_size=size, chunk_overlap=overlap, disallowed_special=())


def main():
    versions = {p: version(p) for p in ("langchain-text-splitters", "tiktoken")}  # no import yet
    answer_hello("langchain-recursive", versions)
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
