"""How the shared client assigns: the default answer, which user ids the server takes, the local draw from
the definitions (and the definitions' refresh), and the reading of a remote answer. A base of ``_ClientBase``
(in _core.py), which holds the state these use."""

from __future__ import annotations

import json
import random
import re
import time
from array import array
from base64 import b64encode
from zlib import crc32
from urllib.parse import quote
from typing import Any, Callable, Deque, Dict, Mapping, Optional

from ._assignment import Assignment, JsonObject
from ._delivery import Delivery, Item
from ._entry import Definition, compile_definitions
from ._hash import pick_last_weighted, pick_weighted
from ._ids import uuid7

MAX_USER_ID = 512  # code points, as the server checks
_SURROGATE = re.compile("[\ud800-\udfff]")


def assign_path(slug: str) -> str:
    return "/experiment/%s/assign" % quote(slug, safe="")


def assign_body(user_id: str, context: Optional[JsonObject]) -> bytes:
    """The body of a remote assign. Raises on a context JSON cannot hold (the caller answers the default)."""
    body: JsonObject = {"userId": user_id}
    if context is not None:
        body["context"] = context
    return json.dumps(body, default=str, separators=(",", ":"), allow_nan=False).encode("utf-8")


class _Assigning:
    """The assign half of ``_ClientBase``: its methods read the client's state, declared here."""

    _defs: Dict[str, Definition]
    _etag: Optional[str]
    _defs_loaded: bool
    _headers: Dict[str, str]
    _delivery: Delivery
    _queue: Deque[Item]
    _max_queue: int
    _batch_size: int
    _warn: Callable[..., None]
    _auth_error: Callable[[int, Any], None]
    _wake: Callable[[], None]

    def _default(self, experiment: str, user_id: str, default: Any) -> Assignment:
        return Assignment(experiment, user_id, None, {} if default is None else default, None, "default", False)

    def _bad_user_id(self, experiment: str, user_id: Any) -> Optional[str]:
        """Why the server would refuse ``user_id`` (400), or None: not a string, empty, over 512 code
        points, a NUL, a lone surrogate. Checked before a local draw or a request; the caller answers the default."""
        if type(user_id) is not str and not isinstance(user_id, str):
            why = "is not a string (%s)" % type(user_id).__name__
        elif not user_id:
            why = "is empty"
        elif len(user_id) > MAX_USER_ID:
            why = "is longer than %d characters (%d)" % (MAX_USER_ID, len(user_id))
        elif "\x00" in user_id:
            why = "contains U+0000"
        elif not user_id.isascii() and _SURROGATE.search(user_id):
            why = "contains a lone surrogate"
        else:
            return None
        self._warn("user-id", "agentsplit: assign %r: the user id %s (the server answers 400): default", experiment, why)
        return why

    def _bad_user_id_remote(self, experiment: str, user_id: Any) -> bool:
        if type(user_id) is str and 0 < len(user_id) <= MAX_USER_ID and "\x00" not in user_id and (user_id.isascii() or not _SURROGATE.search(user_id)):
            return False
        return self._bad_user_id(experiment, user_id) is not None

    def _assign_local(self, experiment: str, user_id: str, context: Optional[JsonObject], default: Any) -> Assignment:
        if (type(user_id) is not str or not 0 < len(user_id) <= MAX_USER_ID or "\x00" in user_id) and self._bad_user_id(experiment, user_id):
            return self._default(experiment, user_id, default)
        d = self._defs.get(experiment)
        if d is None:
            if self._defs_loaded:
                self._warn("missing:" + experiment, "agentsplit: %r is not among the running experiments' definitions: default", experiment)
            else:
                self._warn("nodefs", "agentsplit: no definitions yet (the server could not be reached): default for %r", experiment)
            return self._default(experiment, user_id, default)
        ascii = user_id.isascii()
        if ascii:
            user_bytes = user_id.encode()
        else:
            try:
                user_bytes = user_id.encode()
            except UnicodeEncodeError:  # a lone surrogate
                self._bad_user_id(experiment, user_id)
                return self._default(experiment, user_id, default)
        if not d.simple:  # entry rules (ADR 0038): a unit kept out is answered here, without an exposure
            i, reason = d.enter(user_id, context)
            if reason is not None:
                body = uuid7() + d.out_prefixes[i] + b64encode(user_bytes).decode()
                aid = "%s.%08x" % (body, crc32(body.encode(), d.key))
                return Assignment(experiment, user_id, d.keys[i], d.payloads[i], aid, "local", False, reason)
        elif d.sticky:
            # hash_v2 inlined (the hot path): FNV-1a 32 from the seed's state over the user id's
            # UTF-16 code units, then over the decimal digits of that
            h = d.seed_state
            for c in user_bytes if ascii else array("H", user_id.encode("utf-16-le")):
                h = (h ^ c) * 0x01000193 & 0xFFFFFFFF
            h2 = 0x811C9DC5
            for c in b"%d" % h:
                h2 = (h2 ^ c) * 0x01000193 & 0xFFFFFFFF
            n = h2 % 10000 / 10000
            i = 0
            for start, end in d.ranges:
                if start <= n < end:
                    break
                i += 1
            else:
                i = pick_last_weighted(d.cumulative)
        else:
            i = pick_weighted(d.cumulative, random.random)
        body = uuid7() + d.prefixes[i] + b64encode(user_bytes).decode()
        aid = "%s.%08x" % (body, crc32(body.encode(), d.key))
        q = self._queue
        if len(q) >= self._max_queue:
            self._delivery.put(("exposure", experiment, (aid, context), time.time()))
        else:
            q.append(("exposure", experiment, (aid, context), time.time()))
            if len(q) >= self._batch_size:
                self._wake()
        return Assignment(experiment, user_id, d.keys[i], d.payloads[i], aid, "local")

    def _expose_local(self, experiment: str, d: Definition, i: int, user_id: str, context: Optional[JsonObject]) -> str:
        """Makes the id of a local draw already made (``d.choose``) and queues its exposure: the tail of
        ``_assign_local`` (kept inline there: the hot path), for callers that check the variant before
        it counts (the OpenFeature provider's type check). ``user_id`` must have passed ``_bad_user_id``."""
        body = uuid7() + d.prefixes[i] + b64encode(user_id.encode()).decode()
        aid = "%s.%08x" % (body, crc32(body.encode(), d.key))
        if self._delivery.put(("exposure", experiment, (aid, context), time.time())):
            self._wake()
        return aid

    @staticmethod
    def _unentered_id(d: Definition, i: int, user_id: str) -> str:
        """The id of a unit that did not enter (its variant part ``x<index>``); no exposure goes with it."""
        body = uuid7() + d.out_prefixes[i] + b64encode(user_id.encode()).decode()
        return "%s.%08x" % (body, crc32(body.encode(), d.key))

    def _assign_answer(self, experiment: str, user_id: str, default: Any, status: int, data: Any) -> Assignment:
        if status == 200 and isinstance(data, dict) and isinstance(data.get("variant"), str):
            entered = data.get("inExperiment")
            reason = data.get("reason")
            return Assignment(
                experiment,
                user_id,
                data["variant"],
                data.get("payload", {}),
                data.get("assignmentId"),
                "server",
                entered if isinstance(entered, bool) else True,  # a server before ADR 0038 lets everyone in
                reason if isinstance(reason, str) else None,
            )
        if status in (401, 403):
            self._auth_error(status, data)
        elif status == 404:
            self._warn("404:" + experiment, "agentsplit: %r is unknown or not running (404): default", experiment)
        else:
            error = data.get("error") if isinstance(data, dict) else None
            self._warn("assign:%d" % status, "agentsplit: assign %r answered HTTP %d (%s): default", experiment, status, error)
        return self._default(experiment, user_id, default)

    def _apply_definitions(self, status: int, headers: Mapping[str, str], data: Any) -> None:
        if status == 304:
            self._defs_loaded = True
            return
        if status == 200 and isinstance(data, dict) and isinstance(data.get("experiments"), list):
            self._defs = compile_definitions(data)
            self._etag = headers.get("etag")
            self._defs_loaded = True
            return
        if status in (401, 403):
            self._auth_error(status, data)
            return
        self._warn("defs", "agentsplit: definitions answered HTTP %d: keeping the %d we have", status, len(self._defs))

    def _definitions_headers(self) -> Dict[str, str]:
        h = dict(self._headers)
        del h["content-type"]
        if self._etag:
            h["if-none-match"] = self._etag
        return h
