#!/usr/bin/env python3
"""Labelled relevance queries from a repository's own history.

A commit's subject is a question its author wrote; the source files the commit changed are the
files that answer it. This script turns a repository's history into such pairs, to be searched
over the repository as it stands at one commit (the snapshot), and prints them as TOML for
benches/relevance (see benches/relevance/commits.toml and docs/BENCHMARKS.md).

    scripts/relevance-from-git.py --git-dir DIR --name fd --url https://github.com/sharkdp/fd \
        [--commit REV] [--max 40] >> benches/relevance/commits.toml

With --body the query is the whole message, subject and body, the way a ticket or a pull
request describes a change: only commits whose body has at least 12 words are kept, and
trailers (Signed-off-by, Co-authored-by...), issue references, links and HTML comments are
removed from it. --queries-only prints the queries without the [[corpus]] block, for a set
that searches corpora another set declares (benches/relevance/long.toml). --skip-sources FILE
(repeatable) leaves out the commits a set already holds (its `source = "commit …"` lines), for
a further sample from the same history (benches/relevance/subjects.toml). --also-ext EXT
(repeatable) counts files of another language as source (benches/relevance/outline.toml: PHP,
Kotlin, Elixir). --follow-renames labels a file the commit changed that has moved since by its
name in the snapshot (git's rename detection, exact renames only where blobs are missing);
without it such a file is left out, as it was for every set in benches/relevance, so those
sets never reward a ranking for finding a file that moved (docs/BENCHMARKS.md, "The history
counts follow renames").

What is kept, so that the labels are answers and the queries are questions:
- non-merge commits whose subject has at least four words and is not housekeeping (a release,
  a version or dependency bump, formatting, lint, typos, CI, a revert);
- the files the commit added or modified that still exist, at the same path (or, with
  --follow-renames, under the name they were moved to), in the snapshot, and are source or documentation a search should return: not tests, changelogs, lock files,
  CI or packaging files, generated output;
- commits with 1 to 4 such files (a commit touching dozens of files answers nothing in
  particular).
The sample is spread evenly over the kept commits, newest first, and is deterministic: the
same repository and snapshot give the same queries. Nothing is edited by hand.
"""

import argparse
import re
import subprocess
import sys

HOUSEKEEPING = re.compile(
    r"""\b(bump|bumps|release|released|releasing|version|versions|changelog|merge|merged|
    typo|typos|spelling|fmt|rustfmt|clippy|lint|linter|eslint|prettier|gofmt|black|ruff|
    formatting|reformat|ci|github\s+actions|workflow|dependabot|deps|dependencies|dependency|
    renovate|revert|readme|license|copyright|msrv|toolchain|\d+\.\d+(\.\d+)?)\b""",
    re.I | re.X,
)
SKIP_PATH = re.compile(
    r"""(^|/)(tests?|testing|__tests__|spec|specs|testdata|fixtures?|benches|benchmarks?|
    examples?|\.github|\.circleci|ci|vendor|node_modules|dist|build)/|
    (^|/)(test_[^/]*|[^/]*_test\.[a-z]+|[^/]*\.test\.[a-z]+|[^/]*\.spec\.[a-z]+|conftest\.py)$|
    (^|/)[a-z]+Test/|(^|/)[^/]*Tests?\.(java|kt|kts|swift|scala)$|
    (^|/)(CHANGELOG|CHANGES|HISTORY|NEWS|AUTHORS|CONTRIBUTORS|LICENSE|COPYING|NOTICE)[^/]*$|
    \.(lock|sum|toml|cfg|ini|ya?ml|json|txt|in|svg|png|jpe?g|gif|ico|snap)$|
    (^|/)(Makefile|Dockerfile|setup\.py|package\.json|go\.mod|Package\.swift)$|\.gradle(\.kts)?$|
    (^|/)\.[^/]+$""",
    re.I | re.X,
)
CODE_OR_DOCS = re.compile(r"\.(rs|py|pyi|ts|tsx|js|mjs|cjs|jsx|go|md|rst|graphql|sql|sh)$")


def git(git_dir, *args):
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True
    ).stdout


def clean_subject(s):
    s = re.sub(r"\s*\((#\d+(,\s*)?)+\)\s*$", "", s)  # "(#123)" that GitHub appends
    s = re.sub(r"\b(fixes|closes|fix|close|resolves?)\s+#\d+\b[:,]?", "", s, flags=re.I)
    s = re.sub(r"#\d+", "", s)
    return " ".join(s.split()).strip(" .:-")


TRAILER = re.compile(r"^\s*[A-Za-z-]+-by:|^\s*(Change-Id|Refs?|See|Closes|Fixes|Resolves):", re.I)


def clean_body(body):
    """The prose of a commit's body: no trailers, links, issue references or HTML comments."""
    body = re.sub(r"<!--.*?-->", " ", body, flags=re.S)
    lines = [line for line in body.split("\n") if not TRAILER.search(line)]
    text = " ".join(" ".join(lines).split())
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"\b(fixes|closes|fix|close|resolves?)\s+#\d+\b[:,]?", " ", text, flags=re.I)
    text = re.sub(r"[\w.-]*#\d+", " ", text)
    text = re.sub(r"\(\s*\)", " ", text)
    text = re.sub(r"\s+([.,;:])", r"\1", " ".join(text.split()))
    if len(text) > MAX_BODY_CHARS:
        text = text[:MAX_BODY_CHARS].rsplit(" ", 1)[0]
    return text


def renames_by_commit(git_dir, snapshot):
    """Each non-merge commit's renames up to the snapshot, `(old path, new path)`, by commit id."""
    for detect in ("--find-renames", "--find-renames=100%"):
        out = subprocess.run(
            ["git", "--git-dir", git_dir, "log", "--no-merges", detect, "--diff-filter=R",
             "--name-status", "-z", "--format=%x01%H", snapshot],
            capture_output=True,
        )
        # A blob-less clone cannot compare blobs it lacks: exact renames need none.
        if out.returncode == 0:
            break
    else:
        sys.exit(out.stderr.decode("utf-8", "replace"))
    renames, sha = {}, None
    fields = out.stdout.decode("utf-8", "replace").split("\0")
    i = 0
    while i < len(fields):
        field = fields[i].lstrip("\n")
        i += 1
        if field.startswith("\x01"):
            sha = field[1:]
        elif field.startswith("R") and sha and i + 1 < len(fields):
            renames.setdefault(sha, []).append((fields[i], fields[i + 1]))
            i += 2
    return renames


# A long description is cut here: about 300 words, well under search.max_query_chars.
MAX_BODY_CHARS = 2000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git-dir", required=True)
    ap.add_argument("--name", required=True, help="the corpus name in the bench")
    ap.add_argument("--url", required=True, help="where the repository is cloned from")
    ap.add_argument("--commit", default="HEAD", help="the snapshot searched (default HEAD)")
    ap.add_argument("--max", type=int, default=40, help="queries to keep")
    ap.add_argument("--language", default="", help="written beside the corpus, for people")
    ap.add_argument("--body", action="store_true", help="whole messages, subject and body")
    ap.add_argument("--queries-only", action="store_true", help="no [[corpus]] block")
    ap.add_argument(
        "--also-ext",
        action="append",
        default=[],
        metavar="EXT",
        help="count files with this extension as source too (php, kt, ex: languages the "
        "chunker cuts by their outline)",
    )
    ap.add_argument(
        "--follow-renames",
        action="store_true",
        help="label a changed file that has moved since by its name in the snapshot",
    )
    ap.add_argument(
        "--skip-sources",
        action="append",
        default=[],
        metavar="FILE",
        help="leave out the commits this set file names",
    )
    args = ap.parse_args()
    skipped = set()
    for path in args.skip_sources:
        with open(path, encoding="utf-8") as f:
            skipped.update(re.findall(r'^source = "commit ([0-9a-f]+)"', f.read(), re.M))

    also = tuple(f".{e.lstrip('.')}" for e in args.also_ext)
    snapshot = git(args.git_dir, "rev-parse", args.commit).strip()
    present = set(git(args.git_dir, "ls-tree", "-r", "--name-only", snapshot).split("\n"))
    log = git(
        args.git_dir,
        "log",
        "--no-merges",
        "--no-renames",
        "--format=%x00%H%x1f%s%x1f%b%x1e",
        "--name-status",
        snapshot,
    )
    renames = renames_by_commit(args.git_dir, snapshot) if args.follow_renames else {}
    # A path as an older commit named it -> its name in the snapshot, for the files moved by
    # the commits already walked (newer ones); `pending`: the last commit's own renames.
    now, pending = {}, []
    kept = []
    seen_subjects = set()
    for block in log.split("\0")[1:]:
        head, _, files = block.partition("\x1e")
        sha, _, rest = head.partition("\x1f")
        now.update({old: now.get(new, new) for old, new in pending})
        pending = renames.get(sha, [])
        if sha[:12] in skipped:
            continue
        subject, _, body = rest.partition("\x1f")
        query = clean_subject(subject)
        words = re.findall(r"[A-Za-z]{2,}", query)
        if len(words) < 4 or HOUSEKEEPING.search(query) or query.lower() in seen_subjects:
            continue
        if args.body:
            body = clean_body(body)
            if len(re.findall(r"[A-Za-z]{2,}", body)) < 12:
                continue
        changed = []
        for line in files.strip().split("\n"):
            parts = line.split("\t")
            if len(parts) != 2 or parts[0] not in ("A", "M"):
                continue
            path = now.get(parts[1], parts[1])
            source = CODE_OR_DOCS.search(path) or path.endswith(also)
            if path in present and source and not SKIP_PATH.search(path):
                changed.append(path)
        if not 1 <= len(changed) <= 4:
            continue
        seen_subjects.add(query.lower())
        if args.body:
            query = f"{query}. {body}" if query[-1:].isalnum() else f"{query} {body}"
        kept.append((sha, query, sorted(set(changed))))

    step = max(1, len(kept) / max(1, args.max))
    sample = [kept[int(i * step)] for i in range(min(args.max, len(kept)))]
    if args.queries_only:
        print(f"\n# {args.name} at {snapshot[:12]}: {len(kept)} commits qualified, {len(sample)} kept.")
    else:
        print(f"\n[[corpus]]\nname = {toml_str(args.name)}")
        if args.language:
            print(f"# {args.language}; {len(kept)} commits qualified, {len(sample)} sampled evenly.")
        print(f"git = {toml_str(args.url)}\ncommit = {toml_str(snapshot)}\nheld_out = true")
    for sha, query, relevant in sample:
        print(
            f"\n[[query]]\ncorpus = {toml_str(args.name)}\nquery = {toml_str(query)}\n"
            f"relevant = [{', '.join(toml_str(p) for p in relevant)}]\n"
            f"source = {toml_str('commit ' + sha[:12])}"
        )
    print(f"{args.name}: {len(kept)} commits qualified, {len(sample)} kept", file=sys.stderr)


def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


if __name__ == "__main__":
    main()
