#!/usr/bin/env python3
"""Precision and recall of `codesearch code callers` against rust-analyzer's resolution on a
Rust crate or workspace, call sites only.

usage: scripts/intel-vs-ra.py ROOT REPOSITORY [SOURCE_DIR...]

ROOT is the crate's root, indexed as REPOSITORY by a running daemon (DATABASE_URL set,
`codesearch` on PATH or in CODESEARCH). `rust-analyzer lsif ROOT` (rustup component add
rust-analyzer; it fetches the crate's dependencies through cargo) gives every reference it
resolves; RA_LSIF=FILE keeps its output for the next run (or reads the output of a run on
another workspace under ROOT, such as its `examples`). A reference to a function or method
defined under the SOURCE_DIRs (default: src) that is a call as written (the name followed by
`(` or by `::<…>(`; not a macro, not a path passed as a value) is a true call site. For each
function and method codesearch holds there, those call sites are compared with the callers
codesearch reports, at every confidence and at >= 0.35 (the graph's default). Callers outside
the SOURCE_DIRs are left out of both sides.
"""
import collections, json, os, re, subprocess, sys
from urllib.parse import unquote, urlparse

from intel_compare import ByNameLine, compare, definitions, report

root, repo = os.path.abspath(sys.argv[1]), sys.argv[2]
dirs = sys.argv[3:] or ["src"]
# RA_LSIF=FILE keeps rust-analyzer's output there and reads it back on the next run (a
# before-and-after comparison on one commit needs it once).
cache = os.environ.get("RA_LSIF")
if cache and os.path.exists(cache):
    with open(cache) as f:
        lsif = f.read()
else:
    lsif = subprocess.run(["rust-analyzer", "lsif", root], capture_output=True, text=True,
                          check=True).stdout
    if cache:
        with open(cache, "w") as f:
            f.write(lsif)

vertices, contains, nxt, refs_of, items = {}, {}, {}, {}, collections.defaultdict(list)
for line in lsif.splitlines():
    e = json.loads(line)
    if e["type"] == "vertex":
        vertices[e["id"]] = e
    elif e["label"] == "contains":
        for v in e["inVs"]:
            contains[v] = e["outV"]
    elif e["label"] == "next":
        nxt[e["outV"]] = e["inV"]
    elif e["label"] == "textDocument/references":
        refs_of[e["outV"]] = e["inV"]
    elif e["label"] == "item":
        items[e["outV"]].append((e.get("property"), e["inVs"]))

lines_of = {}


def where(range_id):
    """(path relative to ROOT, 1-based line, text after the range on its line), or None."""
    doc = vertices.get(contains.get(range_id))
    if not doc:
        return None
    path = unquote(urlparse(doc["uri"]).path)
    rel = os.path.relpath(path, root)
    if rel.startswith(".."):
        return None
    if rel not in lines_of:
        with open(path, errors="replace") as f:
            lines_of[rel] = f.read().split("\n")
    r = vertices[range_id]
    line = r["start"]["line"]
    text = lines_of[rel][line]
    # LSIF columns are UTF-16 units; the sources here are ASCII where it matters.
    return rel, line + 1, text[r["start"]["character"]:r["end"]["character"]], \
        text[r["end"]["character"]:], text[:r["start"]["character"]]


def inside(path):
    return any(path.startswith(d.rstrip("/") + "/") for d in dirs)


CALL = re.compile(r"\s*(::\s*<.*?>\s*)?\(")
# (definition path, name, name line) -> {(call path, call line)}
truth = collections.defaultdict(set)
for range_id, result_set in nxt.items():
    if vertices.get(range_id, {}).get("label") != "range":
        continue
    ref_result = refs_of.get(result_set)
    if ref_result is None:
        continue
    defs, uses = [], []
    for prop, vs in items.get(ref_result, []):
        (defs if prop == "definitions" else uses).extend(vs)
    if range_id not in defs:
        continue  # each result once: from its definition's range
    d = where(range_id)
    if not d or not inside(d[0]) or not re.search(r"\bfn\s+" + re.escape(d[2]) + r"\b",
                                                    lines_of[d[0]][d[1] - 1]):
        continue
    for u in set(uses) - set(defs):
        w = where(u)
        if not w or not inside(w[0]) or not CALL.match(w[3]):
            continue
        # A call's line is the line its expression starts on, as codesearch records it: in a
        # chain broken over lines (`foo\n    .bar()`), the line above the `.` lines.
        line, text = w[1], lines_of[w[0]]
        while line > 1 and text[line - 1].lstrip().startswith("."):
            line -= 1
        truth[(d[0], d[2], d[1])].add((w[0], line))

truth_of = ByNameLine(truth)
defs = [d for d in definitions(repo, ["function", "method"]) if inside(d[0])]
compared, skipped, counts = compare(repo, defs, truth_of, inside)
unmatched = truth_of.unmatched()
print(f"{compared} definitions compared ({skipped} skipped); rust-analyzer resolved "
      f"{truth_of.total()} calls, {unmatched} of them to definitions codesearch does not list "
      f"(counted as missed)")
report(counts, unmatched)
