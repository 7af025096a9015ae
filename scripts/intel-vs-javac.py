#!/usr/bin/env python3
"""Precision and recall of `codesearch code callers` against javac's resolution (type
attribution) on a Java project, call sites only.

usage: scripts/intel-vs-javac.py ROOT REPOSITORY SOURCE_DIR...

ROOT is the repository's root, indexed as REPOSITORY by a running daemon (DATABASE_URL set);
SOURCE_DIRs (relative to ROOT) are compiled by `scripts/intel-vs-javac/CallSites.java` with the
JDK's own compiler, which prints every call it resolves into those sources. For each method
and class codesearch holds there, the call sites javac resolves to it are compared with the
callers codesearch reports (`new Foo()` counts as a call of the class `Foo`), at every
confidence and at >= 0.35 (the graph's default). Callers outside the SOURCE_DIRs (tests
that were not compiled) are left out of both sides.
"""
import collections, json, os, subprocess, sys

root, repo, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
here = os.path.dirname(os.path.abspath(__file__))
calls = subprocess.run(["java", os.path.join(here, "intel-vs-javac", "CallSites.java"), root]
                       + [os.path.join(root, d) for d in dirs],
                       capture_output=True, text=True, check=True).stdout
truth = collections.defaultdict(set)  # (target path, target line) -> {(call path, call line)}
for line in calls.splitlines():
    cp, cl, tp, tl = line.split("\t")
    truth[(tp, int(tl))].add((cp, int(cl)))
inside = lambda p: any(p.startswith(d.rstrip("/") + "/") for d in dirs)

sql = ("SELECT f.file_path, d.name, d.start_line, d.kind FROM code_definitions d "
       "JOIN indexed_files f ON f.id = d.file_id WHERE d.repository = '%s' "
       "AND d.kind IN ('function','method','class','enum') ORDER BY f.file_path, d.start_line"
       % repo)
psql = os.path.join(os.environ.get("CODESEARCH_PG_BIN", ""), "psql")
rows = subprocess.run([psql if os.path.exists(psql) else "psql", os.environ["DATABASE_URL"],
                       "-Atc", sql], capture_output=True, text=True, check=True).stdout
defs = [r.split("|") for r in rows.split("\n") if r]
defs = [d for d in defs if inside(d[0])]

tp = {0.0: 0, 0.35: 0}
fp = {0.0: 0, 0.35: 0}
fn = {0.0: 0, 0.35: 0}
matched, skipped = set(), 0
for path, name, line, kind in defs:
    line = int(line)
    want = truth.get((path, line), set())
    matched.add((path, line))
    out = subprocess.run(
        [os.environ.get("CODESEARCH", "codesearch"), "code", "callers", name, "--path", path,
         "--line", str(line), "--repository", repo, "--limit", "1000", "--json"],
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
        ours = {(c["path"], c["line"]) for c in reply["calls"]
                if c["confidence"] >= threshold and inside(c["path"])}
        tp[threshold] += len(ours & want)
        fp[threshold] += len(ours - want)
        fn[threshold] += len(want - ours)
unmatched = sum(len(v) for k, v in truth.items() if k not in matched)
print(f"{len(defs) - skipped} definitions compared ({skipped} skipped); javac resolved "
      f"{sum(len(v) for v in truth.values())} calls, {unmatched} of them to declarations "
      f"codesearch does not list (counted as missed)")
for t in (0.0, 0.35):
    fn_t = fn[t] + unmatched
    p = tp[t] / max(1, tp[t] + fp[t])
    r = tp[t] / max(1, tp[t] + fn_t)
    print(f"confidence >= {t}: precision {p:.3f}, recall {r:.3f} "
          f"(true {tp[t]}, extra {fp[t]}, missed {fn_t})")
