#!/usr/bin/env python3
"""Lists import cycles between the library's modules (files under src/).

A module is one file (`src/a/b.rs` or `src/a/b/mod.rs` is `a::b`). Module A imports module B
when A's code names a path into B: `crate::b::...`, `super::...`, `self::...`, or a child
declared with `mod`/`pub mod` and then used. Declaring a child module is not an import.
A cycle is a strongly connected group of two or more modules. Exit status 1 if any.

    python3 scripts/module-cycles.py [SRC_DIR]
"""
import re
import sys
from pathlib import Path

src = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "src")

def module_of(path: Path):
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts in (["lib"], ["main"]):
        return ()
    return tuple(parts)

files = {module_of(p): p for p in src.rglob("*.rs")}
modules = set(files)

def strip(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    # drop #[cfg(test)] mod tests { ... } blocks: tests may name anything
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)

def longest_module(parts):
    for n in range(len(parts), 0, -1):
        if tuple(parts[:n]) in modules:
            return tuple(parts[:n])
    return None

path_re = re.compile(r"\b(crate|super|self)((?:::\w+)+)")
group_re = re.compile(r"\b(crate|super|self)((?:::\w+)*)::\{([^;]*?)\}", re.S)

edges = {m: set() for m in modules}
for mod, path in files.items():
    if path.name.endswith("tests.rs") and mod and mod[-1] == "tests":
        continue
    text = strip(path.read_text())
    is_dir_mod = path.name in ("mod.rs", "lib.rs", "main.rs")
    base = mod if is_dir_mod else mod[:-1]  # what `self` names for child lookup
    def resolve(head, rest):
        if head == "crate":
            return list(rest)
        if head == "self":
            return list(mod) + list(rest)
        # super: the parent of this module
        return list(mod[:-1]) + list(rest)
    targets = []
    for m in group_re.finditer(text):
        head, prefix, inner = m.group(1), [p for p in m.group(2).split("::") if p], m.group(3)
        for item in re.split(r",", re.sub(r"\{[^{}]*\}", "", inner)):
            names = [p for p in item.strip().split("::") if p and p != "self"]
            targets.append(resolve(head, prefix + names[:1] + names[1:2]))
        targets.append(resolve(head, prefix))
    for m in path_re.finditer(text):
        targets.append(resolve(m.group(1), [p for p in m.group(2).split("::") if p]))
    # children named directly (`semantic::sentences`) from a directory module
    if is_dir_mod:
        for child in re.findall(r"\bmod\s+(\w+)\s*;", text):
            if re.search(r"\b%s::" % child, re.sub(r"\bmod\s+\w+\s*;", "", text)):
                targets.append(list(mod) + [child])
    for t in targets:
        target = longest_module(t)
        if target is not None and target != mod and target != ():
            edges[mod].add(target)

def cycles(graph):
    """Strongly connected groups of two or more nodes (Tarjan)."""
    index, low, on, stack, found = {}, {}, set(), [], []
    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v); on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))
    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found

# The same at the level of the top-level modules (the stages): chunking -> retrieval -> chunking.
stages = {}
for a, targets in edges.items():
    for b in targets:
        if a and b and a[0] != b[0]:
            stages.setdefault(a[0], set()).add(b[0])

name = lambda m: "::".join(m) if isinstance(m, tuple) else m
total = 0
for label, graph in (("module", edges), ("stage", stages)):
    for comp in cycles(graph):
        total += 1
        members = set(comp)
        print(f"{label} cycle:", ", ".join(name(m) for m in comp))
        for a in comp:
            for b in sorted(graph[a]):
                if b in members:
                    print(f"    {name(a)} -> {name(b)}")
print(f"{len(modules)} modules, {sum(len(e) for e in edges.values())} imports, {total} cycle(s)")
sys.exit(1 if total else 0)
