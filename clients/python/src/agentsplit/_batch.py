"""The queue's items and the batches made of them, sans I/O: each item's JSON, a batch's path, body and
Idempotency-Key, and the Retry-After of an answer."""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import quote

JsonObject = Dict[str, Any]

# Queue items: ("log", slug, body, t) | ("feedback", slug, body, t) | ("exposure", slug, (id, context), t)
Item = Tuple[str, str, Any, float]

_KIND_ORDER = {"exposure": 0, "log": 1, "feedback": 2}


_iso_second = [-1, ""]


def iso(t: float) -> str:
    """ISO 8601 in UTC with milliseconds; the part up to the second is made once per second."""
    ms = int(t * 1000)
    sec = ms // 1000
    if sec != _iso_second[0]:
        _iso_second[1] = datetime.fromtimestamp(sec, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.")
        _iso_second[0] = sec
    return "%s%03dZ" % (_iso_second[1], ms - sec * 1000)


MAX_HARD_ATTEMPTS = 5  # a batch (then each of its items) answered a 5xx other than 503 this many times is given up


_encode = json.JSONEncoder(default=str, separators=(",", ":"), allow_nan=False).encode


def item_object(it: Item) -> Any:
    """What one queued item is in its batch's JSON."""
    kind, slug, value, t = it
    if kind == "exposure":
        aid, context = value
        x: JsonObject = {"experiment": slug, "assignmentId": aid}
        if context is not None:
            x["context"] = context
        x["timestamp"] = iso(t)
        return x
    if kind == "log" and "timestamp" not in value:
        x = dict(value)
        x["timestamp"] = iso(t)
        return x
    if kind == "feedback":  # an item of POST /feedback: its experiment, then the single route's body
        x = {"experiment": slug}
        x.update(value)
        return x
    return value


def encode_items(items: List[Item], bad: Any) -> Tuple[List[Item], bytes]:
    """The JSON array of ``items`` (``default=str`` turns unknown objects into their text). When one
    cannot be JSON (a circular reference, NaN or infinity) each is made on its own: the bad ones go to
    ``bad(item, error)`` and are left out. Returns the items kept and their array."""
    try:
        return items, _encode([item_object(it) for it in items]).encode("utf-8")
    except Exception:
        pass
    kept: List[Item] = []
    frags: List[str] = []
    for it in items:
        try:
            frags.append(_encode(item_object(it)))
        except Exception as err:
            bad(it, err)
            continue
        kept.append(it)
    return kept, ("[" + ",".join(frags) + "]").encode("utf-8")


def path_of(kind: str, slug: str) -> str:
    if kind == "exposure":
        return "/exposures"
    if kind == "feedback":
        return "/feedback"
    return "/experiment/%s/logs" % quote(slug, safe="")


class Batch:
    __slots__ = ("kind", "slug", "items", "array", "key", "attempt", "hard", "next_at", "single", "forced_wait")

    def __init__(self, kind: str, slug: str, items: List[Item], array: bytes, single: bool = False) -> None:
        self.kind = kind
        self.slug = slug
        self.items = items
        self.array = array  # the items' JSON array, made once when the batch is formed
        self.key = str(uuid.uuid4())  # the Idempotency-Key, kept across this batch's retries
        self.attempt = 0
        self.hard = 0  # answers of a 5xx other than 503 (an error of this batch rather than an outage)
        self.next_at = 0.0
        self.single = single
        self.forced_wait = False  # the wait comes from Retry-After: flush may not cut it short

    def path(self) -> str:
        return path_of(self.kind, self.slug)

    def content(self) -> bytes:
        if self.kind == "exposure":
            return b'{"exposures":' + self.array + b"}"
        if self.kind == "log":
            return b'{"results":' + self.array + b"}"
        return b'{"feedback":' + self.array + b"}"


def retry_after_seconds(value: Optional[str]) -> float:
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except Exception:
        return 0.0


_KIND_NAME = {"exposure": "an exposure", "log": "a result", "feedback": "feedback"}
