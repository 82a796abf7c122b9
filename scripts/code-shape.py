#!/usr/bin/env python3
"""Lists the library's long files and long functions (the project's code-shape limits).

A file (a `.rs` file under src/) is long when it has more than 500 code lines outside tests.
A code line holds something other than white space and comments (a line inside a string
literal counts when it is not blank). Test code does not count: items marked `#[cfg(test)]`
or `#[test]` (a `#[cfg(test)] mod tests { ... }` block, a test function) and whole files that
are test modules (`tests.rs`, anything under a `tests/` folder, and a file declared by
`#[cfg(test)] mod name;`).

A function is long when it has more than 150 lines, counted from the line of its `fn` to the
line of its closing brace, both included (blank and comment lines inside count). Every fn item
is measured: free functions, methods, trait default bodies and functions nested in others;
closures are not fn items. Functions in test code are skipped.

Braces, `fn` and attributes are read from the code only: never from comments (line, block,
nested block, doc), strings (escaped, raw `r#"..."#`, byte, C), or character literals
(`'{'`, `'\\''`, `'\\u{7b}'`), which are told apart from lifetimes (`'a`).

    python3 scripts/code-shape.py [SRC_DIR]      prints the table
    python3 scripts/code-shape.py --check [DIR]   the same; exit status 1 when anything is long
    python3 scripts/code-shape.py --self-test     checks the reader on handmade snippets
"""
import re
import sys
from pathlib import Path

MAX_FILE_LINES = 500
MAX_FN_LINES = 150

IDENT_START = re.compile(r"[A-Za-z_]")
IDENT = re.compile(r"[A-Za-z0-9_]*")
# a raw string's opening (`r"`, `r#"`, `br##"`, `cr"`): prefix and hashes
RAW_OPEN = re.compile(r'(?:b|c)?r(#*)"')
# a character literal right after its opening quote: an escape or one code point
CHAR_BODY = re.compile(r"(?:\\(?:u\{[0-9A-Fa-f_]*\}|x[0-9A-Fa-f]{2}|.)|[^\\'\n])'", re.S)


class Token:
    """One code token: `kind` is ident, punct or literal; `line` and `end` are 1-based."""

    __slots__ = ("kind", "text", "line", "end", "test")

    def __init__(self, kind, text, line, end):
        self.kind, self.text, self.line, self.end, self.test = kind, text, line, end, False

    def __repr__(self):
        return f"{self.kind}:{self.text!r}@{self.line}"


def lex(text):
    """The code tokens of Rust source `text`, comments and white space dropped."""
    tokens, i, line, n = [], 0, 1, len(text)

    def take(kind, start, stop):
        nonlocal line
        piece = text[start:stop]
        end = line + piece.count("\n")
        tokens.append(Token(kind, piece, line, end))
        line = end

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            line += text.count("\n", i, j)
            i = j
        elif (m := RAW_OPEN.match(text, i)) and (i == 0 or not IDENT.fullmatch(text[i - 1])):
            close = '"' + m.group(1)
            j = text.find(close, m.end())
            j = n if j < 0 else j + len(close)
            take("literal", i, j)
            i = j
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1)):
            j = i + (1 if c == '"' else 2)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            take("literal", i, min(j + 1, n))
            i = j + 1
        elif c == "'":
            m = CHAR_BODY.match(text, i + 1)
            if m:  # a character literal
                take("literal", i, m.end())
                i = m.end()
            else:  # a lifetime or a loop label
                j = IDENT.match(text, i + 1).end()
                take("ident", i, j)
                i = j
        elif text.startswith("r#", i) and IDENT_START.match(text, i + 2):  # raw identifier
            j = IDENT.match(text, i + 2).end()
            take("ident", i + 2, j)
            i = j
        elif IDENT_START.match(c):
            j = IDENT.match(text, i).end()
            if text.startswith("'", j) and text[i:j] == "b":  # byte literal b'x'
                m = CHAR_BODY.match(text, j + 1)
                if m:
                    take("literal", i, m.end())
                    i = m.end()
                    continue
            take("ident", i, j)
            i = j
        elif c.isdigit():
            j = re.compile(r"[0-9A-Za-z_.]*").match(text, i).end()
            take("literal", i, j)
            i = j
        else:
            take("punct", i, i + 1)
            i += 1
    return tokens


OPEN, CLOSE = "([{", ")]}"


def matching(tokens, k):
    """Index of the bracket closing the one opened at tokens[k] (or the last token)."""
    depth = 0
    for j in range(k, len(tokens)):
        t = tokens[j].text
        if tokens[j].kind != "punct":
            continue
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


def item_end(tokens, k):
    """Index of the last token of the item starting at tokens[k]: its `;`, its body's `}`, or,
    for a field, variant, argument or match arm, its `,` or the token before the closing bracket
    of the list it stands in."""
    braced_ends = tokens[k].text not in ("use", "const", "static", "type", "let")
    j = k
    while j < len(tokens):
        t = tokens[j]
        if t.kind == "punct" and t.text in ";,":
            return j
        if t.kind == "punct" and t.text in CLOSE:
            return j - 1
        if t.kind == "punct" and t.text in OPEN:
            close = matching(tokens, j)
            if t.text == "{" and braced_ends:
                return close
            j = close
        j += 1
    return len(tokens) - 1


def attribute(tokens, k):
    """(inner, text without spaces, index of its `]`) for an attribute at tokens[k], or None."""
    if tokens[k].text != "#" or k + 1 >= len(tokens):
        return None
    inner = tokens[k + 1].text == "!"
    bracket = k + 2 if inner else k + 1
    if bracket >= len(tokens) or tokens[bracket].text != "[":
        return None
    close = matching(tokens, bracket)
    return inner, "".join(t.text for t in tokens[bracket + 1 : close]), close


def is_test_attribute(body):
    return body in ("test", "cfg(test)") or body.startswith("cfg(all(test,")


def mark_tests(tokens):
    """Marks the tokens of test items; returns the names of `#[cfg(test)] mod name;` files."""
    test_mods, k = [], 0
    while k < len(tokens):
        attr = attribute(tokens, k)
        if attr is None:
            k += 1
            continue
        inner, body, close = attr
        if not is_test_attribute(body):
            k = close + 1
            continue
        if inner:  # `#![cfg(test)]`: the whole file
            for t in tokens:
                t.test = True
            return test_mods
        start = close + 1  # skip further attributes and a visibility to reach the item
        while start < len(tokens) and (a := attribute(tokens, start)):
            start = a[2] + 1
        first = start
        if first < len(tokens) and tokens[first].text == "pub":
            first += 1
            if first < len(tokens) and tokens[first].text == "(":
                first = matching(tokens, first) + 1
        end = item_end(tokens, first) if first < len(tokens) else len(tokens) - 1
        if first + 2 <= end and tokens[first].text == "mod" and tokens[end].text == ";":
            test_mods.append(tokens[first + 1].text)
        for t in tokens[k : end + 1]:
            t.test = True
        k = end + 1
    return test_mods


def code_lines(tokens, text):
    """Line numbers holding non-test code (a multi-line literal: its non-blank lines)."""
    lines = set()
    for t in tokens:
        if t.test:
            continue
        for offset, piece in enumerate(t.text.split("\n")):
            if piece.strip():
                lines.add(t.line + offset)
    return lines


def functions(tokens):
    """(name, first line, last line) of every non-test fn item with a body."""
    found = []
    for k, t in enumerate(tokens):
        if t.test or t.kind != "ident" or t.text != "fn":
            continue
        if k + 1 >= len(tokens) or tokens[k + 1].kind != "ident":
            continue  # a fn pointer type `fn(u8) -> u8`
        j = k + 2
        while j < len(tokens):
            u = tokens[j]
            if u.kind == "punct" and u.text == ";":
                j = None  # a declaration without a body
                break
            if u.kind == "punct" and u.text in "([":
                j = matching(tokens, j) + 1
                continue
            if u.kind == "punct" and u.text == "{":
                break
            j += 1
        if j is None or j >= len(tokens):
            continue
        found.append((tokens[k + 1].text, t.line, tokens[matching(tokens, j)].line))
    return found


def measure(text):
    """(code lines outside tests, [(fn name, first line, lines)], test modules declared)."""
    tokens = lex(text)
    test_mods = mark_tests(tokens)
    fns = [(name, a, b - a + 1) for name, a, b in functions(tokens)]
    return len(code_lines(tokens, text)), fns, test_mods


def test_files(src):
    """The files under `src` that are test modules."""
    found = set()
    for path in sorted(src.rglob("*.rs")):
        rel = path.relative_to(src)
        if path.name == "tests.rs" or "tests" in rel.parts[:-1]:
            found.add(path)
            continue
        _, _, mods = measure(path.read_text())
        home = path.parent if path.name in ("mod.rs", "lib.rs", "main.rs") else path.with_suffix("")
        for name in mods:
            found.update([home / f"{name}.rs", home / name / "mod.rs"])
            found.update((home / name).rglob("*.rs"))
    return found


def survey(src):
    """([(file, code lines)] over the limit, [(file, line, fn, lines)] over the limit)."""
    skip = test_files(src)
    long_files, long_fns = [], []
    for path in sorted(src.rglob("*.rs")):
        if path in skip:
            continue
        lines, fns, _ = measure(path.read_text())
        rel = path.relative_to(src.parent)
        if lines > MAX_FILE_LINES:
            long_files.append((str(rel), lines))
        long_fns += [(str(rel), first, name, n) for name, first, n in fns if n > MAX_FN_LINES]
    long_files.sort(key=lambda f: -f[1])
    long_fns.sort(key=lambda f: -f[3])
    return long_files, long_fns


def self_test():
    """Checks the reader on handmade snippets; exit status 1 on a failure."""
    cases = [
        # (snippet, expected code lines, expected [(fn, lines)])
        ("fn a() {\n    x();\n}\n", 3, [("a", 3)]),
        ("// only a comment\n\n/* block\n   { */\nfn a() {}\n", 1, [("a", 1)]),
        ("/* outer /* nested { */ still comment } */\nfn a() {}\n", 1, [("a", 1)]),
        ('fn a() {\n    let s = "}";\n    let t = "\\"}";\n}\n', 4, [("a", 4)]),
        ('fn a() {\n    let s = r#"}" { "#;\n}\nfn b() {}\n', 4, [("a", 3), ("b", 1)]),
        ("fn a() {\n    let c = '}';\n    let d = '\\'';\n    let e = '{';\n}\n", 5, [("a", 5)]),
        ("fn a<'x>(s: &'x str) -> &'x str {\n    s\n}\n", 3, [("a", 3)]),
        ("fn a() {\n    let u = '\\u{7d}';\n    let b = b'{';\n}\n", 4, [("a", 4)]),
        ("fn outer() {\n    fn inner() {\n    }\n}\n", 4, [("outer", 4), ("inner", 2)]),
        ("impl T {\n    fn m(&self) {\n        1\n    }\n}\n", 5, [("m", 3)]),
        ("trait T {\n    fn m(&self);\n    fn d(&self) {}\n}\n", 4, [("d", 1)]),
        ("fn a(f: fn(u8) -> u8) -> u8 {\n    f(1)\n}\n", 3, [("a", 3)]),
        ("fn a(x: [u8; 2]) where T: Fn() {\n}\n", 2, [("a", 2)]),
        ("fn a() {}\n#[cfg(test)]\nmod tests {\n    fn t() {\n    }\n}\n", 1, [("a", 1)]),
        ("#[test]\nfn t() {\n}\nfn a() {}\n", 1, [("a", 1)]),
        ("#[cfg(test)]\nmod tests;\nfn a() {}\n", 1, [("a", 1)]),
        ("#[cfg(test)]\nuse a::{b, c};\nfn a() {}\n", 1, [("a", 1)]),
        ("#[cfg(not(test))]\nfn a() {}\n", 2, [("a", 1)]),
        ("struct S {\n    #[cfg(test)]\n    a: u8,\n    b: u8,\n}\nfn f() {}\n", 4, [("f", 1)]),
        ("fn f(x: u8) {\n    match x {\n        #[cfg(test)]\n        0 => {}\n        _ => {}\n    }\n}\n",
         5, [("f", 7)]),
        ("fn a() {\n    let s = \"one\n\n    two {\";\n}\n", 4, [("a", 5)]),
        ("fn r#match() {}\nfn b() { 'outer: loop { break 'outer; } }\n", 2, [("match", 1), ("b", 1)]),
        ("/// doc with { brace\nfn a() {\n    // }\n}\n", 2, [("a", 3)]),
        ('fn a() { let s = br##"a"# }"##; }\nfn b() {}\n', 2, [("a", 1), ("b", 1)]),
    ]
    failures = 0
    for text, want_lines, want_fns in cases:
        lines, fns, _ = measure(text)
        got = [(name, n) for name, _, n in fns]
        if (lines, got) != (want_lines, want_fns):
            failures += 1
            print(f"FAIL {text!r}: got {lines} lines {got}, want {want_lines} {want_fns}")
    _, _, mods = measure("#[cfg(test)]\nmod properties;\n#[cfg(test)]\npub(crate) mod tests;\n")
    if mods != ["properties", "tests"]:
        failures += 1
        print(f"FAIL test modules: got {mods}")
    print(f"{len(cases) + 1 - failures} of {len(cases) + 1} self-test cases pass")
    return 1 if failures else 0


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if "--self-test" in argv:
        return self_test()
    src = Path(args[0] if args else Path(__file__).resolve().parent.parent / "src")
    long_files, long_fns = survey(src)
    print(f"Files over {MAX_FILE_LINES} code lines outside tests: {len(long_files)}")
    if long_files:
        print("| file | code lines |\n| --- | ---: |")
        for path, n in long_files:
            print(f"| {path} | {n} |")
    print(f"\nFunctions over {MAX_FN_LINES} lines: {len(long_fns)}")
    if long_fns:
        print("| function | file:line | lines |\n| --- | --- | ---: |")
        for path, first, name, n in long_fns:
            print(f"| {name} | {path}:{first} | {n} |")
    return 1 if "--check" in argv and (long_files or long_fns) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
