#!/usr/bin/env python3
"""Precision and recall of `codesearch code callers` against javac's resolution (type
attribution) on a Java project, call sites only.

usage: scripts/intel-vs-javac.py ROOT REPOSITORY SOURCE_DIR...

ROOT is the repository's root, indexed as REPOSITORY by a running daemon (DATABASE_URL set,
`codesearch` on PATH or in CODESEARCH); SOURCE_DIRs (relative to ROOT) are compiled by
`scripts/intel-vs-javac/CallSites.java` with the JDK's own compiler, which prints every call it
resolves into those sources. For each method and class codesearch holds there, the call sites
javac resolves to it are compared with the callers codesearch reports (`new Foo()` counts as a
call of the class `Foo`), at every confidence and at >= 0.35 (the graph's default). Callers
outside the SOURCE_DIRs (tests that were not compiled) are left out of both sides.
"""
import os, subprocess, sys

from intel_compare import call_sites_by_location, compare_by_location, definitions

root, repo, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
here = os.path.dirname(os.path.abspath(__file__))
calls = subprocess.run(["java", os.path.join(here, "intel-vs-javac", "CallSites.java"), root]
                       + [os.path.join(root, d) for d in dirs],
                       capture_output=True, text=True, check=True).stdout
truth = call_sites_by_location(calls)


def inside(path):
    return any(path.startswith(d.rstrip("/") + "/") for d in dirs)


defs = [d for d in definitions(repo, ["function", "method", "class", "enum"]) if inside(d[0])]
compare_by_location(repo, defs, truth, "javac", inside)
