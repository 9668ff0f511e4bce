"""Targeting conditions in GrowthBook's condition language, evaluated locally.

Semantics of GrowthBook's mongrule.ts (packages/sdk-js/src/mongrule.ts, MIT, GrowthBook, Inc.), ported
exactly so the server, the JavaScript client and this client answer alike; checked against GrowthBook's
conformance cases (test/fixtures/growthbook/cases.json). ``compile_condition`` reads a condition once
(paths split, regexes compiled) and ``CompiledCondition.matches`` evaluates it; as in GrowthBook, an odd
shape (``$in`` on a non-array, an unknown operator, a bad regex) evaluates to false rather than raising.
``condition_problems`` lists what the server refuses when a condition is saved.

Regexes: JavaScript RegExp syntax, run by the ``regex`` package (Python's ``re`` backtracks without bound).
A pattern outside the subset that RE2-style linear engines also run (backreferences, lookaround, atomic
groups, possessive quantifiers, inline flags) is invalid: it evaluates to false, as the server refuses it.
``regex`` itself backtracks, so every match is bounded by ``REGEX_TIMEOUT_S``: a match that runs out of
time answers false (only a pathological pattern does; the server's linear engine has no such case).
Known differences from JavaScript kept by this engine: ``\\d``, ``\\w`` and ``\\b`` are Unicode-aware,
``.`` excludes only a newline.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Collection, Dict, FrozenSet, List, Mapping, Optional, Tuple, Union

from ._regex import REGEX_TIMEOUT_S, compile_regex, regex_problem
from ._regex import search as _search
from ._js import (
    compare_strings,
    get_path,
    is_number,
    js_gt,
    js_gte,
    js_lt,
    js_lte,
    strict_equals,
    stringify,
    to_number,
    to_string,
    truthy,
    type_of,
)

__all__ = ["CompiledCondition", "SavedGroups", "compile_condition", "condition_problems", "REGEX_TIMEOUT_S"]

Test = Callable[[Any, "SavedGroups"], bool]


def _key(v: Any) -> Any:
    """A hashable key with JavaScript's strict equality: True and 1 differ, 1 and 1.0 do not."""
    if isinstance(v, bool):
        return ("b", v)
    if is_number(v):
        return ("n", v)
    if isinstance(v, str):
        return ("s", v)
    if v is None:
        return ("z", None)
    return None  # an array or an object equals nothing


class SavedGroups:
    """Saved groups (named lists of ids) prepared once for O(1) ``$inGroup`` / ``$notInGroup`` checks."""

    __slots__ = ("_sets",)

    def __init__(self, groups: Optional[Mapping[str, Collection[Any]]] = None) -> None:
        self._sets: Dict[str, FrozenSet[Any]] = {}
        for name, values in (groups or {}).items():
            self._sets[name] = frozenset(k for k in map(_key, values) if k is not None)

    def contains(self, name: Any, value: Any) -> bool:
        """GrowthBook's isIn(value, savedGroups[name] || []): an array value intersects."""
        s = self._sets.get(name) if isinstance(name, str) else None
        if not s:
            return False
        if isinstance(value, list):
            return any(_key(e) in s for e in value if _key(e) is not None)
        k = _key(value)
        return k is not None and k in s


_NO_GROUPS = SavedGroups()


class CompiledCondition:
    """A condition read once; ``matches`` evaluates it against attributes."""

    __slots__ = ("condition", "_test")

    def __init__(self, condition: Any, test: Test) -> None:
        self.condition = condition
        self._test = test

    def matches(
        self, attributes: Mapping[str, Any], groups: Union[SavedGroups, Mapping[str, Collection[Any]], None] = None
    ) -> bool:
        """Whether ``attributes`` pass. ``groups``: a ``SavedGroups`` (prepared once, O(1) a check) or a
        mapping of group name to values (prepared on each call)."""
        g = groups if isinstance(groups, SavedGroups) else (SavedGroups(groups) if groups else _NO_GROUPS)
        return self._test(attributes, g)


def compile_condition(condition: Any) -> CompiledCondition:
    """Reads a condition (a dict of paths and ``$and``/``$or``/``$nor``/``$not``) once for ``matches``."""
    return CompiledCondition(condition, _compile(condition))


def _false(_v: Any, _g: SavedGroups) -> bool:
    return False


def _compile(condition: Any) -> Test:
    if not isinstance(condition, dict):
        return _false
    tests: List[Test] = []
    for k, v in condition.items():
        if k == "$or":
            tests.append(_or(v))
        elif k == "$nor":
            t = _or(v)
            tests.append(lambda o, g, t=t: not t(o, g))
        elif k == "$and":
            tests.append(_and(v))
        elif k == "$not":
            t = _compile(v)
            tests.append(lambda o, g, t=t: not t(o, g))
        else:
            parts = k.split(".")
            t = _value(v)
            tests.append(lambda o, g, parts=parts, t=t: t(get_path(o, parts), g))
    return lambda o, g: all(t(o, g) for t in tests)


def _or(conditions: Any) -> Test:
    if not isinstance(conditions, list):
        return _false
    if not conditions:
        return lambda o, g: True
    tests = [_compile(c) for c in conditions]
    return lambda o, g: any(t(o, g) for t in tests)


def _and(conditions: Any) -> Test:
    if not isinstance(conditions, list):
        return _false
    tests = [_compile(c) for c in conditions]
    return lambda o, g: all(t(o, g) for t in tests)


def _is_operator_object(v: Any) -> bool:
    return isinstance(v, dict) and len(v) > 0 and all(k[:1] == "$" for k in v)


def _value(condition: Any, insensitive: bool = False) -> Test:
    """GrowthBook's evalConditionValue(condition, value)."""
    if isinstance(condition, str):
        if insensitive:
            low = condition.lower()
            return lambda v, g: to_string(v).lower() == low
        return lambda v, g: to_string(v) == condition
    if isinstance(condition, bool):
        return lambda v, g: v is not None and truthy(v) == condition
    if is_number(condition):
        return lambda v, g: to_number(v) == condition
    if condition is None:
        return lambda v, g: v is None
    if isinstance(condition, list) or not _is_operator_object(condition):
        expected = stringify(condition)
        return lambda v, g: stringify(v) == expected
    tests = [_operator(op, arg) for op, arg in condition.items()]
    return lambda v, g: all(t(v, g) for t in tests)


def _fold(v: Any) -> Any:
    return v.lower() if isinstance(v, str) else v


def _in(expected: List[Any], insensitive: bool) -> Callable[[Any], bool]:
    """GrowthBook's isIn(actual, expected, insensitive): an array actual intersects."""
    if insensitive:
        folded = [_fold(e) for e in expected]

        def one(a: Any) -> bool:
            fa = _fold(a)
            return any(strict_equals(fa, e) for e in folded)

    else:
        keys = frozenset(k for k in map(_key, expected) if k is not None)

        def one(a: Any) -> bool:
            k = _key(a)
            return k is not None and k in keys

    return lambda a: any(one(e) for e in a) if isinstance(a, list) else one(a)


def _all(expected: List[Any], insensitive: bool) -> Test:
    tests = [_value(e, insensitive) for e in expected]

    def test(actual: Any, g: SavedGroups) -> bool:
        if not isinstance(actual, list):
            return False
        return all(any(t(a, g) for a in actual) for t in tests)

    return test


def _elem_match(expected: Any) -> Test:
    check = _value(expected) if _is_operator_object(expected) else _compile(expected)
    return lambda a, g: isinstance(a, list) and any(truthy(e) and check(e, g) for e in a)


def _version_test(op: str, expected: Any) -> Test:
    e = padded_version_string(expected)
    want = {"$veq": (0,), "$vne": (-1, 1), "$vgt": (1,), "$vgte": (0, 1), "$vlt": (-1,), "$vlte": (-1, 0)}[op]
    return lambda a, g: compare_strings(padded_version_string(a), e) in want


_COMPARE = {"$lt": js_lt, "$lte": js_lte, "$gt": js_gt, "$gte": js_gte}


def _operator(op: str, expected: Any) -> Test:
    """GrowthBook's evalOperatorCondition(operator, actual, expected)."""
    if op in ("$veq", "$vne", "$vgt", "$vgte", "$vlt", "$vlte"):
        return _version_test(op, expected)
    if op == "$eq":
        return lambda a, g: strict_equals(a, expected)
    if op == "$ne":
        return lambda a, g: not strict_equals(a, expected)
    if op in _COMPARE:
        cmp = _COMPARE[op]
        return lambda a, g: cmp(a, expected)
    if op == "$exists":
        want = truthy(expected)
        return lambda a, g: (a is not None) == want
    if op in ("$in", "$ini", "$nin", "$nini"):
        if not isinstance(expected, list):
            return _false
        inside = _in(expected, op in ("$ini", "$nini"))
        if op in ("$in", "$ini"):
            return lambda a, g: inside(a)
        return lambda a, g: not inside(a)
    if op == "$inGroup":
        return lambda a, g: g.contains(expected, a)
    if op == "$notInGroup":
        return lambda a, g: not g.contains(expected, a)
    if op == "$not":
        t = _value(expected)
        return lambda a, g: not t(a, g)
    if op == "$size":
        t = _value(expected)
        return lambda a, g: isinstance(a, list) and t(len(a), g)
    if op == "$elemMatch":
        return _elem_match(expected)
    if op in ("$all", "$alli"):
        if not isinstance(expected, list):
            return _false
        return _all(expected, op == "$alli")
    if op in ("$regex", "$regexi"):
        rx = compile_regex(expected, op == "$regexi")
        if rx is None:
            return _false
        return lambda a, g: _search(rx, to_string(a))
    if op == "$type":
        return lambda a, g: type_of(a) == expected
    return _false  # an unknown operator


def padded_version_string(v: Any) -> str:
    """GrowthBook's paddedVersionString: "v1.2.3-rc.1+build" to space-padded parts that order as text."""
    if is_number(v):
        v = to_string(v)
    if not isinstance(v, str) or v == "":
        v = "0"
    v = v[1:] if v.startswith("v") else v
    plus = v.find("+")
    if plus >= 0 and "\n" not in v[plus:] and "\r" not in v[plus:]:
        v = v[:plus]
    parts = re.split(r"[-.]", v)
    if len(parts) == 3:
        parts.append("~")
    return "-".join(x.rjust(5, " ") if x.isascii() and x.isdigit() else x for x in parts)


_OPERATORS = frozenset(
    "$eq $ne $gt $gte $lt $lte $in $nin $all $elemMatch $size $exists $type $regex $not $ini $nini $alli"
    " $regexi $veq $vne $vgt $vgte $vlt $vlte $inGroup $notInGroup".split()
)
_LIST_OPERATORS = frozenset("$in $nin $ini $nini $all $alli".split())
_TYPES = frozenset("string number boolean array object null undefined".split())


def condition_problems(condition: Any, path: str = "targeting") -> List[Tuple[str, str]]:
    """What makes a condition invalid, as (path, problem) pairs; empty when it is valid."""
    if not isinstance(condition, dict):
        return [(path, "must be an object")]
    problems: List[Tuple[str, str]] = []
    for k, v in condition.items():
        p = f"{path}.{k}"
        if k in ("$or", "$nor", "$and"):
            if not isinstance(v, list):
                problems.append((p, "must be an array of conditions"))
            else:
                for i, c in enumerate(v):
                    problems += condition_problems(c, f"{p}.{i}")
        elif k == "$not":
            problems += condition_problems(v, p)
        else:  # any other key is a path, "$groups" too (as in GrowthBook)
            problems += _value_problems(v, p)
    return problems


def _value_problems(v: Any, path: str) -> List[Tuple[str, str]]:
    if not _is_operator_object(v):
        if isinstance(v, dict) and any(k.startswith("$") for k in v):
            return [(path, "mixes operators and plain keys")]
        return []
    problems: List[Tuple[str, str]] = []
    for op, arg in v.items():
        p = f"{path}.{op}"
        if op not in _OPERATORS:
            problems.append((p, "is not a known operator"))
        elif op in _LIST_OPERATORS and not isinstance(arg, list):
            problems.append((p, "must be an array"))
        elif op in ("$regex", "$regexi"):
            why = regex_problem(arg)
            if why:
                problems.append((p, why))
        elif op in ("$inGroup", "$notInGroup") and not isinstance(arg, str):
            problems.append((p, "must be a saved group's name"))
        elif op == "$type" and arg not in _TYPES:
            problems.append((p, "must be one of " + ", ".join(sorted(_TYPES))))
        elif op == "$exists" and not isinstance(arg, bool):
            problems.append((p, "must be true or false"))
        elif op == "$elemMatch":
            problems += _value_problems(arg, p) if _is_operator_object(arg) else condition_problems(arg, p)
        elif op in ("$not", "$size"):
            problems += _value_problems(arg, p)
        if op in _LIST_OPERATORS and isinstance(arg, list) and op in ("$all", "$alli"):
            for i, e in enumerate(arg):
                problems += _value_problems(e, f"{p}.{i}")
    return problems
