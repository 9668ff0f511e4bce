"""Remote assign, log, track and feedback against the real server: round trips, fail-open, batching."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time

import pytest
from conftest import ROOT_KEY, Recorder

from agentsplit import AsyncClient, Client


def make(server, clients, **kw):
    c = Client(server.url, kw.pop("api_key", ROOT_KEY), **kw)
    clients.append(c)
    return c


def test_assign_log_track_feedback_round_trip(server, clients):
    slug = server.create_experiment()
    c = make(server, clients)
    seen = {}
    for i in range(40):
        a = c.assign(slug, user_id="u-%d" % i, context={"plan": "pro"}, default={"prompt": "d"})
        assert a.source == "server" and a.variant in ("A", "B")
        assert a.payload == {"prompt": "prompt %s" % a.variant}
        seen[a.assignment_id] = a
        with c.track(a, input={"q": i}) as run:
            run.output = {"answer": "ok"}
            run.metrics["tokens"] = 100 + i
        c.feedback(slug, assignment_id=a.assignment_id, metrics={"thumbs_up": i % 2 == 0})
    c.log(slug, variant_key="A", metrics={"manual": 1.5}, input={"x": 1}, user_id="m")
    assert c.flush(10)
    results = server.results(slug)
    assert len(results) == 41
    tracked = [r for r in results if r["assignmentId"]]
    assert {r["assignmentId"] for r in tracked} == set(seen)
    for r in tracked:
        a = seen[r["assignmentId"]]
        assert r["variantKey"] == a.variant and r["userId"] == a.user_id
        assert r["metrics"]["error"] is False and r["metrics"]["latency_ms"] >= 0
        assert r["metrics"]["tokens"] >= 100 and r["output"] == {"answer": "ok"}
        assert r["timestamp"].endswith("Z")
    analysis = server.analysis(slug)
    assert sum(analysis["exposures"].values()) == 40
    assert sum(analysis["results"].values()) == 41
    thumbs = next(m for m in analysis["metrics"] if m["name"] == "thumbs_up")
    assert sum(v["n"] for v in thumbs["variants"]) == 40
    assert c.delivered == 41 + 40 and c.refused == 0 and c.dropped == 0


def test_track_reraises_and_logs_the_error(server, clients):
    slug = server.create_experiment()
    c = make(server, clients)
    a = c.assign(slug, user_id="boom")
    with pytest.raises(ZeroDivisionError):
        with c.track(a, input={"q": "x"}) as run:
            run.metrics["cost_usd"] = 0.002
            1 / 0
    assert c.flush(10)
    (r,) = server.results(slug)
    assert r["metrics"]["error"] is True and r["metrics"]["cost_usd"] == 0.002
    assert r["output"] == {"error": "ZeroDivisionError: division by zero"}


def test_a_default_assignment_sends_no_result(server, clients, caplog):
    c = make(server, clients)
    caplog.set_level(logging.DEBUG, logger="agentsplit")
    a = c.assign("no-such-experiment", user_id="u", default={"prompt": "fallback"})
    assert (a.source, a.variant, a.assignment_id, a.payload) == ("default", None, None, {"prompt": "fallback"})
    assert any("404" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
    with c.track(a) as run:
        run.output = {"x": 1}
    c.log("no-such-experiment", variant_key=a.variant, metrics={"n": 1})
    c.feedback("no-such-experiment", assignment_id=a.assignment_id, metrics={"n": 1})
    assert c.queued == 0
    assert any("not sent" in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)


def test_a_stopped_experiment_answers_the_default(server, clients):
    slug = server.create_experiment()
    c = make(server, clients)
    assert c.assign(slug, "u").source == "server"
    assert server.call("PATCH", "/experiment/%s" % slug, {"status": "paused"}).status_code == 200
    a = c.assign(slug, "u", default={"d": 1})
    assert a.source == "default" and a.payload == {"d": 1}


def test_a_wrong_key_is_logged_loudly_once(server, clients, caplog):
    slug = server.create_experiment()
    c = make(server, clients, api_key="wrong-key-000000000000")
    caplog.set_level(logging.WARNING, logger="agentsplit")
    for _ in range(3):
        assert c.assign(slug, "u").source == "default"
    c.log(slug, variant_key="A", metrics={"x": 1})
    c.flush(5)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "401" in errors[0].getMessage()
    assert c.refused == 1


def test_a_server_that_never_answers_times_out_to_the_default(clients):
    # a socket that accepts connections (the kernel's backlog) but never answers
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    try:
        url = "http://127.0.0.1:%d" % s.getsockname()[1]
        c = Client(url, ROOT_KEY, timeout=0.3, backoff_max=0.5)
        clients.append(c)
        t = time.monotonic()
        a = c.assign("x", "u", default={"p": 1})
        took = time.monotonic() - t
        assert a.source == "default" and a.payload == {"p": 1}
        assert took < 1.5, took
        c.log("x", variant_key="A")
        assert c.flush(0.5) is False  # never raises; says it did not finish
        c.close(timeout=0.2)
    finally:
        s.close()


def test_no_network_and_no_config_never_raise(clients, monkeypatch):
    monkeypatch.delenv("AGENTSPLIT_URL", raising=False)
    c = Client(None, None)
    clients.append(c)
    assert c.assign("x", "u", default={"p": 1}).source == "default"
    c.log("x", variant_key="A")
    c.flush()
    dead = Client("http://127.0.0.1:1", ROOT_KEY, timeout=0.5, backoff_max=0.2)
    clients.append(dead)
    assert dead.assign("x", "u").source == "default"
    with dead.track(dead.assign("x", "u")):
        pass
    dead.log("x", variant_key="A", metrics={"x": 1})
    assert dead.flush(0.3) is False
    dead.close(timeout=0.1)
    dead.close()


def test_the_env_configures_the_client(server, clients, monkeypatch):
    slug = server.create_experiment()
    monkeypatch.setenv("AGENTSPLIT_URL", server.url)
    monkeypatch.setenv("AGENTSPLIT_API_KEY", ROOT_KEY)
    c = Client()
    clients.append(c)
    assert c.assign(slug, "u").source == "server"


def test_the_queue_is_bounded_and_drops_the_oldest(clients):
    c = Client("http://127.0.0.1:1", ROOT_KEY, max_queue=5, flush_interval=60, batch_size=1000)
    clients.append(c)
    for i in range(12):
        c.log("x", variant_key="A", metrics={"i": i})
    assert c.dropped == 7 and c.queued == 5
    assert [it[2]["metrics"]["i"] for it in c._delivery.queue] == [7, 8, 9, 10, 11]


def test_batches_carry_an_idempotency_key_and_a_bad_item_does_not_lose_its_neighbours(server, clients):
    slug = server.create_experiment()
    rec = Recorder()
    c = make(server, clients, transport=rec, flush_interval=60)
    for i in range(250):
        c.log(slug, variant_key="A", metrics={"i": i})
    c.log(slug, variant_key="A", metrics={"bad\u0001name": 1})  # refused by the server's schema: 400
    for i in range(250, 260):
        c.log(slug, variant_key="B", metrics={"i": i})
    assert c.flush(20)
    got = sorted(r["metrics"]["i"] for r in server.results(slug))
    assert got == list(range(260))
    assert c.refused == 1 and c.delivered == 260
    posts = [s for s in rec.seen if s[1] == "POST"]
    keys = [s[4].get("idempotency-key") for s in posts]
    assert all(keys) and len(set(keys)) == len(keys)
    assert any(s[3] == 400 for s in posts)
    # 100 a request; only the batch holding the bad item is retried item by item (at most 100 singles)
    assert len(posts) <= 3 + 1 + 100, len(posts)


def test_logs_are_sent_within_the_flush_interval_without_flush(server, clients):
    slug = server.create_experiment()
    c = make(server, clients, flush_interval=0.2)
    c.log(slug, variant_key="A", metrics={"x": 1})
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not server.results(slug):
        time.sleep(0.05)
    assert len(server.results(slug)) == 1


def test_many_threads_assign_and_log(server, clients):
    slug = server.create_experiment()
    c = make(server, clients)
    errors = []

    def work(t):
        try:
            for i in range(25):
                a = c.assign(slug, "t%d-%d" % (t, i))
                with c.track(a):
                    pass
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert c.flush(10)
    assert len(server.results(slug)) == 100


def test_async_client_round_trip(server):
    slug = server.create_experiment()

    async def main():
        async with AsyncClient(server.url, ROOT_KEY) as c:
            out = []
            for i in range(20):
                a = await c.assign(slug, user_id="au-%d" % i, context={"k": i})
                assert a.source == "server"
                async with c.track(a, input={"i": i}) as run:
                    await asyncio.sleep(0)
                    run.metrics["tokens"] = i
                c.feedback(slug, assignment_id=a.assignment_id, metrics={"score": 0.5})
                out.append(a)
            with pytest.raises(KeyError):
                with c.track(out[0]):
                    raise KeyError("mine")
            assert await c.flush(10)
            missing = await c.assign("nope", "u", default={"d": 1})
            assert missing.source == "default"
            return out

    assigned = asyncio.run(main())
    results = server.results(slug)
    assert len(results) == 21
    assert sum(1 for r in results if r["metrics"]["error"]) == 1
    assert {r["assignmentId"] for r in results} == {a.assignment_id for a in assigned}
    score = next(m for m in server.analysis(slug)["metrics"] if m["name"] == "score")
    assert sum(v["n"] for v in score["variants"]) == 20


def test_async_client_fails_open(clients):
    async def main():
        c = AsyncClient("http://127.0.0.1:1", ROOT_KEY, timeout=0.5, backoff_max=0.2)
        a = await c.assign("x", "u", default={"d": 2})
        assert a.source == "default" and a.payload == {"d": 2}
        c.log("x", variant_key="A")
        assert await c.flush(0.3) is False
        await c.close(timeout=0.1)

    asyncio.run(main())
