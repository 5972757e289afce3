#!/usr/bin/env python3
"""file_layers.py [TOP] - the files of each folder named below call each
other one way only: no file calls a function defined in a file that calls
it back, directly or around a circle. A call is a name followed by "(" in
the code (comments and string literals removed) that another file of the
same folder defines without "static". Prints each folder's call graph and
its circles; exits 1 when there is a circle."""
import os
import re
import sys

FOLDERS = ["coll", "rma", "rma/switch", "compat/nvshmem", "bootstrap", "api"]
DEF = re.compile(r'^(?!static\b)(?:extern\s+"C"\s+)?(?:GPURMA_API\s+)?[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;{]*\)\s*\{',
                 re.M)
NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def graph(top, folder):
    d = os.path.join(top, folder)
    files = sorted(f for f in os.listdir(d) if f.endswith((".c", ".cu")))
    code = {f: NOISE.sub(" ", open(os.path.join(d, f), errors="replace").read()) for f in files}
    owner = {}
    for f in files:
        for m in DEF.finditer(code[f]):
            if m.group(1) not in ("if", "for", "while", "switch", "return"):
                owner.setdefault(m.group(1), f)
    edges = {f: set() for f in files}
    for f in files:
        for name in set(re.findall(r"\b(\w+)\s*\(", code[f])):
            g = owner.get(name)
            if g and g != f:
                edges[f].add(g)
    return edges


def circles(edges):
    found, state = [], {}

    def visit(n, path):
        state[n] = 1
        for m in sorted(edges[n]):
            if state.get(m) == 1:
                found.append(path[path.index(m):] + [m])
            elif not state.get(m):
                visit(m, path + [m])
        state[n] = 2

    for n in sorted(edges):
        if not state.get(n):
            visit(n, [n])
    return found


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = 0
    for folder in FOLDERS:
        if not os.path.isdir(os.path.join(top, folder)):
            continue
        edges = graph(top, folder)
        found = circles(edges)
        print(f"{folder}/: {len(edges)} files, {'no circle' if not found else 'CIRCLES'}")
        for f in sorted(edges):
            if edges[f]:
                print(f"  {f} -> {', '.join(sorted(edges[f]))}")
        for c in found:
            print("  circle: " + " -> ".join(c))
        bad |= bool(found)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
