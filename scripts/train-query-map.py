#!/usr/bin/env python3
"""Learn the query map of src/embed/query_map.rs (`embed.local_query_map`).

The map moves the local model's query vectors, never the stored ones: q' = normalise(q + Δq).
Δ (384 × 384) is learned so that a commit subject's vector comes nearer the chunks of the files
the commit changed, each file scored by its nearest chunk (as vector-only search ranks files):
a softmax over the repository's files at temperature 0.05, one pass of Adam at learning rate
1e-4 over the queries in a fixed order, and a penalty on Δ's size. Tests and changelogs are
left out of the candidates, as they are out of the labels. These settings were fixed before
the training repositories were chosen (docs/BENCHMARKS.md, "A query-side linear map ...").

The data: benches/relevance/train.toml, twelve repositories that no relevance set searches,
indexed in a workspace of their own by the relevance bench, whose stored vectors are read from
PostgreSQL. Run:

    CODESEARCH_WORKSPACE=train RELEVANCE_SETS=train scripts/bench.sh relevance
    scripts/services.sh start
    scripts/train-query-map.py [--database-url postgres://postgres@127.0.0.1:54329/codesearch_relevance]
    scripts/services.sh stop

It writes assets/query-map-all-MiniLM-L6-v2.f16 (Δ, half precision, row-major, little-endian).
The queries are embedded by a NumPy copy of all-MiniLM-L6-v2 below (the daemon's local model,
from .codesearch/model; its vectors agree with the daemon's to a cosine of 1.000), a long one
by its title as the daemon does. Needs numpy, safetensors and tokenizers (pip). About ten
minutes on two cores, nearly all of it embedding the 2,321 queries.
"""

import argparse
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
MODEL = "local/all-MiniLM-L6-v2"
CHANGELOG = re.compile(r"(^|/)(CHANGELOG|CHANGES|HISTORY|NEWS)[^/]*$", re.I)


class MiniLM:
    """all-MiniLM-L6-v2 in NumPy: BERT, mean pooling, unit length (src/embed/local.rs)."""

    def __init__(self, model_dir, max_tokens=128):
        self.w = {k: v.astype(np.float32) for k, v in load_file(f"{model_dir}/model.safetensors").items()}
        self.cfg = json.load(open(f"{model_dir}/config.json"))
        self.tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
        self.tok.enable_truncation(max_tokens)
        self.tok.no_padding()
        self.prefix = "" if "embeddings.word_embeddings.weight" in self.w else "bert."

    def g(self, k):
        return self.w[self.prefix + k]

    def ln(self, x, k):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * self.g(k + ".weight") + self.g(k + ".bias")

    def embed(self, text):
        e = self.tok.encode(text)
        ids, types, n = np.array(e.ids), np.array(e.type_ids), len(e.ids)
        x = (
            self.g("embeddings.word_embeddings.weight")[ids]
            + self.g("embeddings.position_embeddings.weight")[:n]
            + self.g("embeddings.token_type_embeddings.weight")[types]
        )
        x = self.ln(x, "embeddings.LayerNorm")
        heads = self.cfg["num_attention_heads"]
        d = x.shape[1] // heads
        for layer in range(self.cfg["num_hidden_layers"]):
            p = f"encoder.layer.{layer}."

            def lin(t, k):
                return t @ self.g(p + k + ".weight").T + self.g(p + k + ".bias")

            q, k, v = (
                lin(x, f"attention.self.{name}").reshape(n, heads, d).transpose(1, 0, 2)
                for name in ("query", "key", "value")
            )
            s = q @ k.transpose(0, 2, 1) / np.sqrt(d)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            c = (s @ v).transpose(1, 0, 2).reshape(n, -1)
            x = self.ln(x + lin(c, "attention.output.dense"), p + "attention.output.LayerNorm")
            h = lin(x, "intermediate.dense")
            h = h * 0.5 * (1.0 + erf(h / np.sqrt(2.0)))
            x = self.ln(x + lin(h, "output.dense"), p + "output.LayerNorm")
        v = x.mean(0)
        return v / np.linalg.norm(v)


def erf(x):
    """Abramowitz and Stegun 7.1.26 (error below 1.5e-7)."""
    sign, x = np.sign(x), np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return sign * (1.0 - poly * np.exp(-x * x))


def title(query):
    """What the daemon embeds of a query (src/search/mod.rs `title`): a long one's title."""
    query = query.strip()
    words = lambda s: len(s.split())  # noqa: E731
    if words(query) < 20:
        return query
    end = 0
    for line in query.splitlines(keepends=True):
        if end > 0 and not line.strip():
            break
        end += len(line)
    para = query[:end]
    for i, c in enumerate(para):
        if c in ".!?" and (i + 1 == len(para) or para[i + 1].isspace()) and words(para[:i]) >= 3:
            return para[: i + 1]
    return para.rstrip() if words(para) >= 3 else query


def chunks(database_url, workspace):
    """Per repository: its files, each chunk's file and unit vector, the files left out."""
    sql = (
        "copy (select repository, file_path, coalesce(component_type, ''), subvector(embedding, 1, 384)::text "
        f"from codebase_index where embedding_model = '{MODEL}' and embedding is not null "
        f"and workspace = '{workspace}' order by repository, file_path, chunk_index) to stdout"
    )
    out = subprocess.run(["psql", "-At", database_url, "-c", sql], capture_output=True, text=True, check=True)
    rows = {}
    for line in out.stdout.splitlines():
        repo, path, component, vec = line.split("\t")
        paths, vecs, left_out = rows.setdefault(repo, ([], [], set()))
        paths.append(path)
        vecs.append(np.array(json.loads(vec), dtype=np.float32))
        if component == "test" or CHANGELOG.search(path):
            left_out.add(path)
    data = {}
    for repo, (paths, vecs, left_out) in rows.items():
        files = sorted(set(paths))
        index = {f: i for i, f in enumerate(files)}
        V = np.stack(vecs)
        V /= np.linalg.norm(V, axis=1, keepdims=True)
        data[repo] = dict(
            files=files,
            chunk_file=np.array([index[p] for p in paths]),
            V=V,
            left_out=np.array(sorted(index[p] for p in left_out), dtype=int),
            index=index,
        )
    return data


def file_scores(d, u):
    s = d["V"] @ u
    fs = np.full(len(d["files"]), -9.0, dtype=np.float32)
    np.maximum.at(fs, d["chunk_file"], s)
    fs[d["left_out"]] = -9.0
    return s, fs


def best_chunk(d, s):
    """Each file's nearest chunk."""
    order = np.lexsort((s, d["chunk_file"]))
    cf = d["chunk_file"][order]
    last = np.r_[cf[1:] != cf[:-1], True]
    best = np.zeros(len(d["files"]), dtype=int)
    best[cf[last]] = order[last]
    return best


def train(items, tau, lr, penalty, seed):
    n = items[0][1].shape[0]
    eye = np.eye(n)
    W, m, v = eye.copy(), np.zeros((n, n)), np.zeros((n, n))
    for t, i in enumerate(np.random.default_rng(seed).permutation(len(items)), start=1):
        d, q, relevant = items[i]
        u = W @ q
        norm = np.linalg.norm(u)
        uh = u / norm
        s, fs = file_scores(d, uh.astype(np.float32))
        z = fs / tau
        p = np.exp(z - z.max())
        p[fs <= -9.0] = 0
        p /= p.sum()
        y = np.zeros_like(p, dtype=np.float64)
        y[relevant] = p[relevant] / p[relevant].sum()
        coef = (p - y) / tau
        moved = np.nonzero(np.abs(coef) > 1e-6)[0]
        g_uh = coef[moved] @ d["V"][best_chunk(d, s)[moved]]
        g_u = (g_uh - uh * (uh @ g_uh)) / norm
        G = np.outer(g_u, q) + penalty * 2 * (W - eye) / len(items)
        m = 0.9 * m + 0.1 * G
        v = 0.999 * v + 0.001 * G * G
        W -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return W


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--database-url", default="postgres://postgres@127.0.0.1:54329/codesearch_relevance")
    ap.add_argument("--workspace", default="train")
    ap.add_argument("--queries", default=str(ROOT / "benches/relevance/train.toml"))
    ap.add_argument("--model-dir", default=str(ROOT / ".codesearch/model"))
    ap.add_argument("--out", default=str(ROOT / "assets/query-map-all-MiniLM-L6-v2.f16"))
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--penalty", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    data = chunks(a.database_url, a.workspace)
    if not data:
        sys.exit(f"no {MODEL} vectors in workspace {a.workspace!r}: index the training set first (see --help)")
    model = MiniLM(a.model_dir)
    items = []
    queries = tomllib.load(open(a.queries, "rb"))["query"]
    for n, q in enumerate(queries, start=1):
        d = data.get(q["corpus"])
        relevant = [d["index"][f] for f in q["relevant"] if f in d["index"]] if d else []
        if relevant:
            items.append((d, model.embed(title(q["query"])), np.array(relevant)))
        if n % 250 == 0:
            print(f"embedded {n} of {len(queries)} queries", file=sys.stderr, flush=True)
    print(f"training on {len(items)} queries over {len(data)} repositories", file=sys.stderr)
    W = train(items, a.tau, a.lr, a.penalty, a.seed)
    delta = (W - np.eye(W.shape[0])).astype("<f2")
    delta.tofile(a.out)
    print(f"wrote {a.out}: {delta.nbytes} bytes, |Δ| {np.linalg.norm(W - np.eye(W.shape[0])):.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
