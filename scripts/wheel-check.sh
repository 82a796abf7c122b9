#!/usr/bin/env bash
# Checks the Python packaging (pyproject.toml): builds chunksweep's wheel with maturin, installs it
# into a fresh venv, runs `chunksweep --version` from there, and sweeps the handbook with the
# dependency-free example chunker (examples/chunkers/fixed-chars.toml). Prints the wheel's name,
# size and files and the sweep's last lines. The wheel must hold the binary and metadata only.
#
# maturin (pinned below) lives in a venv under ~/.cache, kept between runs; the venv the wheel is
# installed into is made anew every run in a temporary folder, removed at the end. A release build:
# several minutes on two cores the first time. Prerequisites: the Rust toolchain, Python 3.10 or
# newer with venv and pip, PyPI within reach the first time.
#
# Environment:
#   CARGO_TARGET_DIR  cargo's target folder   default ~/.cache/chunksweep-target (as .ci/run's)
#   PYTHON            the interpreter of both venvs   default python3
set -euo pipefail
cd "$(dirname "$0")/.."

MATURIN_VERSION=1.16.0
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/chunksweep-target}"
MATURIN_VENV="$HOME/.cache/chunksweep-maturin-venv"
python="${PYTHON:-python3}"

say() { printf '[wheel-check] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/chunksweep-wheel-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if [[ "$("$MATURIN_VENV/bin/maturin" --version 2>/dev/null)" != "maturin $MATURIN_VERSION" ]]; then
  say "installing maturin $MATURIN_VERSION into $MATURIN_VENV"
  rm -rf "$MATURIN_VENV"
  "$python" -m venv "$MATURIN_VENV"
  "$MATURIN_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION"
fi

say "building the wheel (maturin $MATURIN_VERSION, release, CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
start=$SECONDS
"$MATURIN_VENV/bin/maturin" build --release --locked --out "$work/wheels"
wheels=("$work"/wheels/chunksweep-*.whl)
[[ ${#wheels[@]} -eq 1 && -f "${wheels[0]}" ]] || die "expected one wheel in $work/wheels, found: ${wheels[*]}"
wheel="${wheels[0]}"
say "built after $((SECONDS - start)) s: $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB"

# The wheel's files: the binary (chunksweep-<version>.data/scripts/chunksweep) and its metadata.
"$python" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for n in names:
    print(f"  {n}")
odd = [n for n in names if ".dist-info/" not in n and not n.endswith(".data/scripts/chunksweep")]
if odd or not any(n.endswith(".data/scripts/chunksweep") for n in names):
    sys.exit(f"the wheel should hold the chunksweep binary and metadata only; unexpected: {odd}")
PY

say "installing it into a fresh venv: $work/venv"
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel"
export PATH="$work/venv/bin:$PATH"
[[ "$(command -v chunksweep)" == "$work/venv/bin/chunksweep" ]] ||
  die "chunksweep on PATH is $(command -v chunksweep), not the venv's"
say "$(command -v chunksweep): $(chunksweep --version)"

# From the temporary folder: chunksweep keeps its chunker cache in the working directory's
# results/, so each run starts with none and fixed_chars.py chunks every document.
say "sweeping the handbook with examples/chunkers/fixed-chars.toml (recursive and fixed_chars.py)"
config="$PWD/examples/chunkers/fixed-chars.toml"
if ! (cd "$work" && chunksweep sweep --config "$config" --out "$work/sweep") >"$work/sweep.log" 2>&1; then
  tail -n 40 "$work/sweep.log" >&2
  die "the sweep failed (its last lines above)"
fi
tail -n 15 "$work/sweep.log"
[[ -f "$work/sweep/chunkers.csv" ]] || die "the sweep wrote no chunkers.csv"
say "chunkers.csv:"
cat "$work/sweep/chunkers.csv"
[[ "$(grep -c '^fixed-chars-' "$work/sweep/chunkers.csv")" -eq 3 ]] ||
  die "chunkers.csv should have a row for each of fixed-chars' 3 sizes"
say "wheel check passed: $(basename "$wheel") installs chunksweep on a venv's PATH and sweeps with an external chunker"
