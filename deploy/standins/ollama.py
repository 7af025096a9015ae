#!/usr/bin/env python3
"""A stand-in for the `ollama` image, for trying docker-compose.yml where Docker Hub cannot be
reached (scripts/compose-standins.sh). Not a model: it speaks the parts of Ollama's API that
codesearch and the compose file use, with Ollama's shapes and errors, and embeds text as a
hashed bag of words (768 numbers, unit length), so searches run but rank by shared words only.

    ollama serve          HTTP on $OLLAMA_HOST (0.0.0.0:11434): GET /api/version, GET /api/tags,
                          POST /api/pull, POST /api/embed
    ollama list           the pulled models (fails while the server is down, as Ollama's does)
    ollama pull NAME      asks the server to pull NAME

Pulled names are kept in /root/.ollama/models.json, so the volume remembers them as Ollama's
does its blobs. Python's standard library only.
"""

import hashlib
import json
import math
import os
import re
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STORE = os.path.join(os.path.expanduser("~"), ".ollama", "models.json")
DIMS = 768
LOCK = threading.Lock()


def host():
    """$OLLAMA_HOST as (address, port) and as a base URL, Ollama's default port 11434."""
    raw = os.environ.get("OLLAMA_HOST", "127.0.0.1:11434")
    raw = re.sub(r"^https?://", "", raw).rstrip("/")
    addr, _, port = raw.rpartition(":")
    if not addr:
        addr, port = raw, "11434"
    return (addr, int(port)), f"http://{addr}:{port}"


def pulled():
    try:
        with open(STORE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return []


def canonical(name):
    return name if ":" in name else name + ":latest"


def embed(text):
    vec = [0.0] * DIMS
    for word in re.findall(r"[A-Za-z]+|\d+", text.lower()):
        h = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        vec[h % DIMS] += 1.0 if (h >> 32) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return None

    def do_GET(self):
        if self.path == "/api/version":
            return self.reply(200, {"version": "0.0.0-standin"})
        if self.path == "/api/tags":
            models = [{"name": m, "model": m, "size": 0} for m in pulled()]
            return self.reply(200, {"models": models})
        if self.path == "/":
            return self.reply(200, "Ollama is running")
        return self.reply(404, {"error": "404 page not found"})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        req = self.body()
        if req is None:
            return self.reply(400, {"error": "invalid character in request body"})
        if self.path == "/api/pull":
            name = req.get("model") or req.get("name")
            if not name:
                return self.reply(400, {"error": "model is required"})
            with LOCK:
                models = pulled()
                if canonical(name) not in models:
                    models.append(canonical(name))
                    os.makedirs(os.path.dirname(STORE), exist_ok=True)
                    with open(STORE, "w") as f:
                        json.dump(models, f)
            return self.reply(200, {"status": "success"})
        if self.path == "/api/embed":
            name = req.get("model")
            if not name:
                return self.reply(400, {"error": "model is required"})
            if canonical(name) not in pulled():
                return self.reply(
                    404, {"error": f'model "{name}" not found, try pulling it first'}
                )
            texts = req.get("input", [])
            if isinstance(texts, str):
                texts = [texts]
            return self.reply(
                200, {"model": name, "embeddings": [embed(t) for t in texts]}
            )
        return self.reply(404, {"error": "404 page not found"})

    def log_message(self, fmt, *args):
        sys.stderr.write("ollama-standin: " + fmt % args + "\n")


def call(method, path, body=None):
    _, base = host()
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.load(resp)
    except (urllib.error.URLError, OSError) as e:
        sys.exit(f"Error: could not connect to ollama app, is it running? ({e})")


def main(argv):
    cmd = argv[1] if len(argv) > 1 else "serve"
    if cmd == "serve":
        addr, _ = host()
        server = ThreadingHTTPServer(addr, Handler)
        print(f"ollama stand-in listening on {addr[0]}:{addr[1]}", file=sys.stderr)
        server.serve_forever()
    elif cmd == "list":
        print("NAME")
        for m in call("GET", "/api/tags")["models"]:
            print(m["name"])
    elif cmd == "pull" and len(argv) == 3:
        print(call("POST", "/api/pull", {"model": argv[2], "stream": False})["status"])
    else:
        sys.exit("usage: ollama [serve | list | pull NAME]")


if __name__ == "__main__":
    main(sys.argv)
