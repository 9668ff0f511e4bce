"""The local evaluator of targeting conditions against GrowthBook's conformance cases, regexes that cannot
stall, saved groups of 100,000 values, GrowthBook's hash v1 and namespaces."""

from __future__ import annotations

import json
import time

import pytest
from conftest import ROOT

from agentsplit.conditions import SavedGroups, compile_condition, compile_regex, condition_problems
from agentsplit.conformance import bucket_ranges, choose_variant, equal_weights, gb_hash, in_namespace

CASES = json.loads((ROOT / "test" / "fixtures" / "growthbook" / "cases.json").read_text())


def _ids(section):
    return [c[0] for c in CASES[section]]


@pytest.mark.parametrize("case", CASES["evalCondition"], ids=_ids("evalCondition"))
def test_eval_condition_cases(case):
    name, condition, attributes, expected = case[:4]
    groups = case[4] if len(case) > 4 else None
    assert compile_condition(condition).matches(attributes, groups) is expected, name
    assert compile_condition(condition).matches(attributes, SavedGroups(groups)) is expected, name


@pytest.mark.parametrize("case", CASES["hash"], ids=[f"{c[0]!r} {c[1]!r} v{c[2]}" for c in CASES["hash"]])
def test_hash_cases(case):
    seed, value, version, expected = case
    assert gb_hash(seed, value, version) == expected


@pytest.mark.parametrize("case", CASES["inNamespace"], ids=_ids("inNamespace"))
def test_in_namespace_cases(case):
    _name, unit_id, namespace, expected = case
    assert in_namespace(unit_id, namespace) is expected


@pytest.mark.parametrize("case", CASES["getBucketRange"], ids=_ids("getBucketRange"))
def test_bucket_range_cases(case):
    _name, (num_variants, coverage, weights), expected = case
    got = bucket_ranges(num_variants, coverage, weights)
    # GrowthBook's own tests compare rounded ranges (0.2 + 0.2 * 0.3 is 0.26000000000000001)
    assert [[round(a, 8), round(b, 8)] for a, b in got] == expected


@pytest.mark.parametrize("case", CASES["chooseVariation"], ids=_ids("chooseVariation"))
def test_choose_variation_cases(case):
    _name, n, ranges, expected = case
    assert choose_variant(n, ranges) == expected


@pytest.mark.parametrize("case", CASES["getEqualWeights"], ids=[str(c[0]) for c in CASES["getEqualWeights"]])
def test_equal_weights_cases(case):
    n, expected = case
    got = equal_weights(n)
    assert len(got) == len(expected)
    assert all(abs(a - b) < 1e-8 for a, b in zip(got, expected))
    assert not got or abs(sum(got) - 1) < 1e-12


def test_a_pathological_regex_answers_at_once():
    cond = compile_condition({"s": {"$regex": "(a+)+$"}})
    started = time.monotonic()
    assert cond.matches({"s": "a" * 50 + "b"}) is False
    assert cond.matches({"s": "a" * 50}) is True
    assert time.monotonic() - started < 1.0
    # The engine's own answer, not the timeout's: a TimeoutError would fail here.
    assert compile_regex("(a+)+$").search("a" * 50 + "b", timeout=1.0) is None
    # One the engine does backtrack on: bounded by the timeout, and then false.
    slow = compile_condition({"s": {"$regex": "(x+x+)+y"}})
    started = time.monotonic()
    assert slow.matches({"s": "x" * 5000}) is False
    assert time.monotonic() - started < 1.0


def test_regex_subset_refused_and_false():
    for pattern in ["(a)\\1", "(?=a)a", "(?<!a)b", "a++", "(?i)a", "(?>a)"]:
        assert condition_problems({"s": {"$regex": pattern}}), pattern
        assert compile_condition({"s": {"$regex": pattern}}).matches({"s": "aa"}) is False, pattern
    assert condition_problems({"s": {"$regex": "^(?<w>[a-z]+)@x\\.com$"}}) == []
    assert compile_condition({"s": {"$regex": "a$"}}).matches({"s": "a\n"}) is False  # JavaScript's $
    assert compile_condition({"s": {"$regexi": "^ÉCOLE$"}}).matches({"s": "école"}) is True


def test_problems_name_the_path():
    problems = condition_problems(
        {"plan": {"$in": "pro", "$foo": 1}, "$or": [{"x": {"$regex": "("}}], "tags": {"$type": "list"}}
    )
    paths = [p for p, _ in problems]
    assert paths == ["targeting.plan.$in", "targeting.plan.$foo", "targeting.$or.0.x.$regex", "targeting.tags.$type"]


def test_saved_groups_of_100000_values():
    ids = [f"user-{i}" for i in range(100_000)]
    groups = SavedGroups({"beta": ids, "nums": list(range(100_000))})
    cond = compile_condition({"id": {"$inGroup": "beta"}, "n": {"$notInGroup": "nums"}})
    assert cond.matches({"id": "user-99999", "n": -1}, groups) is True
    assert cond.matches({"id": "user-100000", "n": -1}, groups) is False
    assert cond.matches({"id": ["x", "user-5"], "n": 100_000}, groups) is True
    assert cond.matches({"id": "user-5", "n": 5}, groups) is False
    # JavaScript's strict equality: true is not 1, 1.0 is 1
    ones = compile_condition({"v": {"$inGroup": "g"}})
    assert ones.matches({"v": True}, {"g": [1]}) is False
    assert ones.matches({"v": 1.0}, {"g": [1]}) is True
    started = time.monotonic()
    for i in range(0, 100_000, 10):
        assert cond.matches({"id": f"user-{i}", "n": -1}, groups)
    assert time.monotonic() - started < 5.0  # 10,000 checks: O(1) each, not a scan of 100,000


def test_python_traps():
    assert compile_condition({"x": {"$eq": 1}}).matches({"x": True}) is False
    assert compile_condition({"x": 1}).matches({"x": True}) is True  # JavaScript's true * 1 === 1
    assert compile_condition({"x": "1"}).matches({"x": 1.0}) is True  # String(1.0) is "1"
    assert compile_condition({"x": True}).matches({"x": []}) is True  # [] is truthy in JavaScript
    assert compile_condition({"x": {"$type": "number"}}).matches({"x": 1.5}) is True
    assert compile_condition({"x": {"$type": "null"}}).matches({}) is True
    assert compile_condition({"x": {"$lt": 5}}).matches({}) is True  # null < 5 in JavaScript
    # JSON.stringify's key order: array-index keys first, ascending, then the others as inserted
    assert compile_condition({"x": {"a": 1, "2": 2}}).matches({"x": {"2": 2, "a": 1}}) is True
    assert compile_condition({"x": {"a": 1, "b": 2}}).matches({"x": {"b": 2, "a": 1}}) is False
    assert compile_condition({"tags.0": "a", "tags.length": 2}).matches({"tags": ["a", "b"]}) is True
