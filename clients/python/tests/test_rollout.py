"""A rollout (issue 38) in local evaluation, against the real server: while it ramps a variant the
definitions carry its split, and the local client gives every user what the server's assign gives
(sticky and random experiments alike: the rollout hashes the unit); after a rollback, one refresh later,
everyone gets the control locally too."""

from __future__ import annotations

import uuid

import httpx
import pytest
from conftest import ROOT_KEY

from agentsplit import Client

VARIANTS = [
    {"key": "A", "payload": {"p": "a"}, "trafficPercent": 50},
    {"key": "B", "payload": {"p": "b"}, "trafficPercent": 50},
]


@pytest.mark.parametrize("assignment", ["sticky", "random"])
def test_local_evaluation_follows_the_rollout(server, assignment):
    slug = "rollout-" + uuid.uuid4().hex[:10]
    headers = {"x-api-key": ROOT_KEY}
    with Client(server.url, ROOT_KEY, flush_at_exit=False) as c, Client(server.url, ROOT_KEY, local=True, flush_at_exit=False) as lc:
        c.create_experiment(slug=slug, status="running", assignment=assignment, variants=VARIANTS)
        started = httpx.post(
            server.url + "/experiment/%s/rollout" % slug,
            json={"variant": "B", "steps": [{"percent": 30}, {"percent": 100}]},
            headers=headers,
        )
        assert started.status_code == 200, started.text
        lc._refresh_definitions()
        in_b = 0
        for i in range(400):
            user = "user-%d" % i
            remote = c.assign(slug, user)
            local = lc.assign(slug, user)
            assert (local.source, local.variant) == ("local", remote.variant), user
            in_b += local.variant == "B"
        assert 80 < in_b < 160, in_b
        back = httpx.patch(server.url + "/experiment/%s/rollout" % slug, json={"action": "rollback"}, headers=headers)
        assert back.status_code == 200, back.text
        lc._refresh_definitions()
        assert {lc.assign(slug, "user-%d" % i).variant for i in range(100)} == {"A"}
        lc.close(5)
