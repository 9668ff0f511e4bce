"""The OpenFeature provider against a real server, driven by the calls the SDK makes (``resolve_*_details``
with an evaluation context, ``track`` with tracking details); through the SDK itself when ``openfeature`` is
importable. The choices under test are ADR 0031's."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import httpx
import pytest
from conftest import ROOT_KEY

from agentsplit import Client
from agentsplit.conformance import read_assignment_id
from agentsplit.openfeature import (
    HAS_OPENFEATURE,
    AgentSplitProvider,
    ErrorCode,
    EvaluationContext,
    Reason,
    TrackingEventDetails,
)


def make_experiment(server, payloads, weights=None, status="running", assignment="sticky"):
    slug = "of-" + uuid.uuid4().hex[:10]
    n = len(payloads)
    weights = weights or [100 // n + (100 % n if i == 0 else 0) for i in range(n)]
    variants = [{"key": "ABCDEF"[i], "trafficPercent": w, "payload": p} for i, (p, w) in enumerate(zip(payloads, weights))]
    r = server.call("POST", "/experiments", {"slug": slug, "status": status, "assignment": assignment, "variants": variants})
    assert r.status_code == 201, r.text
    return slug


def exposures(server, slug):
    return sum(server.analysis(slug)["exposures"].values())


@pytest.fixture()
def providers():
    made = []
    yield made
    for p in made:
        p.client.close(timeout=1.0)


def provider_for(server, providers, **options):
    options.setdefault("flush_interval", 0.1)
    p = AgentSplitProvider(server.url, ROOT_KEY, **options)
    providers.append(p)
    p.initialize(EvaluationContext())
    return p


def test_the_same_variant_as_the_servers_assign_for_2000_sticky_users(server, providers):
    slug = make_experiment(server, [{"model": "a"}, {"model": "b"}, {"model": "c"}], weights=[20, 30, 50])
    users = ["of-user-%d" % i for i in range(1_950)] + ["öf-üser-%d-\U0001F642" % i for i in range(50)]

    def remote(chunk):
        with httpx.Client(base_url=server.url, headers={"x-api-key": ROOT_KEY}, timeout=30) as h:
            return [h.post("/experiment/%s/assign" % slug, json={"userId": u}).json()["variant"] for u in chunk]

    with ThreadPoolExecutor(4) as pool:
        server_variants = [v for part in pool.map(remote, [users[i : i + 500] for i in range(0, len(users), 500)]) for v in part]

    p = provider_for(server, providers)
    key = next(d["assignmentIdKey"] for d in server.call("GET", "/experiments/definitions").json()["experiments"] if d["slug"] == slug)
    got = [p.resolve_object_details(slug, {"model": "default"}, EvaluationContext(u, {"plan": "pro"})) for u in users]
    assert all(r.error_code is None and r.reason == Reason.SPLIT for r in got)
    assert [r.variant for r in got] == server_variants
    assert {r.variant for r in got} == {"A", "B", "C"}
    for r in got:
        assert r.value == {"model": r.variant.lower()}  # an object flag is the whole payload
        assert r.flag_metadata["experimentVersion"] == 1
    assert len({r.flag_metadata["assignmentId"] for r in got}) == len(users)
    for r, u in zip(got[::41], users[::41]):
        issued = read_assignment_id(r.flag_metadata["assignmentId"], key)
        assert issued is not None and issued.user_id == u and "ABC"[issued.variant_index] == r.variant
    # every evaluation is an exposure, delivered in the background like a local assign's
    assert p.client.flush(30) and p.client.failed == 0
    assert p.client.delivered == len(users)
    counted = server.analysis(slug)["exposures"]
    for k in "ABC":
        assert counted[k] == 2 * server_variants.count(k)  # the server's own assigns and the provider's


def test_primitive_flags_read_the_payloads_value_field(server, providers):
    flags = {
        "boolean": make_experiment(server, [{"value": True}]),
        "string": make_experiment(server, [{"value": "gpt-4o", "note": "x"}]),
        "integer": make_experiment(server, [{"value": 3}]),
        "float": make_experiment(server, [{"value": 0.7}]),
        "whole": make_experiment(server, [{"value": 2.0}]),
    }
    p = provider_for(server, providers)
    ctx = EvaluationContext("typed-user")
    assert p.resolve_boolean_details(flags["boolean"], False, ctx).value is True
    assert p.resolve_string_details(flags["string"], "d", ctx).value == "gpt-4o"
    n = p.resolve_integer_details(flags["integer"], 0, ctx).value
    assert n == 3 and type(n) is int
    f = p.resolve_float_details(flags["integer"], 0.0, ctx).value  # a float flag takes any number
    assert f == 3.0 and type(f) is float
    assert p.resolve_float_details(flags["float"], 0.0, ctx).value == 0.7
    whole = p.resolve_integer_details(flags["whole"], 0, ctx)  # JSON has one number type: 2.0 is 2
    assert whole.value == 2 and type(whole.value) is int and whole.error_code is None
    assert p.resolve_object_details(flags["string"], {}, ctx).value == {"value": "gpt-4o", "note": "x"}
    assert p.client.flush(10)
    # the wrong type: the default, TYPE_MISMATCH, and no exposure (the user got the default, not the variant)
    before = {k: exposures(server, s) for k, s in flags.items()}
    assert before == {"boolean": 1, "string": 2, "integer": 2, "float": 1, "whole": 1}
    mismatches = [
        p.resolve_boolean_details(flags["string"], False, ctx),
        p.resolve_string_details(flags["boolean"], "d", ctx),
        p.resolve_integer_details(flags["float"], 9, ctx),
        p.resolve_integer_details(flags["boolean"], 9, ctx),  # true is not a number
        p.resolve_float_details(flags["string"], 9.5, ctx),
    ]
    for r, default in zip(mismatches, [False, "d", 9, 9, 9.5]):
        assert r.error_code == ErrorCode.TYPE_MISMATCH and r.reason == Reason.ERROR and r.value == default
        assert r.variant is None and "variant 'A'" in r.error_message
    assert p.client.flush(10)
    assert {k: exposures(server, s) for k, s in flags.items()} == before


def test_unknown_draft_and_paused_answer_the_default_with_flag_not_found(server, providers):
    running = make_experiment(server, [{"value": "on"}])
    draft = make_experiment(server, [{"value": "on"}], status="draft")
    p = provider_for(server, providers, refresh_interval=0.1)
    ctx = EvaluationContext("u-1")
    assert p.resolve_string_details(running, "off", ctx).value == "on"
    for slug in ("no-such-flag-" + uuid.uuid4().hex[:6], draft):
        r = p.resolve_string_details(slug, "off", ctx)
        assert (r.value, r.error_code, r.reason, r.variant) == ("off", ErrorCode.FLAG_NOT_FOUND, Reason.ERROR, None)
        assert slug in r.error_message and r.flag_metadata == {}
    assert server.call("PATCH", "/experiment/%s" % running, {"status": "paused"}).status_code == 200
    deadline = time.monotonic() + 10
    while p.resolve_string_details(running, "off", ctx).error_code is None and time.monotonic() < deadline:
        time.sleep(0.05)
    r = p.resolve_string_details(running, "off", ctx)
    assert (r.value, r.error_code) == ("off", ErrorCode.FLAG_NOT_FOUND)
    assert p.client.flush(10)
    exposed = server.analysis(running)["exposures"]
    assert server.analysis(draft)["exposures"].get("A", 0) == 0
    # the resolutions while it ran were exposures, the ones after the pause were not: nothing more arrives
    n = sum(exposed.values())
    p.resolve_string_details(running, "off", ctx)
    assert p.client.flush(10) and sum(server.analysis(running)["exposures"].values()) == n


def test_targeting_key_missing_and_invalid(server, providers):
    slug = make_experiment(server, [{"value": True}])
    p = provider_for(server, providers)
    for ctx in (None, EvaluationContext(), EvaluationContext(""), EvaluationContext(None, {"plan": "pro"}), EvaluationContext(42)):
        r = p.resolve_boolean_details(slug, False, ctx)
        assert (r.value, r.error_code, r.reason) == (False, ErrorCode.TARGETING_KEY_MISSING, Reason.ERROR)
    for bad in ("x" * 513, "a\x00b", "lone-\ud800"):
        r = p.resolve_boolean_details(slug, False, EvaluationContext(bad))
        assert (r.value, r.error_code) == (False, ErrorCode.INVALID_CONTEXT), bad
    ok = p.resolve_boolean_details(slug, False, EvaluationContext("x" * 512))
    assert ok.value is True and ok.error_code is None
    assert p.client.flush(10) and exposures(server, slug) == 1


def test_the_context_is_the_exposures_and_track_logs_a_result(server, providers):
    slug = make_experiment(server, [{"value": "a"}, {"value": "b"}])
    other = make_experiment(server, [{"value": 1}])
    p = provider_for(server, providers)
    when = datetime(2026, 11, 26, 12, 0, 0, 250000, tzinfo=timezone.utc)
    evaluated = {}
    for i in range(40):
        ctx = EvaluationContext("tr-%d" % i, {"plan": "pro", "seen": when})
        evaluated["tr-%d" % i] = p.resolve_string_details(slug, "z", ctx)
        p.resolve_integer_details(other, 0, ctx)
    for i in range(40):
        user = "tr-%d" % i
        # flagKey names one experiment: only that one gets the result
        details = TrackingEventDetails(value=i / 10, attributes={"flagKey": slug, "tokens": 100 + i, "cached": i % 2 == 0, "note": "n%d" % i, "at": when})
        p.track("rating", EvaluationContext(user, {"channel": "chat"}), details)
    p.track("done", EvaluationContext("tr-0"))  # no flagKey: every experiment evaluated for tr-0, metric true
    p.track("rating", EvaluationContext("never-evaluated"), TrackingEventDetails(value=1.0))  # nothing to link: nothing logged
    p.track("rating", EvaluationContext(), TrackingEventDetails(value=1.0))  # no targeting key: nothing logged
    p.track("rating", EvaluationContext("tr-1"), TrackingEventDetails(value=1.0, attributes={"flagKey": "not-evaluated"}))
    assert p.client.flush(10) and p.client.failed == 0

    results = server.results(slug)
    assert len(results) == 41
    rated = {r["userId"]: r for r in results if "rating" in r["metrics"]}
    assert set(rated) == set(evaluated)
    for user, r in rated.items():
        i = int(user.split("-")[1])
        e = evaluated[user]
        assert r["variantKey"] == e.variant and r["assignmentId"] == e.flag_metadata["assignmentId"]
        assert r["assignedVariant"] is None and r["knownVariant"] is True
        assert r["metrics"] == {"rating": i / 10, "tokens": 100 + i, "cached": i % 2 == 0}
        assert r["output"] == {"note": "n%d" % i, "at": "2026-11-26T12:00:00.250Z"}
        assert r["context"] == {"channel": "chat"}
        assert r["assignmentContext"] == {"plan": "pro", "seen": "2026-11-26T12:00:00.250Z"}  # the exposure's context
    done = [r for r in results if "done" in r["metrics"]]
    assert len(done) == 1 and done[0]["metrics"] == {"done": True} and done[0]["userId"] == "tr-0"
    other_results = server.results(other)
    assert [(r["userId"], r["metrics"]) for r in other_results] == [("tr-0", {"done": True})]
    rating = next(m for m in server.analysis(slug)["metrics"] if m["name"] == "rating")
    assert sum(v["n"] for v in rating["variants"]) == 40


def test_what_is_not_json_is_left_out_and_a_value_that_is_not_a_number_goes_to_output(server, providers):
    slug = make_experiment(server, [{"value": "a"}])
    p = provider_for(server, providers)
    nan = float("nan")
    ctx = EvaluationContext("nan-user", {"score": nan, "list": [1, float("inf")], "ok": 1})
    assert p.resolve_string_details(slug, "z", ctx).value == "a"
    p.track("scored", ctx, TrackingEventDetails(value=nan, attributes={"bad": nan, "good": 2}))
    p.track("labelled", EvaluationContext("nan-user"), TrackingEventDetails(value="great"))  # not a number (the SDK types it float)
    assert p.client.flush(10) and p.client.failed == 0
    by_metric = {next(iter(sorted(r["metrics"]))): r for r in server.results(slug)}
    assert by_metric["good"]["metrics"] == {"good": 2, "scored": True}  # NaN: neither the event's number nor a metric
    assert by_metric["good"].get("output") is None
    assert by_metric["good"]["context"] == {"list": [1, None], "ok": 1}
    assert by_metric["good"]["assignmentContext"] == {"list": [1, None], "ok": 1}
    assert by_metric["labelled"]["metrics"] == {"labelled": True} and by_metric["labelled"]["output"] == {"value": "great"}
    assert by_metric["labelled"]["context"] is None


def test_track_remembers_the_last_evaluation_per_targeting_key_and_flag(server, providers):
    slug = make_experiment(server, [{"value": "a"}, {"value": "b"}], assignment="random")
    p = provider_for(server, providers, max_tracked_users=3)
    ctx = EvaluationContext("again")
    seen = [p.resolve_string_details(slug, "z", ctx) for _ in range(30)]
    assert {r.variant for r in seen} == {"A", "B"}  # random: a new draw each time
    p.track("clicked", ctx)
    assert p.client.flush(10) and p.client.failed == 0
    (r,) = server.results(slug)
    assert r["assignmentId"] == seen[-1].flag_metadata["assignmentId"] and r["variantKey"] == seen[-1].variant
    assert r["metrics"] == {"clicked": True}
    # bounded: the least recently evaluated targeting key is forgotten first
    for u in ("m-1", "m-2", "again", "m-3", "m-4"):
        p.resolve_string_details(slug, "z", EvaluationContext(u))
    for u in ("m-1", "m-2", "again", "m-3", "m-4"):
        p.track("kept", EvaluationContext(u))
    assert p.client.flush(10)
    assert sorted(r["userId"] for r in server.results(slug) if "kept" in r["metrics"]) == ["again", "m-3", "m-4"]


def test_fail_open_server_down_from_the_start_and_killed_mid_run(new_server, providers, caplog):
    # never reached: every evaluation answers its default (PROVIDER_NOT_READY), track logs nothing, nothing raises
    p = AgentSplitProvider("http://127.0.0.1:1", ROOT_KEY, timeout=0.3)
    providers.append(p)
    with caplog.at_level(logging.WARNING, logger="agentsplit"):
        p.initialize(EvaluationContext())
        r = p.resolve_object_details("anything", {"prompt": "fallback"}, EvaluationContext("u"))
        assert (r.value, r.error_code, r.reason) == ({"prompt": "fallback"}, ErrorCode.PROVIDER_NOT_READY, Reason.ERROR)
        p.track("rating", EvaluationContext("u"), TrackingEventDetails(value=1.0))
    assert p.client.queued == 0
    assert any("no evaluation remembered" in m for m in caplog.messages), caplog.messages

    # reached once, then killed: evaluations keep answering from the definitions held; what is queued
    # meanwhile is delivered when the server is back
    srv = new_server()
    slug = make_experiment(srv, [{"value": "a"}, {"value": "b"}])
    q = AgentSplitProvider(srv.url, ROOT_KEY, timeout=0.5, flush_interval=0.1, backoff_base=0.1, backoff_max=0.3, refresh_interval=0.2)
    providers.append(q)
    q.initialize(EvaluationContext())
    before = [q.resolve_string_details(slug, "z", EvaluationContext("k-%d" % i)).variant for i in range(20)]
    assert q.client.flush(10)
    srv.kill()
    during = [q.resolve_string_details(slug, "z", EvaluationContext("k-%d" % i)) for i in range(20)]
    assert [r.variant for r in during] == before and all(r.error_code is None for r in during)
    for i in range(20):
        q.track("rating", EvaluationContext("k-%d" % i), TrackingEventDetails(value=float(i)))
    time.sleep(0.5)  # refreshes fail meanwhile: the definitions are kept
    assert q.resolve_string_details(slug, "z", EvaluationContext("k-0")).variant == before[0]
    srv.start()
    assert q.client.flush(20) and q.client.failed == 0
    assert sum(srv.analysis(slug)["exposures"].values()) == 41  # 20 + 20 + 1
    assert sorted(r["metrics"]["rating"] for r in srv.results(slug)) == [float(i) for i in range(20)]


def test_lifecycle_a_given_client_is_flushed_not_closed(server):
    slug = make_experiment(server, [{"value": True}])
    c = Client(server.url, ROOT_KEY, local=True, flush_interval=60)
    try:
        with pytest.raises(ValueError):
            AgentSplitProvider(client=Client(server.url, ROOT_KEY, flush_at_exit=False))  # not local
        p = AgentSplitProvider(client=c)
        assert p.get_metadata().name == "agentsplit" and p.get_provider_hooks() == []
        assert p.resolve_boolean_details(slug, False, EvaluationContext("lc")).value is True
        # the SDK's async evaluation is the same local call
        r = asyncio.run(p.resolve_boolean_details_async(slug, False, EvaluationContext("lc")))
        assert r.value is True and r.reason == Reason.SPLIT
        p.shutdown()
        assert c.queued == 0 and not c._closed and exposures(server, slug) == 2
        assert c.assign(slug, "still-open").source == "local"
    finally:
        c.close(timeout=1)
    own = AgentSplitProvider(server.url, ROOT_KEY)
    own.shutdown()
    assert own.client._closed
    r = own.resolve_boolean_details(slug, False, EvaluationContext("lc"))
    assert (r.value, r.error_code) == (False, ErrorCode.GENERAL)


@pytest.mark.skipif(not HAS_OPENFEATURE, reason="openfeature-sdk is not importable (pip install openfeature-sdk>=0.9 to run this through the SDK)")
def test_through_the_openfeature_sdk(server):
    from openfeature import api
    from openfeature.evaluation_context import EvaluationContext as SdkContext
    from openfeature.track import TrackingEventDetails as SdkDetails

    slug = make_experiment(server, [{"value": "a"}, {"value": "b"}])
    p = AgentSplitProvider(server.url, ROOT_KEY, flush_interval=0.1)
    try:
        # 0.10 initializes in a thread unless asked to wait; 0.9 always waits
        getattr(api, "set_provider_and_wait", api.set_provider)(p)
        of = api.get_client()
        users = ["sdk-%d" % i for i in range(200)]
        with httpx.Client(base_url=server.url, headers={"x-api-key": ROOT_KEY}, timeout=30) as h:
            expected = [h.post("/experiment/%s/assign" % slug, json={"userId": u}).json()["variant"] for u in users]
        got = [of.get_string_details(slug, "z", SdkContext(u, {"plan": "pro"})) for u in users]
        assert [d.variant for d in got] == expected
        assert all(d.reason == "SPLIT" and d.value == d.variant.lower() and d.flag_key == slug for d in got)
        assert of.get_boolean_value(slug, False, SdkContext("sdk-0")) is False  # TYPE_MISMATCH: the default
        d = of.get_boolean_details(slug, False, SdkContext("sdk-0"))
        assert (d.value, d.error_code, d.reason) == (False, "TYPE_MISMATCH", "ERROR")
        d = of.get_string_details("no-such-" + slug, "z", SdkContext("sdk-0"))
        assert (d.value, d.error_code) == ("z", "FLAG_NOT_FOUND")
        d = of.get_string_details(slug, "z", SdkContext())
        assert (d.value, d.error_code) == ("z", "TARGETING_KEY_MISSING")
        assert asyncio.run(of.get_string_value_async(slug, "z", SdkContext("sdk-1"))) == expected[1].lower()
        api.set_evaluation_context(SdkContext(None, {"region": "eu"}))  # merged into track's context by the SDK
        of.track("rating", SdkContext("sdk-0"), SdkDetails(value=0.5).add("tokens", 7))
        assert p.client.flush(10) and p.client.failed == 0
        (r,) = server.results(slug)
        assert r["userId"] == "sdk-0" and r["metrics"] == {"rating": 0.5, "tokens": 7} and r["context"] == {"region": "eu"}
        assert sum(server.analysis(slug)["exposures"].values()) == 2 * len(users) + 1
    finally:
        api.set_evaluation_context(SdkContext())
        api.shutdown()
        p.client.close(timeout=1)
