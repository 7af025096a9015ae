#!/usr/bin/env bash
# Checks the deployment files without a container engine or a cluster:
#   - docker-compose.yml with Debian's docker-compose (`config`: schema, interpolation, with
#     and without .env.example);
#   - the Kubernetes manifests in deploy/kubernetes against the API's schemas, strictly
#     (kubernetes-validate, from PyPI);
#   - that the Dockerfile's build stage copies every directory the binary embeds files from,
#     and that its dependency layer can stub every target Cargo.toml lists.
# Installs either tool when it is missing (apt-get, pip). scripts/test.sh runs it.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

if ! command -v docker-compose >/dev/null; then
  say "installing Debian's docker-compose (apt-get), to check docker-compose.yml"
  apt-get update -qq && apt-get install -y -qq docker-compose >&2 || die "could not install docker-compose"
fi
KV="$STATE/tools/kubernetes-validate"
if [ ! -x "$KV/bin/kubernetes-validate" ]; then
  say "installing kubernetes-validate (pip, into a virtualenv in $KV), to check deploy/kubernetes"
  rm -rf "$KV"
  python3 -m venv "$KV" && "$KV/bin/pip" install --quiet --disable-pip-version-check kubernetes-validate >&2 \
    || die "could not install kubernetes-validate"
fi
kv() { "$KV/bin/kubernetes-validate" "$@"; }

say "checking docker-compose.yml (docker-compose config)"
docker-compose -f docker-compose.yml config -q || die "docker-compose.yml is invalid"
docker-compose -f docker-compose.yml --env-file .env.example config -q \
  || die "docker-compose.yml is invalid with .env.example"

say "checking deploy/kubernetes (kubernetes-validate --strict)"
out="$(kv --strict deploy/kubernetes/*.yaml 2>&1)" || { echo "$out" >&2; die "a Kubernetes manifest is invalid"; }
if grep -q ERROR <<<"$out"; then
  echo "$out" >&2
  die "a Kubernetes manifest is invalid"
fi
say "checking that the image's build copies every file the binary embeds (Dockerfile)"
# include_bytes!/include_str! paths are relative to the source file; each one's top directory
# must be one the build stage copies, or `docker compose build` fails where nothing here would.
embedded="$(python3 - <<'PY'
import pathlib, re
root = pathlib.Path.cwd()
for rs in root.glob("src/**/*.rs"):
    for m in re.finditer(r'include_(?:bytes|str)!\(\s*"([^"]+)"\s*\)', rs.read_text()):
        path = (rs.parent / m.group(1)).resolve().relative_to(root)
        print(path.parts[0])
PY
)"
for top in $(sort -u <<<"$embedded"); do
  grep -qE "^COPY ${top} ${top}\$" Dockerfile || die "the Dockerfile's build stage does not COPY $top/, which the binary embeds"
done
say "checking that the image's dependency layer stubs every target of Cargo.toml (Dockerfile)"
# The build stage compiles the dependencies against empty stubs of the targets listed with a
# `path = "…"` line; a target without one (cargo's implicit benches/NAME.rs) gets no stub there,
# and `docker compose build` fails where nothing here would.
python3 - <<'PY' || die "give every [[bin]], [[test]] and [[bench]] of Cargo.toml a path (the Dockerfile stubs them)"
import sys, tomllib
manifest = tomllib.load(open("Cargo.toml", "rb"))
missing = [f"[[{kind}]] {t.get('name', '?')}" for kind in ("bin", "test", "bench", "example")
           for t in manifest.get(kind, []) if "path" not in t]
if missing:
    print("without a path:", ", ".join(missing), file=sys.stderr)
    sys.exit(1)
PY
say "deployment files are valid"
