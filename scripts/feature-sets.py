#!/usr/bin/env python3
"""Checks that `cargo build` and `cargo test` resolve the same features for every crate both use.

Cargo's resolver adds the dev-dependencies' features only when a command builds tests, so a
feature that only a dev-dependency turns on (wiremock turning on hyper's server, say) gives that
crate, and every crate above it, a second build: the README's two commands (`scripts/demo.sh`,
which runs `cargo run`, and `cargo test`) would then compile about 20 dependencies twice,
whichever runs second. Cargo.toml names those features among the normal dependencies; this
script fails, listing the crates, when one is missing (a new dev-dependency, or an upgrade).

Reads `cargo tree` only (nothing is compiled). Exit status 0 when the sets agree, 1 otherwise.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def features(edges: str) -> dict[str, frozenset[str]]:
    """Maps "name version" to its feature lists (comma-separated; one per build of the crate: a
    build dependency can be built with other features than the same crate as a normal one), for
    the given `cargo tree --edges`."""
    run = subprocess.run(
        ["cargo", "tree", "--locked", "--edges", edges, "--prefix", "none", "--no-dedupe",
         "--format", "{p}|{f}"],
        cwd=ROOT, capture_output=True, text=True,
    )
    if run.returncode != 0:
        sys.exit(f"cargo tree --edges {edges} failed:\n{run.stderr}")
    out = run.stdout
    crates: dict[str, set[str]] = {}
    for line in out.splitlines():
        package, _, feats = line.partition("|")
        name_version = " ".join(package.split()[:2])
        crates.setdefault(name_version, set()).add(feats.strip())
    return {crate: frozenset(lists) for crate, lists in crates.items()}


def feature_words(lists: frozenset[str]) -> set[str]:
    """The features named in any of a crate's feature lists."""
    return {f for feats in lists for f in feats.split(",") if f}


def main() -> int:
    build = features("normal,build")
    test = features("normal,build,dev")
    differ = sorted(
        (crate, build[crate], test[crate])
        for crate in build.keys() & test.keys()
        if build[crate] != test[crate]
    )
    if not differ:
        print(f"feature sets agree: {len(build)} crates of `cargo build` resolve the same features "
              "under `cargo test`")
        return 0
    print("`cargo test` turns on features that `cargo build` does not (so the dependencies are "
          "compiled twice); name them under [dependencies] in Cargo.toml:", file=sys.stderr)
    for crate, b, t in differ:
        extra = sorted(feature_words(t) - feature_words(b))
        shown = ", ".join(extra) if extra else f"{' / '.join(sorted(b))} -> {' / '.join(sorted(t))}"
        print(f"  {crate}: {shown}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
