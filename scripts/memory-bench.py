#!/usr/bin/env python3
"""Peak memory and time of the 15-configuration decision sweep, for two chunksweep binaries side
by side, at several corpus sizes (made by scripts/make-corpus.py: distinct text, not copies).

    python3 scripts/memory-bench.py --old /tmp/chunksweep-e8d965c --new target/release/chunksweep \
        --mb 10,100,1000 --work /tmp/memory-bench [--changed mrr,reciprocal_rank]

The sweep: fixed, recursive and markdown at 64, 128, 256, 512 and 1,024 tokens (cl100k_base),
BM25, k = 5 and budgets of 1,000, 2,000 and 4,000 tokens, 276 questions of Chroma's data. Each
binary sweeps each corpus as its own process under /usr/bin/time -v: wall time, CPU time (user
+ system) and peak resident memory (maximum RSS). Sizes run from the smallest up; at each size
the old binary runs first, then the new one (one process at a time). The two runs' sweep.csv,
sweep_questions.csv and selection.csv must be byte-identical (a column the old binary does not
write yet, such as `expand`, and the columns named with --changed are left out of the comparison
and named), or the bench fails. Prints a
Markdown table: the figures, memory per 100 MB of corpus, the new/old ratios, and the growth of
each figure from one size to the next.
"""
import argparse
import csv
import filecmp
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--strategies", "fixed,recursive,markdown", "--sizes", "64,128,256,512,1024",
         "--k", "5", "--budget", "1000,2000,4000", "--tokenizer", "cl100k_base"]


def measure(binary, corpus, out):
    if out.exists():
        shutil.rmtree(out)
    cmd = ["/usr/bin/time", "-v", binary, "sweep", "--quiet", "--golden-format", "chroma",
           "--corpus", str(corpus / "corpora"), "--golden", str(corpus / "questions_df.csv"),
           *FLAGS, "--out", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    field = lambda name: re.search(rf"{re.escape(name)}: (.+)", p.stderr).group(1).strip()
    h, m, s = (["0"] + field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"))[-3:]
    wall = int(h) * 3600 + int(m) * 60 + float(s)
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    peak_mb = int(field("Maximum resident set size (kbytes)")) / 1024
    return wall, cpu, peak_mb


def same_output(old, new, changed):
    """Whether two CSVs are byte-identical, or, when the new one has columns the old binary did
    not write (a column added since) or columns in `changed` (a fix since changed their values
    on purpose), identical in every other column, row by row, as text."""
    if filecmp.cmp(old, new, shallow=False):
        return True
    with open(old, newline="") as fa, open(new, newline="") as fb:
        ra, rb = list(csv.reader(fa)), list(csv.reader(fb))
    if not ra or not rb or len(ra) != len(rb) or not set(ra[0]) <= set(rb[0]):
        return False
    cols = [c for c in ra[0] if c not in changed]
    pick = lambda header, row: [row[header.index(c)] for c in cols]
    if any(pick(ra[0], a) != pick(rb[0], b) for a, b in zip(ra, rb)):
        return False
    added = [c for c in rb[0] if c not in ra[0]]
    left_out = [c for c in ra[0] if c in changed]
    print(f"{new.name}: identical but for the column(s) the old binary does not write "
          f"({', '.join(added) or 'none'}) and those left out with --changed "
          f"({', '.join(left_out) or 'none'})", file=sys.stderr)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True, help="today's binary")
    ap.add_argument("--new", required=True, help="the binary under test")
    ap.add_argument("--mb", default="10,100", help="corpus sizes in MB, comma-separated")
    ap.add_argument("--work", type=Path, required=True, help="corpora and run folders")
    ap.add_argument("--changed", default="",
                    help="columns a fix since the old binary changed on purpose, comma-separated "
                         "(e.g. mrr,reciprocal_rank): left out of the comparison, and named")
    args = ap.parse_args()
    changed = {c for c in args.changed.split(",") if c}
    rows, prev = [], None
    for mb in [float(x) for x in args.mb.split(",")]:
        corpus = args.work / f"corpus-{mb:g}mb"
        if not (corpus / "questions_df.csv").exists():
            subprocess.run([sys.executable, str(ROOT / "scripts/make-corpus.py"), "--mb", f"{mb:g}",
                            "--out", str(corpus)], check=True)
        size = sum(f.stat().st_size for f in (corpus / "corpora").iterdir()) / 1e6
        got = {}
        for name, binary in [("old", args.old), ("new", args.new)]:
            got[name] = measure(binary, corpus, args.work / f"run-{mb:g}mb-{name}")
            print(f"{size:.0f} MB {name}: wall {got[name][0]:.1f} s, CPU {got[name][1]:.1f} s, "
                  f"peak {got[name][2]:.0f} MB", file=sys.stderr, flush=True)
        for f in ["sweep.csv", "sweep_questions.csv", "selection.csv"]:
            a, b = (args.work / f"run-{mb:g}mb-{n}" / f for n in ("old", "new"))
            if not same_output(a, b, changed):
                sys.exit(f"{f} differs between the old and the new binary at {mb:g} MB")
        rows.append((size, got, prev))
        prev = (size, got)
    print("| corpus | binary | wall (s) | CPU (s) | peak RSS (MB) | peak per 100 MB of corpus (MB) "
          "| new / old: wall, CPU, peak | growth from the size before: size, wall, peak |")
    print("|---|---|---|---|---|---|---|---|")
    for size, got, before in rows:
        for name in ("old", "new"):
            wall, cpu, peak = got[name]
            ratio = ""
            if name == "new":
                o = got["old"]
                ratio = f"{wall / o[0]:.2f}×, {cpu / o[1]:.2f}×, {peak / o[2]:.2f}×"
            growth = ""
            if before:
                bsize, bgot = before
                bw, _, bp = bgot[name]
                growth = f"{size / bsize:.1f}×, {wall / bw:.1f}×, {peak / bp:.1f}×"
            print(f"| {size:.1f} MB | {name} | {wall:.1f} | {cpu:.1f} | {peak:.0f} "
                  f"| {peak / size * 100:.0f} | {ratio} | {growth} |")


if __name__ == "__main__":
    main()
