"""What the sync and async clients share: configuration, counters, warnings, log, track and feedback (the
assign half, the local draw among it, is in _assigning.py; assignments and runs in _assignment.py). The queue
and its batches are in _delivery.py, the definitions and who enters in _entry.py; the clients add only the
transport and the background worker."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict, Optional

from ._assigning import MAX_USER_ID, _Assigning, assign_body, assign_path  # noqa: F401 (MAX_USER_ID, assign_body, assign_path: re-exported)
from ._assignment import Assignment, JsonObject, Run, logger
from ._delivery import Batch, Delivery, iso, retry_after_seconds  # noqa: F401 (Batch, iso, retry_after_seconds: re-exported)
from ._entry import Definition  # noqa: F401 (Definition: re-exported)
from ._manage import AgentSplitError

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


# --- the shared client ---------------------------------------------------------------------------------


class _ClientBase(_Assigning):
    """Configuration, log/track/feedback, and (from ``_Assigning``) the local draw. Subclasses add the
    transport and the worker."""

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
