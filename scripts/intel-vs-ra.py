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


OPENER = {")": "(", "]": "[", "}": "{", ">": "<"}


def start_line(path, line, column):
    """The line a call's expression starts on, as codesearch records it: for a method called
    on a receiver broken over lines (`Router::new()\n    .route("/", get(h))\n    .layer(l)`,
    `(\n    a,\n    b,\n)\n.into_response()`), the line the receiver starts on. Read back from
    the name through the receiver: names, `.`, `::`, `?`, macros' `!` and bracketed groups
    (`<…>` after `::` only); a name or group joins the one after it only when they touch
    (`get(…)`), and a `.` or `::` joins anything (`self\n    .inner`)."""
    text = lines_of[path]
    src = "\n".join(text)
    i = sum(len(t) + 1 for t in text[:line - 1]) + column - 1
    while i >= 0 and src[i].isspace():
        i -= 1
    # Only a call on a receiver (`.name(`) reaches back; a bare call starts at its name.
    if i < 0 or src[i] != ".":
        return line
    start, last = i, "dot"  # what joins on the right of the next token read
    i -= 1
    while i >= 0:
        j = i
        while j >= 0 and src[j].isspace():
            j -= 1
        if j < 0:
            break
        touching = j == i
        c = src[j]
        if c in OPENER and (last == "dot" or (touching and last == "group")) \
                and (c != ">" or last == "colons"):
            depth, k = 0, j
            while k >= 0:
                if src[k] == c:
                    depth += 1
                elif src[k] == OPENER[c]:
                    depth -= 1
                    if depth == 0:
                        break
                k -= 1
            if k < 0:
                break
            start, last, i = k, "group", k - 1
        elif (c.isalnum() or c == "_") and (last in ("dot", "colons") or (touching and last == "group")):
            while j >= 0 and (src[j].isalnum() or src[j] == "_"):
                j -= 1
            start, last, i = j + 1, "word", j
        elif c == "!" and touching and last == "group":
            i = j - 1  # a macro's name follows
            last = "group"
        elif c in ".?" and last in ("word", "group"):
            start, last, i = j, "dot", j - 1
        elif c == ":" and src[j - 1:j + 1] == "::" and last in ("word", "group"):
            start, last, i = j - 1, "colons", j - 2
        else:
            break
    return src.count("\n", 0, start) + 1


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
        truth[(d[0], d[2], d[1])].add((w[0], start_line(w[0], w[1], len(w[4]))))

truth_of = ByNameLine(truth)
defs = [d for d in definitions(repo, ["function", "method"]) if inside(d[0])]
compared, skipped, counts = compare(repo, defs, truth_of, inside)
unmatched = truth_of.unmatched()
print(f"{compared} definitions compared ({skipped} skipped); rust-analyzer resolved "
      f"{truth_of.total()} calls, {unmatched} of them to definitions codesearch does not list "
      f"(counted as missed)")
report(counts, unmatched)
