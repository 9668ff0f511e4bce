"""Feedback through the batched delivery (issue 26): 3,000 feedback calls committed within 10 s from the
sync and the async client, read back through the analysis; flush says whether all was committed; close
ends all work (nothing arrives after it returns, nothing retried) and says exactly what it could not
deliver."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from typing import Any, List, Tuple

import httpx
from conftest import ROOT_KEY

from agentsplit import AsyncClient, Client

N = 3000


class Counting(httpx.BaseTransport):
    """Notes the path and the number of feedback items of every request the client makes."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.seen: List[Tuple[str, int]] = []
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        items = len(json.loads(body)["feedback"]) if request.url.path == "/feedback" else 0
        with self.lock:
            self.seen.append((request.url.path, items))
        return self.inner.handle_request(request)


class AsyncCounting(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.seen: List[Tuple[str, int]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        items = len(json.loads(body)["feedback"]) if request.url.path == "/feedback" else 0
        self.seen.append((request.url.path, items))
        return await self.inner.handle_async_request(request)


def rated(server: Any, slug: str) -> int:
    """How many ratings the analysis counts (random assignment: one unit per feedback value)."""
    metric = [m for m in server.analysis(slug)["metrics"] if m["name"] == "rating"]
    return sum(v["n"] for v in metric[0]["variants"]) if metric else 0


def check_feedback_requests(seen: List[Tuple[str, int]]) -> None:
    feedback = [n for path, n in seen if path == "/feedback"]
    assert sum(feedback) == N, "every feedback item went in a POST /feedback"
    assert all(0 < n <= 100 for n in feedback), "batches of at most batch_size (100) items"
    assert not [p for p, _ in seen if p.endswith("/feedback") and p != "/feedback"], "no single-item route"


def test_3000_feedback_calls_from_the_sync_client_are_committed_within_10_s(server):
    slug = server.create_experiment(assignment="random")
    transport = Counting()
    c = Client(server.url, ROOT_KEY, local=True, flush_at_exit=False, transport=transport)
    try:
        ids = [c.assign(slug, "user-%d" % i).assignment_id for i in range(N)]
        assert all(ids) and c.flush(30)
        t0 = time.monotonic()
        for i, aid in enumerate(ids):
            c.feedback(slug, assignment_id=aid, metrics={"rating": i % 5})
        committed = c.flush(10.0)
        took = time.monotonic() - t0
        print("sync client: %d feedback calls committed in %.2f s" % (N, took))
        assert committed, "flush(10) says everything was committed within 10 s"
        assert c.delivered == 2 * N and c.failed == 0 and c.queued == 0
    finally:
        assert c.close(1) == 0
    assert rated(server, slug) == N
    check_feedback_requests(transport.seen)


def test_3000_feedback_calls_from_the_async_client_are_committed_within_10_s(server):
    slug = server.create_experiment(assignment="random")
    transport = AsyncCounting()

    async def main() -> float:
        async with AsyncClient(server.url, ROOT_KEY, local=True, flush_at_exit=False, transport=transport) as c:
            ids = [(await c.assign(slug, "user-%d" % i)).assignment_id for i in range(N)]
            assert all(ids) and await c.flush(30)
            t0 = time.monotonic()
            for i, aid in enumerate(ids):
                c.feedback(slug, assignment_id=aid, metrics={"rating": i % 5})
            committed = await c.flush(10.0)
            took = time.monotonic() - t0
            assert committed, "flush(10) says everything was committed within 10 s"
            assert c.delivered == 2 * N and c.failed == 0
        return took

    took = asyncio.run(main())
    print("async client: %d feedback calls committed in %.2f s" % (N, took))
    assert rated(server, slug) == N
    check_feedback_requests(transport.seen)


def test_feedback_across_experiments_goes_in_one_request_and_rejected_items_are_counted(server, caplog):
    caplog.set_level(logging.WARNING, logger="agentsplit")
    first = server.create_experiment(assignment="random")
    second = server.create_experiment(assignment="random")
    transport = Counting()
    c = Client(server.url, ROOT_KEY, flush_at_exit=False, transport=transport)
    try:
        a = c.assign(first, "u1")
        b = c.assign(second, "u2")
        c.feedback(first, assignment_id=a.assignment_id, metrics={"rating": 4})
        c.feedback(second, assignment_id=b.assignment_id, metrics={"rating": 2}, comment="slow")
        c.feedback("no-such-experiment", assignment_id=b.assignment_id, metrics={"rating": 1})
        assert c.flush(10) is True
        assert (c.delivered, c.failed) == (2, 1)
    finally:
        c.close(1)
    assert [s for s in transport.seen if s[0] == "/feedback"] == [("/feedback", 3)]
    assert rated(server, first) == 1 and rated(server, second) == 1
    said = [r.getMessage() for r in caplog.records if "refused feedback" in r.getMessage()]
    assert said == ["agentsplit: the server refused feedback on 'no-such-experiment': no experiment with slug 'no-such-experiment'"]


def test_flush_says_false_when_its_timeout_passes_first(stand_in):
    release = threading.Event()

    def answer(method: str, path: str, body: Any) -> Tuple[int, Any]:
        release.wait(5)
        return 200, {"success": True, "accepted": len(body["feedback"]), "rejected": []}

    srv = stand_in(answer)
    c = Client(srv.url, ROOT_KEY, timeout=10, flush_at_exit=False)
    try:
        c.feedback("x", assignment_id="id-1", metrics={"t": True})
        assert c.flush(0.3) is False and c.queued == 1
        release.set()
        assert c.flush(5) is True and c.delivered == 1 and c.queued == 0
    finally:
        c.close(1)


def closed_message(caplog: Any) -> List[str]:
    return [r.getMessage() for r in caplog.records if "closed with" in r.getMessage()]


def after(caplog: Any, t: float) -> List[str]:
    return [r.getMessage() for r in caplog.records if r.created >= t]


def test_close_against_a_down_server_ends_all_work_and_says_exactly_what_was_lost(new_server, caplog):
    caplog.set_level(logging.DEBUG, logger="agentsplit")
    srv = new_server()
    slug = srv.create_experiment()
    port_url = srv.url
    transport = Counting()
    c = Client(port_url, ROOT_KEY, timeout=0.5, flush_at_exit=False, backoff_base=0.05, backoff_max=0.2, transport=transport)
    a = c.assign(slug, "u")
    srv.kill()
    for i in range(24):
        c.feedback(slug, assignment_id=a.assignment_id, metrics={"rating": i})
    for i in range(6):
        c.log(slug, assignment=a, metrics={"i": i})
    assert c.flush(0.5) is False
    lost = c.close(0.3)
    closed_at = time.time()
    sent = len(transport.seen)
    assert lost == 30 and c.failed == 30 and c.delivered == 0
    assert closed_message(caplog) == ["agentsplit: closed with 30 item(s) not delivered (counted in failed)"]
    time.sleep(1.5)  # several backoff periods: a worker still running would have tried again
    assert len(transport.seen) == sent, "no request after close returned"
    assert not [m for m in after(caplog, closed_at) if "retrying" in m]


def test_close_against_a_slow_server_ends_all_work(stand_in, caplog):
    caplog.set_level(logging.DEBUG, logger="agentsplit")

    def answer(method: str, path: str, body: Any) -> Tuple[int, Any]:
        time.sleep(1.0)  # beyond the client's timeout: every attempt times out
        return 503, {"error": "busy"}

    srv = stand_in(answer)
    c = Client(srv.url, ROOT_KEY, timeout=0.4, flush_at_exit=False, backoff_base=0.05, backoff_max=0.1)
    for i in range(24):
        c.feedback("x", assignment_id="id-%d" % i, metrics={"rating": i})
    lost = c.close(0.5)
    closed_at = time.monotonic()
    assert lost == 24 and c.failed == 24
    assert closed_message(caplog) == ["agentsplit: closed with 24 item(s) not delivered (counted in failed)"]
    time.sleep(1.5)
    assert srv.posts(), "the server was tried before close"
    assert [p for p in srv.posts() if p["t"] >= closed_at] == [], "no request after close returned"
    assert not [m for m in after(caplog, time.time() - 1.5) if "retrying" in m]


def test_async_close_against_a_slow_server_ends_all_work(stand_in, caplog):
    caplog.set_level(logging.DEBUG, logger="agentsplit")

    def answer(method: str, path: str, body: Any) -> Tuple[int, Any]:
        time.sleep(1.0)
        return 503, {"error": "busy"}

    srv = stand_in(answer)

    async def main() -> Tuple[int, float]:
        c = AsyncClient(srv.url, ROOT_KEY, timeout=0.4, flush_at_exit=False, backoff_base=0.05, backoff_max=0.1)
        for i in range(24):
            c.feedback("x", assignment_id="id-%d" % i, metrics={"rating": i})
        lost = await c.close(0.5)
        closed_at = time.monotonic()
        assert c.failed == 24
        await asyncio.sleep(1.5)  # the loop runs on: a task still alive would send again
        return lost, closed_at

    lost, closed_at = asyncio.run(main())
    assert lost == 24
    assert closed_message(caplog) == ["agentsplit: closed with 24 item(s) not delivered (counted in failed)"]
    assert srv.posts(), "the server was tried before close"
    assert [p for p in srv.posts() if p["t"] >= closed_at] == [], "no request after close returned"
    assert not [m for m in after(caplog, time.time() - 1.5) if "retrying" in m]


def test_close_while_a_slow_server_still_answers_stops_sending_at_once(stand_in, caplog):
    """The issue's case: items still going out one batch after another when close() is called. The
    worker must stop at its next batch (not send until its join times out, then retry a request whose
    connection close() cut: "ReadError ([Errno 9] Bad file descriptor) ... retrying")."""
    caplog.set_level(logging.DEBUG, logger="agentsplit")

    def answer(method: str, path: str, body: Any) -> Tuple[int, Any]:
        time.sleep(0.3)
        return 200, {"success": True, "accepted": len(body.get("feedback", [body])), "rejected": []}

    srv = stand_in(answer)
    c = Client(srv.url, ROOT_KEY, timeout=1.0, batch_size=1, flush_at_exit=False)
    for i in range(24):
        c.feedback("x", assignment_id="id-%d" % i, metrics={"rating": i})
    lost = c.close(0.5)
    closed_at = time.monotonic()
    time.sleep(1.5)  # the answer to a request cut by close would come now, and with it a retry
    assert 0 < lost < 24 and c.failed == lost and c.delivered == 24 - lost
    assert closed_message(caplog) == ["agentsplit: closed with %d item(s) not delivered (counted in failed)" % lost]
    assert len(srv.posts()) == c.delivered, "every request sent was answered and counted: none cut short"
    assert [p for p in srv.posts() if p["t"] >= closed_at] == [], "no request after close returned"
    assert not [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]


def test_async_close_while_a_slow_server_still_answers_stops_sending_at_once(stand_in, caplog):
    caplog.set_level(logging.DEBUG, logger="agentsplit")

    def answer(method: str, path: str, body: Any) -> Tuple[int, Any]:
        time.sleep(0.3)
        return 200, {"success": True, "accepted": len(body.get("feedback", [body])), "rejected": []}

    srv = stand_in(answer)

    async def main() -> Tuple[int, float, Any]:
        c = AsyncClient(srv.url, ROOT_KEY, timeout=1.0, batch_size=1, flush_at_exit=False)
        for i in range(24):
            c.feedback("x", assignment_id="id-%d" % i, metrics={"rating": i})
        lost = await c.close(0.5)
        closed_at = time.monotonic()
        await asyncio.sleep(1.5)  # the loop runs on: a task still alive would send again
        return lost, closed_at, c

    lost, closed_at, c = asyncio.run(main())
    assert 0 < lost < 24 and c.failed == lost and c.delivered == 24 - lost
    assert closed_message(caplog) == ["agentsplit: closed with %d item(s) not delivered (counted in failed)" % lost]
    assert len(srv.posts()) == c.delivered, "every request sent was answered and counted: none cut short"
    assert [p for p in srv.posts() if p["t"] >= closed_at] == [], "no request after close returned"
    assert not [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
