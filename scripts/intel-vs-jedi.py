#!/usr/bin/env python3
"""Precision and recall of `codesearch code callers` against jedi's references (type-aware
inference) on a Python package, call sites only.

usage: scripts/intel-vs-jedi.py PACKAGE_DIR REPOSITORY [MAX_DEFS]

PACKAGE_DIR is the package indexed as REPOSITORY by a running daemon (its parent is jedi's
project). For each function and method the index holds, jedi's references that are calls
(the name followed by `(`) are compared with the callers codesearch reports, at every
confidence and at >= 0.35 (the graph's default).
"""
import json, os, subprocess, sys

import jedi

pkg, repo = sys.argv[1], sys.argv[2]
limit = int(sys.argv[3]) if len(sys.argv) > 3 else 400
project = jedi.Project(os.path.dirname(os.path.abspath(pkg)))
sql = ("SELECT f.file_path, d.name, d.start_line, d.kind FROM code_definitions d "
       "JOIN indexed_files f ON f.id = d.file_id WHERE d.repository = '%s' "
       "AND d.kind IN ('function','method') ORDER BY f.file_path, d.start_line" % repo)
rows = subprocess.run(["psql", os.environ["DATABASE_URL"], "-Atc", sql], capture_output=True,
                      text=True, check=True).stdout.split("\n")
defs = [r.split("|") for r in rows if r][:limit]

tp = {0.0: 0, 0.35: 0}
fp = {0.0: 0, 0.35: 0}
fn = {0.0: 0, 0.35: 0}
skipped = 0
for path, name, line, kind in defs:
    line = int(line)
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
        skipped += 1
        continue
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
    out = subprocess.run(
        ["codesearch", "code", "callers", name, "--path", path, "--line", str(line),
         "--repository", repo, "--limit", "1000", "--json"],
        capture_output=True, text=True)
    try:
        reply = json.loads(out.stdout)
    except json.JSONDecodeError:
        skipped += 1
        continue
    if not reply.get("success"):
        skipped += 1
        continue
    for threshold in (0.0, 0.35):
        ours = {(c["path"], c["line"]) for c in reply["calls"] if c["confidence"] >= threshold}
        tp[threshold] += len(ours & truth)
        fp[threshold] += len(ours - truth)
        fn[threshold] += len(truth - ours)
print(f"{len(defs) - skipped} definitions compared ({skipped} skipped)")
for t in (0.0, 0.35):
    p = tp[t] / max(1, tp[t] + fp[t])
    r = tp[t] / max(1, tp[t] + fn[t])
    print(f"confidence >= {t}: precision {p:.3f}, recall {r:.3f} "
          f"(true {tp[t]}, extra {fp[t]}, missed {fn[t]})")
