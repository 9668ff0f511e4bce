"""The I/O of ``run_dataset``: the steps of _runs.py driven by threads (the sync ``Client``) or by asyncio
tasks under a semaphore (``AsyncClient``). Setup failures raise ``AgentSplitError`` (from ``_manage``);
nothing else does."""

from __future__ import annotations

import asyncio
import inspect
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, as_completed, wait
from typing import Any, Callable, Generator, Set, Tuple

from ._core import parse_json
from ._runs import CALL, SLEEP, DatasetRun, Outcome, Pair, Plan, Reply, RunOptions, Tally, log_error, log_reply, setup_steps


def _check(fn: Any) -> None:
    if not callable(fn):
        raise TypeError("run_dataset: fn must be callable as fn(payload, item), got %s" % type(fn).__name__)


def _closed(path: str) -> Reply:
    """A log after the client was closed: a failure of the pair at once (status 0 is never retried)."""
    return 0, 0.0, "POST %s failed: the client is closed" % path, None


# --- the sync client: threads ------------------------------------------------------------------------------


def _drive(steps: Generator[Any, Any, Any], handle: Callable[[Any], Any]) -> Any:
    reply = None
    while True:
        try:
            step = steps.send(reply)
        except StopIteration as stop:
            return stop.value
        reply = handle(step)


def _pair_sync(client: Any, plan: Plan, fn: Callable[..., Any], pair: Pair) -> Tuple[Pair, Outcome]:
    def handle(step: Tuple[Any, ...]) -> Any:
        if step[0] == CALL:
            try:
                return True, fn(pair.payload, pair.item)
            except Exception as err:
                return False, err
        if step[0] == SLEEP:
            time.sleep(step[1])
            return None
        _, path, body, key = step
        if client._closed:
            return _closed(path)
        try:
            r = client._http.post(path, content=body, headers={"idempotency-key": key}, timeout=client.management_timeout)
        except Exception as err:
            return log_error(path, err)
        return log_reply(path, r.status_code, r.headers, parse_json(r.content))

    return pair, _drive(plan.steps(pair), handle)


def run_sync(client: Any, experiment: str, dataset: str, fn: Any, o: RunOptions) -> DatasetRun:
    """At most ``concurrency`` pairs (fn and its log) at once, each in a thread; progress is reported
    from the caller's thread."""
    _check(fn)
    plan: Plan = _drive(setup_steps(experiment, dataset, o), client._manage)
    tally = Tally(plan, o.progress)
    width = o.width
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="agentsplit-run") as pool:
        running: Set[Any] = set()
        for pair in plan.pairs():
            if len(running) >= width:
                finished, pending = wait(running, return_when=FIRST_COMPLETED)
                running = set(pending)
                for f in finished:
                    tally.add(*f.result())
            running.add(pool.submit(_pair_sync, client, plan, fn, pair))
        for f in as_completed(running):
            tally.add(*f.result())
    return tally.result(client._manage(plan.comparison))


# --- the async client: tasks under a semaphore -------------------------------------------------------------


async def _drive_async(steps: Generator[Any, Any, Any], handle: Callable[[Any], Any]) -> Any:
    reply = None
    while True:
        try:
            step = steps.send(reply)
        except StopIteration as stop:
            return stop.value
        reply = await handle(step)


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


async def run_async(client: Any, experiment: str, dataset: str, fn: Any, o: RunOptions) -> DatasetRun:
    """A coroutine function is awaited in the loop; a plain function runs in a pool of ``concurrency``
    threads (a blocking call does not stall the others), and an awaitable it returns is awaited."""
    _check(fn)
    plan: Plan = await _drive_async(setup_steps(experiment, dataset, o), client._manage)
    tally = Tally(plan, o.progress)
    width = o.width
    loop = asyncio.get_running_loop()
    direct = _is_async(fn)
    pool = None if direct else ThreadPoolExecutor(max_workers=width, thread_name_prefix="agentsplit-run")
    semaphore = asyncio.Semaphore(width)
    tasks: Set["asyncio.Task[None]"] = set()

    async def call(pair: Pair) -> Any:
        if direct:
            return await fn(pair.payload, pair.item)
        value = await loop.run_in_executor(pool, fn, pair.payload, pair.item)
        return (await value) if inspect.isawaitable(value) else value

    async def handle(pair: Pair, step: Tuple[Any, ...]) -> Any:
        if step[0] == CALL:
            try:
                return True, await call(pair)
            except Exception as err:
                return False, err
        if step[0] == SLEEP:
            await asyncio.sleep(step[1])
            return None
        _, path, body, key = step
        if client._closed:
            return _closed(path)
        try:
            r = await client._http.post(path, content=body, headers={"idempotency-key": key}, timeout=client.management_timeout)
        except Exception as err:
            return log_error(path, err)
        return log_reply(path, r.status_code, r.headers, parse_json(r.content))

    async def one(pair: Pair) -> None:
        try:
            tally.add(pair, await _drive_async(plan.steps(pair), lambda step: handle(pair, step)))
        finally:
            semaphore.release()

    try:
        for pair in plan.pairs():
            await semaphore.acquire()
            task = loop.create_task(one(pair))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*list(tasks))
    finally:
        for task in list(tasks):
            task.cancel()  # only when the run itself was cancelled: a finished task ignores it
        if pool is not None:
            pool.shutdown(wait=False)
    return tally.result(await client._manage(plan.comparison))
