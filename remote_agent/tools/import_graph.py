# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The agent's import graph between its own modules (every import, top-level or inside a function),
its cycles and its floors: floor 0 imports nothing of the agent, floor n imports only floors below n.
Exit status 1 when there is a cycle (then there are no floors).

python3 remote_agent/tools/import_graph.py [--edges] [--packages] [PACKAGE_DIR]

--packages folds each subpackage (runs/, run/, backends/ ...) into one node: the floors a maintainer
reads the package by.
"""

import argparse
import ast
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PKG = os.path.join(os.path.dirname(HERE), "moetune_agent")


def module_names(pkg):
    """{dotted module name: path} of every module of the package."""
    root = os.path.dirname(pkg)
    out = {}
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in filenames:
            if fn.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, fn), root)[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                out[".".join(rel)] = os.path.join(dirpath, fn)
    return out


def _resolve(name, level, module, is_pkg):
    if level == 0:
        return name
    parts = module.split(".")
    base = parts if is_pkg else parts[:-1]
    if level > 1:
        base = base[:-(level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(module, path, known):
    """The agent modules that module imports (a from-import of a submodule counts as that submodule)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    is_pkg = os.path.basename(path) == "__init__.py"
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in known:
                    out.add(a.name)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(node.module or "", node.level, module, is_pkg)
            for a in node.names:
                sub = target + "." + a.name
                if sub in known:
                    out.add(sub)
                elif target in known:
                    out.add(target)
    out.discard(module)
    return out


def fold(graph, top):
    """Each subpackage of the top package as one node."""
    def node(m):
        parts = m.split(".")
        return ".".join(parts[:2]) if len(parts) > 1 and parts[0] == top else m
    out = {}
    for m, deps in graph.items():
        out.setdefault(node(m), set()).update(node(d) for d in deps)
    for m, deps in out.items():
        deps.discard(m)
    return out


def floors(graph):
    """{module: floor}, or None when there is a cycle."""
    floor = {}
    pending = set(graph)
    while pending:
        ready = [m for m in pending if all(d in floor for d in graph[m])]
        if not ready:
            return None
        for m in ready:
            floor[m] = 1 + max((floor[d] for d in graph[m]), default=-1)
        pending.difference_update(ready)
    return floor


def cycles(graph):
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("pkg", nargs="?", default=DEFAULT_PKG)
    p.add_argument("--edges", action="store_true", help="print each module's imports")
    p.add_argument("--packages", action="store_true", help="one node per subpackage")
    a = p.parse_args(argv)
    known = module_names(os.path.abspath(a.pkg))
    graph = {m: imports_of(m, path, known) for m, path in known.items()}
    top = os.path.basename(os.path.abspath(a.pkg))
    if a.packages:
        graph = fold(graph, top)
    cyc = cycles(graph)
    for c in cyc:
        print("cycle: " + " <-> ".join(c))
    fl = floors(graph)
    if fl is None:
        print("%d modules, %d cycle(s): no floors" % (len(graph), len(cyc)))
        return 1
    for n in range(max(fl.values()) + 1):
        mods = sorted(m for m in fl if fl[m] == n)
        print("floor %d: %s" % (n, ", ".join(mods)))
        if a.edges:
            for m in mods:
                print("    %s -> %s" % (m, ", ".join(sorted(graph[m])) or "-"))
    print("%d modules, %d floors, no cycle" % (len(graph), max(fl.values()) + 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
