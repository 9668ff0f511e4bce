"""The review's findings on the Python client (each test failed before its fix): items JSON cannot hold,
user ids the server refuses, the async client's first fetch and second event loop, a batch that always
gets a 500, the two clients' shared decisions (server warnings, 408, track's error, calls after close)
and URL-encoded slugs. A tiny http.server stands in for the server where an answer must be forced."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Dict, List, Tuple

import pytest
from conftest import ROOT_KEY

from agentsplit import AsyncClient, Client

FAST = dict(flush_interval=0.05, backoff_base=0.01, backoff_max=0.02, flush_at_exit=False)


def warnings_of(caplog: Any, text: str = "") -> List[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "agentsplit" and r.levelno >= logging.WARNING and text in r.getMessage()]


# 2. an item JSON cannot hold ---------------------------------------------------------------------------


def test_a_circular_item_is_dropped_alone_and_the_rest_is_delivered(server, caplog):
    caplog.set_level(logging.WARNING, logger="agentsplit")
    slug = server.create_experiment()
    circ: Dict[str, Any] = {}
    circ["self"] = circ
    c = Client(server.url, ROOT_KEY, **FAST)
    try:
        c.log(slug, variant_key="A", metrics={"x": 1}, context=circ)
        c.log(slug, variant_key="A", metrics={"x": float("nan")})
        for i in range(5):
            c.log(slug, variant_key="A", metrics={"i": i})
        c.feedback(slug, assignment_id="whatever", metrics=circ)
        assert c.flush(5) is True
        assert c.delivered == 5 and c.failed == 3 and c.queued == 0
        assert sorted(r["metrics"]["i"] for r in server.results(slug)) == [0, 1, 2, 3, 4]
        (w,) = warnings_of(caplog, "cannot be sent as JSON")  # throttled: one warning, naming why
        assert "Circular reference" in w.getMessage()
    finally:
        c.close(timeout=1)


def test_a_local_exposure_with_a_circular_context_is_dropped_alone(server):
    slug = server.create_experiment()
    circ: List[Any] = []
    circ.append(circ)
    c = Client(server.url, ROOT_KEY, local=True, **FAST)
    try:
        assert c.assign(slug, "u-1", context={"loop": circ}).source == "local"
        assert c.assign(slug, "u-2", context={"plan": "pro"}).source == "local"
        assert c.flush(5) is True
        assert c.delivered == 1 and c.failed == 1
    finally:
        c.close(timeout=1)


# 3. user ids the server refuses --------------------------------------------------------------------------

BAD_IDS = ["", "x" * 513, "a\x00b", "\ud800", "ok\udfff", 42, None]


def test_local_mode_answers_the_default_for_user_ids_the_server_refuses(server, caplog):
    caplog.set_level(logging.DEBUG, logger="agentsplit")
    slug = server.create_experiment()
    local = Client(server.url, ROOT_KEY, local=True, **FAST)
    remote = Client(server.url, ROOT_KEY, **FAST)
    try:
        for u in BAD_IDS:
            la = local.assign(slug, u, default={"p": "d"})
            ra = remote.assign(slug, u, default={"p": "d"})
            assert (la.source, la.variant, la.assignment_id, la.payload) == ("default", None, None, {"p": "d"}), repr(u)
            assert ra.source == "default", repr(u)
        # the limits themselves are fine: 512 code points (astral ones count one), any other character
        for u in ["x" * 512, "\U0001f600" * 512, "é-ü", "a b\t"]:
            assert local.assign(slug, u).source == "local", repr(u)
            assert remote.assign(slug, u).source == "server", repr(u)
        assert local.flush(5) and local.failed == 0 and local.delivered == 4
        # one warning per client (throttled), no traceback anywhere
        assert len(warnings_of(caplog, "user id")) == 2
        assert not [r for r in caplog.records if r.exc_info and r.levelno >= logging.WARNING]
    finally:
        local.close(timeout=1)
        remote.close(timeout=1)


# 6. AsyncClient: concurrent first assigns ---------------------------------------------------------------


def test_async_concurrent_first_assigns_share_the_first_fetch(server, caplog):
    caplog.set_level(logging.WARNING, logger="agentsplit")
    slug = server.create_experiment()

    async def main() -> List[str]:
        c = AsyncClient(server.url, ROOT_KEY, local=True, **FAST)
        try:
            res = await asyncio.gather(*[c.assign(slug, "u%d" % i) for i in range(10)])
            assert await c.flush(5) and c.delivered == 10
            return [a.source for a in res]
        finally:
            await c.close(1)

    assert asyncio.run(main()) == ["local"] * 10
    assert not warnings_of(caplog)


# 7. AsyncClient used from a second event loop; unexpected errors throttled ------------------------------


@pytest.mark.parametrize("local", [False, True])
def test_async_client_follows_a_second_event_loop(server, caplog, local):
    caplog.set_level(logging.WARNING, logger="agentsplit")
    slug = server.create_experiment()
    c = AsyncClient(server.url, ROOT_KEY, local=local, **FAST)
    want = "local" if local else "server"

    async def first() -> None:
        assert (await c.assign(slug, "u-1")).source == want
        c.log(slug, variant_key="A", metrics={"loop": 1})
        assert await c.flush(5)

    async def second() -> None:
        for i in range(3):
            assert (await c.assign(slug, "u-2-%d" % i)).source == want
        c.log(slug, variant_key="A", metrics={"loop": 2})
        assert await c.flush(5)
        await c.close(1)

    asyncio.run(first())
    c.log(slug, variant_key="A", metrics={"loop": 3})  # between the loops: queued, sent by the next one
    asyncio.run(second())
    assert c.failed == 0 and c.queued == 0
    assert sorted(r["metrics"]["loop"] for r in server.results(slug)) == [1, 2, 3]
    assert not warnings_of(caplog), [r.getMessage() for r in warnings_of(caplog)]


def test_unexpected_assign_errors_are_throttled_without_tracebacks(server, caplog):
    caplog.set_level(logging.DEBUG, logger="agentsplit")
    slug = server.create_experiment()
    circ: Dict[str, Any] = {}
    circ["self"] = circ
    c = Client(server.url, ROOT_KEY, **FAST)

    async def main() -> None:
        a = AsyncClient(server.url, ROOT_KEY, **FAST)
        for _ in range(5):
            assert (await a.assign(slug, "u", context=circ)).source == "default"
        await a.close(1)

    try:
        for _ in range(5):
            assert c.assign(slug, "u", context=circ).source == "default"
        asyncio.run(main())
        ws = warnings_of(caplog, "failed unexpectedly")
        assert len(ws) == 2 and all("Circular reference" in w.getMessage() for w in ws)
        assert not [r for r in caplog.records if r.exc_info and r.levelno >= logging.WARNING]
    finally:
        c.close(timeout=1)


# 8. a batch that always gets a 500 ----------------------------------------------------------------------


def test_a_batch_that_always_gets_500_does_not_hold_up_the_others(stand_in, caplog):
    caplog.set_level(logging.WARNING, logger="agentsplit")

    def answer(method: str, path: str, body: Any) -> Tuple[int, Any]:
        if path == "/experiment/broken/logs":
            return 500, {"error": "Internal Server Error"}
        return 200, {"success": True}

    srv = stand_in(answer)
    # a backoff far longer than the test: the broken batch must not make the others wait for it
    c = Client(srv.url, ROOT_KEY, flush_interval=0.05, backoff_base=30.0, backoff_max=30.0, flush_at_exit=False)
    try:
        c.log("broken", variant_key="A", metrics={"n": 1})
        c.log("broken", variant_key="A", metrics={"n": 2})
        time.sleep(0.3)  # the broken batch is tried and backs off
        for i in range(3):
            c.log("fine", variant_key="A", metrics={"i": i})
        deadline = time.monotonic() + 3
        while c.delivered < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert c.delivered == 3
        assert len(srv.posts("/experiment/broken/logs")) == 1
    finally:
        c.close(timeout=0.2)
    assert c.failed == 2  # still undelivered at close: counted


def test_a_batch_that_always_gets_500_is_given_up_item_by_item(stand_in, caplog):
    caplog.set_level(logging.WARNING, logger="agentsplit")

    def answer(method: str, path: str, body: Any) -> Tuple[int, Any]:
        if path == "/experiment/x/logs" and any(r["metrics"].get("poison") for r in body["results"]):
            return 500, {"error": "Internal Server Error"}
        return 200, {"success": True}

    srv = stand_in(answer)
    c = Client(srv.url, ROOT_KEY, **FAST)
    try:
        c.log("x", variant_key="A", metrics={"poison": True})
        c.log("x", variant_key="A", metrics={"n": 1})
        c.log("x", variant_key="A", metrics={"n": 2})
        assert c.flush(10) is True
        assert c.delivered == 2 and c.failed == 1 and c.queued == 0
    finally:
        c.close(timeout=1)
    posts = srv.posts("/experiment/x/logs")
    batch = [p for p in posts if len(p["body"]["results"]) == 3]
    assert len(batch) == 5 and len({p["key"] for p in batch}) == 1  # 5 tries, one Idempotency-Key
    poison = [p for p in posts if len(p["body"]["results"]) == 1 and p["body"]["results"][0]["metrics"].get("poison")]
    assert len(poison) == 5 and len({p["key"] for p in poison}) == 1 and poison[0]["key"] != batch[0]["key"]
    assert warnings_of(caplog, "one by one") and warnings_of(caplog, "dropped")


def test_503_and_408_are_retried_until_they_pass(stand_in):
    answers = {"n": 0}

    def answer(method: str, path: str, body: Any) -> Tuple[int, Any]:
        answers["n"] += 1
        if answers["n"] <= 8:
            return (503 if answers["n"] % 2 else 408), {"error": "later"}
        return 200, {"success": True}

    srv = stand_in(answer)
    c = Client(srv.url, ROOT_KEY, **FAST)
    try:
        c.log("x", variant_key="A", metrics={"n": 1})
        c.log("x", variant_key="A", metrics={"n": 2})
        assert c.flush(10) is True
        assert c.delivered == 2 and c.failed == 0
    finally:
        c.close(timeout=1)
    posts = srv.posts()
    assert len(posts) == 9 and len({p["key"] for p in posts}) == 1  # never split, never given up


# 9. the decisions shared with the JS client ---------------------------------------------------------------


def test_server_warnings_are_logged_at_warning_throttled(server, caplog):
    caplog.set_level(logging.DEBUG, logger="agentsplit")
    slug = server.create_experiment()
    c = Client(server.url, ROOT_KEY, **FAST)
    try:
        c.log(slug, variant_key="Z", metrics={"x": 1})
        assert c.flush(5)
        c.log(slug, variant_key="Z", metrics={"x": 2})
        assert c.flush(5)
        assert c.delivered == 2
        ws = warnings_of(caplog, "the server warned")
        assert len(ws) == 1 and "Z" in ws[0].getMessage()
    finally:
        c.close(timeout=1)


def test_track_error_output_names_the_exception_and_its_message(server):
    slug = server.create_experiment()
    c = Client(server.url, ROOT_KEY, **FAST)
    try:
        a = c.assign(slug, "u-track")
        with pytest.raises(KeyError):
            with c.track(a, input={"q": 1}):
                raise KeyError("missing")
        with pytest.raises(RuntimeError):
            with c.track(a):
                raise RuntimeError()
        assert c.flush(5)
        outputs = sorted(r["output"]["error"] for r in server.results(slug))
        assert outputs == ["KeyError: 'missing'", "RuntimeError: "]
    finally:
        c.close(timeout=1)


def test_calls_after_close_are_warned_once_and_counted(server, caplog):
    caplog.set_level(logging.DEBUG, logger="agentsplit")
    slug = server.create_experiment()
    c = Client(server.url, ROOT_KEY, **FAST)
    c.log(slug, variant_key="A", metrics={"x": 1})
    c.close(timeout=5)
    assert c.delivered == 1 and c.failed == 0
    c.log(slug, variant_key="A", metrics={"x": 2})
    c.feedback(slug, assignment_id="id", metrics={"t": True})
    with c.track(c.assign(slug, "u", default={"d": 1})) as run:  # a default: nothing to count
        run.output = {"a": 1}
    c.log(slug, variant_key="A", metrics={"x": 3})
    assert c.failed == 3
    ws = warnings_of(caplog, "client is closed")
    assert [w.getMessage() for w in ws] == ["agentsplit: client is closed: result of %r dropped" % slug]

    async def main() -> None:
        a = AsyncClient(server.url, ROOT_KEY, **FAST)
        await a.close(1)
        assert (await a.assign(slug, "u")).source == "default"
        a.log(slug, variant_key="A", metrics={"x": 4})
        a.feedback(slug, assignment_id="id", metrics={"t": True})
        assert a.failed == 2

    asyncio.run(main())
    assert len(warnings_of(caplog, "client is closed")) == 2


# 10. slugs are URL-encoded ----------------------------------------------------------------------------


def test_slugs_are_url_encoded(stand_in):
    def answer(method: str, path: str, body: Any) -> Tuple[int, Any]:
        if path.endswith("/assign"):
            return 200, {"variant": "A", "payload": {}, "assignmentId": "id-1"}
        return 200, {"success": True}

    srv = stand_in(answer)
    c = Client(srv.url, ROOT_KEY, **FAST)
    try:
        a = c.assign("a/b?c#d", "u")
        assert a.source == "server"
        c.log("a/b?c#d", assignment=a, metrics={"x": 1})
        c.feedback("a/b?c#d", assignment_id="id-1", metrics={"t": True})
        assert c.flush(5)
    finally:
        c.close(timeout=1)

    async def main() -> None:
        ac = AsyncClient(srv.url, ROOT_KEY, **FAST)
        assert (await ac.assign("a/b?c#d", "u")).source == "server"
        await ac.close(1)

    asyncio.run(main())
    assert [p["path"] for p in srv.posts()] == [
        "/experiment/a%2Fb%3Fc%23d/assign",
        "/experiment/a%2Fb%3Fc%23d/logs",
        "/feedback",
        "/experiment/a%2Fb%3Fc%23d/assign",
    ]
