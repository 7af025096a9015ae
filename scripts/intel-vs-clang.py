#!/usr/bin/env python3
"""Precision and recall of `codesearch code callers` against clang's resolution on a C or C++
project, call sites only.

usage: scripts/intel-vs-clang.py [--exclude REGEX] ROOT REPOSITORY SOURCE... [-- CLANG_ARG...]

ROOT is the repository's root, indexed as REPOSITORY by a running daemon (DATABASE_URL set,
`codesearch` on PATH or in CODESEARCH). SOURCEs (relative to ROOT) are files or directories;
every .c/.cc/.cpp/.cxx file under them is parsed by libclang (`pip install libclang`) with
`-I ROOT` and the CLANG_ARGs (`-std=c++17 -Iinclude`, say). Every call written in those files
(not one a macro expands to: codesearch reads the source as written) whose callee clang
resolves to a function defined in the SOURCEs is a true call site. For each function and
method codesearch holds in the SOURCEs, those call sites are compared with the callers
codesearch reports, at every confidence and at >= 0.35 (the graph's default); a constructor's
calls count as calls of its class, and overloads (one name in one file) as one. Paths matching
the --exclude regex (tests, say) are left out of both sides.
"""
import collections, os, re, subprocess, sys

import clang.cindex as ci

ci.conf.lib.clang_getFileLocation.argtypes = [
    ci.SourceLocation, ci.POINTER(ci.c_object_p), ci.POINTER(ci.c_uint), ci.POINTER(ci.c_uint),
    ci.POINTER(ci.c_uint)]

from intel_compare import SHOW, compare, definitions, report

args = sys.argv[1:]
clang_args = []
if "--" in args:
    clang_args = args[args.index("--") + 1:]
    args = args[:args.index("--")]
exclude = None
if args[:1] == ["--exclude"]:
    exclude, args = re.compile(args[1]), args[2:]
root, repo, sources = os.path.abspath(args[0]), args[1], args[2:]
SOURCE_EXT = (".c", ".cc", ".cpp", ".cxx")
HEADER_EXT = (".h", ".hh", ".hpp", ".hxx")


def rel(path):
    return os.path.relpath(os.path.abspath(path), root)


def inside(path):
    """Whether a path relative to ROOT is one of the SOURCEs or under one."""
    if exclude and exclude.search(path):
        return False
    for s in sources:
        s = os.path.normpath(s)
        if s == "." and "/" not in path:
            return True
        if path == s or path.startswith(s.rstrip("/") + "/"):
            return True
    return False


files = []
for s in sources:
    p = os.path.join(root, s)
    if os.path.isfile(p):
        files.append(p)
    elif os.path.normpath(s) == ".":
        files += [os.path.join(root, f) for f in os.listdir(root) if f.endswith(SOURCE_EXT)]
    else:
        for d, _, names in os.walk(p):
            files += [os.path.join(d, f) for f in names if f.endswith(SOURCE_EXT)]

# The libclang wheel ships without its own headers (stddef.h, stdarg.h): use the C compiler's.
builtin = subprocess.run(["gcc", "-print-file-name=include"], capture_output=True,
                         text=True).stdout.strip()
if builtin and os.path.isdir(builtin):
    clang_args = ["-isystem", builtin] + clang_args
index = ci.Index.create()
fatal = 0
defined = {}  # USR -> (path, name), functions and methods defined in the SOURCEs
calls = set()  # (call path, call line, callee USR)
macro_calls = operators = 0
lines_of = {}


def file_location(loc):
    """(file name, line, column) where the code at `loc` is written: inside a macro's
    argument, the argument (libclang's clang_getFileLocation), not the macro's use."""
    f, line, col, off = ci.c_object_p(), ci.c_uint(), ci.c_uint(), ci.c_uint()
    ci.conf.lib.clang_getFileLocation(loc, ci.byref(f), ci.byref(line), ci.byref(col),
                                      ci.byref(off))
    if not f:
        return None
    return ci.File(f).name, line.value, col.value


def written(path, first, last):
    """The text of `path` from (line, column) `first` to `last`."""
    if path not in lines_of:
        with open(os.path.join(root, path), errors="replace") as f:
            lines_of[path] = f.read().split("\n")
    lines = lines_of[path][first[0] - 1:last[0]]
    if not lines:
        return ""
    lines[-1] = lines[-1][:last[1] - 1]
    lines[0] = lines[0][first[1] - 1:]
    return "\n".join(lines)


FUNCTIONS = {ci.CursorKind.FUNCTION_DECL, ci.CursorKind.CXX_METHOD, ci.CursorKind.CONSTRUCTOR,
             ci.CursorKind.FUNCTION_TEMPLATE}
files = [f for f in set(files) if inside(rel(f))]
for path in sorted(files):
    tu = index.parse(path, args=["-I", root] + clang_args)
    for d in tu.diagnostics:
        if d.severity >= ci.Diagnostic.Error:
            fatal += 1
            print(f"{rel(path)}: {d}", file=sys.stderr)
    for cursor in tu.cursor.walk_preorder():
        loc = file_location(cursor.location)
        if loc is None:
            continue
        where = rel(loc[0])
        if where.startswith("..") or not inside(where):
            continue
        if cursor.kind in FUNCTIONS and cursor.is_definition():
            defined[cursor.get_usr()] = (where, cursor.spelling)
        elif cursor.kind == ci.CursorKind.CALL_EXPR and cursor.referenced is not None:
            callee = cursor.referenced
            if callee.kind not in FUNCTIONS:
                continue
            if callee.spelling.startswith("operator"):
                operators += 1  # `a == b`: not a call as written
                continue
            # Written in the source: the call's text, from where it starts to where it ends,
            # names the callee (a call a macro expands to maps to the macro's use instead).
            first = file_location(cursor.extent.start)
            last = file_location(cursor.extent.end)
            if not first or not last or first[0] != last[0]:
                macro_calls += 1
                continue
            if callee.spelling not in written(rel(first[0]), first[1:], last[1:]):
                macro_calls += 1
                continue
            # The line the call starts on, as codesearch records it; a declaration's USR is
            # its definition's, wherever that is: matched below.
            calls.add((rel(first[0]), first[1], callee.get_usr()))

truth = collections.defaultdict(set)  # (target path, name) -> {(call path, call line)}
for where, line, usr in calls:
    if usr in defined:
        truth[defined[usr]].add((where, line))

# Overloads share their call sites here (clang's are told apart, codesearch's are not): one
# definition per (path, name) is compared. A class stands for its constructors, as in
# `intel-vs-javac.py`: `Slice(p, n)` and `new Slice(p, n)` are calls of `Slice`.
defs, seen = [], set()
for d in definitions(repo, ["function", "method", "class", "struct"]):
    key = (d[0], d[1].split("::")[-1])
    if inside(d[0]) and key not in seen:
        seen.add(key)
        defs.append(d)
compared, skipped, counts = compare(
    repo, defs, lambda path, name, line: truth.get((path, name.split("::")[-1]), set()), inside)
listed = {(path, name.split("::")[-1]) for path, name, _ in defs}
unmatched = sum(len(v) for k, v in truth.items() if k not in listed)
if SHOW:
    for k, v in sorted(truth.items()):
        if k not in listed:
            print(f"unlisted\t{k[0]} {k[1]}\t{len(v)} calls")
print(f"{len(files)} files parsed ({fatal} errors); {compared} definitions compared ({skipped} skipped); clang "
      f"resolved {sum(len(v) for v in truth.values())} written calls into the sources, "
      f"{unmatched} of them to definitions codesearch does not list (counted as missed); "
      f"{macro_calls} calls that macros expand to and {operators} operator calls left out")
report(counts, unmatched)
