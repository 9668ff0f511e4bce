"""The shared vectors of who enters (test/fixtures/entry/vectors.json, made by scripts/entry-vectors.ts
from the server's own evaluator): every case through this client's local assign, every field asserted."""

from __future__ import annotations

import json
from typing import Any, Dict

import httpx
from conftest import ROOT

from agentsplit import Client
from agentsplit.conformance import id_entered, read_assignment_id

VECTORS = json.loads((ROOT / "test" / "fixtures" / "entry" / "vectors.json").read_text())


def test_every_vector_answers_as_the_servers_evaluator():
    experiments: Dict[str, Any] = VECTORS["experiments"]
    answer = {"groups": VECTORS.get("groups", {}), "experiments": list(experiments.values())}
    exposures = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/experiments/definitions":
            return httpx.Response(200, json=answer)
        exposures.extend(x["assignmentId"] for x in json.loads(request.content).get("exposures", []))
        return httpx.Response(200, json={})

    c = Client("http://agentsplit.test", "k", local=True, transport=httpx.MockTransport(handler), flush_at_exit=False)
    entered = []
    try:
        assert VECTORS["cases"]
        for case in VECTORS["cases"]:
            d = experiments[case["experiment"]]
            want = case["expected"]
            a = c.assign(d["slug"], case["userId"], case.get("context"))
            where = "%s %r %r" % (case["experiment"], case["userId"], case.get("context"))
            assert a.source == "local", where
            assert (a.variant, a.in_experiment, a.reason) == (want["variant"], want["inExperiment"], want["reason"]), where
            assert [v["key"] for v in d["variants"]].index(a.variant) == want["variantIndex"], where
            # the id names the variant index, x-marked when the unit did not enter
            issued = read_assignment_id(a.assignment_id, int(d["assignmentIdKey"]))
            assert issued == (int(d["version"]), want["variantIndex"], case["userId"]), where
            assert id_entered(a.assignment_id) is want["inExperiment"], where
            if want["inExperiment"]:
                entered.append(a.assignment_id)
        assert c.flush(5)
        assert exposures == entered  # an exposure for each entered unit, none for the others
    finally:
        c.close(timeout=1)
