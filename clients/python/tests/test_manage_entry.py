"""Management of who enters (ADR 0038): the entry fields on create and update against a real server, in
the API's spelling or Python's; saved groups, layers and preview as requests (their routes' answers are
checked end to end by the server's own tests)."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any, List, Tuple

import httpx
import pytest
from conftest import ROOT_KEY

from agentsplit import AgentSplitError, AsyncClient, Client
from agentsplit._manage import create_request, update_request

VARIANTS = [
    {"key": "big", "payload": {"model": "big"}, "trafficPercent": 50},
    {"key": "small", "payload": {"model": "small"}, "trafficPercent": 50},
]


def test_python_spellings_become_the_apis():
    _m, _p, body, _s = create_request({"slug": "s", "default_variant": "b", "guardrail_action": "pause", "minimum_units": 5, "segments": ["plan"]})
    assert json.loads(body) == {"slug": "s", "defaultVariant": "b", "guardrailAction": "pause", "minimumUnits": 5, "segments": ["plan"]}
    _m, _p, body, _s = update_request("s", {"defaultVariant": "b", "coverage": 10})
    assert json.loads(body) == {"defaultVariant": "b", "coverage": 10}
    with pytest.raises(ValueError):
        create_request({"default_variant": "a", "defaultVariant": "b"})


def test_entry_fields_on_create_and_update(server):
    slug = "entry-" + uuid.uuid4().hex[:10]
    with Client(server.url, ROOT_KEY, flush_at_exit=False) as c:
        made = c.create_experiment(
            slug=slug,
            status="draft",
            assignment="sticky",
            variants=VARIANTS,
            targeting={"plan": {"$in": ["pro", "team"]}},
            coverage=40,
            layer={"key": "prompts-" + slug, "range": [0, 0.5]},
            overrides=[{"variant": "small", "userIds": ["qa-1"]}],
            default_variant="small",
            guardrail_action="pause",
            minimum_units=50,
            segments=["plan"],
        )
        assert made["targeting"] == {"plan": {"$in": ["pro", "team"]}}
        assert (made["coverage"], made["defaultVariant"], made["guardrailAction"], made["minimumUnits"]) == (40, "small", "pause", 50)
        assert made["layer"] == {"key": "prompts-" + slug, "range": [0, 0.5]}
        assert made["overrides"] == [{"variant": "small", "userIds": ["qa-1"]}]
        assert made["segments"] == ["plan"]
        # overrides and the default variant change what is served, not who is randomized: no new version
        same = c.update_experiment(slug, default_variant="big", overrides=[])
        assert (same["defaultVariant"], same["overrides"], same["version"]) == ("big", [], made["version"])
        wider = c.update_experiment(slug, coverage=80)
        assert wider["coverage"] == 80 and wider["version"] == made["version"] + 1
        with pytest.raises(AgentSplitError) as caught:
            c.update_experiment(slug, default_variant="medium")
        assert caught.value.status == 400


class Fake:
    """Answers management requests from a table; notes (method, path, body)."""

    def __init__(self, answers: List[Tuple[int, Any]]) -> None:
        self.answers = list(answers)
        self.seen: List[Tuple[str, str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append((request.method, request.url.raw_path.decode(), json.loads(request.content) if request.content else None))
        status, body = self.answers.pop(0)
        return httpx.Response(status, json=body) if body is not None else httpx.Response(status)


PREVIEW = {"variant": "big", "payload": {"model": "big"}, "inExperiment": False, "reason": "targeting", "explanation": "targeting: `plan` is \"free\""}
GROUP = {"key": "beta testers", "values": ["u1", 2], "description": "early"}
ANSWERS = [(200, GROUP), (200, {"groups": [GROUP]}), (200, GROUP), (204, None), (200, {"key": "l", "experiments": [], "free": [[0, 1]]}), (200, PREVIEW)]
EXPECTED_REQUESTS = [
    ("PUT", "/groups/beta%20testers", {"values": ["u1", 2], "description": "early"}),
    ("GET", "/groups", None),
    ("GET", "/groups/beta%20testers", None),
    ("DELETE", "/groups/beta%20testers", None),
    ("GET", "/layers/l", None),
    ("POST", "/experiment/a%2Fb/preview", {"userId": "u-1", "context": {"plan": "free"}}),
]


def test_groups_layers_preview_sync():
    fake = Fake(ANSWERS)
    with Client("http://agentsplit.test", "k", transport=httpx.MockTransport(fake), flush_at_exit=False) as c:
        got = [
            c.put_group("beta testers", ("u1", 2), description="early"),
            c.list_groups(),
            c.get_group("beta testers"),
            c.delete_group("beta testers"),
            c.get_layer("l"),
            c.preview("a/b", "u-1", {"plan": "free"}),
        ]
    assert fake.seen == EXPECTED_REQUESTS
    assert got == [GROUP, {"groups": [GROUP]}, GROUP, None, ANSWERS[4][1], PREVIEW]


def test_groups_layers_preview_async_and_errors():
    fake = Fake(ANSWERS + [(409, {"error": "group 'g' is used by experiment 'e'"}), (200, GROUP)])

    async def main():
        async with AsyncClient("http://agentsplit.test", "k", transport=httpx.MockTransport(fake), flush_at_exit=False) as c:
            got = [
                await c.put_group("beta testers", ["u1", 2], "early"),
                await c.list_groups(),
                await c.get_group("beta testers"),
                await c.delete_group("beta testers"),
                await c.get_layer("l"),
                await c.preview("a/b", "u-1", {"plan": "free"}),
            ]
            with pytest.raises(AgentSplitError) as caught:
                await c.delete_group("g")
            assert (caught.value.status, caught.value.error) == (409, "group 'g' is used by experiment 'e'")
            got.append(await c.put_group("g", []))
            return got

    got = asyncio.run(main())
    assert fake.seen[:6] == EXPECTED_REQUESTS
    assert fake.seen[7] == ("PUT", "/groups/g", {"values": []})
    assert got == [GROUP, {"groups": [GROUP]}, GROUP, None, ANSWERS[4][1], PREVIEW, GROUP]


def test_the_servers_assign_and_this_evaluator_agree(server):
    """Remote assigns against the real server's rules, checked against this client's evaluator fed the
    experiment as the server keeps it, and against a local client fed the server's definitions: the same
    variant, entry and reason for every unit."""
    from agentsplit._entry import Definition
    from agentsplit.conformance import id_entered

    slug = "agree-" + uuid.uuid4().hex[:10]
    with Client(server.url, ROOT_KEY, flush_at_exit=False) as c, Client(server.url, ROOT_KEY, local=True, flush_at_exit=False) as lc:
        e = c.create_experiment(
            slug=slug,
            status="running",
            assignment="sticky",
            variants=VARIANTS,
            targeting={"plan": {"$in": ["pro", "team"]}},
            coverage=60,
            layer={"key": "agree-" + slug, "range": [0.1, 0.9]},
            overrides=[{"variant": "big", "userIds": ["qa-1"]}, {"variant": "small", "condition": {"email": {"$regex": "@qa\\.test$"}}}],
            default_variant="small",
        )
        local = Definition(dict(e, assignmentIdKey=0))
        assert not local.simple
        lc._refresh_definitions()  # made before the experiment: fetch the definitions (they carry the rules) now
        reasons = set()
        n_entered = 0
        for i in range(300):
            user = "qa-1" if i == 0 else "agree-%d" % i
            context = {"plan": ["pro", "free", "team"][i % 3]}
            if i % 7 == 0:
                context["email"] = "t%d@qa.test" % i
            a = c.assign(slug, user, context)
            index, reason = local.enter(user, context)
            assert a.source == "server"
            assert (a.variant, a.in_experiment, a.reason) == (local.keys[index], reason is None, reason), (user, context)
            assert id_entered(a.assignment_id) is (reason is None)
            la = lc.assign(slug, user, context)
            assert (la.source, la.variant, la.in_experiment, la.reason) == ("local", a.variant, a.in_experiment, a.reason), (user, context)
            n_entered += reason is None
            reasons.add(reason)
            if i % 10 == 0:  # preview answers as assign did, and records nothing
                p = c.preview(slug, user, context)
                assert (p["variant"], p["inExperiment"], p["reason"]) == (a.variant, a.in_experiment, a.reason), (user, context)
                assert isinstance(p["explanation"], str) and p["explanation"]
        assert reasons == {None, "override", "layer", "targeting", "coverage"}
        layer = c.get_layer("agree-" + slug)
        assert layer == {"key": "agree-" + slug, "experiments": [{"experiment": slug, "status": "running", "range": [0.1, 0.9]}], "free": [[0, 0.1], [0.9, 1]]}
        assert c.get_layer("no-such-layer-" + slug)["experiments"] == []
        assert lc.close(5) == 0 and lc.failed == 0
    # the entered units' exposures only, the server's and the local client's (previews and units kept out leave none)
    assert sum(server.analysis(slug)["exposures"].values()) == 2 * n_entered


def test_saved_groups_through_the_real_server(server):
    """A group saved, named by targeting, carried by the definitions into local evaluation, refused for
    deletion while used, deleted once the experiment is archived."""
    group = "py-beta-" + uuid.uuid4().hex[:8]
    slug = "grouped-" + uuid.uuid4().hex[:10]
    with Client(server.url, ROOT_KEY, flush_at_exit=False) as c:
        saved = c.put_group(group, ["u-1", "u-2", 7, "u-1"], description="beta testers")
        assert (saved["key"], saved["values"], saved["size"], saved["description"]) == (group, ["u-1", "u-2", 7], 3, "beta testers")
        c.create_experiment(slug=slug, status="running", assignment="sticky", variants=VARIANTS, targeting={"userId": {"$inGroup": group}}, default_variant="small")
        got = c.get_group(group)
        assert got["usedBy"] == [slug] and got["values"] == ["u-1", "u-2", 7]
        assert any(g["key"] == group and g["size"] == 3 and "values" not in g for g in c.list_groups()["groups"])
        with Client(server.url, ROOT_KEY, local=True, flush_at_exit=False) as lc:
            for user in ("u-1", "u-2", "u-3", "7"):
                remote, local = c.assign(slug, user), lc.assign(slug, user)
                assert local.source == "local"
                assert (local.variant, local.in_experiment, local.reason) == (remote.variant, remote.in_experiment, remote.reason)
                assert local.in_experiment is (user in ("u-1", "u-2")), user  # "7" is not 7
        with pytest.raises(AgentSplitError) as caught:
            c.delete_group(group)
        assert caught.value.status == 409 and slug in caught.value.error
        c.update_experiment(slug, status="archived")
        assert c.delete_group(group) is None
        with pytest.raises(AgentSplitError) as caught:
            c.get_group(group)
        assert caught.value.status == 404
