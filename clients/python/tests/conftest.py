"""Fixtures: the real agentsplit server (node --import tsx src/main.ts) on a free port, a temp SQLite file.

The session's server serves most tests; the outage test starts (and SIGKILLs, and restarts) its own.
Every process started here is killed in teardown, every temp dir removed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
# AGENTSPLIT_SRC: run the tests against another copy of the package (e.g. an older commit's, to see a test fail)
sys.path.insert(0, os.environ.get("AGENTSPLIT_SRC") or str(ROOT / "clients" / "python" / "src"))

ROOT_KEY = "root-key-python-client-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder(httpx.BaseTransport):
    """An httpx transport that notes (time, method, path, status, headers) of every exchange."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.seen: List[Any] = []
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        t = time.monotonic()
        try:
            r = self.inner.handle_request(request)
        except Exception as err:
            with self.lock:
                self.seen.append((t, request.method, request.url.path, type(err).__name__, dict(request.headers)))
            raise
        with self.lock:
            self.seen.append((t, request.method, request.url.path, r.status_code, dict(request.headers), dict(r.headers)))
        return r

    def close(self) -> None:
        self.inner.close()


class Server:
    """One server process; ``restart()`` starts it again on the same port and database file."""

    def __init__(self, env: Optional[Dict[str, str]] = None) -> None:
        self.dir = tempfile.mkdtemp(prefix="agentsplit-pyclient-")
        self.port = free_port()
        self.extra_env = env or {}
        self.proc: Optional[subprocess.Popen] = None
        self.output: List[str] = []
        self.url = "http://127.0.0.1:%d" % self.port

    def start(self, timeout: float = 60.0) -> "Server":
        env = dict(os.environ)
        env.update(
            {
                "PORT": str(self.port),
                "HOST": "127.0.0.1",
                "API_KEY": ROOT_KEY,
                "DATABASE_URL": "sqlite:" + os.path.join(self.dir, "x.db"),
                "DATA_DIR": self.dir,
                "LOG_LEVEL": "warn",
                "RATE_LIMIT_PER_SECOND": "0",
                "NODE_ENV": "test",
            }
        )
        env.update(self.extra_env)
        self.proc = subprocess.Popen(
            ["node", "--import", "tsx", str(ROOT / "src" / "main.ts")],
            cwd=str(ROOT),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        ready = threading.Event()
        proc = self.proc

        def read() -> None:
            assert proc.stdout is not None
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace")
                self.output.append(line)
                if re.search(r"listening on http://", line):
                    ready.set()

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while not ready.wait(0.05):
            if proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("the server did not start:\n" + "".join(self.output))
        return self

    def kill(self, sig: int = signal.SIGKILL) -> None:
        p = self.proc
        if p is not None and p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
        self.proc = None

    def restart(self) -> "Server":
        self.kill()
        return self.start()

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    # the API as the root key -----------------------------------------------------------------------
    def call(self, method: str, path: str, json: Any = None, key: str = ROOT_KEY) -> httpx.Response:
        return httpx.request(method, self.url + path, json=json, headers={"x-api-key": key}, timeout=30)

    def create_experiment(self, slug: Optional[str] = None, assignment: str = "sticky", weights=(50, 50), **extra: Any) -> str:
        slug = slug or "exp-" + uuid.uuid4().hex[:10]
        variants = [
            {"key": chr(ord("A") + i), "trafficPercent": w, "payload": {"prompt": "prompt %s" % chr(ord("A") + i)}}
            for i, w in enumerate(weights)
        ]
        body = {"slug": slug, "status": "running", "assignment": assignment, "variants": variants}
        body.update(extra)
        r = self.call("POST", "/experiments", body)
        assert r.status_code == 201, r.text
        return slug

    def results(self, slug: str) -> List[Dict[str, Any]]:
        out: List[Dict[str, Any]] = []
        cursor = None
        while True:
            q = "/experiment/%s/results?limit=1000" % slug + ("&cursor=%s" % cursor if cursor else "")
            r = self.call("GET", q)
            assert r.status_code == 200, r.text
            data = r.json()
            out.extend(data["results"])
            cursor = data.get("nextCursor")
            if not cursor:
                return out

    def analysis(self, slug: str) -> Dict[str, Any]:
        r = self.call("GET", "/experiment/%s/analysis" % slug)
        assert r.status_code == 200, r.text
        return r.json()


class StandIn:
    """An HTTP server in a thread: ``answer(method, path, body) -> (status, json)``; notes every request."""

    def __init__(self, answer: Callable[[str, str, Any], Tuple[int, Any]]) -> None:
        self.seen: List[Dict[str, Any]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def _do(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                with outer.lock:
                    outer.seen.append({"method": self.command, "path": self.path, "key": self.headers.get("idempotency-key"), "body": body, "t": time.monotonic()})
                status, data = answer(self.command, self.path, body)
                out = json.dumps(data).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (its timeout): nothing to answer

            do_GET = do_POST = _do

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def posts(self, path: Optional[str] = None) -> List[Dict[str, Any]]:
        with self.lock:
            return [s for s in self.seen if s["method"] == "POST" and (path is None or s["path"] == path)]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def stand_in():
    made: List[StandIn] = []

    def make(answer: Callable[[str, str, Any], Tuple[int, Any]]) -> StandIn:
        s = StandIn(answer)
        made.append(s)
        return s

    yield make
    for s in made:
        s.stop()


@pytest.fixture(scope="session")
def server():
    s = Server()
    try:
        s.start()
        yield s
    finally:
        s.stop()


@pytest.fixture()
def new_server():
    """A server of the test's own (to kill and restart); always killed and removed."""
    made: List[Server] = []

    def make(env: Optional[Dict[str, str]] = None) -> Server:
        s = Server(env)
        made.append(s)
        return s.start()

    try:
        yield make
    finally:
        for s in made:
            s.stop()


@pytest.fixture()
def clients():
    """Sync clients a test makes, closed (fast) in teardown whatever happened."""
    made: List[Any] = []
    yield made
    for c in made:
        c.close(timeout=1.0)
