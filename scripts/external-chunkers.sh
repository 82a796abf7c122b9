#!/usr/bin/env bash
# Sweep the sample handbook with two chunkers chunksweep does not ship, LangChain's
# RecursiveCharacterTextSplitter and Chonkie's RecursiveChunker (examples/chunkers/, protocol in
# docs/chunkers.md), beside its own recursive and markdown strategies:
# datasets/handbook-external.toml, into $1 (default results/external-chunkers).
#
# Creates a venv (or reuses it) with examples/chunkers/requirements.txt, puts its bin first on
# PATH (the config's chunker commands start with "python3"), and runs `chunksweep sweep`.
# tiktoken downloads its vocabularies on first use, which an offline machine cannot do: unless
# TIKTOKEN_CACHE_DIR is set, it is pointed at the copy llama-index-core ships in the venv
# (tiktoken checks the files' SHA-256). Prerequisites: Python 3.10 or newer with venv and pip, and
# PyPI within reach the first time; the Rust toolchain unless CHUNKSWEEP names a built binary.
#
# Environment:
#   CHUNKSWEEP_CHUNKERS_VENV  the venv      default ~/.cache/chunksweep-chunkers-venv
#   CHUNKSWEEP                the command   default "cargo run --release --locked --"
#   PYTHON                    the interpreter that creates the venv   default python3
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[external-chunkers] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

VENV="${CHUNKSWEEP_CHUNKERS_VENV:-$HOME/.cache/chunksweep-chunkers-venv}"
OUT="${1:-results/external-chunkers}"
CONFIG=datasets/handbook-external.toml
REQUIREMENTS=examples/chunkers/requirements.txt
read -r -a chunksweep <<<"${CHUNKSWEEP:-cargo run --release --locked --}"

if ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
  python="${PYTHON:-python3}"
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    die "$python is older than Python 3.10 (set PYTHON to a newer one)"
  say "creating the venv $VENV with $python"
  rm -rf "$VENV"
  "$python" -m venv "$VENV"
fi
# requirements.txt as last installed is kept in the venv: pip runs again only when it changed.
if cmp -s "$REQUIREMENTS" "$VENV/installed-requirements.txt"; then
  say "venv $VENV holds $REQUIREMENTS already"
else
  say "installing $REQUIREMENTS into $VENV (about 2 min the first time)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
  cp "$REQUIREMENTS" "$VENV/installed-requirements.txt"
fi
export PATH="$VENV/bin:$PATH"
say "python3 on PATH: $(command -v python3) ($(python3 --version))"

if [[ -z "${TIKTOKEN_CACHE_DIR:-}" ]]; then
  TIKTOKEN_CACHE_DIR="$(python3 -c 'import importlib.metadata as m
print(m.distribution("llama-index-core").locate_file("llama_index/core/_static/tiktoken_cache"))')"
  [[ -d "$TIKTOKEN_CACHE_DIR" ]] || die "llama-index-core's tiktoken vocabularies are missing: $TIKTOKEN_CACHE_DIR"
  export TIKTOKEN_CACHE_DIR
fi
say "tiktoken vocabularies: TIKTOKEN_CACHE_DIR=$TIKTOKEN_CACHE_DIR"

say "running: ${chunksweep[*]} sweep --config $CONFIG --out $OUT"
start=$SECONDS
"${chunksweep[@]}" sweep --config "$CONFIG" --out "$OUT"
say "sweep finished after $((SECONDS - start)) s: $OUT"
