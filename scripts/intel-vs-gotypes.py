#!/usr/bin/env python3
"""Precision and recall of `codesearch code callers` against go/types' resolution on a Go
module, call sites only.

usage: scripts/intel-vs-gotypes.py ROOT REPOSITORY

ROOT is the module's root (its go.mod), indexed as REPOSITORY by a running daemon (DATABASE_URL
set, `codesearch` on PATH or in CODESEARCH). `scripts/intel-vs-gotypes/callsites.go` (`go run`,
standard library only) type-checks every package of the module, tests included, and prints
every call it resolves to a function or method declared there. For each function and method
codesearch holds, those call sites are compared with the callers codesearch reports, at every
confidence and at >= 0.35 (the graph's default).
"""
import collections, os, subprocess, sys

from intel_compare import compare, definitions, report

root, repo = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
run = subprocess.run(["go", "run", os.path.join(here, "intel-vs-gotypes", "callsites.go"), root],
                     capture_output=True, text=True, check=True)
sys.stderr.write(run.stderr)
truth = collections.defaultdict(set)  # (target path, target line) -> {(call path, call line)}
for line in run.stdout.splitlines():
    cp, cl, tp, tl = line.split("\t")
    truth[(tp, int(tl))].add((cp, int(cl)))

defs = definitions(repo, ["function", "method"])
compared, skipped, counts = compare(
    repo, defs, lambda path, name, line: truth.get((path, line), set()))
listed = {(path, line) for path, _, line in defs}
unmatched = sum(len(v) for k, v in truth.items() if k not in listed)
print(f"{compared} definitions compared ({skipped} skipped); go/types resolved "
      f"{sum(len(v) for v in truth.values())} calls, {unmatched} of them to declarations "
      f"codesearch does not list (counted as missed)")
report(counts, unmatched)
