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


# The layers of the crate docs' table, lowest first. A file may name its own
# layer or a lower one; within a layer, only the pairs in SIDEWAYS.
LAYERS = [
    ["codec", "log"],
    ["wire"],
    ["error"],
    ["schema", "seal", "mcp"],
    ["context", "changes"],
    ["content", "mrtr", "completion"],
    ["tool", "resource", "prompt"],
    ["derive_support", "asynch"],
    ["server"],
    ["http", "transport"],
    ["lib"],
]
# Same-layer imports that are allowed (importer, imported): a tool result
# writes content blocks and can ask for input; a sampling request's messages
# are content blocks; a tool's descriptor (mcp) holds its schemas.
SIDEWAYS = {("tool", "content"), ("tool", "mrtr"), ("mrtr", "content"), ("mcp", "schema")}


def layer_of(top):
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    return None


def module_files():
    """Module path (tuple) -> file, for every file of src/."""
    mods = {}
    for rel, path in rust_files():
        parts = rel[:-3].split("/")
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts == ["lib"]:
            parts = []
        mods[tuple(parts)] = path
    return mods


USE_RE = re.compile(r"\buse\s+([^;]+);")
PATH_RE = re.compile(r"(?:\$crate|\bcrate|\bsuper|\bself)(?:::\w+)+")


def expand_use(tree):
    """`a::{b, c::{d}}` -> ['a::b', 'a::c::d'] (globs and renames kept as paths)."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)  # renames: `a::b as c` names a::b
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, t):
        depth, start, items = 0, 0, []
        if t.startswith("{") and t.endswith("}"):
            body = t[1:-1]
            for i, c in enumerate(body):
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                elif c == "," and depth == 0:
                    items.append(body[start:i])
                    start = i + 1
            items.append(body[start:])
            for it in items:
                if it:
                    walk(prefix, it)
            return
        i = t.find("::{")
        if i >= 0:
            walk(prefix + t[:i].split("::"), t[i + 2:])
            return
        out.append("::".join(prefix + [p for p in t.split("::") if p]))

    walk([], tree)
    return out


def resolve(path, here, children, mods):
    """The module file a path names, or None (an external crate, a local item)."""
    parts = [p for p in path.split("::") if p]
    if not parts:
        return None
    head = parts[0]
    if head in ("crate", "$crate"):
        base, rest = [], parts[1:]
    elif head == "super":
        base, rest = list(here[:-1]), parts[1:]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    elif head == "self":
        base, rest = list(here), parts[1:]
    elif head in children:
        base, rest = list(here), parts
    else:
        return None
    # the deepest module the path reaches
    best = tuple(base)
    for p in rest:
        cand = best + (p,)
        if cand in mods:
            best = cand
        else:
            break
    return best


def check_graph(report):
    mods = module_files()
    edges = {}
    for mod, path in mods.items():
        with open(path, encoding="utf-8") as fh:
            code = strip_comments(fh.read())
        # Test modules may reach anywhere.
        code = strip_test_modules(code)
        children = set(re.findall(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code))
        paths = []
        for tree in USE_RE.findall(code):
            paths += expand_use(tree)
        paths += PATH_RE.findall(code)
        targets = set()
        for p in paths:
            t = resolve(p, mod, children, mods)
            if t is not None and t != mod and not (len(t) < len(mod) and mod[:len(t)] == t and t == ()):
                targets.add(t)
        edges[mod] = targets
    name = lambda m: "src/" + ("/".join(m) if m else "lib") + (".rs" if not os.path.isdir(os.path.join(ROOT, *m)) or not m else "/mod.rs")
    for mod, targets in sorted(edges.items()):
        top = mod[0] if mod else "lib"
        lm = layer_of(top)
        for t in sorted(targets):
            tt = t[0] if t else "lib"
            lt = layer_of(tt)
            if lm is None or lt is None:
                report.append(f"layers: {name(mod)} or {name(t)} is in no layer of scripts/layout.py")
                continue
            if tt == top:
                continue
            if lt > lm or (lt == lm and (top, tt) not in SIDEWAYS):
                report.append(f"layers: {name(mod)} imports {name(t)} (layer {tt} is not below {top})")
    # cycles between files
    color, stack = {}, []

    def dfs(m):
        color[m] = 1
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if color.get(t) == 1:
                cyc = stack[stack.index(t):] + [t]
                report.append("cycle: " + " -> ".join(name(c) for c in cyc))
            elif color.get(t) is None:
                dfs(t)
        stack.pop()
        color[m] = 2

    for m in sorted(edges):
        if color.get(m) is None:
            dfs(m)
    n_edges = sum(len(t) for t in edges.values())
    print(f"import graph: {len(edges)} files, {n_edges} imports between them")


def strip_test_modules(code):
    out, lines = [], code.split("\n")
    depth, skip, pending = 0, None, False
    for line in lines:
        s = line.strip()
        if skip is None:
            if s.startswith("#[cfg(test)]"):
                pending = True
                continue
            if pending and re.match(r"(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", s):
                skip, pending = depth, False
            elif pending and s and not s.startswith("#["):
                pending = False
        depth += line.count("{") - line.count("}")
        if skip is not None:
            if depth <= skip:
                skip = None
            continue
        out.append(line)
    return "\n".join(out)


def main(argv):
    want = set(a.lstrip("-") for a in argv[1:]) or {"sizes", "graph"}
    report = []
    if "sizes" in want:
        sizes = check_sizes(report)
        print("largest src/ files (non-blank lines outside #[cfg(test)] modules):")
        for n, rel in sizes[:8]:
            print(f"  {n:5}  src/{rel}")
    if "graph" in want:
        check_graph(report)
    for line in report:
        print(line)
    return 1 if report else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
