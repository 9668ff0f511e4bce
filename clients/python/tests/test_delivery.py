"""The queue and its batches without a network: grouping, order, retry decisions, backoff bounds."""

from __future__ import annotations

import json
import logging
import time

from conftest import ROOT_KEY

from agentsplit import Client
from agentsplit._core import Delivery, iso, retry_after_seconds


def make(**kw):
    args = dict(batch_size=3, max_queue=100, backoff_base=0.5, backoff_max=30.0, warn=lambda *a: None)
    args.update(kw)
    return Delivery(**args)


def test_batches_group_logs_per_experiment_and_send_exposures_first():
    d = make()
    d.put(("feedback", "x", {"assignmentId": "1", "metrics": {"a": 1}}, 0.0))
    for i in range(4):
        d.put(("log", "x", {"variantKey": "A", "metrics": {"i": i}}, 0.0))
    d.put(("log", "y", {"variantKey": "A"}, 0.0))
    d.put(("exposure", "x", ("id-1", None), 0.0))
    d.put(("exposure", "y", ("id-2", {"k": 1}), 0.0))
    d.put(("feedback", "y", {"assignmentId": "2", "metrics": {"a": 1}}, 0.0))
    b, _ = d.next_ready(time.monotonic())
    kinds = [(x.kind, x.slug, len(x.items)) for x in d.pending]
    assert kinds == [("exposure", "x", 2), ("log", "x", 3), ("log", "x", 1), ("log", "y", 1), ("feedback", "x", 2)]
    assert b is d.pending[0] and b.path() == "/exposures"
    assert b'"experiment":"y","assignmentId":"id-2","context":{"k":1}' in b.content()
    # feedback of every experiment in one POST /feedback, each item naming its experiment
    fb = d.pending[-1]
    assert fb.path() == "/feedback"
    assert json.loads(fb.content()) == {
        "feedback": [
            {"experiment": "x", "assignmentId": "1", "metrics": {"a": 1}},
            {"experiment": "y", "assignmentId": "2", "metrics": {"a": 1}},
        ]
    }
    assert len({x.key for x in d.pending}) == len(d.pending)


def test_retry_keeps_the_key_and_waits_at_least_retry_after():
    d = make()
    for i in range(3):
        d.put(("log", "x", {"variantKey": "A"}, 0.0))
    b, _ = d.next_ready(time.monotonic())
    key = b.key
    d.on_response(b, 429, {"retry-after": "7"}, {"error": "slow down"}, None)
    assert b.key == key and b.attempt == 1
    assert 6.9 <= b.next_at - time.monotonic() <= 7.1
    assert d.next_ready(time.monotonic())[0] is None
    d.hurry()  # a Retry-After is not cut short by flush
    assert d.next_ready(time.monotonic())[0] is None
    for attempt in range(2, 12):
        d.on_error(b, OSError("down"))
        wait = b.next_at - time.monotonic()
        cap = min(30.0, 0.5 * 2 ** (attempt - 1))
        assert cap / 2 - 0.01 <= wait <= cap + 0.01, (attempt, wait)
    d.hurry()
    assert d.next_ready(time.monotonic())[0] is b
    d.on_response(b, 200, {}, {"success": True}, None)
    assert d.idle() and d.delivered == 3


def test_a_refused_batch_is_split_once_and_auth_errors_drop():
    d = make()
    for i in range(3):
        d.put(("log", "x", {"variantKey": "A", "metrics": {"i": i}}, 0.0))
    b, _ = d.next_ready(time.monotonic())
    d.on_response(b, 400, {}, {"error": "bad"}, None)
    singles = list(d.pending)
    assert [len(s.items) for s in singles] == [1, 1, 1] and all(s.single for s in singles)
    d.on_response(singles[0], 200, {}, {}, None)
    d.on_response(singles[1], 422, {}, {"error": "bad"}, None)
    calls = []
    d.on_response(singles[2], 403, {}, {"error": "no"}, lambda s, data: calls.append(s))
    assert d.idle() and d.delivered == 1 and d.failed == 2 and calls == [403]


def test_rejected_exposures_are_counted_and_warned(caplog):
    d = make()
    d.put(("exposure", "x", ("good", None), 0.0))
    d.put(("exposure", "x", ("bad", None), 0.0))
    b, _ = d.next_ready(time.monotonic())
    caplog.set_level(logging.WARNING, logger="agentsplit")
    d.on_response(b, 200, {}, {"success": True, "accepted": 1, "rejected": [{"index": 1, "error": "unknown id"}]}, None)
    assert d.delivered == 1 and d.failed == 1
    assert any("bad" in r.getMessage() and "unknown id" in r.getMessage() for r in caplog.records)


def test_retry_after_forms_and_iso():
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) == 0.0 and retry_after_seconds("soon") == 0.0
    assert 0 <= retry_after_seconds(time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 5))) <= 6
    assert iso(0.0) == "1970-01-01T00:00:00.000Z"
    assert iso(1700000000.25) == "2023-11-14T22:13:20.250Z"


def test_rejected_exposure_from_the_server(server):
    slug = server.create_experiment()
    c = Client(server.url, ROOT_KEY, local=True)
    try:
        assert c.assign(slug, "u").source == "local"
        c._delivery.put(("exposure", slug, ("not-an-id-of-ours", None), time.time()))
        assert c.flush(10)
        assert c.delivered == 1 and c.refused == 1
    finally:
        c.close(timeout=1)
