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

from intel_compare import SHOW, compare, definitions, report

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
# (target path, target name) -> {name line: {(call path, call line)}}
truth = collections.defaultdict(lambda: collections.defaultdict(set))
for line in calls.splitlines():
    cp, cl, tp, tn, tl = line.split("\t")
    truth[(tp, tn)][int(tl)].add((cp, int(cl)))


def inside(path):
    return any(path.startswith(d.rstrip("/") + "/") for d in dirs)


matched = set()  # (path, name, name line) of the checker's targets that a definition claimed


def truth_of(path, name, line):
    """The checker's call sites of the declaration named `name` in `path` whose name is on the
    definition's first line or a few lines below it (decorators, a JSDoc inside the node)."""
    name = name.split(".")[-1]
    near = [l for l in truth.get((path, name), {}) if line <= l <= line + 8]
    if not near:
        return set()
    l = min(near)
    if (path, name, l) in matched:
        return None  # an overload's signature before its body: one definition compared
    matched.add((path, name, l))
    return truth[(path, name)][l]


defs = [d for d in definitions(repo, ["function", "method", "class"]) if inside(d[0])]
compared, skipped, counts = compare(repo, defs, truth_of, inside)
unmatched = 0
for (tp, tn), by_line in sorted(truth.items()):
    for tl, sites in sorted(by_line.items()):
        if (tp, tn, tl) not in matched:
            unmatched += len(sites)
            if SHOW:
                print(f"unlisted\t{tp}:{tl} {tn}\t{len(sites)} calls")
total = sum(len(s) for by_line in truth.values() for s in by_line.values())
print(f"{compared} definitions compared ({skipped} skipped); the checker resolved {total} calls, "
      f"{unmatched} of them to declarations codesearch does not list (counted as missed)")
report(counts, unmatched)
