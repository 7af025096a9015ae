#!/usr/bin/env python3
"""How sure a relevance difference is: paired bootstrap intervals per repository.

The relevance bench scores each repository on 13 to 160 queries, so one query moves its R@10 by
0.006 to 0.077. This script reads the rankings the bench wrote (RELEVANCE_RANKINGS=FILE) and the
label files, and prints for every repository and set the difference in file-level R@10 and
MRR@10 between hybrid search and each other mode, with a 95 % interval from a paired bootstrap
over the queries (the same resampled queries for both modes):

    RELEVANCE_SETS=queries,commits,validation,long,subjects RELEVANCE_RANKINGS=/tmp/rank.tsv \
        RELEVANCE_MIRRORS=/work/.mirror scripts/bench.sh relevance
    scripts/relevance-intervals.py /tmp/rank.tsv [--against bm25-file] [--resamples 10000]
        [--merge-subjects]

Rows are per repository and kind of query: its intent or commit-subject queries, its long ones
(long.toml), and the further commit subjects of subjects.toml and large-subjects.toml, or those
counted with the first (--merge-subjects).

A difference whose interval holds 0 is not shown to be a difference by these queries; an
interval wholly above +0.05 shows a lead of more than 0.05. Deterministic (a fixed seed).
"""

import argparse
import collections
import pathlib
import random
import tomllib

SETS = ["queries", "commits", "validation", "long", "subjects", "large", "large-subjects"]
LABELS = pathlib.Path(__file__).resolve().parent.parent / "benches" / "relevance"


def scores(files, relevant):
    """File-level R@10 and MRR@10 of one ranking."""
    top = []
    for f in files:
        if f not in top:
            top.append(f)
    top = top[:10]
    recall = len(relevant & set(top)) / len(relevant)
    mrr = next((1 / (i + 1) for i, f in enumerate(top) if f in relevant), 0.0)
    return recall, mrr


def interval(diffs, resamples, rng):
    """Mean of `diffs` and its 95 % bootstrap interval."""
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    return sum(diffs) / n, means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rankings", help="the file RELEVANCE_RANKINGS wrote")
    ap.add_argument("--against", default="bm25-file,lexical,vector",
                    help="modes to compare hybrid with (comma-separated)")
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--merge-subjects", action="store_true",
                    help="count subjects.toml's (and large-subjects.toml's) queries with their "
                    "repository's short ones")
    args = ap.parse_args()

    labels = {}
    for name in SETS:
        path = LABELS / f"{name}.toml"
        for q in tomllib.loads(path.read_text()).get("query", []):
            labels[(q["corpus"], q["query"])] = (name, set(q["relevant"]))

    ranked = collections.defaultdict(dict)
    for line in open(args.rankings, encoding="utf-8"):
        mode, corpus, query, files = line.rstrip("\n").split("\t")
        ranked[(corpus, query)][mode] = files.split(" ") if files else []

    rows = collections.defaultdict(list)  # (corpus, set) -> [(mode -> (recall, mrr))]
    for key, modes in ranked.items():
        if key not in labels:
            continue
        name, relevant = labels[key]
        kind = {"long": "long", "subjects": "subjects", "large-subjects": "subjects"}.get(
            name, "short")
        if args.merge_subjects and kind == "subjects":
            kind = "short"
        rows[(key[0], kind)].append(
            {m: scores(files, relevant) for m, files in modes.items()})

    rng = random.Random(19)
    against = args.against.split(",")
    print(f"hybrid minus each mode, mean [95 % interval]; {args.resamples} paired resamples")
    print(f"{'repository':24} {'n':>3}  " + "  ".join(
        f"{m + ' R@10':>26}  {m + ' MRR':>26}" for m in against))
    for (corpus, kind), queries in sorted(rows.items()):
        cells = []
        for m in against:
            for metric in (0, 1):
                diffs = [q["hybrid"][metric] - q[m][metric] for q in queries if m in q]
                mean, lo, hi = interval(diffs, args.resamples, rng)
                cells.append(f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        name = corpus if kind == "short" else f"{corpus} ({kind})"
        print(f"{name:24} {len(queries):>3}  " + "  ".join(f"{c:>26}" for c in cells))


if __name__ == "__main__":
    main()
