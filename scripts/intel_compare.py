"""What `intel-vs-jedi.py` and `intel-vs-javac.py` share: asking a running daemon for the
callers of each definition and counting them against a type-aware tool's call sites."""
import json, os, subprocess

THRESHOLDS = (0.0, 0.35)  # every confidence, and the graph's default
# INTEL_SHOW=1 prints each extra and missed call site at the graph's threshold.
SHOW = bool(os.environ.get("INTEL_SHOW"))


def definitions(repo, kinds):
    """(path, name, start line) of `repo`'s definitions of `kinds`, from DATABASE_URL."""
    sql = ("SELECT f.file_path, d.name, d.start_line FROM code_definitions d "
           "JOIN indexed_files f ON f.id = d.file_id WHERE d.repository = '%s' "
           "AND d.kind IN (%s) ORDER BY f.file_path, d.start_line"
           % (repo, ",".join("'%s'" % k for k in kinds)))
    psql = os.path.join(os.environ.get("CODESEARCH_PG_BIN", ""), "psql")
    rows = subprocess.run([psql if os.path.exists(psql) else "psql", os.environ["DATABASE_URL"],
                           "-AtF", "\t", "-c", sql], capture_output=True, text=True,
                          check=True).stdout
    return [(p, n, int(l)) for p, n, l in (r.split("\t") for r in rows.split("\n") if r)]


def compare(repo, defs, truth_of, inside=lambda path: True):
    """Counts, per threshold, the callers codesearch reports for each of `defs` against
    `truth_of(path, name, line)` (a set of (path, line) call sites, or None to skip the
    definition). Call sites outside `inside` are left out; a definition whose callers codesearch
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
                    if c["confidence"] >= t and inside(c["path"])}
            if SHOW and t == THRESHOLDS[-1]:
                for p, l in sorted(ours - truth):
                    print(f"extra\t{path}:{line} {name}\t<- {p}:{l}")
                for p, l in sorted(truth - ours):
                    print(f"missed\t{path}:{line} {name}\t<- {p}:{l}")
            counts[t][0] += len(ours & truth)
            counts[t][1] += len(ours - truth)
            counts[t][2] += len(truth - ours)
    return compared, skipped, counts


def report(counts, missed_elsewhere=0):
    """Precision and recall per threshold; `missed_elsewhere` calls are counted as missed."""
    for t in THRESHOLDS:
        true, extra, missed = counts[t]
        missed += missed_elsewhere
        p = true / max(1, true + extra)
        r = true / max(1, true + missed)
        print(f"confidence >= {t}: precision {p:.3f}, recall {r:.3f} "
              f"(true {true}, extra {extra}, missed {missed})")
