#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The folder-level include graph of src/: which folder includes which, and any circle between folders.

    python3 packaging/include_graph.py [--depth 2] [--dot]

A folder is a path under src/ cut at --depth parts (src/core/moe -> core/moe, src/remote/flows ->
remote/flows). Exits 1 when there is a circle (a folder reaching itself through includes), printing it.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel, depth):
    parts = rel.split('/')[:-1]
    return '/'.join(parts[:depth]) if parts else '.'


def graph(src, depth):
    edges = {}
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith(('.h', '.cpp')):
                rel = os.path.relpath(os.path.join(root, n), src)
                files[rel] = folder_of(rel, depth)
    for rel, frm in files.items():
        with open(os.path.join(src, rel), encoding='utf-8') as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            if inc in files:
                to = files[inc]
            elif os.path.join(os.path.dirname(rel), inc) in files:
                to = frm
            else:
                continue
            if to != frm:
                edges.setdefault(frm, {}).setdefault(to, []).append(f'{rel} -> {inc}')
    return sorted(set(files.values())), edges


def find_cycle(nodes, edges):
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, {})):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in nodes:
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--depth', type=int, default=2)
    ap.add_argument('--dot', action='store_true', help='print the graph in Graphviz dot')
    ap.add_argument('--src', default=os.path.join(os.path.dirname(__file__), '..', 'src'))
    a = ap.parse_args()
    nodes, edges = graph(a.src, a.depth)
    if a.dot:
        print('digraph includes {')
        for f, tos in sorted(edges.items()):
            for t, why in sorted(tos.items()):
                print(f'  "{f}" -> "{t}" [label={len(why)}];')
        print('}')
    else:
        for f in nodes:
            tos = edges.get(f, {})
            print(f'{f:16} -> ' + ', '.join(f'{t} ({len(w)})' for t, w in sorted(tos.items())))
    cycle = find_cycle(nodes, edges)
    if cycle:
        print('circle: ' + ' -> '.join(cycle), file=sys.stderr)
        for a_, b_ in zip(cycle, cycle[1:]):
            print(f'  {a_} -> {b_}: ' + '; '.join(edges[a_][b_][:3]), file=sys.stderr)
        return 1
    print(f'{len(nodes)} folders, no circle')
    return 0


if __name__ == '__main__':
    sys.exit(main())
