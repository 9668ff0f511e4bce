"""The asyncio client: the same calls, ``async def`` for assign/flush/close, delivery in an asyncio task.

The client follows the event loop it is used in: used from a new loop (a second ``asyncio.run``), it
makes a new connection pool and worker task there (what was queued is kept). ``log``, ``track`` and ``feedback``
stay plain calls (they only queue). Use ``async with AsyncClient(...) as client:`` or ``await
client.close()``; what is still queued when the process exits without a close is sent by a synchronous
last flush at exit.
"""

from __future__ import annotations

import asyncio
import atexit
import time
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Sequence, Union

import httpx

from . import _datasets, _manage, _run_drivers
from ._core import Assignment, Batch, JsonObject, _ClientBase, assign_body, assign_path, logger, parse_json
from ._datasets import Dataset, DatasetChange, DatasetItem, OfflineRun, RunComparison
from ._manage import AgentSplitError, Analysis, Experiment, Layer, Preview, SavedGroup
from ._runs import DatasetRun, RunOptions, RunProgress


class AsyncClient(_ClientBase):
    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, timeout: float = 2.0, **options: Any) -> None:
        self._transport = options.pop("transport", None)
        super().__init__(base_url, api_key, timeout, **options)
        kw: dict = {"timeout": self.timeout, "headers": self._headers}
        if self._transport is not None:
            kw["transport"] = self._transport
        self._http_options = kw
        self._http = httpx.AsyncClient(base_url=self.base_url or "http://invalid", **kw)
        self._task: Optional[asyncio.Task] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._wake_event: Optional[asyncio.Event] = None
        self._first_fetch: Optional[asyncio.Task] = None  # local mode: the first definitions fetch, awaited by every first caller
        self._flush_requested = False
        self._stop = False
        self._registered = bool(self.flush_at_exit)
        if self._registered:
            atexit.register(self._at_exit)

    async def __aenter__(self) -> "AsyncClient":
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def start(self) -> None:
        """Starts the worker and, in local mode, fetches the definitions once (callers that come while
        it runs wait for the same fetch). Never raises."""
        try:
            if not self.enabled or self._closed:
                return
            self._ensure_worker()
            if self.local:
                f = self._first_fetch
                if f is None:
                    f = self._first_fetch = asyncio.get_running_loop().create_task(self._refresh_definitions())
                if not f.done():
                    await asyncio.shield(f)  # a caller cancelled while waiting does not cancel the fetch
        except asyncio.CancelledError:
            raise
        except Exception:
            self._unexpected("start", "")

    def _bind(self) -> None:
        """Follows the running event loop: on a loop other than the one the connections and the worker
        were made in (a second asyncio.run), makes them afresh in this one. The queue is kept."""
        loop = asyncio.get_running_loop()
        old = self._loop
        if old is loop:
            return
        self._loop = loop
        if old is None:
            return
        logger.debug("agentsplit: AsyncClient used from a new event loop: new connections and worker there")
        self._http = httpx.AsyncClient(base_url=self.base_url or "http://invalid", **self._http_options)
        self._task = None
        self._wake_event = None
        f = self._first_fetch
        if f is not None and not (f.done() and not f.cancelled()):
            self._first_fetch = None  # cut off with its loop: fetched again

    # assign ----------------------------------------------------------------------------------------
    async def assign(
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
            if self._loop is not asyncio.get_running_loop() or self._task is None or self._task.done():
                self._ensure_worker()
            if self.local:
                f = self._first_fetch
                if f is None or not f.done():
                    await self.start()
                return self._assign_local(experiment, user_id, context, default)
            if self._bad_user_id_remote(experiment, user_id):
                return self._default(experiment, user_id, default)
            try:
                r = await self._http.post(assign_path(experiment), content=assign_body(user_id, context))
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

    def log(self, experiment: str, *args: Any, **kwargs: Any) -> None:
        self._ensure_worker()
        super().log(experiment, *args, **kwargs)

    def feedback(self, experiment: str, *args: Any, **kwargs: Any) -> None:
        self._ensure_worker()
        super().feedback(experiment, *args, **kwargs)

    # management and reading (these raise AgentSplitError) ----------------------------------------
    async def create_experiment(self, **fields: Any) -> Experiment:
        """POST /experiments (an admin key, or the root key); see ``Client.create_experiment``."""
        return await self._manage(_manage.create_request(fields))

    async def get_experiment(self, slug: str) -> Experiment:
        """GET /experiment/:slug (a read or admin key)."""
        return await self._manage(_manage.get_request(slug))

    async def update_experiment(self, slug: str, **fields: Any) -> Experiment:
        """PATCH /experiment/:slug (admin)."""
        return await self._manage(_manage.update_request(slug, fields))

    async def analysis(self, slug: str, **params: Any) -> Analysis:
        """GET /experiment/:slug/analysis (a read or admin key), its ``verdict`` first."""
        return _manage.verdict_first(await self._manage(_manage.analysis_request(slug, params)))

    # saved groups, layers, preview (ADR 0038) ----------------------------------------------------
    async def put_group(self, key: str, values: Any, description: Optional[str] = None) -> SavedGroup:
        """PUT /groups/:key (admin): saves the group's ids (up to 100,000 strings or numbers), replacing them."""
        return await self._manage(_manage.put_group_request(key, values, description))

    async def list_groups(self) -> Dict[str, Any]:
        """GET /groups (a read or admin key): ``{"groups": [SavedGroupSummary, ...]}`` by key, without values."""
        return await self._manage(_manage.list_groups_request())

    async def get_group(self, key: str) -> SavedGroup:
        """GET /groups/:key (a read or admin key)."""
        return await self._manage(_manage.get_group_request(key))

    async def delete_group(self, key: str) -> None:
        """DELETE /groups/:key (admin); 409 while a non-archived experiment uses the group."""
        await self._manage(_manage.delete_group_request(key))

    async def get_layer(self, key: str) -> Layer:
        """GET /layers/:key: the experiments using the layer and its free ranges."""
        return await self._manage(_manage.layer_request(key))

    async def preview(self, slug: str, user_id: str, context: Optional[JsonObject] = None) -> Preview:
        """POST /experiment/:slug/preview: what assign would answer ``user_id`` (any status), recording
        nothing: ``variant``, ``payload``, ``inExperiment``, ``reason`` and the deciding clause, ``explanation``."""
        return await self._manage(_manage.preview_request(slug, user_id, context))

    # datasets and offline runs (issue 40; these raise AgentSplitError): see Client ---------------------
    async def create_dataset(self, name: str, items: Iterable[Mapping[str, Any]], description: Optional[str] = None) -> Dataset:
        return await self._manage(_datasets.create_dataset_request(name, items, description))

    async def add_items(self, name: str, items: Iterable[Mapping[str, Any]]) -> DatasetChange:
        return await self._manage(_datasets.add_items_request(name, items))

    async def list_datasets(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        return await self._manage(_datasets.list_datasets_request(limit, cursor))

    async def get_dataset(self, name: str) -> Dataset:
        return await self._manage(_datasets.get_dataset_request(name))

    async def open_run(self, experiment: str, dataset: str, version: Optional[int] = None, variants: Optional[Sequence[str]] = None,
                       trials: Optional[int] = None) -> OfflineRun:
        return await self._manage(_datasets.open_run_request(experiment, dataset, version, variants, trials))

    async def get_run(self, run_id: str) -> OfflineRun:
        return await self._manage(_datasets.get_run_request(run_id))

    async def list_runs(self, experiment: str, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        return await self._manage(_datasets.list_runs_request(experiment, limit, cursor))

    async def run_comparison(self, run_id: str, control: Optional[str] = None, alpha: Optional[float] = None,
                             metrics: Union[None, str, Sequence[str]] = None) -> RunComparison:
        return await self._manage(_datasets.comparison_request(run_id, control, alpha, metrics))

    async def run_dataset(self, experiment: str, dataset: str, fn: Callable[[Any, DatasetItem], Any], trials: int = 1,
                          concurrency: int = 8, *, version: Optional[int] = None, variants: Optional[Sequence[str]] = None,
                          retries: int = 2, backoff: float = 0.2, log_retries: int = 5,
                          progress: Union[bool, Callable[[RunProgress], Any]] = True, control: Optional[str] = None,
                          alpha: Optional[float] = None, metrics: Union[None, str, Sequence[str]] = None) -> DatasetRun:
        """``Client.run_dataset`` in this loop: at most ``concurrency`` pairs at once (an asyncio semaphore); a
        coroutine function is awaited, a plain function runs in a pool of ``concurrency`` threads."""
        o = RunOptions(trials, concurrency, version, variants, retries, backoff, log_retries, progress, control, alpha, metrics)
        return await _run_drivers.run_async(self, experiment, dataset, fn, o)

    async def _manage(self, request: _manage.Request) -> Any:
        method, path, body, expected = request
        self._management_target(method, path)
        self._bind()  # the connections of the running event loop
        try:
            r = await self._http.request(method, path, content=body, timeout=self.management_timeout)
        except httpx.HTTPError as err:
            raise AgentSplitError(0, "%s: %s" % (type(err).__name__, err), method, path) from err
        return _manage.answer(method, path, r.status_code, parse_json(r.content), expected)

    # flush and close -------------------------------------------------------------------------------
    async def flush(self, timeout: Optional[float] = None) -> bool:
        """Sends everything queued and waits for the answers, at most ``timeout`` seconds. True once
        nothing is left to send (each item committed, or refused for good and counted in ``failed``),
        False when the timeout passed first. Never raises."""
        try:
            self._ensure_worker()
            if self._task is None or self._task.done():
                return self._delivery.idle()
            deadline = time.monotonic() + (self.flush_timeout if timeout is None else timeout)
            self._flush_requested = True
            self._delivery.hurry()
            self._wake()
            while not self._delivery.idle():
                if time.monotonic() >= deadline:
                    logger.warning("agentsplit: flush timed out with %d item(s) still queued", self.queued)
                    return False
                await asyncio.sleep(0.01)
            return True
        except Exception:
            logger.warning("agentsplit: flush failed", exc_info=True)
            return False

    async def close(self, timeout: Optional[float] = None) -> int:
        """Flushes (at most ``timeout`` seconds), then ends all work: the worker task sends nothing more
        (a request in flight is waited for, at most the client's ``timeout`` + 1 s, then cancelled),
        nothing is retried after close returns. Returns how many items were not delivered (0: all were),
        said as "closed with N item(s) not delivered" and counted in ``failed``. Never raises."""
        try:
            if self._closed:
                return 0
            await self.flush(timeout)
            self._closed = True
            self._stop = True
            self._wake()
            if self._task is not None and not self._task.done():
                try:
                    await asyncio.wait_for(self._task, self.timeout + 1.0)
                except (asyncio.TimeoutError, asyncio.CancelledError):
                    pass
            n = self._delivery.discard()
            if n:
                logger.warning("agentsplit: closed with %d item(s) not delivered (counted in failed)", n)
            await self._http.aclose()
            if self._registered:
                atexit.unregister(self._at_exit)
                self._registered = False
            return n
        except Exception:
            logger.warning("agentsplit: close failed", exc_info=True)
            return self.queued

    def _at_exit(self) -> None:
        """The loop is gone at exit: send what is left with a synchronous connection."""
        self._registered = False
        try:
            if self._closed or not self.enabled or self._delivery.idle():
                return
            drain_sync(self, self.flush_timeout)
        except Exception:
            logger.debug("agentsplit: exit flush failed", exc_info=True)

    # the worker ------------------------------------------------------------------------------------
    def _ensure_worker(self) -> None:
        if self._closed or not self.enabled:
            return
        try:
            self._bind()
        except RuntimeError:
            return  # no running loop: started at the first call made inside one
        if self._task is not None and not self._task.done():
            return
        loop = self._loop
        assert loop is not None
        self._wake_event = asyncio.Event()
        self._task = loop.create_task(self._run())

    def _wake(self) -> None:
        ev, loop = self._wake_event, self._loop
        if ev is None or loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            ev.set()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(ev.set)

    async def _refresh_definitions(self) -> None:
        try:
            r = await self._http.get("/experiments/definitions", headers=self._definitions_headers())
            self._apply_definitions(r.status_code, r.headers, parse_json(r.content) if r.status_code == 200 else None)
        except Exception as err:
            self._warn("defs", "agentsplit: fetching definitions failed (%s: %s): keeping the %d we have", type(err).__name__, err, len(self._defs))

    async def _send(self, b: Batch) -> None:
        try:
            r = await self._http.post(b.path(), content=b.content(), headers={"idempotency-key": b.key})
        except Exception as err:
            self._delivery.on_error(b, err)
            return
        self._delivery.on_response(b, r.status_code, r.headers, parse_json(r.content), self._auth_error)

    async def _run(self) -> None:
        d = self._delivery
        ev = self._wake_event
        assert ev is not None
        next_tick = time.monotonic() + self.flush_interval
        next_refresh = time.monotonic() + self.refresh_interval
        while True:
            try:
                ev.clear()
                now = time.monotonic()
                if self.local and self._first_fetch is not None and self._first_fetch.done() and now >= next_refresh and not self._stop:
                    await self._refresh_definitions()
                    next_refresh = time.monotonic() + self.refresh_interval
                wait: Optional[float] = None
                now = time.monotonic()
                if self._flush_requested or self._stop or now >= next_tick or len(d.queue) >= d.batch_size or d.pending:
                    self._flush_requested = False
                    while not self._stop:  # closing: nothing more is sent
                        b, wait = d.next_ready(time.monotonic())
                        if b is None:
                            break
                        await self._send(b)
                    if now >= next_tick:
                        next_tick = now + self.flush_interval
                if self._stop:
                    return
                now = time.monotonic()
                timeout = next_tick - now
                if wait is not None:
                    timeout = min(timeout, wait)
                if self.local:
                    timeout = min(timeout, next_refresh - now)
                if timeout > 0:
                    try:
                        await asyncio.wait_for(ev.wait(), timeout)
                    except asyncio.TimeoutError:
                        pass
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("agentsplit: delivery worker error", exc_info=True)
                await asyncio.sleep(0.1)


def drain_sync(client: _ClientBase, timeout: float) -> None:
    """Delivers what ``client`` holds with a fresh synchronous connection, for at most ``timeout`` s."""
    d = client._delivery
    deadline = time.monotonic() + timeout
    d.hurry()
    with httpx.Client(base_url=client.base_url, timeout=client.timeout, headers=client._headers) as http:
        while time.monotonic() < deadline:
            b, wait = d.next_ready(time.monotonic())
            if b is None:
                if wait is None:
                    return
                time.sleep(min(wait, max(0.0, deadline - time.monotonic())))
                continue
            try:
                r = http.post(b.path(), content=b.content(), headers={"idempotency-key": b.key})
            except Exception as err:
                d.on_error(b, err)
                continue
            d.on_response(b, r.status_code, r.headers, parse_json(r.content), client._auth_error)
    if not d.idle():
        logger.warning("agentsplit: exit flush timed out with %d item(s) not delivered", client.queued)
