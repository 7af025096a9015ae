#!/usr/bin/env python3
"""Precision and recall of `codesearch code callers` against the TypeScript compiler's type
checker on a TypeScript or JavaScript project, call sites only.

usage: scripts/intel-vs-tsc.py ROOT REPOSITORY SOURCE_DIR...

ROOT is the repository's root, indexed as REPOSITORY by a running daemon (DATABASE_URL set,
`codesearch` on PATH or in CODESEARCH). `scripts/intel-vs-tsc/call-sites.js` type-checks the
SOURCE_DIRs (relative to ROOT) with the `typescript` npm package (installed into
.codesearch/npm on first use; TYPESCRIPT_VERSION, default 5.9.3) and prints every call it
resolves into them. For each function, method and class codesearch holds there, those call
sites are compared with the callers codesearch reports (`new Foo()` counts as a call of the
class `Foo`), at every confidence and at >= 0.35 (the graph's default). Callers outside the
SOURCE_DIRs are left out of both sides. The project's own dependencies are not installed, so
calls into them resolve to nothing and are left out.
"""
import collections, os, subprocess, sys

from intel_compare import ByNameLine, compare, definitions, report

root, repo, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
here = os.path.dirname(os.path.abspath(__file__))
npm = os.path.join(os.path.dirname(here), ".codesearch", "npm")
version = os.environ.get("TYPESCRIPT_VERSION", "5.9.3")
if not os.path.isdir(os.path.join(npm, "node_modules", "typescript")):
    print(f"installing typescript@{version} into {npm}", file=sys.stderr)
    subprocess.run(["npm", "install", "--prefix", npm, "--no-audit", "--no-fund",
                    "--loglevel=error", f"typescript@{version}"], check=True,
                   stdout=subprocess.DEVNULL)
calls = subprocess.run(["node", os.path.join(here, "intel-vs-tsc", "call-sites.js"), root]
                       + [os.path.join(root, d) for d in dirs],
                       env={**os.environ, "NODE_PATH": os.path.join(npm, "node_modules")},
                       capture_output=True, text=True, check=True).stdout
truth = collections.defaultdict(set)  # (target path, name, name line) -> {(call path, line)}
for line in calls.splitlines():
    cp, cl, tp, tn, tl = line.split("\t")
    truth[(tp, tn, int(tl))].add((cp, int(cl)))


def inside(path):
    return any(path.startswith(d.rstrip("/") + "/") for d in dirs)


truth_of = ByNameLine(truth)
defs = [d for d in definitions(repo, ["function", "method", "class"]) if inside(d[0])]
compared, skipped, counts = compare(repo, defs, truth_of, inside)
unmatched = truth_of.unmatched()
print(f"{compared} definitions compared ({skipped} skipped); the checker resolved "
      f"{truth_of.total()} calls, {unmatched} of them to declarations codesearch does not list "
      f"(counted as missed)")
report(counts, unmatched)
