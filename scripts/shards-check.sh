#!/usr/bin/env bash
# The shape of examples/shards/github-actions.yml on one machine: the handbook grid
# (datasets/handbook.toml, 20 configurations) swept as three shards by three separate processes,
# each given its index as a matrix job is (CHUNKSWEEP_SHARD_INDEX, `--shard env/3`), merged with
# `chunksweep merge`, and compared with the same grid swept whole: sweep.csv,
# sweep_questions.csv and selection.csv byte for byte, and every other file byte for byte once
# the run's folder and command line are set aside (manifest.json: also its start and times).
# Work goes to $1 (default: a new temporary folder). Exits 1 on any difference.
#
# Environment:
#   CHUNKSWEEP  the command   default "cargo run --release --locked --"
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[shards] %s\n' "$*"; }
read -r -a chunksweep <<<"${CHUNKSWEEP:-cargo run --release --locked --}"
work="${1:-$(mktemp -d)}"
config=datasets/handbook.toml

say "whole sweep into $work/whole/run"
"${chunksweep[@]}" sweep --config "$config" --out "$work/whole/run" --quiet
pids=()
for i in 0 1 2; do
  CHUNKSWEEP_SHARD_INDEX=$i "${chunksweep[@]}" sweep --config "$config" --shard env/3 \
    --out "$work/shards" --quiet &
  pids+=("$!")
done
for pid in "${pids[@]}"; do wait "$pid"; done
for i in 0 1 2; do
  say "shard $i/3: $(python3 -c 'import json,sys; print(", ".join(json.load(open(sys.argv[1]))["configs"]))' "$work/shards/shard-$i-of-3/shard.json")"
done
"${chunksweep[@]}" merge "$work"/shards/shard-*-of-3 --out "$work/merged/run" | grep -E "^(3 shards merged|pick): "

python3 - "$work/whole/run" "$work/merged/run" <<'PY'
import json, sys
from pathlib import Path
whole, merged = Path(sys.argv[1]), Path(sys.argv[2])
names = lambda d: sorted(p.name for p in d.iterdir() if p.name != ".chunksweep.lock")
assert names(whole) == names(merged), (names(whole), names(merged))
def reproduce(d):
    md = (d / "report.md").read_text()
    return md.split("## Reproduce\n\n```sh\n", 1)[1].splitlines()[0]
for name in names(whole):
    a, b = (whole / name).read_text(), (merged / name).read_text()
    if name == "manifest.json":
        a, b = json.loads(a), json.loads(b)
        for m in (a, b):
            for key in ("command", "started_at", "wall_time_s", "phase_time_ms", "config_time_ms"):
                del m[key]
            del m["config"]["out"]
    elif name.endswith(".csv"):
        pass
    else:
        a = a.replace(reproduce(whole), reproduce(merged)).replace(str(whole), str(merged))
    assert a == b, f"{name} differs"
    print(f"[shards] {name}: same")
PY
say "three shards merged equal the whole sweep"
