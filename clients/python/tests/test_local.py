"""Local evaluation: the same draw as the server's, ids the server accepts, exposures, ETag refreshes."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from conftest import ROOT_KEY, Recorder

from agentsplit import AsyncClient, Client
from agentsplit.conformance import read_assignment_id


def definitions_key(server, slug):
    defs = server.call("GET", "/experiments/definitions").json()["experiments"]
    return next(d["assignmentIdKey"] for d in defs if d["slug"] == slug)


def test_local_equals_the_servers_sticky_assignment_for_10000_users(server):
    slug = server.create_experiment(weights=(20, 30, 50), seed="a-seed-of-its-own")
    users = ["user-%d" % i for i in range(9_900)] + ["üser-%d-\U0001F642" % i for i in range(100)]

    def remote(chunk):
        with httpx.Client(base_url=server.url, headers={"x-api-key": ROOT_KEY}, timeout=30) as h:
            return [h.post("/experiment/%s/assign" % slug, json={"userId": u}).json()["variant"] for u in chunk]

    chunks = [users[i : i + 1250] for i in range(0, len(users), 1250)]
    with ThreadPoolExecutor(4) as pool:
        server_variants = [v for part in pool.map(remote, chunks) for v in part]

    c = Client(server.url, ROOT_KEY, local=True)
    try:
        key = definitions_key(server, slug)
        local = [c.assign(slug, u) for u in users]
        assert all(a.source == "local" for a in local)
        assert [a.variant for a in local] == server_variants
        assert len({a.assignment_id for a in local}) == len(users)
        for a, u in zip(local[::97], users[::97]):
            issued = read_assignment_id(a.assignment_id, key)
            assert issued is not None and issued.user_id == u and issued.version == 1
            assert "ABC"[issued.variant_index] == a.variant
        assert {a.variant for a in local} == {"A", "B", "C"}
        assert c.flush(30)
        assert c.refused == 0 and c.delivered == len(users)
        exposures = server.analysis(slug)["exposures"]
        assert sum(exposures.values()) == 2 * len(users)  # the server's own and the local ones
        for k in "ABC":
            assert exposures[k] == 2 * server_variants.count(k)
    finally:
        c.close(timeout=1)


def test_feedback_and_log_by_a_locally_made_id(server):
    slug = server.create_experiment()
    c = Client(server.url, ROOT_KEY, local=True)
    try:
        made = [c.assign(slug, "fb-%d" % i, context={"plan": "pro"}) for i in range(30)]
        assert c.flush(10)  # the exposures are delivered
        for i, a in enumerate(made):
            c.feedback(slug, assignment_id=a.assignment_id, metrics={"judge": i / 30})
            with c.track(a, input={"i": i}) as run:
                run.metrics["tokens"] = i
        assert c.flush(10)
        assert c.refused == 0 and c.delivered == 90
        results = server.results(slug)
        assert len(results) == 30
        by_id = {a.assignment_id: a for a in made}
        for r in results:
            assert r["variantKey"] == by_id[r["assignmentId"]].variant and r["assignedVariant"] is None
        judge = next(m for m in server.analysis(slug)["metrics"] if m["name"] == "judge")
        assert sum(v["n"] for v in judge["variants"]) == 30
        # the server refuses an id it cannot read: the client drops it with a warning and carries on
        bad = made[0].assignment_id[:-8] + "00000000"
        c.feedback(slug, assignment_id=bad, metrics={"judge": 1})
        assert c.flush(10)
        assert c.refused == 1
    finally:
        c.close(timeout=1)


def test_definitions_refresh_with_etag_and_follow_status(server):
    rec = Recorder()
    c = Client(server.url, ROOT_KEY, local=True, refresh_interval=0.15, transport=rec)
    try:
        slug = "late-" + str(int(time.time() * 1000))
        assert c.assign(slug, "u").source == "default"  # not there yet
        server.create_experiment(slug)
        deadline = time.monotonic() + 5
        while c.assign(slug, "u").source != "local" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert c.assign(slug, "u").source == "local"
        time.sleep(0.5)
        gets = [s for s in rec.seen if s[2] == "/experiments/definitions"]
        assert any(s[3] == 304 for s in gets), [s[3] for s in gets]
        assert all("if-none-match" in s[4] for s in gets if s[3] == 304)
        assert server.call("PATCH", "/experiment/%s" % slug, {"status": "paused"}).status_code == 200
        deadline = time.monotonic() + 5
        while c.assign(slug, "u").source == "local" and time.monotonic() < deadline:
            time.sleep(0.05)
        a = c.assign(slug, "u", default={"d": 1})
        assert a.source == "default" and a.payload == {"d": 1}
    finally:
        c.close(timeout=1)


def test_local_without_definitions_answers_the_default():
    c = Client("http://127.0.0.1:1", ROOT_KEY, local=True, timeout=0.5)
    try:
        a = c.assign("x", "u", default={"d": 3})
        assert a.source == "default" and a.payload == {"d": 3} and a.variant is None
    finally:
        c.close(timeout=0.1)


def test_local_random_mode(server):
    slug = server.create_experiment(assignment="random", weights=(50, 0, 50))
    c = Client(server.url, ROOT_KEY, local=True)
    try:
        key = definitions_key(server, slug)
        got = [c.assign(slug, "same-user") for _ in range(400)]
        assert {a.variant for a in got} == {"A", "C"}  # a zero weight never wins
        assert all(read_assignment_id(a.assignment_id, key).variant_index == "ABC".index(a.variant) for a in got)
        assert c.flush(10) and c.refused == 0
        assert server.analysis(slug)["exposures"].get("B", 0) == 0
    finally:
        c.close(timeout=1)


def test_async_client_local(server):
    slug = server.create_experiment()

    async def main():
        async with AsyncClient(server.url, ROOT_KEY, local=True) as c:
            got = [await c.assign(slug, "as-%d" % i) for i in range(50)]
            assert all(a.source == "local" for a in got)
            for a in got:
                c.feedback(slug, assignment_id=a.assignment_id, metrics={"ok": True})
            assert await c.flush(10)
            assert c.refused == 0 and c.delivered == 100
            return got

    got = asyncio.run(main())
    analysis = server.analysis(slug)
    assert sum(analysis["exposures"].values()) == 50
    ok = next(m for m in analysis["metrics"] if m["name"] == "ok")
    assert sum(v["n"] for v in ok["variants"]) == 50
    assert len({a.assignment_id for a in got}) == 50
