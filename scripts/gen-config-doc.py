#!/usr/bin/env python3
"""Regenerates the key table of docs/CONFIGURATION.md from config/default.toml (Python 3.11+).

    python3 scripts/gen-config-doc.py            rewrites the table
    python3 scripts/gen-config-doc.py --check    fails if the table differs (scripts/test.sh)
"""
import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE_HEAD = "| key | environment | default | meaning |\n|---|---|---|---|\n"


def rows(text):
    data = tomllib.loads(text)
    out, comment, section = [], [], None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("[") and not s.startswith("[["):
            section, comment = s.strip("[]"), []
        elif s.startswith("#"):
            comment.append(s.lstrip("# ").rstrip())
        elif (m := re.match(r"^([a-z0-9_]+)\s*=", s)) and section:
            key = m.group(1)
            env = next((c[5:] for c in comment if c.startswith("env: ")), "")
            desc = " ".join(c for c in comment if not c.startswith("env: "))
            val = data[section][key]
            if isinstance(val, bool):
                shown = f"`{str(val).lower()}`"
            elif isinstance(val, list) and len(str(val)) > 60:
                shown = "(see default.toml)"
            else:
                shown = "`" + repr(val).replace("'", '"') + "`"
            out.append(f"| `{section}.{key}` | `{env}` | {shown} | {desc} |")
            comment = []
        elif not s:
            comment = []
    return out


def main():
    doc_path = ROOT / "docs/CONFIGURATION.md"
    doc = doc_path.read_text()
    start = doc.index(TABLE_HEAD) + len(TABLE_HEAD)
    end = doc.index("\n\n", start)
    table = "\n".join(rows((ROOT / "config/default.toml").read_text()))
    new = doc[:start] + table + doc[end:]
    if "--check" in sys.argv[1:]:
        if new != doc:
            sys.exit(
                "docs/CONFIGURATION.md's key table differs from config/default.toml's comments: "
                "edit the comments, then run python3 scripts/gen-config-doc.py"
            )
        return
    doc_path.write_text(new)


if __name__ == "__main__":
    main()
