"""The synchronous client: calls from any thread, delivery in a daemon thread, a flush at exit."""

from __future__ import annotations

import atexit
import os
import threading
import time
import weakref
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Sequence, Union

import httpx

from . import _datasets, _manage, _run_drivers
from ._core import Assignment, Batch, JsonObject, _ClientBase, assign_body, assign_path, logger, parse_json
from ._datasets import Dataset, DatasetChange, DatasetItem, OfflineRun, RunComparison
from ._manage import AgentSplitError, Analysis, Experiment, Layer, Preview, SavedGroup
from ._runs import DatasetRun, RunOptions, RunProgress


class Client(_ClientBase):
    """``Client(base_url, api_key, timeout=2.0, local=False, ...)``; see the package's README for options.

    ``assign``, ``log``, ``track``, ``feedback``, ``flush`` and ``close`` never raise. The management and
    reading calls (``create_experiment``, ``get_experiment``, ``update_experiment``, ``analysis``) do:
    ``AgentSplitError`` with ``status`` and the server's ``error``.
    """

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, timeout: float = 2.0, **options: Any) -> None:
        transport = options.pop("transport", None)
        super().__init__(base_url, api_key, timeout, **options)
        kw: dict = {"timeout": self.timeout, "headers": self._headers}
        if transport is not None:
            kw["transport"] = transport
        self._http_options = kw
        # One connection pool for the callers' assigns, one for the worker (a slow batch never holds an assign).
        self._http = httpx.Client(base_url=self.base_url or "http://invalid", **kw)
        self._worker_http = httpx.Client(base_url=self.base_url or "http://invalid", **kw)
        self._wake_event = threading.Event()
        self._flush_requested = False
        self._stop = False
        self._idle_cond = threading.Condition()
        self._thread: Optional[threading.Thread] = None
        if self.enabled and self.local:
            self._refresh_definitions()  # the first fetch, bounded by timeout; a failure leaves defaults
        self._start_worker()
        if hasattr(os, "register_at_fork"):
            ref = weakref.ref(self)

            def after_fork_in_child() -> None:
                c = ref()
                if c is not None:
                    c._after_fork()

            os.register_at_fork(after_in_child=after_fork_in_child)
        self._registered = bool(self.flush_at_exit)
        if self._registered:
            atexit.register(self._at_exit)

    # context manager -------------------------------------------------------------------------------
    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # assign ----------------------------------------------------------------------------------------
    def assign(
        self,
        experiment: str,
        user_id: str,
        context: Optional[JsonObject] = None,
        default: Any = None,
    ) -> Assignment:
        """The variant ``user_id`` gets; the ``default`` payload (source "default") on any failure. Never raises."""
        try:
            if self._closed:
                self._closed_call("assign of", experiment, count=False)
                return self._default(experiment, user_id, default)
            if not self.enabled:
                return self._default(experiment, user_id, default)
            if self.local:
                return self._assign_local(experiment, user_id, context, default)
            if self._bad_user_id_remote(experiment, user_id):
                return self._default(experiment, user_id, default)
            try:
                r = self._http.post(assign_path(experiment), content=assign_body(user_id, context))
            except httpx.TimeoutException:
                self._warn("assign-timeout", "agentsplit: assign %r timed out after %.1f s: default", experiment, self.timeout)
                return self._default(experiment, user_id, default)
            except httpx.HTTPError as err:
                self._warn("assign-network", "agentsplit: assign %r failed (%s: %s): default", experiment, type(err).__name__, err)
                return self._default(experiment, user_id, default)
            return self._assign_answer(experiment, user_id, default, r.status_code, parse_json(r.content))
        except Exception:
            self._unexpected("assign", experiment)
            return self._default(experiment, user_id, default)

    # management and reading (these raise AgentSplitError) ----------------------------------------
    def create_experiment(self, **fields: Any) -> Experiment:
        """POST /experiments (an admin key, or the root key): ``slug``, ``variants`` and the rest as the
        API names them (``status``, ``assignment``, ``metrics``, ...). Answers the experiment as created."""
        return self._manage(_manage.create_request(fields))

    def get_experiment(self, slug: str) -> Experiment:
        """GET /experiment/:slug (a read or admin key)."""
        return self._manage(_manage.get_request(slug))

    def update_experiment(self, slug: str, **fields: Any) -> Experiment:
        """PATCH /experiment/:slug (admin): ``status``, ``variants``, ``metrics``, ``name``, ``description``."""
        return self._manage(_manage.update_request(slug, fields))

    def analysis(self, slug: str, **params: Any) -> Analysis:
        """GET /experiment/:slug/analysis (a read or admin key), its ``verdict`` first. ``params``: the API's
        options (``method``, ``metrics`` as a list, ``control``, ``alpha``, ``sided``, ``correction``,
        ``version``, ``n_star``)."""
        return _manage.verdict_first(self._manage(_manage.analysis_request(slug, params)))

    # saved groups, layers, preview (ADR 0038) ----------------------------------------------------
    def put_group(self, key: str, values: Any, description: Optional[str] = None) -> SavedGroup:
        """PUT /groups/:key (admin): saves the group's ids (up to 100,000 strings or numbers), replacing them."""
        return self._manage(_manage.put_group_request(key, values, description))

    def list_groups(self) -> Dict[str, Any]:
        """GET /groups (a read or admin key): ``{"groups": [SavedGroupSummary, ...]}`` by key, without values."""
        return self._manage(_manage.list_groups_request())

    def get_group(self, key: str) -> SavedGroup:
        """GET /groups/:key (a read or admin key)."""
        return self._manage(_manage.get_group_request(key))

    def delete_group(self, key: str) -> None:
        """DELETE /groups/:key (admin); 409 while a non-archived experiment uses the group."""
        self._manage(_manage.delete_group_request(key))

    def get_layer(self, key: str) -> Layer:
        """GET /layers/:key: the experiments using the layer and its free ranges."""
        return self._manage(_manage.layer_request(key))

    def preview(self, slug: str, user_id: str, context: Optional[JsonObject] = None) -> Preview:
        """POST /experiment/:slug/preview: what assign would answer ``user_id`` (any status), recording
        nothing: ``variant``, ``payload``, ``inExperiment``, ``reason`` and the deciding clause, ``explanation``."""
        return self._manage(_manage.preview_request(slug, user_id, context))

    # datasets and offline runs (issue 40; these raise AgentSplitError) --------------------------------
    def create_dataset(self, name: str, items: Iterable[Mapping[str, Any]], description: Optional[str] = None) -> Dataset:
        """POST /datasets (admin, for every experiment): version 1 with ``items`` ``{id?, input, expected?, metadata?}``."""
        return self._manage(_datasets.create_dataset_request(name, items, description))

    def add_items(self, name: str, items: Iterable[Mapping[str, Any]]) -> DatasetChange:
        """POST /datasets/:name/items (admin): new ids add, known ids change; a new version when anything changed."""
        return self._manage(_datasets.add_items_request(name, items))

    def list_datasets(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        """GET /datasets: a page, ``{"datasets": [Dataset, ...], "nextCursor": ...}``, oldest first."""
        return self._manage(_datasets.list_datasets_request(limit, cursor))

    def get_dataset(self, name: str) -> Dataset:
        """GET /datasets/:name: its current version and item count."""
        return self._manage(_datasets.get_dataset_request(name))

    def open_run(self, experiment: str, dataset: str, version: Optional[int] = None, variants: Optional[Sequence[str]] = None,
                 trials: Optional[int] = None) -> OfflineRun:
        """POST /experiment/:slug/runs (a log key): ``variants`` (default all) over a dataset ``version`` (default the newest)."""
        return self._manage(_datasets.open_run_request(experiment, dataset, version, variants, trials))

    def get_run(self, run_id: str) -> OfflineRun:
        """GET /runs/:id."""
        return self._manage(_datasets.get_run_request(run_id))

    def list_runs(self, experiment: str, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        """GET /experiment/:slug/runs: one page, ``{"runs": [OfflineRun, ...], "nextCursor": ...}``, newest first."""
        return self._manage(_datasets.list_runs_request(experiment, limit, cursor))

    def run_comparison(self, run_id: str, control: Optional[str] = None, alpha: Optional[float] = None,
                       metrics: Union[None, str, Sequence[str]] = None) -> RunComparison:
        """GET /runs/:id/comparison: every variant against ``control`` (default the run's first), item by item."""
        return self._manage(_datasets.comparison_request(run_id, control, alpha, metrics))

    def run_dataset(
        self,
        experiment: str,
        dataset: str,
        fn: Callable[[Any, DatasetItem], Any],
        trials: int = 1,
        concurrency: int = 8,
        *,
        version: Optional[int] = None,
        variants: Optional[Sequence[str]] = None,
        retries: int = 2,
        backoff: float = 0.2,
        log_retries: int = 5,
        progress: Union[bool, Callable[[RunProgress], Any]] = True,
        control: Optional[str] = None,
        alpha: Optional[float] = None,
        metrics: Union[None, str, Sequence[str]] = None,
    ) -> DatasetRun:
        """Opens a run and calls ``fn(payload, item)`` for every variant x item x trial in ``concurrency``
        threads, logs each outcome, and answers ``DatasetRun(run, comparison, failures, logged)`` (README:
        "Offline runs"). Only the setup calls raise (AgentSplitError): a failing pair is in ``failures``."""
        o = RunOptions(trials, concurrency, version, variants, retries, backoff, log_retries, progress, control, alpha, metrics)
        return _run_drivers.run_sync(self, experiment, dataset, fn, o)

    def _manage(self, request: _manage.Request) -> Any:
        method, path, body, expected = request
        self._management_target(method, path)
        try:
            r = self._http.request(method, path, content=body, timeout=self.management_timeout)
        except httpx.HTTPError as err:
            raise AgentSplitError(0, "%s: %s" % (type(err).__name__, err), method, path) from err
        return _manage.answer(method, path, r.status_code, parse_json(r.content), expected)

    # flush and close -------------------------------------------------------------------------------
    def flush(self, timeout: Optional[float] = None) -> bool:
        """Sends everything queued and waits for the answers, at most ``timeout`` seconds (default
        ``flush_timeout``). True once nothing is left to send: every item committed (``delivered``) or
        refused by the server for good (``failed``); False when the timeout passed first (``queued`` items
        still wait, and are still retried). Never raises."""
        try:
            if self._thread is None or not self._thread.is_alive():
                return self._delivery.idle()
            deadline = time.monotonic() + (self.flush_timeout if timeout is None else timeout)
            self._flush_requested = True
            self._delivery.hurry()
            self._wake_event.set()
            with self._idle_cond:
                while not self._delivery.idle():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        logger.warning("agentsplit: flush timed out with %d item(s) still queued", self.queued)
                        return False
                    self._idle_cond.wait(min(left, 0.1))
            return True
        except Exception:
            logger.warning("agentsplit: flush failed", exc_info=True)
            return False

    def close(self, timeout: Optional[float] = None) -> int:
        """Flushes (at most ``timeout`` seconds), then ends all work: the worker sends nothing more (a
        request in flight is waited for, at most ``timeout`` of the client + 1 s), nothing is retried
        after close returns, and the connections are closed. Returns how many items were not delivered
        (0: all were), said as "closed with N item(s) not delivered" and counted in ``failed``. Never raises."""
        try:
            if self._closed:
                return 0
            self.flush(timeout)
            self._closed = True
            self._stop = True
            self._wake_event.set()
            if self._thread is not None:
                self._thread.join(timeout=self.timeout + 1.0)
            n = self._delivery.discard()
            if n:
                logger.warning("agentsplit: closed with %d item(s) not delivered (counted in failed)", n)
            self._http.close()
            self._worker_http.close()
            if self._registered:
                atexit.unregister(self._at_exit)
                self._registered = False
            return n
        except Exception:
            logger.warning("agentsplit: close failed", exc_info=True)
            return self.queued

    def _at_exit(self) -> None:
        self._registered = False
        self.close()

    # the worker ------------------------------------------------------------------------------------
    def _start_worker(self) -> None:
        if self.enabled and not self._closed:
            self._thread = threading.Thread(target=self._run, name="agentsplit-delivery", daemon=True)
            self._thread.start()

    def _after_fork(self) -> None:
        """In a forked child: the worker thread is gone, connections and locks are the parent's. Start
        afresh with an empty queue (the parent delivers what it had queued)."""
        try:
            base = self.base_url or "http://invalid"
            self._http = httpx.Client(base_url=base, **self._http_options)
            self._worker_http = httpx.Client(base_url=base, **self._http_options)
            d = self._delivery
            d.lock = threading.Lock()
            d.queue.clear()
            d.pending.clear()
            del d.deferred[:]
            self._wake_event = threading.Event()
            self._idle_cond = threading.Condition()
            self._flush_requested = False
            self._start_worker()
        except Exception:
            logger.warning("agentsplit: could not restart after fork", exc_info=True)

    def _wake(self) -> None:
        if not self._wake_event.is_set():
            self._wake_event.set()

    def _refresh_definitions(self) -> None:
        try:
            r = self._worker_http.get("/experiments/definitions", headers=self._definitions_headers())
            self._apply_definitions(r.status_code, r.headers, parse_json(r.content) if r.status_code == 200 else None)
        except Exception as err:
            self._warn("defs", "agentsplit: fetching definitions failed (%s: %s): keeping the %d we have", type(err).__name__, err, len(self._defs))

    def _send(self, b: Batch) -> None:
        try:
            r = self._worker_http.post(b.path(), content=b.content(), headers={"idempotency-key": b.key})
        except Exception as err:
            self._delivery.on_error(b, err)
            return
        self._delivery.on_response(b, r.status_code, r.headers, parse_json(r.content), self._auth_error)

    def _run(self) -> None:
        d = self._delivery
        next_tick = time.monotonic() + self.flush_interval
        next_refresh = time.monotonic() + self.refresh_interval
        while True:
            try:
                self._wake_event.clear()  # before reading the flags: a wake after this is never lost
                now = time.monotonic()
                if self.local and now >= next_refresh and not self._stop:
                    self._refresh_definitions()
                    next_refresh = time.monotonic() + self.refresh_interval
                wait: Optional[float] = None
                now = time.monotonic()
                if self._flush_requested or self._stop or now >= next_tick or len(d.queue) >= d.batch_size or d.pending:
                    self._flush_requested = False
                    while not self._stop:  # closing: nothing more is sent
                        b, wait = d.next_ready(time.monotonic())
                        if b is None:
                            break
                        self._send(b)
                    if now >= next_tick:
                        next_tick = now + self.flush_interval
                with self._idle_cond:
                    self._idle_cond.notify_all()
                if self._stop:
                    return
                now = time.monotonic()
                timeout = next_tick - now
                if wait is not None:
                    timeout = min(timeout, wait)
                if self.local:
                    timeout = min(timeout, next_refresh - now)
                if timeout > 0:
                    self._wake_event.wait(timeout)
            except Exception:  # the worker must outlive anything
                logger.warning("agentsplit: delivery worker error", exc_info=True)
                time.sleep(0.1)
