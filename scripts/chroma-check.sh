#!/usr/bin/env bash
# The handbook retrieved by a real vector database: datasets/handbook-chroma.toml sweeps
# `dense` (chunksweep's exact cosine) and `chroma` (a Chroma server's HNSW index, through
# examples/retrievers/chroma_retriever.py) on the same chunks and E5 embeddings, into $1
# (default results/chroma-handbook), and prints the report's comparison of the two: the span
# recall approximate search loses per configuration, with its paired interval and test.
#
# Needs the servers up: scripts/local-models.sh start (embeddings) and scripts/chroma.sh start
# (its .chroma/env names the server and the venv whose python runs the retriever).
#
# Environment:
#   CHUNKSWEEP        the command            default "cargo run --release --locked --"
#   CHROMA_DIR        chroma.sh's state      default <repo>/.chroma
#   EMBED_BASE_URL    the embeddings server  default the config's (127.0.0.1:8092)
#   CHROMA_EF_SEARCH, CHROMA_EF_CONSTRUCTION, CHROMA_MAX_NEIGHBORS   the HNSW settings (Chroma's
#                     defaults 100, 100, 16 when unset; see the retriever)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[chroma-check] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

STATE="${CHROMA_DIR:-$PWD/.chroma}"
OUT="${1:-results/chroma-handbook}"
read -r -a chunksweep <<<"${CHUNKSWEEP:-cargo run --release --locked --}"
[[ -f "$STATE/env" ]] || die "no $STATE/env: start the server with scripts/chroma.sh start"
# shellcheck disable=SC1091
source "$STATE/env"
export CHROMA_URL
extra=()
[[ -n "${EMBED_BASE_URL:-}" ]] && extra+=(--embed-base-url "$EMBED_BASE_URL")

# the config's retriever command starts with "python3": the Chroma venv's comes first
PATH="$(dirname "$CHROMA_PYTHON"):$PATH" "${chunksweep[@]}" sweep \
  --config datasets/handbook-chroma.toml --out "$OUT" "${extra[@]}"
[[ -f "$OUT/retriever_comparison.csv" ]] || die "no $OUT/retriever_comparison.csv"
say "HNSW (Chroma) against exact cosine on the handbook, from $OUT/report.md:"
awk '/^## /{on = ($0 == "## Your retriever against exact cosine")} on' "$OUT/report.md"
