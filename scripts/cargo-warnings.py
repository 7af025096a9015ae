#!/usr/bin/env python3
"""Fails a build on this crate's warnings, as `cargo clippy -- -D warnings` does.

Reads cargo's `--message-format=json` (or `json-diagnostic-rendered-ansi`) on stdin
(scripts/test.sh builds with clippy's driver as the workspace's compiler, so the lints are among
these messages), prints each diagnostic of this crate's targets once on stderr, and exits 1 if
there was any warning or error. Dependencies' diagnostics are left out: cargo caps their lints
anyway. A cached build replays its diagnostics, so a warning fails every run until it is fixed,
not only the first.

    cargo test --no-run --message-format=json ... | scripts/cargo-warnings.py MANIFEST
"""

import json
import os
import sys


def main() -> int:
    # Compared resolved: a checkout reached through a symlink must not hide its warnings.
    manifest = os.path.realpath(sys.argv[1])
    seen: set[str] = set()
    counts = {"warning": 0, "error": 0}
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue  # not cargo's (a build script's own output)
        if msg.get("reason") != "compiler-message":
            continue
        if os.path.realpath(msg.get("manifest_path", "")) != manifest:
            continue
        diagnostic = msg["message"]
        level = diagnostic.get("level")
        rendered = diagnostic.get("rendered") or diagnostic.get("message", "")
        # rustc's summaries ("2 warnings emitted", "aborting due to ...") point at no code.
        if level not in counts or not diagnostic.get("spans") or rendered in seen:
            continue
        seen.add(rendered)
        counts[level] += 1
        sys.stderr.write(rendered)
    if counts["warning"] or counts["error"]:
        print(
            f"error: {counts['warning']} warning(s) and {counts['error']} error(s) in this crate's "
            "code: the lints deny warnings (`cargo clippy --all-targets -- -D warnings` shows the same)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
