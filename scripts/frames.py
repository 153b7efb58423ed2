#!/usr/bin/env python3
"""Stack frames of a Thumb-2 firmware image, from its disassembly.

Usage: frames.py OBJDUMP ELF [ROOT_REGEX] [TOP]

Prints the TOP (default 8) largest stack frames, and the deepest chain of
direct calls from the function matching ROOT_REGEX (default: the firmware's
`__cortex_m_rt_main`), each function with its own frame. A frame is what the
prologue reserves: the registers pushed (`push`, `push.w`, `stmdb sp!`,
`vpush`) plus `sub sp` / `subw sp`. Calls through pointers (handlers, trait
objects) are not followed, so the chain is a lower bound on the deepest
path and the painted-stack high-water mark `scripts/embedded.sh` measures
under QEMU is the figure that counts; this says where it goes. It found the
3,440-byte frame of `serve_async_tools`' poll (2026-12-06).
"""

import re
import subprocess
import sys


def frames_and_calls(objdump, elf):
    text = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", "-C", elf],
        capture_output=True, text=True, check=True,
    ).stdout
    frame, calls, fn = {}, {}, None
    for line in text.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            fn = m.group(1)
            frame.setdefault(fn, 0)
            calls.setdefault(fn, set())
            continue
        if fn is None:
            continue
        m = re.search(r"\t(?:push(?:\.w)?\t|stmdb(?:\.w)?\tsp!, )\{([^}]*)\}", line)
        if m:
            n = 0
            for r in m.group(1).split(","):
                r = r.strip()
                if "-" in r:
                    a, b = r.split("-")
                    n += int(b[1:]) - int(a[1:]) + 1
                else:
                    n += 1
            frame[fn] += 4 * n
            continue
        m = re.search(r"\tvpush\t\{([^}]*)\}", line)
        if m:
            frame[fn] += 8 * len(m.group(1).split(","))
            continue
        m = re.search(r"\tsub(?:\.w|w)?\tsp, (?:sp, )?#(0x[0-9a-f]+|\d+)", line)
        if m:
            frame[fn] += int(m.group(1), 0)
            continue
        # Direct calls and tail calls to another function.
        m = re.search(r"\t(?:bl|b\.w|b)\t(?:0x)?[0-9a-f]+ <([^>+]*)>", line)
        if m and m.group(1) != fn:
            calls[fn].add(m.group(1))
    return frame, calls


def deepest(root, frame, calls):
    memo = {}

    def walk(f, path):
        if f in memo:
            return memo[f]
        if f in path:
            return 0, []
        best = (0, [])
        for c in calls.get(f, ()):
            d = walk(c, path | {f})
            if d[0] > best[0]:
                best = d
        r = (frame.get(f, 0) + best[0], [f] + best[1])
        memo[f] = r
        return r

    return walk(root, frozenset())


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    objdump, elf = sys.argv[1], sys.argv[2]
    root_re = sys.argv[3] if len(sys.argv) > 3 else r"__cortex_m_rt_main"
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    sys.setrecursionlimit(100000)
    frame, calls = frames_and_calls(objdump, elf)
    print(f"largest frames ({elf.rsplit('/', 1)[-1]}):")
    for size, f in sorted(((v, k) for k, v in frame.items()), reverse=True)[:top]:
        print(f"  {size:6d}  {f[:110]}")
    roots = [f for f in frame if re.search(root_re, f)]
    for root in roots[:1]:
        total, chain = deepest(root, frame, calls)
        print(f"deepest chain of direct calls from {root[:60]}: {total} bytes")
        for f in chain:
            print(f"  {frame.get(f, 0):6d}  {f[:110]}")


if __name__ == "__main__":
    main()
