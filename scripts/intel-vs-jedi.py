#!/usr/bin/env python3
"""Precision and recall of `codesearch code callers` against jedi's references (type-aware
inference) on a Python package, call sites only.

usage: scripts/intel-vs-jedi.py PACKAGE_DIR REPOSITORY [MAX_DEFS]

PACKAGE_DIR is the package indexed as REPOSITORY by a running daemon (its parent is jedi's
project; DATABASE_URL set, `codesearch` on PATH or in CODESEARCH). For each function and method
the index holds, jedi's references that are calls (the name followed by `(`) are compared with
the callers codesearch reports, at every confidence and at >= 0.35 (the graph's default).
"""
import os, sys

import jedi

from intel_compare import compare, definitions, report

pkg, repo = sys.argv[1], sys.argv[2]
limit = int(sys.argv[3]) if len(sys.argv) > 3 else 400
project = jedi.Project(os.path.dirname(os.path.abspath(pkg)))
defs = definitions(repo, ["function", "method"])[:limit]


def jedi_calls(path, name, line):
    full = os.path.join(pkg, path)
    src = open(full).read().split("\n")
    # The definition's name on its line (decorators come first: look a few lines down).
    col, at = None, line
    for l in range(line - 1, min(line + 8, len(src))):
        i = src[l].find("def " + name)
        if i >= 0:
            col, at = i + 4, l + 1
            break
    if col is None:
        return None
    script = jedi.Script(path=full, project=project)
    truth = set()
    for ref in script.get_references(at, col, include_builtins=False):
        if ref.module_path is None or ref.line == at and ref.column == col:
            continue
        rel = os.path.relpath(str(ref.module_path), pkg)
        if rel.startswith(".."):
            continue
        text = open(os.path.join(pkg, rel)).read().split("\n")[ref.line - 1]
        after = text[ref.column + len(name):].lstrip()
        before = text[:ref.column].rstrip()
        # A call, not another definition of the name (an overload's `def edit(`).
        if after.startswith("(") and not before.endswith("def"):
            truth.add((rel, ref.line))
    return truth


compared, skipped, counts = compare(repo, defs, jedi_calls)
print(f"{compared} definitions compared ({skipped} skipped)")
report(counts)
