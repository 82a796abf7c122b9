#!/usr/bin/env bash
# The main job on a machine with no API key: start the local model servers (the first time this
# installs them, building llama-cpp-python: 13 min 36 s measured on two cores under load), build
# chunksweep (10 min 54 s the first time; a debug build, the one `cargo test` uses too, so the README's two commands compile the
# dependencies once; the handbook's sweep takes a second either way and the run's time is the
# model's), run the whole pipeline (sweep → selection → judge → report) on the sample handbook,
# and stop the servers.
# Prerequisites: see scripts/local-models.sh (AVX2, Python 3.11, C/C++ compilers, curl) and
# the Rust toolchain. Results go to results/<run-id>/; extra arguments go to `chunksweep run`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/local-models.sh start
trap 'scripts/local-models.sh stop' EXIT
set -a
# shellcheck disable=SC1091
. .local-models/env
set +a
if [[ ! -x "${CARGO_TARGET_DIR:-target}/debug/chunksweep" ]]; then
  echo "[demo] building chunksweep (the first build took 11 minutes on 2 cores; cargo test reuses it)" >&2
fi
echo "[demo] running the handbook through the local servers (about 111 chat calls: took 13 minutes on 2 cores)" >&2
cargo run --locked -- run --config datasets/handbook-local.toml "$@"
