"""What the sync and async clients share: assignments, runs, the bounded queue and its batches (sans I/O),
local definitions and the local draw. The clients add only the transport and the background worker."""

from __future__ import annotations

import json
import logging
import os
import random
import re
import sys
import threading
import time
import uuid
from array import array
from base64 import b64encode
from zlib import crc32
from collections import deque
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from urllib.parse import quote
from typing import Any, Deque, Dict, List, Mapping, Optional, Tuple

from ._entry import Definition, compile_definitions
from ._hash import pick_last_weighted, pick_weighted
from ._ids import uuid7
from ._manage import AgentSplitError

logger = logging.getLogger("agentsplit")

JsonObject = Dict[str, Any]

DEFAULT_TIMEOUT = 2.0
DEFAULT_FLUSH_INTERVAL = 1.0
DEFAULT_BATCH_SIZE = 100
DEFAULT_MAX_QUEUE = 10_000
DEFAULT_REFRESH_INTERVAL = 5.0
DEFAULT_FLUSH_TIMEOUT = 10.0
DEFAULT_MANAGEMENT_TIMEOUT = 10.0  # create_experiment, get_experiment, update_experiment, analysis
DEFAULT_BACKOFF_BASE = 0.5
DEFAULT_BACKOFF_MAX = 30.0
WARN_EVERY = 10.0  # seconds between two warnings of the same kind
MAX_USER_ID = 512  # code points, as the server checks
_SURROGATE = re.compile("[\ud800-\udfff]")


class Assignment:
    """The answer of ``assign``: ``variant``, ``payload``, ``assignment_id``, ``source``, ``in_experiment``,
    ``reason``.

    ``source`` is ``"server"`` (a remote answer), ``"local"`` (drawn in-process) or ``"default"`` (the
    caller's default payload; ``variant`` and ``assignment_id`` are None). A local payload is the
    definition's own object: read it, do not change it.

    ``in_experiment`` is False when the unit did not enter the experiment (ADR 0038): it was served an
    override's variant or the default variant, and ``reason`` says why (``"override"``, ``"layer"``,
    ``"targeting"`` or ``"coverage"``). Its results are stored but never counted; no exposure is sent.
    A ``"default"`` assignment is not in the experiment either (``reason`` None).
    """

    __slots__ = ("experiment", "user_id", "variant", "payload", "assignment_id", "source", "in_experiment", "reason")

    def __init__(
        self,
        experiment: str,
        user_id: str,
        variant: Optional[str],
        payload: Any,
        assignment_id: Optional[str],
        source: str,
        in_experiment: bool = True,
        reason: Optional[str] = None,
    ) -> None:
        self.experiment = experiment
        self.user_id = user_id
        self.variant = variant
        self.payload = payload
        self.assignment_id = assignment_id
        self.source = source
        self.in_experiment = in_experiment
        self.reason = reason

    def __repr__(self) -> str:
        return "Assignment(experiment=%r, user_id=%r, variant=%r, source=%r, in_experiment=%r, reason=%r, assignment_id=%r)" % (
            self.experiment,
            self.user_id,
            self.variant,
            self.source,
            self.in_experiment,
            self.reason,
            self.assignment_id,
        )


class Run:
    """What ``track`` yields: set ``output`` and add to ``metrics``; on exit the run is logged with
    ``latency_ms`` (unless set) and ``error`` (True when the block raised; the exception still propagates)."""

    __slots__ = ("_client", "assignment", "input", "output", "metrics", "context", "_t0", "latency_ms")

    def __init__(self, client: "_ClientBase", assignment: Assignment, input: Optional[JsonObject], context: Optional[JsonObject]) -> None:
        self._client = client
        self.assignment = assignment
        self.input = input
        self.output: Optional[JsonObject] = None
        self.metrics: JsonObject = {}
        self.context = context
        self._t0 = 0.0
        self.latency_ms: Optional[float] = None

    def __enter__(self) -> "Run":
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        self._finish(exc_type, exc)
        return False  # never swallow the caller's exception

    async def __aenter__(self) -> "Run":
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        self._finish(exc_type, exc)
        return False

    def _finish(self, exc_type: Any, exc: Any = None) -> None:
        try:
            self.latency_ms = round((time.perf_counter() - self._t0) * 1000.0, 3)
            metrics = self.metrics if isinstance(self.metrics, dict) else {}
            metrics.setdefault("latency_ms", self.latency_ms)
            if exc_type is not None:
                metrics["error"] = True
                if self.output is None:  # "<ExceptionType>: <message>", as the JS client's `${err.name}: ${err.message}`
                    self.output = {"error": "%s: %s" % (getattr(exc_type, "__name__", str(exc_type)), "" if exc is None else exc)}
            else:
                metrics.setdefault("error", False)
            a = self.assignment
            self._client.log(
                a.experiment,
                variant_key=a.variant,
                assignment_id=a.assignment_id,
                input=self.input,
                output=self.output,
                metrics=metrics,
                context=self.context,
                user_id=a.user_id,
            )
        except Exception:  # pragma: no cover - log never raises; this is belt and braces
            logger.debug("agentsplit: could not log a tracked run", exc_info=True)


# --- the queue and its batches (no I/O) ----------------------------------------------------------------

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


def assign_path(slug: str) -> str:
    return "/experiment/%s/assign" % quote(slug, safe="")


def assign_body(user_id: str, context: Optional[JsonObject]) -> bytes:
    """The body of a remote assign. Raises on a context JSON cannot hold (the caller answers the default)."""
    body: JsonObject = {"userId": user_id}
    if context is not None:
        body["context"] = context
    return json.dumps(body, default=str, separators=(",", ":"), allow_nan=False).encode("utf-8")


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


class Delivery:
    """The bounded queue and the batches made from it. Not thread-safe by itself except ``put``; the
    worker owns ``pending`` and ``deferred``; ``lock`` guards forming batches and the idle check.

    ``pending`` is sent strictly in order: a batch backing off after a network error, a 503, 408, 409
    or 429 (an outage, or the server asking to slow down) holds the line. A batch answered any other
    5xx moves to ``deferred``: it is tried again when its backoff ends, without holding up the
    others, and after ``MAX_HARD_ATTEMPTS`` such answers it is split item by item once; an item that
    still gets them is dropped (counted in ``failed``)."""

    def __init__(self, batch_size: int, max_queue: int, backoff_base: float, backoff_max: float, warn: Any) -> None:
        self.batch_size = max(1, min(int(batch_size), 1000))
        self.max_queue = max(1, int(max_queue))
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.queue: Deque[Item] = deque()
        self.pending: Deque[Batch] = deque()
        self.deferred: List[Batch] = []
        self.lock = threading.Lock()
        self._warn = warn
        self.dropped = 0  # oldest items dropped because the queue was full
        self.failed = 0  # items dropped for good: refused by the server, not JSON, given up, after close
        self.delivered = 0  # items the server accepted
        self.auth_failed = False
        self.closed = False  # set by discard(): an answer or error that comes after it changes nothing

    # callers' side ---------------------------------------------------------------------------------
    def put(self, item: Item) -> bool:
        """Queues an item; True when a batch is full (time to wake the worker)."""
        q = self.queue
        if len(q) >= self.max_queue:
            try:
                q.popleft()
                self.dropped += 1
            except IndexError:
                pass
            self._warn("queue-full", "agentsplit: the queue is full (%d items): dropping the oldest (%d dropped so far)", self.max_queue, self.dropped)
        q.append(item)
        return len(q) >= self.batch_size

    def idle(self) -> bool:
        with self.lock:
            return not self.queue and not self.pending and not self.deferred

    def count(self) -> int:
        with self.lock:
            return len(self.queue) + sum(len(b.items) for b in self.pending) + sum(len(b.items) for b in self.deferred)

    def discard(self) -> int:
        """close(): what was not delivered is dropped and counted as failed; returns how many."""
        with self.lock:
            self.closed = True
            n = len(self.queue) + sum(len(b.items) for b in self.pending) + sum(len(b.items) for b in self.deferred)
            self.queue.clear()
            self.pending.clear()
            del self.deferred[:]
            self.failed += n
            return n

    # worker's side ---------------------------------------------------------------------------------
    def _form(self) -> None:
        """Moves up to 10 batches' worth of items into batches: exposures, then logs per experiment,
        then feedback of every experiment (POST /feedback), so feedback follows the exposure of its local
        id and the result it names. The items are
        made JSON here (not in the callers' calls), a batch in one go; when one cannot be (a circular
        reference, NaN), each on its own: only the bad one is dropped and counted."""
        q = self.queue
        items: List[Item] = []
        limit = self.batch_size * 10
        while q and len(items) < limit:
            items.append(q.popleft())
        groups: Dict[Tuple[str, str], List[Item]] = {}
        for it in items:
            if it[0] == "exposure" or it[0] == "feedback":
                k = (it[0], "")  # one batch for every experiment's
            else:
                k = (it[0], it[1])
            g = groups.get(k)
            if g is None:
                g = groups[k] = []
            g.append(it)
        ordered = sorted(groups.items(), key=lambda kv: _KIND_ORDER[kv[0][0]])  # stable: keeps arrival order
        for (kind, _), its in ordered:
            for i in range(0, len(its), self.batch_size):
                chunk, array = encode_items(its[i : i + self.batch_size], self._unencodable)
                if chunk:
                    self.pending.append(Batch(kind, chunk[0][1], chunk, array))

    def _unencodable(self, it: Item, err: BaseException) -> None:
        self.failed += 1
        self._warn("encode", "agentsplit: %s of %r cannot be sent as JSON (%s: %s): dropped", _KIND_NAME.get(it[0], it[0]), it[1], type(err).__name__, err)

    def next_ready(self, now: float) -> Tuple[Optional[Batch], Optional[float]]:
        """The batch to send now, or (None, seconds to wait) while batches back off, or (None, None) when idle."""
        with self.lock:
            wait: Optional[float] = None
            for b in self.deferred:  # their time has come: they go first, they never hold the others up
                if b.next_at <= now:
                    return b, 0.0
                w = b.next_at - now
                wait = w if wait is None or w < wait else wait
            if not self.pending:
                self._form()
            if self.pending:
                b = self.pending[0]
                if b.next_at <= now:
                    return b, 0.0
                w = b.next_at - now
                wait = w if wait is None or w < wait else wait
            return None, wait

    def hurry(self) -> None:
        """flush(): batches backing off after errors try again now (a Retry-After still holds)."""
        with self.lock:
            for b in self.pending:
                if not b.forced_wait:
                    b.next_at = 0.0
            for b in self.deferred:
                if not b.forced_wait:
                    b.next_at = 0.0

    def _done(self, b: Batch) -> bool:
        """Takes ``b`` out; False when it was no longer there (discarded by close)."""
        with self.lock:
            if self.pending and self.pending[0] is b:
                self.pending.popleft()
                return True
            try:
                self.pending.remove(b)
                return True
            except ValueError:
                pass
            try:
                self.deferred.remove(b)
                return True
            except ValueError:
                return False

    def _split(self, b: Batch) -> bool:
        """Replaces ``b`` by one batch per item, where ``b`` was (each with an Idempotency-Key of its own)."""
        singles = []
        for it in b.items:
            one, array = encode_items([it], self._unencodable)
            if one:
                singles.append(Batch(b.kind, b.slug, one, array, single=True))
        with self.lock:
            try:
                i = self.deferred.index(b)
            except ValueError:
                pass
            else:
                self.deferred[i : i + 1] = singles
                return True
            try:
                i = self.pending.index(b)
            except ValueError:
                return False
            del self.pending[i]
            for j, s in enumerate(singles):
                self.pending.insert(i + j, s)
            return True

    def _retry(self, b: Batch, retry_after: float, why: str) -> None:
        b.attempt += 1
        delay = min(self.backoff_max, self.backoff_base * (2 ** min(b.attempt - 1, 30)))
        delay = random.uniform(delay / 2, delay)
        b.forced_wait = retry_after > 0 and retry_after >= delay
        delay = max(delay, retry_after)
        b.next_at = time.monotonic() + delay
        self._warn(
            "retry",
            "agentsplit: %s for %d %s item(s) of %r: retrying in %.2f s (attempt %d)",
            why,
            len(b.items),
            b.kind,
            b.slug,
            delay,
            b.attempt,
        )

    def on_error(self, b: Batch, err: BaseException) -> None:
        if self.closed:  # close() counted it as not delivered: no retry, no word of one
            return
        self._retry(b, 0.0, "%s (%s)" % (type(err).__name__, err))

    def on_response(self, b: Batch, status: int, headers: Mapping[str, str], data: Any, auth_error: Any) -> None:
        if self.closed:
            return
        if 200 <= status < 300:
            if not self._done(b):
                return
            n = len(b.items)
            if b.kind in ("exposure", "feedback") and isinstance(data, dict):
                for r in data.get("rejected") or []:
                    n -= 1
                    self.failed += 1
                    idx = r.get("index") if isinstance(r, dict) else None
                    it = b.items[idx] if isinstance(idx, int) and 0 <= idx < len(b.items) else None
                    error = r.get("error") if isinstance(r, dict) else r
                    if b.kind == "exposure":
                        logger.warning("agentsplit: the server refused exposure %s: %s", it[2][0] if it else "?", error)
                    else:
                        self._warn("feedback-rejected", "agentsplit: the server refused feedback on %r: %s", it[1] if it else "?", error)
            elif isinstance(data, dict) and (data.get("warnings") or data.get("warning")):
                self._warn(
                    "server-warning:%s:%s" % (b.kind, b.slug),
                    "agentsplit: the server warned on %s of %r: %s",
                    b.kind,
                    b.slug,
                    data.get("warnings") or data.get("warning"),
                )
            self.delivered += n
            return
        error = data.get("error") if isinstance(data, dict) else data
        if status in (401, 403):
            if self._done(b):
                self.failed += len(b.items)
            auth_error(status, data)
            return
        if status in (408, 409, 429, 503):  # transient: retried for as long as it takes
            self._retry(b, retry_after_seconds(headers.get("retry-after")), "HTTP %d" % status)
            return
        if status >= 500:  # an error of this batch, it seems: it must not hold up the others for ever
            b.hard += 1
            if b.hard < MAX_HARD_ATTEMPTS:
                with self.lock:
                    try:
                        self.pending.remove(b)
                    except ValueError:
                        pass
                    else:
                        self.deferred.append(b)
                self._retry(b, retry_after_seconds(headers.get("retry-after")), "HTTP %d (%s)" % (status, error))
                return
            if len(b.items) > 1 and not b.single:
                if self._split(b):
                    logger.warning(
                        "agentsplit: HTTP %d (%s) %d times for a batch of %d %s items of %r: trying them one by one",
                        status,
                        error,
                        b.hard,
                        len(b.items),
                        b.kind,
                        b.slug,
                    )
                return
            if self._done(b):
                self.failed += len(b.items)
                self._warn(
                    "gave-up",
                    "agentsplit: HTTP %d (%s) %d times for %s of %r: dropped",
                    status,
                    error,
                    b.hard,
                    _KIND_NAME.get(b.kind, b.kind) if len(b.items) == 1 else "%d %s items" % (len(b.items), b.kind),
                    b.slug,
                )
            return
        # 400, 404, 413, 422 and the like: one bad item must not lose its neighbours
        if len(b.items) > 1 and not b.single:
            if self._split(b):
                logger.warning("agentsplit: HTTP %d for a batch of %d %s items of %r (%s): retrying them one by one", status, len(b.items), b.kind, b.slug, error)
            return
        if self._done(b):
            self.failed += len(b.items)
            logger.warning("agentsplit: the server refused a %s of %r with HTTP %d (%s): dropped", b.kind, b.slug, status, error)


# --- the shared client ---------------------------------------------------------------------------------


class _ClientBase:
    """Configuration, the local draw, log/track/feedback. Subclasses add the transport and the worker."""

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        local: bool = False,
        flush_interval: float = DEFAULT_FLUSH_INTERVAL,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_queue: int = DEFAULT_MAX_QUEUE,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        flush_timeout: float = DEFAULT_FLUSH_TIMEOUT,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        backoff_max: float = DEFAULT_BACKOFF_MAX,
        flush_at_exit: bool = True,
        management_timeout: float = DEFAULT_MANAGEMENT_TIMEOUT,
    ) -> None:
        self.base_url = (base_url or os.environ.get("AGENTSPLIT_URL") or "").rstrip("/")
        self.api_key = api_key or os.environ.get("AGENTSPLIT_API_KEY") or ""
        self.timeout = float(timeout)
        self.local = bool(local)
        self.flush_interval = float(flush_interval)
        self.refresh_interval = float(refresh_interval)
        self.flush_timeout = float(flush_timeout)
        self.management_timeout = float(management_timeout)
        self.flush_at_exit = flush_at_exit
        self._warned: Dict[str, float] = {}
        self._auth_logged = False
        self._closed = False
        self._closed_logged = False
        self._delivery = Delivery(batch_size, max_queue, backoff_base, backoff_max, self._warn)
        self._batch_size = self._delivery.batch_size
        self._queue = self._delivery.queue
        self._max_queue = self._delivery.max_queue
        self._defs: Dict[str, Definition] = {}
        self._etag: Optional[str] = None
        self._defs_loaded = False
        self.enabled = bool(self.base_url)
        if not self.enabled:
            logger.error("agentsplit: no base_url (nor AGENTSPLIT_URL): every assign answers its default and nothing is sent")
        elif not self.api_key:
            logger.error("agentsplit: no api_key (nor AGENTSPLIT_API_KEY): the server will answer 401")
        self._headers = {"x-api-key": self.api_key, "content-type": "application/json", "user-agent": "agentsplit-python/0.1.0"}

    # counters ----------------------------------------------------------------------------------------
    @property
    def dropped(self) -> int:
        """Items dropped because the queue was full (the oldest go first)."""
        return self._delivery.dropped

    @property
    def failed(self) -> int:
        """Items dropped for good: refused by the server (bad input, unknown experiment, 401/403), not
        JSON (a circular reference, NaN), given up after repeated 5xx, queued after or still undelivered
        at close."""
        return self._delivery.failed

    @property
    def refused(self) -> int:
        """The former name of ``failed`` (the same number)."""
        return self._delivery.failed

    @property
    def delivered(self) -> int:
        """Items the server accepted."""
        return self._delivery.delivered

    @property
    def queued(self) -> int:
        """Items waiting (queued or in a batch not yet answered)."""
        d = self._delivery
        with d.lock:
            return len(d.queue) + sum(len(b.items) for b in d.pending) + sum(len(b.items) for b in d.deferred)

    # logging helpers ---------------------------------------------------------------------------------
    def _warn(self, kind: str, msg: str, *args: Any) -> None:
        """A warning at most once per WARN_EVERY seconds per kind (an outage must not flood the log)."""
        now = time.monotonic()
        last = self._warned.get(kind)
        if last is None or now - last >= WARN_EVERY:
            self._warned[kind] = now
            logger.warning(msg, *args)
        else:
            logger.debug(msg, *args)

    def _unexpected(self, what: str, experiment: str) -> None:
        """An exception where none was expected (inside an ``except``): a throttled warning naming it,
        the traceback at debug level only."""
        err = sys.exc_info()[1]
        self._warn("unexpected:" + what, "agentsplit: %s %r failed unexpectedly (%s: %s)", what, experiment, type(err).__name__, err)
        logger.debug("agentsplit: %s %r failed", what, experiment, exc_info=True)

    def _closed_call(self, what: str, experiment: str, count: bool = True) -> None:
        """A call after close(): a warning once per client (then debug); a queued item counts as failed."""
        if count:
            self._delivery.failed += 1
        if not self._closed_logged:
            self._closed_logged = True
            logger.warning("agentsplit: client is closed: %s %r dropped", what, experiment)
        else:
            logger.debug("agentsplit: client is closed: %s %r dropped", what, experiment)

    def _auth_error(self, status: int, data: Any) -> None:
        error = data.get("error") if isinstance(data, dict) else data
        if not self._auth_logged:
            self._auth_logged = True
            logger.error(
                "agentsplit: the server refused the API key with HTTP %d (%s): check api_key and its scopes; "
                "assign answers defaults and results are dropped until it is fixed",
                status,
                error,
            )
        else:
            logger.debug("agentsplit: HTTP %d (%s)", status, error)

    # assign ------------------------------------------------------------------------------------------
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

    # log, track, feedback ----------------------------------------------------------------------------
    def _wake(self) -> None:  # overridden
        pass

    def _management_target(self, method: str, path: str) -> None:
        """Raises when the client cannot make a management call at all (closed, no base_url)."""
        if self._closed:
            raise AgentSplitError(0, "the client is closed", method, path)
        if not self.enabled:
            raise AgentSplitError(0, "no base_url (nor AGENTSPLIT_URL)", method, path)

    def log(
        self,
        experiment: str,
        variant_key: Optional[str] = None,
        assignment_id: Optional[str] = None,
        input: Optional[JsonObject] = None,
        output: Optional[JsonObject] = None,
        metrics: Optional[JsonObject] = None,
        *,
        context: Optional[JsonObject] = None,
        user_id: Optional[str] = None,
        timestamp: Optional[str] = None,
        assignment: Optional[Assignment] = None,
    ) -> None:
        """Queues a result; returns at once and never raises. Without a variant (a default assignment)
        nothing is sent: there is no variant to count it for."""
        try:
            if assignment is not None:
                variant_key = variant_key or assignment.variant
                assignment_id = assignment_id or assignment.assignment_id
                user_id = user_id or assignment.user_id
            if not variant_key:
                logger.debug("agentsplit: no variant (a default assignment) for a result of %r: not sent", experiment)
                return
            if self._closed:
                self._closed_call("result of", experiment)
                return
            if not self.enabled:
                logger.debug("agentsplit: client disabled (no base_url): result of %r not sent", experiment)
                return
            r: JsonObject = {"variantKey": variant_key}
            if input is not None:
                r["input"] = input
            if output is not None:
                r["output"] = output
            if metrics is not None:
                r["metrics"] = metrics
            if context is not None:
                r["context"] = context
            if user_id:
                r["userId"] = user_id
            if assignment_id:
                r["assignmentId"] = assignment_id
            if timestamp is not None:
                r["timestamp"] = timestamp
            if self._delivery.put(("log", experiment, r, time.time())):
                self._wake()
        except Exception:
            self._unexpected("log", experiment)

    def track(self, assignment: Assignment, input: Optional[JsonObject] = None, *, context: Optional[JsonObject] = None) -> Run:
        """``with client.track(a, input=...) as run:`` times the block and logs it (``latency_ms``,
        ``error``, ``run.output``, ``run.metrics``); the block's own exception propagates."""
        return Run(self, assignment, input, context)

    def feedback(
        self,
        experiment: str,
        assignment_id: Optional[str] = None,
        metrics: Optional[JsonObject] = None,
        *,
        log_id: Optional[str] = None,
        comment: Optional[str] = None,
    ) -> None:
        """Queues late feedback (a thumbs-up, a judge's score) on an assignment or a logged result."""
        try:
            if not assignment_id and not log_id:
                logger.debug("agentsplit: feedback on %r without an assignment id (a default assignment): not sent", experiment)
                return
            if not metrics:
                logger.warning("agentsplit: feedback on %r without metrics: not sent", experiment)
                return
            if self._closed:
                self._closed_call("feedback on", experiment)
                return
            if not self.enabled:
                logger.debug("agentsplit: client disabled (no base_url): feedback on %r not sent", experiment)
                return
            body: JsonObject = {"assignmentId": assignment_id} if assignment_id else {"logId": log_id}
            body["metrics"] = metrics
            if comment is not None:
                body["comment"] = comment
            if self._delivery.put(("feedback", experiment, body, time.time())):
                self._wake()
        except Exception:
            self._unexpected("feedback", experiment)


def parse_json(content: bytes) -> Any:
    try:
        return json.loads(content) if content else None
    except ValueError:
        return None
