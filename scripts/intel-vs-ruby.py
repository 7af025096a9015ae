#!/usr/bin/env python3
"""Precision and recall of `codesearch code callers` against the calls Ruby itself makes while
a repository's tests run, call sites only.

usage: scripts/intel-vs-ruby.py ROOT REPOSITORY [TEST COMMAND...]

ROOT is the repository's root, indexed as REPOSITORY by a running daemon (DATABASE_URL set,
`codesearch` on PATH or in CODESEARCH). Ruby has no type-aware reference tool that can be
installed here, so the truth is the program's own behaviour: the TEST COMMAND (by default
`ruby -Ilib -Itest` loading every `test/**/test_*.rb`) runs in ROOT with
`scripts/intel-vs-ruby/trace.rb` loaded into every Ruby process it starts, which records each
call of a method defined under ROOT, where it was made, and which lines ran. `Foo.new` is
counted as a call of the class whose body holds the `initialize` it ran, as codesearch counts it;
`super` in an `initialize` as a call of the `initialize` it reaches. Operator methods (`[]`,
`<<`, `==`) are left out: codesearch counts no operator as a call, in any language.

For each method codesearch holds, and each class whose own `initialize` ran, those call sites
are compared with the callers codesearch reports, at every confidence and at >= 0.35 (the
graph's default). Only the lines that ran are judged: a call site codesearch reports on a line
that never ran is left out, since the run cannot say whether it is right. A line that ran
without making the reported call (`foo if false`) counts against codesearch, so precision is
a floor; recall is measured on the calls the tests made.

Not installed by the project's scripts: `apt-get install ruby` (Debian's Ruby 3.1 bundles
test-unit and minitest, which rake's tests need).
"""
import collections, os, subprocess, sys, tempfile

from intel_compare import compare_by_location, definitions

root, repo = os.path.realpath(sys.argv[1]), sys.argv[2]
command = sys.argv[3:] or [
    "ruby", "-Ilib", "-Itest", "-e",
    'Dir["test/**/test_*.rb"].sort.each { |f| require File.expand_path(f) }']
here = os.path.dirname(os.path.abspath(__file__))

with tempfile.TemporaryDirectory() as out:
    env = dict(os.environ, INTEL_TRACE_ROOT=root, INTEL_TRACE_OUT=out,
               RUBYOPT=" ".join(filter(None, [os.environ.get("RUBYOPT"), "-r" + os.path.join(
                   here, "intel-vs-ruby", "trace.rb")])))
    run = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stdout[-2000:] + run.stderr[-2000:])
        sys.stderr.write(f"the test command exited {run.returncode}; comparing what ran\n")
    rows = []
    for name in os.listdir(out):
        with open(os.path.join(out, name)) as f:
            rows.extend(line.rstrip("\n").split("\t") for line in f)


def rel(path):
    return os.path.relpath(path, root)


ran = {(rel(r[1]), int(r[2])) for r in rows if r[0] == "L"}


# Operator methods (`[]`, `<<`, `==`) are written as operators, which codesearch does not count
# as calls in any language: they are left out on both sides.
def operator(name):
    return not (name[:1].isalpha() or name[:1] == "_")


calls = {(rel(r[1]), int(r[2]), rel(r[3]), int(r[4]), r[6]) for r in rows
         if r[0] == "C" and not operator(r[5])}

# An `initialize` run by `Foo.new` is a call of the innermost class around it.
classes = definitions(repo, ["class"], end=True)
by_path = collections.defaultdict(list)
for path, _, start, end in classes:
    by_path[path].append((start, end))


def class_around(path, line):
    around = [(s, e) for s, e in by_path.get(path, []) if s <= line <= e]
    return (path, max(around)[0]) if around else None


truth = collections.defaultdict(set)
constructed = set()
for call_path, call_line, path, line, via in calls:
    key = (path, line)
    if via == "new":
        key = class_around(path, line) or key
        constructed.add(key)
    truth[key].add((call_path, call_line))

defs = [d for d in definitions(repo, ["function", "method"]) if not operator(d[1])]
defs += [(p, n, s) for p, n, s, _ in classes if (p, s) in constructed]
print(f"{len(calls)} distinct calls traced, {len(ran)} lines ran")
compare_by_location(repo, defs, truth, "the traced run", ran=ran)
