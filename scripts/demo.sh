#!/usr/bin/env bash
# The main job on a machine with no API key: start the local model servers (the first time this
# installs them: prebuilt wheels and a 94 MB model, nothing compiled), build chunksweep (a debug
# build with the features `cargo test` resolves too, so the README's two commands compile the
# dependencies once, in either order), run the whole pipeline (sweep → selection → judge →
# report) on the sample handbook (the sweep takes a second; the run's time is the model's), and
# stop the servers. Each step prints how long it took. Measured on a fresh clone with empty HOME
# and CARGO_HOME on a nearly idle two-core machine (load average 1.4 to 2), 2026-12-06: servers
# 10 s, build 2 min 56 s, run 6 min 18 s, 9 min 24 s in all (under load average 14 to 17, with an
# older, smaller grid: build 16 min 15 s, run 35 min 22 s). See docs/benchmarks.md.
# Prerequisites: see scripts/local-models.sh (Linux x86-64 with AVX2, Python >= 3.10, libgomp1,
# curl) and the Rust toolchain. Results go to results/<run-id>/; extra arguments go to
# `chunksweep run`.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[demo] %s\n' "$*" >&2; }
since() { # $1 = start (SECONDS); prints the time since then
  local s=$((SECONDS - $1))
  printf '%d min %02d s' $((s / 60)) $((s % 60))
}

step=$SECONDS
scripts/local-models.sh start
trap 'scripts/local-models.sh stop' EXIT
say "model servers up after $(since "$step")"
set -a
# shellcheck disable=SC1091
. .local-models/env
set +a

step=$SECONDS
say "building chunksweep (the first build took 2 min 56 s on 2 nearly idle cores; later ones take seconds)"
cargo build --locked
say "built after $(since "$step")"

step=$SECONDS
say "running the handbook through the local servers (114 chat calls planned: 6 min 18 s on 2 nearly idle cores)"
cargo run --locked --quiet -- run --config datasets/handbook-local.toml "$@"
say "run finished after $(since "$step"); the demo took $(since 0) in all"
