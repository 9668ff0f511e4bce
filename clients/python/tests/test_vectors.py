"""The draw and the ids, against the repository's vectors and the server's own answers."""

from __future__ import annotations

import json
import re
import time

import pytest
from conftest import ROOT

from agentsplit.conformance import bucket_ranges, choose_variant, fnv1a32, hash_v2, pick_weighted
from agentsplit._hash import cumulative_weights, hash_v2_from_state
from agentsplit._ids import SERVER_MARK, assignment_id, crc_check, fnv_check, read_assignment_id, uuid7

VECTORS = json.loads((ROOT / "test" / "fixtures" / "vectors" / "assignment-hash.json").read_text())


@pytest.mark.parametrize("seed,value,expected", VECTORS["hashV2"])
def test_hash_v2_vectors(seed, value, expected):
    assert hash_v2(seed, value) == expected
    assert hash_v2_from_state(fnv1a32(seed), value) == expected


@pytest.mark.parametrize("name,args,expected", VECTORS["bucketRanges"])
def test_bucket_ranges_vectors(name, args, expected):
    got = bucket_ranges(args[0], args[1], args[2])
    assert len(got) == len(expected)
    for (s, e), (xs, xe) in zip(got, expected):
        assert s == pytest.approx(xs, abs=1e-12) and e == pytest.approx(xe, abs=1e-12), name


# The vectors keep the server's (GrowthBook's) name of choose_variant.
@pytest.mark.parametrize("name,n,ranges,expected", VECTORS["chooseVariation"])
def test_choose_variant_vectors(name, n, ranges, expected):
    assert choose_variant(n, ranges) == expected, name


def test_fnv_over_utf16_code_units():
    # JavaScript's charCodeAt: a non-BMP character is two code units (a surrogate pair)
    assert fnv1a32("") == 0x811C9DC5
    assert fnv1a32("a") == 0xE40C292C  # the published FNV-1a 32 of "a"
    h = 0x811C9DC5
    for c in (0xD83D, 0xDE42):  # U+1F642 as UTF-16
        h = ((h ^ c) * 0x01000193) & 0xFFFFFFFF
    assert fnv1a32("\U0001F642") == h
    assert hash_v2("seed", "ü") == hash_v2_from_state(fnv1a32("seed"), "ü")


def test_pick_weighted_never_picks_a_zero_weight():
    cum = cumulative_weights([0.5, 0.0, 0.5])
    assert pick_weighted(cum, lambda: 0.0) == 0
    assert pick_weighted(cum, lambda: 0.4999) == 0
    assert pick_weighted(cum, lambda: 0.5) == 2
    assert pick_weighted(cum, lambda: 1.0) == 2  # rounding at the very end: the last with weight
    assert pick_weighted(cumulative_weights([1.0, 0.0]), lambda: 1.0) == 0


def test_uuid7_shape_time_and_order():
    ids = [uuid7() for _ in range(5000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids), "monotonic, also within a millisecond"
    for u in ids[:50]:
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", u)
    ms = int(ids[-1].replace("-", "")[:12], 16)
    assert abs(ms - time.time() * 1000) < 5000


def test_assignment_ids_read_back_with_either_check():
    u = "01972ff0-f582-7a3c-9e41-52b8c6d0e7f3"
    for user in ["user-42", "ü ñ \U0001F642 / + =", "x" * 512]:
        for check in ("crc", "fnv"):
            aid = assignment_id(u, 7, 12, 3, user, check=check)
            assert aid.startswith(u + ".c.3.")
            assert read_assignment_id(aid, 7) == (12, 3, user)
            assert read_assignment_id(aid, 8) is None
    aid = assignment_id(u, 7, 1, 0, "user-42")
    assert read_assignment_id(aid.replace(".1.0.", ".1.1."), 7) is None
    assert read_assignment_id(u, 7) is None
    assert read_assignment_id(aid + "x", 7) is None


def test_the_check_equals_the_servers(server):
    """The server's own check (FNV with its mark), recomputed here, on ids the server issued; and the CRC form's formula."""
    slug = server.create_experiment()
    defs = server.call("GET", "/experiments/definitions").json()["experiments"]
    key = next(d["assignmentIdKey"] for d in defs if d["slug"] == slug)
    for i in range(20):
        aid = server.call("POST", "/experiment/%s/assign" % slug, {"userId": "ü-%d" % i}).json()["assignmentId"]
        body, check = aid.rsplit(".", 1)
        assert fnv_check(key, body, SERVER_MARK) == check
        assert fnv_check(key, body) != check, "a client's FNV check is not the server's"
        assert read_assignment_id(aid, key).user_id == "ü-%d" % i
    import zlib

    assert crc_check(key, "abc") == "%08x" % zlib.crc32(b"abc", key)


def test_the_helpers_live_in_conformance_not_in_the_api():
    import agentsplit
    import agentsplit.conformance

    assert sorted(agentsplit.__all__) == [
        "AdjustmentAnalysis",
        "AgentSplitError",
        "Analysis",
        "Assignment",
        "AsyncClient",
        "CapAnalysis",
        "Client",
        "Dataset",
        "DatasetChange",
        "DatasetItem",
        "DatasetRun",
        "Experiment",
        "Layer",
        "LayerExperiment",
        "MetricAnalysis",
        "MetricDefinition",
        "OfflineRun",
        "Preview",
        "Run",
        "RunComparison",
        "RunFailure",
        "RunProgress",
        "SavedGroup",
        "SavedGroupSummary",
        "Unadjusted",
        "Variant",
        "VariantAnalysis",
        "Verdict",
    ]
    for name in ("bucket_ranges", "choose_variation", "choose_variant", "hash_v2", "uuid7", "assignment_id"):
        assert name not in agentsplit.__all__
    assert sorted(agentsplit.conformance.__all__) == [
        "assignment_id",
        "bucket_ranges",
        "choose_variant",
        "equal_weights",
        "fnv1a32",
        "gb_hash",
        "hash_v1",
        "hash_v2",
        "id_entered",
        "in_namespace",
        "pick_weighted",
        "read_assignment_id",
        "uuid7",
    ]
    for name in agentsplit.conformance.__all__:
        assert callable(getattr(agentsplit.conformance, name))
