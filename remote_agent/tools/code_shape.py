# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The shape of the agent's code: its largest modules (lines), its longest functions (lines, from
`def` to the last line of the body), how many `# type:` comments it still has (`# type: ignore` counted apart) and how many modules
sit at the top of the package. The before/after figures of issue 18 come from this script.

python3 remote_agent/tools/code_shape.py [--top N] [PACKAGE_DIR]
"""

import argparse
import ast
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PKG = os.path.join(os.path.dirname(HERE), "moetune_agent")
TYPE_COMMENT = re.compile(r"#\s*type:(?!\s*ignore)")
TYPE_IGNORE = re.compile(r"#\s*type:\s*ignore")


def modules(pkg):
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                yield os.path.join(dirpath, fn)


def functions(tree):
    """(qualified name, lines) of every function and method."""
    out = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out.append((name, child.end_lineno - child.lineno + 1))
                walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def shape(pkg):
    mods, funcs, type_comments, ignores = [], [], 0, 0
    for path in modules(pkg):
        rel = os.path.relpath(path, os.path.dirname(pkg)).replace(os.sep, "/")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        mods.append((rel, text.count("\n")))
        type_comments += sum(1 for line in text.splitlines() if TYPE_COMMENT.search(line))
        ignores += sum(1 for line in text.splitlines() if TYPE_IGNORE.search(line))
        funcs.extend((rel + ":" + name, n) for name, n in functions(ast.parse(text)))
    top = sorted(fn for fn in os.listdir(pkg) if fn.endswith(".py") and fn not in ("__init__.py", "__main__.py"))
    return mods, funcs, type_comments, ignores, top


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("pkg", nargs="?", default=DEFAULT_PKG)
    p.add_argument("--top", type=int, default=10)
    a = p.parse_args(argv)
    mods, funcs, type_comments, ignores, top = shape(a.pkg)
    print("largest modules (lines):")
    for rel, n in sorted(mods, key=lambda m: (-m[1], m[0]))[:a.top]:
        print("  %5d  %s" % (n, rel))
    print("longest functions (lines):")
    for name, n in sorted(funcs, key=lambda f: (-f[1], f[0]))[:a.top]:
        print("  %5d  %s" % (n, name))
    print("modules: %d, lines: %d, functions over 60 lines: %d"
          % (len(mods), sum(n for _, n in mods), sum(1 for _, n in funcs if n > 60)))
    print("top-level modules: %d (%s)" % (len(top), ", ".join(top)))
    print("'# type:' comments: %d (and %d '# type: ignore' suppressions)" % (type_comments, ignores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
