"""What the `intel-vs-*.py` scripts share: asking a running daemon for the
callers of each definition and counting them against a type-aware tool's call sites."""
import collections, json, os, subprocess

THRESHOLDS = (0.0, 0.35)  # every confidence, and the graph's default
# INTEL_SHOW=1 prints each extra and missed call site at the graph's threshold.
SHOW = bool(os.environ.get("INTEL_SHOW"))


def query(sql):
    """The rows of `sql` on DATABASE_URL, as lists of strings."""
    psql = os.path.join(os.environ.get("CODESEARCH_PG_BIN", ""), "psql")
    rows = subprocess.run([psql if os.path.exists(psql) else "psql", os.environ["DATABASE_URL"],
                           "-AtF", "\t", "-c", sql], capture_output=True, text=True,
                          check=True).stdout
    return [r.split("\t") for r in rows.split("\n") if r]


def definitions(repo, kinds, end=False):
    """(path, name, start line) of `repo`'s definitions of `kinds`, from DATABASE_URL; with
    `end`, (path, name, start line, end line)."""
    rows = query("SELECT f.file_path, d.name, d.start_line, d.end_line FROM code_definitions d "
                 "JOIN indexed_files f ON f.id = d.file_id WHERE d.repository = '%s' "
                 "AND d.kind IN (%s) ORDER BY f.file_path, d.start_line"
                 % (repo, ",".join("'%s'" % k for k in kinds)))
    return [(p, n, int(s), int(e)) if end else (p, n, int(s)) for p, n, s, e in rows]


def compare(repo, defs, truth_of, inside=lambda path: True, ran=None):
    """Counts, per threshold, the callers codesearch reports for each of `defs` against
    `truth_of(path, name, line)` (a set of (path, line) call sites, or None to skip the
    definition). Call sites outside `inside` are left out, and so are codesearch's call sites
    on lines outside `ran` (a set of (path, line)) when it is given: a checker that watched a
    program run knows only the lines that ran. A definition whose callers codesearch
    cannot give (an error reply) is skipped with its call sites counted as missed. Returns
    (compared, skipped, counts) with counts[threshold] = [true, extra, missed]."""
    counts = {t: [0, 0, 0] for t in THRESHOLDS}
    compared = skipped = 0
    for path, name, line in defs:
        truth = truth_of(path, name, line)
        out = None if truth is None else subprocess.run(
            [os.environ.get("CODESEARCH", "codesearch"), "code", "callers", name, "--path", path,
             "--line", str(line), "--repository", repo, "--limit", "1000", "--json"],
            capture_output=True, text=True)
        try:
            reply = json.loads(out.stdout) if out else None
        except json.JSONDecodeError:
            reply = None
        if not reply or not reply.get("success"):
            skipped += 1
            # A definition codesearch lists but cannot answer for: its call sites are missed.
            for t in THRESHOLDS:
                counts[t][2] += len({c for c in truth or () if inside(c[0])})
            if SHOW and truth:
                print(f"failed\t{path}:{line} {name}\t{(reply or {}).get('error')}")
            continue
        compared += 1
        for t in THRESHOLDS:
            ours = {(c["path"], c["line"]) for c in reply["calls"]
                    if c["confidence"] >= t and inside(c["path"])
                    and (ran is None or (c["path"], c["line"]) in ran)}
            if SHOW and t == THRESHOLDS[-1]:
                for p, l in sorted(ours - truth):
                    print(f"extra\t{path}:{line} {name}\t<- {p}:{l}")
                for p, l in sorted(truth - ours):
                    print(f"missed\t{path}:{line} {name}\t<- {p}:{l}")
            counts[t][0] += len(ours & truth)
            counts[t][1] += len(ours - truth)
            counts[t][2] += len(truth - ours)
    return compared, skipped, counts


class ByNameLine:
    """A checker's call sites keyed by the definition's (path, name, line of its name), matched
    to codesearch's definitions: a definition claims the one whose name is on its first line or
    up to 8 lines below (decorators, attributes, a doc comment inside the node); a second
    definition claiming the same one (an overload's signature before its body) is skipped."""

    def __init__(self, truth):
        self.truth = truth  # (path, name, name line) -> {(call path, call line)}
        self.lines = {}
        for path, name, line in truth:
            self.lines.setdefault((path, name), []).append(line)
        self.matched = set()

    def __call__(self, path, name, line):
        """The call sites of codesearch's definition `name` starting at `line` of `path`: a
        `truth_of` for `compare`."""
        name = name.split("::")[-1].split(".")[-1]
        near = [l for l in self.lines.get((path, name), []) if line <= l <= line + 8]
        if not near:
            return set()
        key = (path, name, min(near))
        if key in self.matched:
            return None
        self.matched.add(key)
        return self.truth[key]

    def unmatched(self):
        """How many call sites went to definitions no codesearch definition claimed (listed
        with INTEL_SHOW)."""
        n = 0
        for key, sites in sorted(self.truth.items()):
            if key not in self.matched:
                n += len(sites)
                if SHOW:
                    print(f"unlisted\t{key[0]}:{key[2]} {key[1]}\t{len(sites)} calls")
        return n

    def total(self):
        return sum(len(s) for s in self.truth.values())


def report(counts, missed_elsewhere=0):
    """Precision and recall per threshold; `missed_elsewhere` calls are counted as missed."""
    for t in THRESHOLDS:
        true, extra, missed = counts[t]
        missed += missed_elsewhere
        p = true / max(1, true + extra)
        r = true / max(1, true + missed)
        print(f"confidence >= {t}: precision {p:.3f}, recall {r:.3f} "
              f"(true {true}, extra {extra}, missed {missed})")


def call_sites_by_location(tsv):
    """A checker's call sites from lines "call path<TAB>call line<TAB>target path<TAB>target
    line": (target path, target line) -> {(call path, call line)}."""
    truth = collections.defaultdict(set)
    for line in tsv.splitlines():
        cp, cl, tp, tl = line.split("\t")
        truth[(tp, int(tl))].add((cp, int(cl)))
    return truth


def compare_by_location(repo, defs, truth, checker, inside=lambda path: True, ran=None):
    """`compare` with `truth` keyed by the definition's (path, first line), then the summary
    and `report`; call sites of declarations codesearch does not list count as missed."""
    compared, skipped, counts = compare(
        repo, defs, lambda path, name, line: truth.get((path, line), set()), inside, ran)
    listed = {(path, line) for path, _, line in defs}
    unmatched = sum(len(v) for k, v in truth.items() if k not in listed)
    print(f"{compared} definitions compared ({skipped} skipped); {checker} resolved "
          f"{sum(len(v) for v in truth.values())} calls, {unmatched} of them to declarations "
          f"codesearch does not list (counted as missed)")
    report(counts, unmatched)
