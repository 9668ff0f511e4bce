"""What the sync and async clients share: assignments, runs, configuration, the local draw, log, track and
feedback. The queue and its batches are in _delivery.py, the definitions and who enters in _entry.py; the
clients add only the transport and the background worker."""

from __future__ import annotations

import json
import logging
import os
import random
import re
import sys
import time
from array import array
from base64 import b64encode
from zlib import crc32
from urllib.parse import quote
from typing import Any, Dict, Mapping, Optional

from ._delivery import Batch, Delivery, iso, retry_after_seconds  # noqa: F401 (Batch, iso, retry_after_seconds: re-exported)
from ._entry import Definition, compile_definitions  # noqa: F401 (Definition: re-exported)
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


def assign_path(slug: str) -> str:
    return "/experiment/%s/assign" % quote(slug, safe="")


def assign_body(user_id: str, context: Optional[JsonObject]) -> bytes:
    """The body of a remote assign. Raises on a context JSON cannot hold (the caller answers the default)."""
    body: JsonObject = {"userId": user_id}
    if context is not None:
        body["context"] = context
    return json.dumps(body, default=str, separators=(",", ":"), allow_nan=False).encode("utf-8")


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
