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
import os, subprocess, sys

from intel_compare import call_sites_by_location, compare_by_location, definitions

root, repo = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
run = subprocess.run(["go", "run", os.path.join(here, "intel-vs-gotypes", "callsites.go"), root],
                     capture_output=True, text=True, check=True)
sys.stderr.write(run.stderr)
truth = call_sites_by_location(run.stdout)
compare_by_location(repo, definitions(repo, ["function", "method"]), truth, "go/types")
