#!/usr/bin/env python3
"""Fixed character windows: a dependency-free chunksweep chunker (protocol 1, docs/chunkers.md).

Windows of chunk_size characters, each starting chunk_size - chunk_overlap characters after the
last; windows of whitespace only are left out. It counts characters only, so declare it with
unit = "characters" (any other unit is refused):

    [[chunkers]]
    name = "fixed-chars"
    command = ["python3", "../examples/chunkers/fixed_chars.py"]
    unit = "characters"

Chunks carry start/end offsets. Flags, for testing how chunksweep places chunks:
  --no-offsets     leave start/end out (chunksweep searches for each chunk);
  --prepend-title  put "<document id>\\n\\n" before each chunk's text, without offsets
                   (chunksweep finds the added prefix).
"""
import json
import sys


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


def main():
    flags = set(sys.argv[1:])
    if flags - {"--no-offsets", "--prepend-title"}:
        sys.exit(f"fixed_chars: unknown arguments {sorted(flags)}")
    answer_hello("fixed-chars", {"fixed_chars": "1"})
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        req = json.loads(line)
        if req["unit"] != "characters":
            sys.exit(f"fixed_chars: counts characters only, got unit {req['unit']!r}: "
                     "declare it with unit = characters")
        text, size, overlap = req["text"], req["chunk_size"], req["chunk_overlap"]
        if size <= 0 or not 0 <= overlap < size:
            sys.exit(f"fixed_chars: needs 0 <= chunk_overlap < chunk_size, got {overlap}, {size}")
        chunks = []
        for start in range(0, len(text), size - overlap):
            end = min(start + size, len(text))
            if text[start:end].strip():
                if "--prepend-title" in flags:
                    chunks.append({"text": f"{req['id']}\n\n{text[start:end]}"})
                elif "--no-offsets" in flags:
                    chunks.append({"text": text[start:end]})
                else:
                    chunks.append({"text": text[start:end], "start": start, "end": end})
            if end == len(text):
                break
        reply({"id": req["id"], "chunks": chunks})


if __name__ == "__main__":
    main()
