"""Local definitions and who enters an experiment (docs/adr/0038-who-enters.md), ported from the server's
evaluator so a local assign answers as the server's would: overrides, then the layer, then targeting,
then coverage and the split.

A definition is compiled once when the definitions arrive (conditions read, ranges laid out, saved
groups made into sets once for all experiments); ``enter`` then only evaluates.
"""

from __future__ import annotations

import logging
import random
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

from ._hash import (
    MASK32,
    bucket_ranges,
    choose_variant,
    cumulative_weights,
    fnv1a32,
    hash_v2_from_state,
    in_namespace,
    pick_last_weighted,
    pick_weighted,
)
from ._ids import base36
from .conditions import CompiledCondition, SavedGroups, compile_condition

logger = logging.getLogger("agentsplit")

# (variant index, the user ids it serves or None, the condition it serves or None)
Override = Tuple[int, Optional[FrozenSet[str]], Optional[CompiledCondition]]

_NO_GROUPS = SavedGroups()


def attributes(user_id: str, context: Any) -> Dict[str, Any]:
    """What conditions see: the context plus ``userId``, unless the context sets ``userId`` itself."""
    a: Dict[str, Any] = dict(context) if isinstance(context, Mapping) else {}
    if "userId" not in a:
        a["userId"] = user_id
    return a


class Definition:
    """One running experiment, compiled for the local draw and the entry rules.

    ``simple`` is True when no rule can keep a unit out (no overrides, layer or targeting, coverage
    100): the client then takes its inlined hot path, which is exactly the draw of before ADR 0038.
    """

    __slots__ = (
        "slug",
        "key",
        "version",
        "sticky",
        "seed_state",
        "ranges",
        "cumulative",
        "keys",
        "payloads",
        "prefixes",
        "out_prefixes",
        "targeting",
        "coverage",
        "coverage_ranges",
        "layer",
        "overrides",
        "default_index",
        "groups",
        "rollout",
        "simple",
    )

    def __init__(self, e: Mapping[str, Any], groups: SavedGroups = _NO_GROUPS) -> None:
        variants = e["variants"]
        if not variants:
            raise ValueError("no variants")
        weights = [float(v["trafficPercent"]) / 100.0 for v in variants]
        self.slug: str = e["slug"]
        self.key: int = int(e["assignmentIdKey"]) & MASK32
        self.version: int = int(e["version"])
        self.sticky: bool = e.get("assignment") == "sticky"
        seed = e.get("seed")
        self.seed_state = fnv1a32(seed if isinstance(seed, str) and seed != "" else self.slug)
        self.ranges = bucket_ranges(len(weights), 1.0, weights)
        self.cumulative = cumulative_weights(weights)
        self.keys: List[str] = [v["key"] for v in variants]
        self.payloads: List[Any] = [v.get("payload", {}) for v in variants]
        v36 = base36(self.version)
        self.prefixes = ["." + v36 + "." + base36(i) + "." for i in range(len(variants))]
        # A unit that did not enter: its id's variant part is "x<index>", so no analysis counts it.
        self.out_prefixes = ["." + v36 + ".x" + base36(i) + "." for i in range(len(variants))]
        self.groups = groups
        # Missing fields are the defaults (an older server sends none of them).
        targeting = e.get("targeting")
        self.targeting: Optional[CompiledCondition] = compile_condition(targeting) if isinstance(targeting, dict) else None
        coverage = e.get("coverage")
        self.coverage: float = 100.0 if coverage is None else min(100.0, max(0.0, float(coverage)))
        self.coverage_ranges = bucket_ranges(len(weights), self.coverage / 100.0, weights) if self.coverage < 100 else None
        layer = e.get("layer")
        self.layer: Optional[Tuple[str, float, float]] = None
        if isinstance(layer, dict):
            start, end = layer["range"]
            self.layer = (str(layer["key"]), float(start), float(end))
        self.overrides: List[Override] = []
        for o in e.get("overrides") or []:
            if not isinstance(o, dict):
                continue
            ids = o.get("userIds")
            cond = o.get("condition")
            self.overrides.append(
                (
                    # the server refuses an unknown variant when saved; were one here, it serves the first (as the server's evaluator)
                    self.keys.index(o["variant"]) if o.get("variant") in self.keys else 0,
                    frozenset(u for u in ids if isinstance(u, str)) if isinstance(ids, list) else None,
                    compile_condition(cond) if isinstance(cond, dict) else None,
                )
            )
        default = e.get("defaultVariant")
        self.default_index = self.keys.index(default) if default in self.keys else 0
        # A rollout (issue 38): units whose hash_v2(seed, id) < percent / 100 get its variant, the rest its control.
        rollout = e.get("rollout")
        self.rollout: Optional[Tuple[int, float, int, int]] = None
        if isinstance(rollout, dict):
            self.rollout = (
                fnv1a32(str(rollout["seed"])),
                float(rollout["percent"]) / 100.0,
                self.keys.index(rollout["variant"]) if rollout.get("variant") in self.keys else 0,
                self.keys.index(rollout["control"]) if rollout.get("control") in self.keys else 0,
            )
        self.simple = (
            self.targeting is None
            and self.layer is None
            and not self.overrides
            and self.coverage_ranges is None
            and self.rollout is None
        )

    def choose(self, user_id: str) -> int:
        """The split alone (every unit enters), as before ADR 0038."""
        if self.sticky:
            i = choose_variant(hash_v2_from_state(self.seed_state, user_id), self.ranges)
            return i if i >= 0 else pick_last_weighted(self.cumulative)
        return pick_weighted(self.cumulative, random.random)

    def enter(self, user_id: str, context: Any = None, rand: Callable[[], float] = random.random) -> Tuple[int, Optional[str]]:
        """``(variant index, reason)``: reason None when the unit entered, else ``override``, ``layer``,
        ``targeting`` or ``coverage`` (the index is then the override's variant or the default)."""
        attrs: Optional[Dict[str, Any]] = None
        if self.overrides:
            attrs = attributes(user_id, context)
            for i, ids, cond in self.overrides:
                if ids is not None and user_id in ids:
                    return i, "override"
                if cond is not None and cond.matches(attrs, self.groups):
                    return i, "override"
        if self.layer is not None and not in_namespace(user_id, self.layer):
            return self.default_index, "layer"
        if self.targeting is not None:
            if attrs is None:
                attrs = attributes(user_id, context)
            if not self.targeting.matches(attrs, self.groups):
                return self.default_index, "targeting"
        if self.coverage_ranges is not None:
            n = hash_v2_from_state(self.seed_state, user_id) if self.sticky else rand()
            i = choose_variant(n, self.coverage_ranges)
            if i < 0:
                return self.default_index, "coverage"
            if self.rollout is None:
                return i, None
        if self.rollout is not None:  # the rollout's own hash of the unit, whatever the mode
            state, share, variant, control = self.rollout
            return (variant if hash_v2_from_state(state, user_id) < share else control), None
        # coverage 100: exactly the draw of before
        if self.sticky:
            i = choose_variant(hash_v2_from_state(self.seed_state, user_id), self.ranges)
            return (i if i >= 0 else pick_last_weighted(self.cumulative)), None
        return pick_weighted(self.cumulative, rand), None


def compile_definitions(data: Any) -> Dict[str, Definition]:
    """The definitions answer compiled: its saved groups once, then each experiment."""
    out: Dict[str, Definition] = {}
    if not isinstance(data, dict):
        return out
    raw_groups = data.get("groups")
    groups = SavedGroups({k: v for k, v in raw_groups.items() if isinstance(v, list)}) if isinstance(raw_groups, dict) else _NO_GROUPS
    for e in data.get("experiments", []):
        try:
            d = Definition(e, groups)
        except Exception as err:  # one odd definition must not hide the others
            logger.warning("agentsplit: skipping a definition that cannot be read (%s): %r", err, e.get("slug") if isinstance(e, dict) else e)
            continue
        out[d.slug] = d
    return out
