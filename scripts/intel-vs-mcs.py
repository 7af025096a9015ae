#!/usr/bin/env python3
"""Precision and recall of `codesearch code callers` against the Mono C# compiler's
resolution on a C# project, call sites only.

usage: scripts/intel-vs-mcs.py ROOT REPOSITORY ASSEMBLY SOURCE_DIR...

ROOT is the repository's root, indexed as REPOSITORY by a running daemon (DATABASE_URL set,
`codesearch` on PATH or in CODESEARCH). ASSEMBLY is the SOURCE_DIRs (relative to ROOT)
compiled by mcs with `-debug`, so that ASSEMBLY.mdb maps its instructions to source lines
(Debian's mono-mcs; mcs reads C# up to version 6 and some of 7, so an older commit of a project
may be needed). `scripts/intel-vs-mcs/CallSites.cs`, built here with mcs against Debian's
Mono.Cecil 0.9.5 (libmono-cecil-cil-dev), reads every call the compiler resolved into the
assembly's own methods, and every `new` of its own types. For each method codesearch holds
there (a body the compiler wrote), and each class or struct the code constructs, those call
sites are compared with the callers codesearch reports, at every confidence and at >= 0.35
(the graph's default). Property and event accessors and operators are left out (codesearch
does not count `x.Length` or `a + b` as calls), and so are callers outside the SOURCE_DIRs.

Not installed by the project's scripts: `apt-get install mono-mcs libmono-cecil-cil-dev`, plus
the framework assemblies the project references (Newtonsoft.Json 8.0.3 needs
libmono-system-{runtime-serialization,xml-linq,data,drawing,componentmodel-dataannotations,
numerics}4.0-cil and libmono-microsoft-csharp4.0-cil). Compile from ROOT, so that the debug
symbols name the files as the index does, e.g.
  mcs -target:library -debug -r:System.Numerics.dll … -out:/tmp/NJ.dll -recurse:'Src/Newtonsoft.Json/*.cs'
"""
import collections, os, subprocess, sys, tempfile

from intel_compare import compare_by_location, definitions

root, repo, assembly, dirs = (os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3],
                              sys.argv[4:])
here = os.path.dirname(os.path.abspath(__file__))
cecil = "/usr/lib/mono-cecil"
with tempfile.TemporaryDirectory() as tmp:
    exe = os.path.join(tmp, "CallSites.exe")
    subprocess.run(["mcs", "-nologo", f"-r:{cecil}/Mono.Cecil.dll", f"-r:{cecil}/Mono.Cecil.Mdb.dll",
                    f"-out:{exe}", os.path.join(here, "intel-vs-mcs", "CallSites.cs")], check=True)
    rows = [r.split("\t") for r in subprocess.run(
        ["mono", exe, assembly], env=dict(os.environ, MONO_PATH=cecil), capture_output=True,
        text=True, check=True).stdout.splitlines()]


def rel(path):
    return os.path.relpath(os.path.join(root, path), root)


def inside(path):
    return any(path.startswith(d.rstrip("/") + "/") for d in dirs)


methods = definitions(repo, ["method", "function"], end=True)
types = definitions(repo, ["class", "struct"], end=True)


def around(defs, path, name, line):
    """codesearch's innermost definition `name` in `path` holding `line`, as (path, start);
    for a type, the first of that name in the file when none holds the line (a constructor
    the compiler wrote)."""
    named = [(s, e) for p, n, s, e in defs if p == path and n == name]
    holding = [s for s, e in named if s <= line <= e]
    if holding:
        return (path, max(holding))
    return (path, named[0][0]) if named and defs is types else None


truth = collections.defaultdict(set)
listed = set()
for r in rows:
    if r[0] == "M":
        key = around(methods, rel(r[1]), r[2], int(r[3]))
        if key:
            listed.add(key)
    elif r[0] == "C":
        call, path, name, line = (rel(r[1]), int(r[2])), rel(r[4]), r[5], int(r[6])
        if not inside(call[0]):
            continue
        key = around(types if r[3] == "new" else methods, path, name, line)
        # A target codesearch does not list stays under its own (path, line): counted missed.
        key = key or (path, -line)
        if r[3] == "new" and key[1] > 0:
            listed.add(key)
        truth[key].add(call)

defs = [(p, n, s) for p, n, s, _ in methods + types if (p, s) in listed and inside(p)]
compare_by_location(repo, defs, truth, "mcs", inside)
