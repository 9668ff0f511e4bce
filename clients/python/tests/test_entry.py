"""Who enters, in local evaluation (ADR 0038): overrides, layer, targeting, coverage, then the split.
The definitions come from an in-process transport, so every rule is checked against hand-made cases
and against the hash functions the server uses; what is sent is recorded."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Dict, List

import httpx

from agentsplit import AsyncClient, Client
from agentsplit._entry import Definition, compile_definitions
from agentsplit.conformance import bucket_ranges, choose_variant, hash_v2, id_entered, in_namespace, read_assignment_id

KEY = 424242


def definition(slug: str = "e", **fields: Any) -> Dict[str, Any]:
    d: Dict[str, Any] = {
        "slug": slug,
        "assignmentIdKey": KEY,
        "version": 3,
        "assignment": "sticky",
        "seed": slug + "-seed",
        "variants": [
            {"key": "A", "trafficPercent": 50, "payload": {"p": "a"}},
            {"key": "B", "trafficPercent": 50, "payload": {"p": "b"}},
        ],
    }
    d.update(fields)
    return d


class Fake:
    """Serves one definitions answer; records every other request's JSON body."""

    def __init__(self, experiments: List[Dict[str, Any]], groups: Any = None) -> None:
        self.answer: Dict[str, Any] = {"experiments": experiments}
        if groups is not None:
            self.answer["groups"] = groups
        self.posts: List[Any] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/experiments/definitions":
            return httpx.Response(200, json=self.answer)
        self.posts.append((request.url.path, json.loads(request.content)))
        return httpx.Response(200, json={})

    def exposures(self) -> List[str]:
        return [x["assignmentId"] for path, body in self.posts if path == "/exposures" for x in body["exposures"]]


def client(fake: Fake) -> Client:
    return Client("http://agentsplit.test", "k", local=True, transport=httpx.MockTransport(fake))


def test_missing_fields_mean_the_defaults():
    d = Definition(definition())
    assert d.targeting is None and d.coverage == 100 and d.layer is None and d.overrides == []
    assert d.default_index == 0 and d.simple
    assert compile_definitions({"experiments": [definition()]})["e"].simple


def test_targeting_with_saved_groups():
    targeting = {"plan": {"$in": ["pro", "team"]}, "userId": {"$notInGroup": "blocked"}}
    fake = Fake([definition(targeting=targeting, defaultVariant="B")], groups={"blocked": ["u-9"]})
    c = client(fake)
    try:
        free = c.assign("e", "u-1", {"plan": "free"})
        assert (free.variant, free.payload, free.in_experiment, free.reason) == ("B", {"p": "b"}, False, "targeting")
        blocked = c.assign("e", "u-9", {"plan": "pro"})
        assert (blocked.variant, blocked.in_experiment, blocked.reason) == ("B", False, "targeting")
        pro = c.assign("e", "u-1", {"plan": "pro"})
        expected = "AB"[choose_variant(hash_v2("e-seed", "u-1"), bucket_ranges(2, 1, [0.5, 0.5]))]
        assert (pro.variant, pro.in_experiment, pro.reason) == (expected, True, None)
        # the context's own userId is what conditions see
        own = c.assign("e", "u-2", {"plan": "pro", "userId": "u-9"})
        assert own.reason == "targeting"
        assert c.flush(5)
        assert fake.exposures() == [pro.assignment_id]  # no exposure for a unit kept out
    finally:
        c.close(timeout=1)


def test_a_kept_out_unit_has_an_x_marked_id_with_a_valid_check():
    c = client(Fake([definition(targeting={"plan": "pro"}, defaultVariant="B")]))
    try:
        a = c.assign("e", "user/ü", {"plan": "free"})
        uuid, version, variant, user, _check = a.assignment_id.split(".")
        assert (version, variant) == ("3", "x1") and not id_entered(a.assignment_id)
        # the check covers the whole body, x included: read back as issued under the key
        assert read_assignment_id(a.assignment_id, KEY) == (3, 1, "user/ü")
        assert read_assignment_id(a.assignment_id, KEY + 1) is None
        entered = c.assign("e", "user/ü", {"plan": "pro"})
        assert id_entered(entered.assignment_id) and entered.assignment_id.split(".")[2] in ("0", "1")
    finally:
        c.close(timeout=1)


def test_overrides_come_first_in_order():
    overrides = [
        {"variant": "B", "userIds": ["qa-1", "qa-2"]},
        {"variant": "A", "condition": {"email": {"$regex": "@example\\.com$"}}},
        {"variant": "B", "condition": {"userId": {"$inGroup": "staff"}}},
    ]
    fake = Fake([definition(overrides=overrides, targeting={"plan": "pro"}, layer={"key": "l", "range": [0, 0.01]})], groups={"staff": ["s-1"]})
    c = client(fake)
    try:
        got = [c.assign("e", "qa-2", {"email": "x@example.com"}), c.assign("e", "z", {"email": "z@example.com"}), c.assign("e", "s-1")]
        assert [(a.variant, a.in_experiment, a.reason) for a in got] == [("B", False, "override"), ("A", False, "override"), ("B", False, "override")]
        assert got[0].assignment_id.split(".")[2] == "x1" and got[1].assignment_id.split(".")[2] == "x0"
        assert c.flush(5) and fake.exposures() == []
    finally:
        c.close(timeout=1)


def test_layer_is_growthbooks_namespace():
    layer = {"key": "prompts", "range": [0.2, 0.6]}
    c = client(Fake([definition(layer=layer)]))
    try:
        users = ["u%d" % i for i in range(400)]
        inside = [u for u in users if in_namespace(u, ("prompts", 0.2, 0.6))]
        assert 100 < len(inside) < 220
        for u in users:
            a = c.assign("e", u)
            assert a.in_experiment is (u in inside), u
            assert a.reason == (None if u in inside else "layer")
            if u not in inside:
                assert a.variant == "A"  # defaultVariant missing: the first variant
    finally:
        c.close(timeout=1)


def test_coverage_shrinks_each_range_from_its_start():
    c = client(Fake([definition(coverage=30, variants=[
        {"key": "A", "trafficPercent": 20, "payload": {}},
        {"key": "B", "trafficPercent": 80, "payload": {}},
    ], defaultVariant="B")]))
    try:
        ranges = bucket_ranges(2, 0.3, [0.2, 0.8])
        assert ranges == [(0.0, 0.06), (0.2, 0.2 + 0.3 * 0.8)]
        n_in = 0
        for i in range(2000):
            u = "cov-%d" % i
            a = c.assign("e", u)
            idx = choose_variant(hash_v2("e-seed", u), ranges)
            if idx < 0:
                assert (a.variant, a.in_experiment, a.reason) == ("B", False, "coverage")
            else:
                n_in += 1
                assert (a.variant, a.in_experiment, a.reason) == ("AB"[idx], True, None)
        assert 500 < n_in < 700  # about 30%
    finally:
        c.close(timeout=1)


def test_coverage_zero_and_random_mode():
    d = Definition(definition(coverage=0))
    assert {d.enter("u%d" % i) for i in range(100)} == {(0, "coverage")}
    r = Definition(definition(coverage=50, assignment="random"))
    draws = iter([0.1, 0.3, 0.6, 0.9])
    assert [r.enter("same", None, lambda: next(draws)) for _ in range(4)] == [(0, None), (0, "coverage"), (1, None), (0, "coverage")]


def test_coverage_100_with_rules_draws_exactly_as_before():
    plain = Definition(definition())
    ruled = Definition(definition(targeting={"plan": "pro"}, coverage=100))
    assert not ruled.simple
    for i in range(500):
        u = "same-%d" % i
        assert ruled.enter(u, {"plan": "pro"}) == (plain.choose(u), None)


def test_a_pathological_regex_in_targeting_answers_at_once():
    c = client(Fake([definition(targeting={"s": {"$regex": "(a+)+$"}})]))
    try:
        started = time.monotonic()
        a = c.assign("e", "u", {"s": "a" * 50 + "b"})
        assert time.monotonic() - started < 1.0
        assert (a.in_experiment, a.reason) == (False, "targeting")
        assert c.assign("e", "u", {"s": "a" * 50}).in_experiment is True
    finally:
        c.close(timeout=1)


def test_async_client_alike():
    fake = Fake([definition(targeting={"plan": "pro"}, defaultVariant="B")])

    async def main():
        async with AsyncClient("http://agentsplit.test", "k", local=True, transport=httpx.MockTransport(fake)) as c:
            out = await c.assign("e", "u", {"plan": "free"})
            inn = await c.assign("e", "u", {"plan": "pro"})
            assert await c.flush(5)
            return out, inn

    out, inn = asyncio.run(main())
    assert (out.variant, out.in_experiment, out.reason, out.assignment_id.split(".")[2]) == ("B", False, "targeting", "x1")
    assert (inn.in_experiment, inn.reason) == (True, None)
    assert fake.exposures() == [inn.assignment_id]


def test_remote_answers_carry_in_experiment_and_reason():
    answers = iter([
        {"variant": "B", "payload": {}, "assignmentId": "id-1", "inExperiment": False, "reason": "coverage"},
        {"variant": "A", "payload": {}, "assignmentId": "id-2", "inExperiment": True},
        {"variant": "A", "payload": {}, "assignmentId": "id-3"},  # a server before ADR 0038
    ])

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=next(answers))

    c = Client("http://agentsplit.test", "k", transport=httpx.MockTransport(handler))
    try:
        got = [c.assign("e", "u") for _ in range(3)]
        assert [(a.in_experiment, a.reason) for a in got] == [(False, "coverage"), (True, None), (True, None)]
        assert c.assign("e", "").in_experiment is False  # a default is not in the experiment
    finally:
        c.close(timeout=1)

    async def main():
        nonlocal answers
        answers = iter([{"variant": "B", "payload": {}, "assignmentId": "id-4", "inExperiment": False, "reason": "override"}])
        async with AsyncClient("http://agentsplit.test", "k", transport=httpx.MockTransport(handler)) as ac:
            return await ac.assign("e", "u")

    a = asyncio.run(main())
    assert (a.variant, a.in_experiment, a.reason) == ("B", False, "override")


def test_openfeature_provider_follows_who_enters():
    from agentsplit.openfeature import AgentSplitProvider, EvaluationContext, Reason

    overrides = [{"variant": "A", "userIds": ["qa"]}]
    fake = Fake([definition(targeting={"plan": "pro"}, overrides=overrides, defaultVariant="B")])
    c = client(fake)
    try:
        p = AgentSplitProvider(client=c)
        out = p.resolve_object_details("e", {}, EvaluationContext("u-1", {"plan": "free"}))
        assert (out.value, out.variant, out.reason) == ({"p": "b"}, "B", Reason.DEFAULT)
        assert out.flag_metadata["inExperiment"] is False and out.flag_metadata["entryReason"] == "targeting"
        assert not id_entered(out.flag_metadata["assignmentId"])
        qa = p.resolve_object_details("e", {}, EvaluationContext("qa", {"plan": "free"}))
        assert (qa.variant, qa.reason, qa.flag_metadata["entryReason"]) == ("A", Reason.TARGETING_MATCH, "override")
        inn = p.resolve_object_details("e", {}, EvaluationContext("u-1", {"plan": "pro"}))
        assert (inn.reason, inn.flag_metadata["inExperiment"]) == (Reason.SPLIT, True) and "entryReason" not in inn.flag_metadata
        assert c.flush(5) and fake.exposures() == [inn.flag_metadata["assignmentId"]]
    finally:
        c.close(timeout=1)
