"""The server's draw, ported exactly (src/core/assignment.ts): GrowthBook's v2 hash, bucket ranges, the pick.

Pure functions, no I/O. FNV-1a 32 runs over the UTF-16 code units of a string, as JavaScript's
``charCodeAt`` sees it: for ASCII strings (the usual user id) those are the bytes.
"""

from __future__ import annotations

from array import array
from typing import Any, Callable, List, Optional, Sequence, Tuple

FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193
MASK32 = 0xFFFFFFFF

BucketRange = Tuple[float, float]


def code_units(s: str) -> Sequence[int]:
    """The UTF-16 code units of ``s`` (JavaScript's ``s.charCodeAt(i)`` for each i)."""
    if s.isascii():
        return s.encode("ascii")
    return array("H", s.encode("utf-16-le"))


def fnv1a32_update(h: int, s: str) -> int:
    """Continues an FNV-1a 32 state over ``s``: ``fnv1a32_update(fnv1a32(a), b) == fnv1a32(a + b)``."""
    for c in code_units(s):
        h = ((h ^ c) * FNV_PRIME) & MASK32
    return h


def fnv1a32(s: str) -> int:
    """FNV-1a 32-bit over the UTF-16 code units of ``s``."""
    return fnv1a32_update(FNV_OFFSET, s)


def hash_v2_from_state(seed_state: int, value: str) -> float:
    """``hash_v2(seed, value)`` given ``seed_state = fnv1a32(seed)`` (FNV is streaming: the seed's part is fixed)."""
    h = seed_state
    if value.isascii():
        for c in value.encode("ascii"):
            h = ((h ^ c) * FNV_PRIME) & MASK32
    else:
        for c in array("H", value.encode("utf-16-le")):
            h = ((h ^ c) * FNV_PRIME) & MASK32
    h2 = FNV_OFFSET
    for c in str(h).encode("ascii"):
        h2 = ((h2 ^ c) * FNV_PRIME) & MASK32
    return (h2 % 10000) / 10000


def hash_v2(seed: str, value: str) -> float:
    """GrowthBook's hash version 2: a number in [0, 1) with 4 decimal places."""
    return hash_v2_from_state(fnv1a32(seed), value)


def equal_weights(n: int) -> List[float]:
    """``n`` equal weights summing to 1 (none for n <= 0), as GrowthBook's getEqualWeights."""
    return [1 / n] * n if n > 0 else []


def bucket_ranges(
    num_variants: int, coverage: float = 1.0, weights: Optional[Sequence[float]] = None
) -> List[BucketRange]:
    """Ranges of the hash space per variant, laid end to end, each ``[start, start + coverage * weight]``
    (so raising coverage only adds units). As GrowthBook: coverage is clamped to 0..1, and weights of
    the wrong length or not summing to 1 within 0.01 fall back to equal weights."""
    c = min(1.0, max(0.0, coverage))
    w: Sequence[float]
    if weights is not None and len(weights) == num_variants and 0.99 <= sum(weights) <= 1.01:
        w = weights
    else:
        w = equal_weights(num_variants)
    cumulative = 0.0
    out: List[BucketRange] = []
    for weight in w:
        start = cumulative
        cumulative += weight
        out.append((start, start + c * weight))
    return out


def choose_variant(n: float, ranges: Sequence[Sequence[float]]) -> int:
    """Index of the range holding ``n`` (start inclusive, end exclusive), or -1 when none does."""
    for i, r in enumerate(ranges):
        if r[0] <= n < r[1]:
            return i
    return -1


def cumulative_weights(weights: Sequence[float]) -> List[float]:
    out: List[float] = []
    total = 0.0
    for w in weights:
        total += w
        out.append(total)
    return out


def pick_weighted(cumulative: Sequence[float], random: Callable[[], float]) -> int:
    """The first cumulative weight strictly above the draw; a zero weight never wins."""
    total = cumulative[-1]
    u = random() * total
    for i, c in enumerate(cumulative):
        if u < c:
            return i
    # u == total only through rounding: the last variant with weight.
    for i in range(len(cumulative) - 1, 0, -1):
        if cumulative[i] > cumulative[i - 1]:
            return i
    return 0


def pick_last_weighted(cumulative: Sequence[float]) -> int:
    return pick_weighted(cumulative, lambda: 1.0)


def hash_v1(seed: str, value: str) -> float:
    """GrowthBook's hash version 1 (biased, 3 decimal places; kept for namespaces and layers)."""
    return (fnv1a32(value + seed) % 1000) / 1000


def gb_hash(seed: str, value: str, version: int) -> Optional[float]:
    """GrowthBook's hash(seed, value, version): version 1 or 2; None for another version."""
    if version == 2:
        return hash_v2(seed, value)
    if version == 1:
        return hash_v1(seed, value)
    return None


def in_namespace(unit_id: str, namespace: Sequence[Any]) -> bool:
    """GrowthBook's inNamespace (an experiment's layer): hash v1 of the unit id with seed "__" + key,
    in ``[start, end)``; ``namespace`` is ``(key, start, end)``."""
    n = hash_v1("__" + namespace[0], unit_id)
    return namespace[1] <= n < namespace[2]
