"""The bounded queue and the batches made from it, sans I/O: what the sync and async clients' workers send,
in which order, and what each answer does to it (retries, backoff, splitting, dropping). The items' JSON and
the batches themselves are in _batch.py."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import deque
from typing import Any, Deque, Dict, List, Mapping, Optional, Tuple

from ._batch import _KIND_NAME, _KIND_ORDER, MAX_HARD_ATTEMPTS, Batch, Item, encode_items, iso, retry_after_seconds  # noqa: F401 (iso: re-exported)

logger = logging.getLogger("agentsplit")


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
