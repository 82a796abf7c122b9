#!/usr/bin/env bash
# The main job on a machine with no API key: start the local model servers (the first time this
# installs them, building llama-cpp-python: about 15 minutes on two cores), run the whole
# pipeline (sweep → selection → judge → report) on the sample handbook, and stop the servers.
# Results go to results/<run-id>/; extra arguments are passed to `chunksweep run`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/local-models.sh start
trap 'scripts/local-models.sh stop' EXIT
set -a
# shellcheck disable=SC1091
. .local-models/env
set +a
cargo run --release --locked -- run --config datasets/handbook-local.toml "$@"
