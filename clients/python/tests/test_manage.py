"""Management and reading from the sync and async clients (issue 26) against a real server process:
create_experiment, get_experiment, update_experiment and analysis (its verdict first), with the root key
and with admin, read and agent keys. Unlike the hot path these raise AgentSplitError(status, error)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, List

import pytest
from conftest import ROOT_KEY

from agentsplit import AgentSplitError, AsyncClient, Client

VARIANTS = [
    {"key": "big", "payload": {"model": "big"}, "trafficPercent": 50},
    {"key": "small", "payload": {"model": "small"}, "trafficPercent": 50},
]


def slug() -> str:
    return "manage-" + uuid.uuid4().hex[:10]


def key(server: Any, *scopes: str) -> str:
    r = server.call("POST", "/keys", {"name": "k", "scopes": list(scopes)})
    assert r.status_code == 201, r.text
    return r.json()["key"]


def client(server: Any, api_key: str = ROOT_KEY) -> Client:
    return Client(server.url, api_key, flush_at_exit=False)


def refused(call: Any, status: int, error: str) -> AgentSplitError:
    with pytest.raises(AgentSplitError) as caught:
        call()
    err = caught.value
    assert err.status == status, str(err)
    assert error in err.error, err.error
    assert str(err).endswith(": " + err.error)
    return err


def test_create_get_update_answer_the_experiment_as_the_server_has_it(server):
    s = slug()
    with client(server) as c:
        made = c.create_experiment(
            slug=s,
            name="Big or small model",
            status="running",
            assignment="sticky",
            variants=VARIANTS,
            metrics=[{"name": "rating", "direction": "increase", "role": "primary"}],
        )
        assert (made["slug"], made["status"], made["active"], made["version"]) == (s, "running", True, 1)
        assert [v["key"] for v in made["variants"]] == ["big", "small"]
        assert made["metrics"] == [{"name": "rating", "direction": "increase", "role": "primary"}]
        assert c.get_experiment(s) == made
        updated = c.update_experiment(s, status="paused", description="cost vs quality")
        assert (updated["status"], updated["description"]) == ("paused", "cost vs quality")
        assert c.get_experiment(s) == updated == server.call("GET", "/experiment/%s" % s).json()


def test_errors_raise_with_the_status_and_the_server_message(server):
    s = slug()
    c = client(server)
    c.create_experiment(slug=s, variants=VARIANTS)
    refused(lambda: c.create_experiment(slug=s, variants=VARIANTS), 409, s)
    refused(lambda: c.get_experiment("no-such-experiment"), 404, "no experiment with slug 'no-such-experiment'")
    refused(lambda: c.update_experiment(s, status="bogus"), 400, "status must be one of")
    refused(lambda: c.analysis(s, alpha=2), 400, "alpha")
    refused(lambda: c.analysis("no-such-experiment"), 404, "no-such-experiment")
    down = Client("http://127.0.0.1:9", ROOT_KEY, flush_at_exit=False)
    err = refused(lambda: down.get_experiment(s), 0, "")
    assert "failed" in str(err)
    down.close(0)
    c.close(1)
    refused(lambda: c.get_experiment(s), 0, "the client is closed")


def test_analysis_answers_the_verdict_first_and_takes_options(server):
    s = slug()
    with client(server) as c:
        c.create_experiment(slug=s, status="running", variants=VARIANTS, metrics=[{"name": "rating", "direction": "increase", "role": "primary"}])
        for i in range(40):
            a = c.assign(s, "user-%d" % i)
            rating = 4 + i % 2 if a.variant == "small" else 2 + i % 3
            c.log(s, assignment=a, metrics={"rating": rating, "latency_ms": 100 + i})
        assert c.flush(10)
        analysis = c.analysis(s)
        assert list(analysis)[0] == "verdict"
        assert isinstance(analysis["verdict"]["status"], str) and isinstance(analysis["verdict"]["summary"], str)
        assert analysis == server.analysis(s), "the same content as the API answers"
        (rating,) = [m for m in analysis["metrics"] if m["name"] == "rating"]
        assert sum(v["n"] for v in rating["variants"]) == 40
        bayes = c.analysis(s, method="bayesian", metrics=["latency_ms"], control="small", n_star=None)
        assert (bayes["method"], bayes["control"]) == ("bayesian", "small")
        assert [m["name"] for m in bayes["metrics"]] == ["latency_ms"]
        seq = c.analysis(s, method="sequential", n_star=500)
        assert seq["method"] == "sequential"



def test_ratio_cap_and_covariate_are_declared_and_answered(server):
    s = slug()
    metrics = [
        {"name": "cost_per_success", "direction": "decrease", "numerator": "cost_usd", "denominator": "success"},
        {"name": "cost_usd", "direction": "decrease", "cap": {"percentile": 90}},
        {"name": "latency_ms", "direction": "decrease", "covariate": "input_tokens"},
    ]
    with client(server) as c:
        made = c.create_experiment(slug=s, status="running", assignment="sticky", variants=VARIANTS, metrics=metrics)
        assert made["metrics"] == [dict(m, role="secondary") for m in metrics]
        for u in range(60):
            tokens = 100 + (u * 37) % 200
            for call in range(2):
                c.log(
                    s,
                    variant_key="big" if u % 2 == 0 else "small",
                    user_id="user-%d" % u,
                    metrics={
                        "input_tokens": tokens,
                        "latency_ms": 500 + 2 * tokens + (u * 7 + call * 3) % 11,
                        "cost_usd": 0.05 if u % 10 == 0 else 0.004 + (u % 5) / 1000,
                        "success": (u + call) % 3 != 0,
                    },
                )
        assert c.flush(10)
        by_name = {m["name"]: m for m in c.analysis(s)["metrics"]}
        assert by_name["cost_per_success"]["ratio"] == {"numerator": "cost_usd", "denominator": "success"}
        cost = by_name["cost_usd"]
        assert cost["cap"]["percentile"] == 90 and cost["cap"]["units"] > 0
        assert all(isinstance(v["capped"]["share"], (int, float)) for v in cost["variants"])
        latency = by_name["latency_ms"]
        assert latency["adjustment"]["covariate"] == "input_tokens" and latency["adjustment"]["adjusted"]
        assert latency["adjustment"]["varianceReduction"] > 0.5
        treatment = latency["variants"][1]
        assert isinstance(treatment["unadjusted"]["pValue"], float)
        assert "adjusted on input_tokens" in latency["label"]

def test_admin_key_manages_read_key_reads_agent_key_is_refused(server):
    s = slug()
    admin, reader, agent = (client(server, key(server, *scopes)) for scopes in (["admin"], ["read"], ["assign", "log"]))
    try:
        assert admin.create_experiment(slug=s, variants=VARIANTS)["slug"] == s
        assert admin.update_experiment(s, status="running")["status"] == "running"
        assert reader.get_experiment(s)["status"] == "running"
        assert list(reader.analysis(s))[0] == "verdict"
        refused(lambda: reader.create_experiment(slug=slug(), variants=VARIANTS), 403, "lacks the 'admin' scope")
        refused(lambda: reader.update_experiment(s, name="x"), 403, "admin")
        refused(lambda: agent.analysis(s), 403, "lacks the 'read' scope")
        refused(lambda: agent.get_experiment(s), 403, "read")
    finally:
        for c in (admin, reader, agent):
            c.close(1)


def test_the_async_client_has_the_same_calls(server):
    s = slug()
    reader_key = key(server, "read")

    async def main() -> List[Any]:
        async with AsyncClient(server.url, ROOT_KEY, flush_at_exit=False) as c:
            made = await c.create_experiment(slug=s, status="running", variants=VARIANTS)
            got = await c.get_experiment(s)
            updated = await c.update_experiment(s, name="renamed")
            a = await c.assign(s, "u-1")
            c.log(s, assignment=a, metrics={"rating": 5})
            assert await c.flush(10)
            analysis = await c.analysis(s, metrics=["rating"])
            with pytest.raises(AgentSplitError) as caught:
                await c.get_experiment("no-such-experiment")
            assert caught.value.status == 404 and "no-such-experiment" in caught.value.error
        async with AsyncClient(server.url, reader_key, flush_at_exit=False) as r:
            with pytest.raises(AgentSplitError) as forbidden:
                await r.create_experiment(slug=slug(), variants=VARIANTS)
            assert forbidden.value.status == 403
        return [made, got, updated, analysis]

    made, got, updated, analysis = asyncio.run(main())
    assert made == got and made["slug"] == s
    assert updated["name"] == "renamed"
    assert list(analysis)[0] == "verdict"
    assert [m["name"] for m in analysis["metrics"]] == ["rating"] and sum(v["n"] for v in analysis["metrics"][0]["variants"]) == 1
