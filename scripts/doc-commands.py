#!/usr/bin/env python3
"""Checks that every command shown in README.md and docs/*.md still works as shown.

It reads every fenced block marked `sh` (lines joined at a trailing backslash, `#` comments
dropped) and checks each command:

- `chunksweep ARGS` and `cargo run [OPTIONS] -- ARGS`: the subcommand must exist and every flag
  used must be in that subcommand's `--help`. The cheap offline ones are also run, with no
  server configured: `validate`, `sweep`, `check` without `--judge`, `report`, `prompts export`
  and `golden review`. Their output folders (`--out`, `prompts export DIR`) go to a temporary
  folder, and later commands of the same page that name such a folder read the temporary one.
  A run must exit 0; `check` may exit 1 (a regression is a verdict, not a stale command).
- `scripts/NAME ARGS`: the script must exist and be executable, and its first argument, when it
  is a word, must occur in it. `python3 scripts/NAME.py ARGS`: the script must exist and every
  flag must occur in it.
- `cargo test`: a `--test NAME` target must exist as tests/NAME.rs; without one, the command
  must be one that .ci/run runs. `cargo bench --bench NAME -- FLAGS`: benches/NAME.rs must exist
  and hold every flag. `cargo install --path P`: P must hold a Cargo.toml.
- anything else must be in ALLOW below, with the reason it cannot be checked.

It also checks every relative link of those pages: the file must exist and an `#anchor` into a
Markdown file must name one of its headings (GitHub's anchors).

    python3 scripts/doc-commands.py [--bin PATH] [--no-run]   exit status 1 on any stale command
    python3 scripts/doc-commands.py --self-test               checks the checker on handmade pages

Without --bin it builds the debug binary (`cargo build --locked`, a no-op after `cargo test`) and
uses it from $CARGO_TARGET_DIR (default target/).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Commands that cannot be checked here: (leading words, reason).
ALLOW = [
    ("export OPENAI_API_KEY=", "sets the reader's own key; nothing to check"),
    ("export OPENAI_BASE_URL=", "sets the reader's own server; nothing to check"),
    ("pip install .", "builds through maturin from pyproject.toml: needs the network and a Python build environment"),
    ("git add ", "an example of committing a refreshed baseline"),
    ("git commit ", "an example of committing a refreshed baseline"),
]

# Subcommands that are cheap and offline: run them (with the --help check first).
RUNNABLE = {("validate",), ("sweep",), ("check",), ("report",), ("prompts", "export"), ("golden", "review")}
GROUPS = {"prompts", "golden"}
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9-]*)")
ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


# --- reading the pages ------------------------------------------------------------------------


def sh_commands(text):
    """Yields (line number, command words) for every command of the page's ```sh blocks."""
    in_block, lang = False, ""
    pending, start = "", 0
    for number, line in enumerate(text.split("\n"), 1):
        fence = re.match(r"^\s*```(\S*)", line)
        if fence:
            if in_block:
                in_block = False
                if pending.strip():
                    yield start, split(pending)
                pending = ""
            else:
                in_block, lang = True, fence.group(1)
            continue
        if not in_block or lang != "sh":
            continue
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        pending += line
        if pending.strip():
            words = split(pending)
            if words:
                yield start, words
        pending = ""


def synopses(text):
    """Yields (line number, words) for every synopsis line of the page's ```text blocks: a line
    that starts with `chunksweep `, joined at a trailing backslash. Only its flags are checked."""
    in_block, lang, pending, start = False, "", "", 0
    for number, line in enumerate(text.split("\n"), 1):
        fence = re.match(r"^\s*```(\S*)", line)
        if fence:
            in_block, lang, pending = not in_block, fence.group(1), ""
            continue
        if not in_block or lang != "text":
            continue
        if not pending:
            if not line.startswith("chunksweep "):
                continue
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        pending += line
        words = pending.split()
        flags = FLAG.findall(pending)
        path = [w for w in words[1:3] if re.fullmatch(r"[a-z][a-z-]*", w)]
        if path and path[0] not in GROUPS:
            path = path[:1]
        yield start, ["chunksweep", *path, *flags]
        pending = ""


def split(command):
    lexer = shlex.shlex(command, posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def slug(heading):
    """GitHub's anchor of a heading."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    seen, out, in_code = {}, set(), False
    for line in text.split("\n"):
        if re.match(r"^\s*```", line):
            in_code = not in_code
            continue
        m = None if in_code else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            out.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
    return out


def links(text):
    """Yields (line number, target) for every Markdown link outside code."""
    in_code = False
    for number, line in enumerate(text.split("\n"), 1):
        if re.match(r"^\s*```", line):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = re.sub(r"``.*?``|`[^`]*`", "", line)
        for m in re.finditer(r"\]\(([^)\s]+)\)", line):
            yield number, m.group(1)


def check_links(page, text, root):
    problems = []
    for number, target in links(text):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            problems.append((number, f"link to {target}: {path} does not exist"))
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            problems.append((number, f"link to {target}: no heading with the anchor #{anchor} in {dest.relative_to(root)}"))
    return problems


# --- checking one command ---------------------------------------------------------------------


class Checker:
    """Checks commands. `help_of(words)` gives a subcommand's --help text, or None when it does
    not exist; `run(args, expect)` runs the binary and returns an error or None."""

    def __init__(self, root, help_of, run=None):
        self.root, self.help_of, self.run = root, help_of, run
        self.renamed = {}  # an output folder named in a page -> the temporary one used instead
        self.tmp = None

    def check(self, words):
        """Returns a list of problems of one command (empty: checked)."""
        while words and ENV_ASSIGN.match(words[0]):
            words = words[1:]
        if not words:
            return []
        line = " ".join(words)
        for prefix, _reason in ALLOW:
            if line == prefix.strip() or line.startswith(prefix):
                return []
        head = words[0]
        if head == "chunksweep":
            return self.chunksweep(words[1:])
        if head == "cargo" and len(words) > 1:
            sub = words[1]
            if sub == "run":
                if "--" not in words:
                    return ["`cargo run` without `--`: no chunksweep command to check"]
                return self.chunksweep(words[words.index("--") + 1 :])
            if sub == "test":
                return self.cargo_target(words, "--test", "tests")
            if sub == "bench":
                return self.cargo_target(words, "--bench", "benches")
            if sub == "install":
                if "--path" in words:
                    path = self.root / words[words.index("--path") + 1]
                    if not (path / "Cargo.toml").is_file():
                        return [f"`cargo install --path`: no Cargo.toml in {path}"]
                    return []
        if head.startswith("scripts/"):
            return self.script(head, words[1:])
        if head in ("python3", "python") and len(words) > 1 and words[1].startswith("scripts/"):
            return self.script(words[1], words[2:], python=True)
        return [f"cannot check `{' '.join(words)}`: add it to ALLOW in scripts/doc-commands.py with the reason"]

    def script(self, name, args, python=False):
        path = self.root / name
        if not path.is_file():
            return [f"{name} does not exist"]
        if not python and not os.access(path, os.X_OK):
            return [f"{name} is not executable"]
        text = path.read_text(encoding="utf-8", errors="replace")
        problems = []
        if python:
            for arg in args:
                flag = arg.split("=")[0]
                if flag.startswith("-") and flag not in text:
                    problems.append(f"{name} has no flag {flag}")
        elif args and re.fullmatch(r"[a-z][a-z-]*", args[0]) and args[0] not in text:
            problems.append(f"{name} has no command {args[0]}")
        return problems

    def cargo_target(self, words, option, folder):
        if option in words:
            i = words.index(option)
            if i + 1 >= len(words):
                return [f"`{option}` without a name"]
            source = self.root / folder / f"{words[i + 1]}.rs"
            if not source.is_file():
                return [f"`{option} {words[i + 1]}`: {folder}/{words[i + 1]}.rs does not exist"]
            if "--" in words and option == "--bench":
                text = source.read_text(encoding="utf-8")
                rest = words[words.index("--") + 1 :]
                return [f"{source.name} reads no flag {a}" for a in rest if a.startswith("--") and f'"{a}"' not in text]
            return []
        ci = (self.root / ".ci" / "run").read_text(encoding="utf-8")
        line = " ".join(words)
        if not any(l.strip() == line for l in ci.split("\n")):
            return [f"`{line}` names no target and .ci/run does not run it"]
        return []

    def synopsis(self, words):
        """A synopsis line: the subcommand and its flags, never run."""
        run, self.run = self.run, None
        try:
            return self.chunksweep(words[1:])
        finally:
            self.run = run

    def chunksweep(self, args):
        path = []
        for word in args:
            if word.startswith("-"):
                break
            path.append(word)
            if len(path) == 1 and word not in GROUPS or len(path) == 2:
                break
        if not path:
            return ["`chunksweep` without a subcommand"]
        text = self.help_of(path)
        if text is None:
            return [f"`chunksweep {' '.join(path)}` is not a command"]
        known = set(FLAG.findall(text))
        problems = []
        for arg in args[len(path) :]:
            if arg.startswith("-") and not re.fullmatch(r"-?\d[\d.,]*", arg):
                flag = arg.split("=")[0]
                if flag not in known:
                    problems.append(f"`chunksweep {' '.join(path)}` has no flag {flag}")
        if problems or self.run is None or tuple(path) not in RUNNABLE or "--judge" in args:
            return problems
        return self.run_one(path, args)

    def run_one(self, path, args):
        if self.tmp is None:
            self.tmp = Path(tempfile.mkdtemp(prefix="doc-commands-"))
        args = [self.renamed.get(a.rstrip("/"), a) for a in args]
        n = len(self.renamed) + 1

        def redirect(value):
            target = self.tmp / f"{n}" / Path(value).name
            target.parent.mkdir(parents=True, exist_ok=True)
            self.renamed[value.rstrip("/")] = str(target)
            return str(target)

        if tuple(path) == ("prompts", "export"):
            args = args[:2] + [redirect(args[2])] + args[3:]
        elif "--out" in args:
            i = args.index("--out")
            args[i + 1] = redirect(args[i + 1])
        elif path[0] in ("sweep", "check"):
            args += ["--out", redirect("out")]
        ok = (0, 1) if path[0] == "check" else (0,)
        return self.run(args, ok)

    def close(self):
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


# --- the binary -------------------------------------------------------------------------------


def binary_help(binary, root):
    cache = {}

    def help_of(path):
        key = tuple(path)
        if key not in cache:
            out = subprocess.run([binary, *path, "--help"], cwd=root, capture_output=True, text=True)
            cache[key] = out.stdout if out.returncode == 0 else None
        return cache[key]

    return help_of


def binary_run(binary, root):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHUNKSWEEP_"))}
    # a server that refuses at once: a command documented as offline that calls one fails
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"

    def run(args, ok):
        try:
            out = subprocess.run([binary, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            return ["ran for more than 600 s"]
        if out.returncode not in ok:
            tail = (out.stderr or out.stdout).strip().split("\n")[-3:]
            return [f"exited {out.returncode} when run: " + " | ".join(tail)]
        return []

    return run


def find_binary():
    subprocess.run(["cargo", "build", "--locked", "--quiet"], cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    return str(target / "debug" / "chunksweep")


def pages(root):
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def check_pages(root, help_of, run):
    """Every problem of every page, as (page, line, message); the count of commands checked."""
    problems, count = [], 0
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        checker = Checker(root, help_of, run)
        try:
            for number, words in sh_commands(text):
                count += 1
                problems += [(page, number, p) for p in checker.check(words)]
            for number, words in synopses(text):
                count += 1
                problems += [(page, number, p) for p in checker.synopsis(words)]
        finally:
            checker.close()
        problems += [(page, n, p) for n, p in check_links(page, text, root)]
    return problems, count


def main(argv):
    if "--self-test" in argv:
        return self_test()
    binary = argv[argv.index("--bin") + 1] if "--bin" in argv else find_binary()
    run = None if "--no-run" in argv else binary_run(binary, ROOT)
    problems, count = check_pages(ROOT, binary_help(binary, ROOT), run)
    for page, number, message in problems:
        print(f"{page.relative_to(ROOT)}:{number}: {message}")
    print(f"{count} command(s) in {len(pages(ROOT))} page(s); {len(problems)} problem(s)")
    return 1 if problems else 0


# --- self-test --------------------------------------------------------------------------------

SELF_TEST_PAGE = """# Page

## A heading with `code`, and punctuation!

See [the other page](docs/other.md#usage), [a lost page](lost.md), [a bad anchor](docs/other.md#nowhere),
[this page](#a-heading-with-code-and-punctuation) and `[not a link](nowhere.md)`.

```sh
chunksweep sweep --config datasets/x.toml \\
    --out results/x   # a comment --not-a-flag
chunksweep sweep --no-such-flag 3
chunksweep frobnicate --out x
chunksweep prompts export DIR
cargo run --release -- sweep --sizes 64,128 --overlap -1
cargo test --locked
cargo test --locked --test missing_test
cargo test --locked --test present
cargo bench --bench sweep -- --mb 1 --nope 2
scripts/ok.sh start
scripts/ok.sh launch
scripts/not-executable.sh
scripts/missing.sh
python3 scripts/tool.py --check
python3 scripts/tool.py --fix
INSTA_UPDATE=always cargo test --locked --test present
git add ci
frobnicate --now
```

```text
chunksweep sweep --config FILE [--sizes 64,128] \\
    [--overlap 0.15]
Output: --not-a-synopsis
```
"""

SELF_TEST_EXPECTED = [
    (5, "link to lost.md: lost.md does not exist"),
    (5, "link to docs/other.md#nowhere: no heading with the anchor #nowhere in docs/other.md"),
    (11, "`chunksweep sweep` has no flag --no-such-flag"),
    (12, "`chunksweep frobnicate` is not a command"),
    (14, "`chunksweep sweep` has no flag --overlap"),
    (16, "`--test missing_test`: tests/missing_test.rs does not exist"),
    (18, "sweep.rs reads no flag --nope"),
    (20, "scripts/ok.sh has no command launch"),
    (21, "scripts/not-executable.sh is not executable"),
    (22, "scripts/missing.sh does not exist"),
    (24, "scripts/tool.py has no flag --fix"),
    (31, "`chunksweep sweep` has no flag --overlap"),
    (27, "cannot check `frobnicate --now`: add it to ALLOW in scripts/doc-commands.py with the reason"),
]


def self_test():
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "scripts").mkdir()
        (root / "tests").mkdir()
        (root / "benches").mkdir()
        (root / ".ci").mkdir()
        (root / "README.md").write_text(SELF_TEST_PAGE, encoding="utf-8")
        (root / "docs" / "other.md").write_text("# Other\n\n## Usage\n\n```sh\nchunksweep prompts export out\n```\n", encoding="utf-8")
        (root / ".ci" / "run").write_text("cargo fmt\ncargo test --locked\n", encoding="utf-8")
        (root / "tests" / "present.rs").write_text("", encoding="utf-8")
        (root / "benches" / "sweep.rs").write_text('arg(&args, "--mb")', encoding="utf-8")
        (root / "scripts" / "tool.py").write_text("--check", encoding="utf-8")
        for name, mode in (("ok.sh", 0o755), ("not-executable.sh", 0o644)):
            (root / "scripts" / name).write_text("case $1 in start) ;; esac\n", encoding="utf-8")
            (root / "scripts" / name).chmod(mode)
        helps = {
            ("sweep",): "Usage: chunksweep sweep [OPTIONS]\n  --config <FILE>\n  --out <DIR>\n  --sizes <S>\n  -h, --help",
            ("prompts", "export"): "Usage: chunksweep prompts export <DIR>\n  -h, --help",
        }
        ran = []

        def run(args, ok):
            ran.append(args)
            return []

        problems, count = check_pages(root, lambda path: helps.get(tuple(path)), run)
        got = sorted((n, m) for page, n, m in problems if page.name == "README.md")
        others = [(page.name, n, m) for page, n, m in problems if page.name != "README.md"]
        expected = sorted(SELF_TEST_EXPECTED)
        for case in expected:
            if case not in got:
                failures += 1
                print(f"self-test: missed {case}")
        for case in got:
            if case not in expected:
                failures += 1
                print(f"self-test: unexpected {case}")
        if others:
            failures += 1
            print(f"self-test: unexpected problems in other.md: {others}")
        if count != 20:
            failures += 1
            print(f"self-test: counted {count} commands, expected 20")
        # the runnable ones ran, their output folders redirected; the rest did not
        outs = [a for a in ran if a[:1] == ["sweep"]]
        if len(outs) != 1 or "results/x" in outs[0] or "--config" not in outs[0]:
            failures += 1
            print(f"self-test: sweep not run as expected: {ran}")
        exports = [a for a in ran if a[:2] == ["prompts", "export"]]
        if len(exports) != 2 or any(a[2] in ("DIR", "out") for a in exports):
            failures += 1
            print(f"self-test: prompts export not redirected: {exports}")
        # the run's failure is reported
        checker = Checker(root, lambda path: helps.get(tuple(path)), lambda args, ok: ["exited 2 when run"])
        if checker.check(["chunksweep", "sweep", "--config", "x"]) != ["exited 2 when run"]:
            failures += 1
            print("self-test: a failed run was not reported")
        checker.close()
    total = len(SELF_TEST_EXPECTED) + 5
    print(f"{total - failures} of {total} self-test checks pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
