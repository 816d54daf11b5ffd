#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""No cycle between source files: `cycles.py BUILD_DIR [A B]`.

Also fails on an #include cycle among the source tree's own headers and files.

Reads the symbols each object file of hutch's modules defines and uses (nm), draws an edge
from a file to each file whose symbols it calls, and fails naming every strongly connected
group of more than one file: a cycle means two files are one unit that the layout splits.
With two file names, prints the symbols each of them takes from the other instead.
Static functions are not seen (they cannot make a cycle between files).
"""
import json
import os
import re
import subprocess
import sys

SKIP = ("tests", "bench")


def objects(build):
    # The build's own list: a stale object of a removed file would draw old edges.
    db = os.path.join(build, "compile_commands.json")
    if os.path.exists(db):
        with open(db) as f:
            for e in json.load(f):
                out = e.get("output", "")
                if out.endswith(".c.o") and out.split(os.sep)[0] not in SKIP:
                    yield os.path.join(build, out)
        return
    for top, dirs, files in os.walk(build):
        rel = os.path.relpath(top, build)
        if rel.split(os.sep)[0] in SKIP or rel.startswith("meson-"):
            dirs[:] = []
            continue
        for f in files:
            if f.endswith(".c.o"):
                yield os.path.join(top, f)


def source_name(obj):
    # meson names objects <dir>_<file>.c.o inside <target>.p/
    return os.path.basename(obj)[: -len(".c.o")].split("_")[-1] + ".c"


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if l.split()[1:2] and l.split()[1] in "TDBR"}
    out = subprocess.run(["nm", "--undefined-only", obj], capture_output=True, text=True).stdout
    used = {l.split()[-1] for l in out.splitlines() if l.strip()}
    return defined, used


def graph(build):
    owner, uses = {}, {}
    for obj in objects(build):
        name = source_name(obj)
        if name in uses:  # the same file in two targets: one node
            continue
        defined, used = symbols(obj)
        uses[name] = used
        for s in defined:
            owner.setdefault(s, name)
    edges = {n: {} for n in uses}
    for n, used in uses.items():
        for s in used:
            o = owner.get(s)
            if o and o != n:
                edges[n].setdefault(o, []).append(s)
    return edges


def include_edges():
    """File -> the project files it includes ("..." includes, by file name)."""
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    paths = {}
    for d, dirs, files in os.walk(top):
        rel = os.path.relpath(d, top)
        if rel.split(os.sep)[0] in SKIP or rel.startswith(("build", ".")) and rel != ".":
            dirs[:] = []
            continue
        for f in files:
            if f.endswith((".c", ".h")):
                paths[f] = os.path.join(d, f)
    edges = {}
    for name, path in paths.items():
        with open(path, errors="replace") as f:
            text = f.read()
        edges[name] = {m: [] for m in re.findall(r'#include "([^"]+)"', text) if m in paths and m != name}
    return edges


def sccs(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def main():
    if len(sys.argv) not in (2, 4):
        sys.exit(__doc__)
    edges = graph(sys.argv[1])
    if len(sys.argv) == 4:
        a, b = sys.argv[2], sys.argv[3]
        print(f"{a} -> {b}:", " ".join(sorted(edges.get(a, {}).get(b, []))))
        print(f"{b} -> {a}:", " ".join(sorted(edges.get(b, {}).get(a, []))))
        return
    if not edges:
        sys.exit(f"cycles.py: no object files under {sys.argv[1]}")
    bad = sccs(edges)
    for c in bad:
        print("cycle between " + ", ".join(c))
    inc = sccs(include_edges())
    for c in inc:
        print("include cycle between " + ", ".join(c))
    bad += inc
    print(f"{len(edges)} files, {sum(len(e) for e in edges.values())} edges, {len(bad)} cycles")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
