#!/usr/bin/env bash
# The main job on a machine with no API key: start the local model servers (the first time this
# installs them, building llama-cpp-python: 15 min 48 s measured on two cores), build chunksweep
# (the first release build: 9 min 08 s measured), run the whole pipeline (sweep → selection →
# judge → report, about 3.5 minutes) on the sample handbook, and stop the servers.
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
if [[ ! -x "${CARGO_TARGET_DIR:-target}/release/chunksweep" ]]; then
  echo "[demo] building chunksweep (release; the first build takes about 9 minutes on 2 cores)" >&2
fi
echo "[demo] running the handbook through the local servers (about 3.5 minutes)" >&2
cargo run --release --locked -- run --config datasets/handbook-local.toml "$@"
