"""``run_dataset`` (issue 40; the TypeScript client's ``runDataset`` has the same contract): open a run, read
the experiment's payloads and every item of the run's dataset version, call ``fn(payload, item)`` for every
variant x item x trial, at most ``concurrency`` at a time, log each outcome with its runId, itemId and trial,
then answer the run's comparison.

The policy is written once here, as generators of steps: ``setup_steps`` yields the management requests
(their failures raise ``AgentSplitError``), ``Plan.steps`` yields for one pair "call fn", "sleep" and "post
this log" and ends with the pair's outcome (what fn's return means, what is retried, the Idempotency-Key);
``Tally`` counts and reports progress. _run_drivers.py does the I/O: threads for the sync ``Client``,
asyncio tasks under a semaphore for ``AsyncClient``."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Generator, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _datasets, _manage
from ._assignment import logger
from ._batch import retry_after_seconds
from ._datasets import OfflineRun, RunComparison
from ._manage import AgentSplitError


@dataclass(frozen=True)
class RunProgress:
    """What a ``progress`` callable receives after every pair: pairs ``done`` (logged or failed) of ``total``."""

    done: int
    total: int
    failed: int


@dataclass(frozen=True)
class RunFailure:
    """A pair that was not logged: fn raised on every attempt (``attempts`` = 1 + retries), returned
    something that cannot be logged, or its log was refused (or still failing after its retries)."""

    variant: str
    item_id: str
    trial: int
    error: str  # "ValueError: ..." for fn's exception; "POST /experiment/x/log answered 400: ..." for a log
    attempts: int  # fn's attempts


@dataclass
class DatasetRun:
    """What ``run_dataset`` answers once every pair is done: the run, the server's comparison of it, the
    failures (in the order the pairs were made) and how many results were logged."""

    run: OfflineRun
    comparison: RunComparison
    failures: List[RunFailure]
    logged: int


Progress = Union[bool, None, Callable[[RunProgress], Any]]


@dataclass
class RunOptions:
    """``run_dataset``'s options (the README's "Offline runs" says what each does)."""

    trials: int = 1
    concurrency: int = 8
    version: Optional[int] = None
    variants: Optional[Sequence[str]] = None
    retries: int = 2
    backoff: float = 0.2
    log_retries: int = 5
    progress: Progress = True
    control: Optional[str] = None
    alpha: Optional[float] = None
    metrics: Union[None, str, Sequence[str]] = None

    @property
    def width(self) -> int:
        return max(1, int(self.concurrency))
# a pair's outcome: (its failure or None when logged, the server's warning on the logged result or None)
Outcome = Tuple[Optional[RunFailure], Optional[str]]
Reply = Tuple[Optional[int], float, str, Optional[str]]  # a log's (status or None, Retry-After, error, warning)

CALL, SLEEP, POST = "call", "sleep", "post"
RETRY_AFTER_MAX = 30.0
# The server's Idempotency-Key: 1-255 printable ASCII characters, without '"' and '\'.
_KEY = re.compile(r'^[\x20\x21\x23-\x5b\x5d-\x7e]{1,255}$')


class _BadReturn(Exception):
    """fn returned something that cannot be logged: a failure at once (calling again would not help)."""


@dataclass(frozen=True)
class Pair:
    index: int
    variant: str
    payload: Any
    item: Dict[str, Any]
    trial: int


def _object(value: Any) -> Dict[str, Any]:
    """The API takes JSON objects for input and output: another value is sent as ``{"value": ...}``."""
    return dict(value) if isinstance(value, Mapping) else {"value": value}


def describe(err: BaseException) -> str:
    return "%s: %s" % (type(err).__name__, err)


def setup_steps(experiment: str, dataset: str, o: RunOptions) -> Generator[_manage.Request, Any, "Plan"]:
    """Opens the run, reads the variants' payloads and every page of the run's dataset version."""
    run = yield _datasets.open_run_request(experiment, dataset, o.version, o.variants, o.trials)
    definition = yield _manage.get_request(experiment)
    items: List[Dict[str, Any]] = []
    cursor = None
    while True:
        page = yield _datasets.items_request(run["dataset"], run["version"], cursor)
        items.extend(page.get("items") or [])
        cursor = page.get("nextCursor")
        if not cursor:
            return Plan(experiment, run, definition, items, o)


class Plan:
    """The pairs of a run and what each one does."""

    def __init__(self, experiment: str, run: Any, definition: Any, items: List[Dict[str, Any]], o: RunOptions) -> None:
        self.run = run
        self.run_id = str(run["id"])
        self.path = _manage._experiment(experiment) + "/log"
        payloads = {v.get("key"): v.get("payload") for v in definition.get("variants") or []}
        for key in run["variants"]:
            if key not in payloads:
                why = "variant %r of run %s is not a variant of experiment %r any more" % (key, self.run_id, experiment)
                raise AgentSplitError(0, why, "GET", _manage._experiment(experiment))
        self.variants = [(key, payloads[key]) for key in run["variants"]]
        self.items = items
        self.trials = int(run["trials"])
        self.total = len(items) * self.trials * len(self.variants)
        self.retries = max(0, int(o.retries))
        self.log_retries = max(0, int(o.log_retries))
        self.backoff = max(0.0, float(o.backoff))
        self.comparison = _datasets.comparison_request(self.run_id, o.control or run["variants"][0], o.alpha, o.metrics)

    def pairs(self) -> Iterator[Pair]:
        """Item by item (each item's trials and variants side by side, so a drift in a model's answers
        over the run hits every variant alike)."""
        index = 0
        for item in self.items:
            for trial in range(1, self.trials + 1):
                for variant, payload in self.variants:
                    yield Pair(index, variant, payload, item, trial)
                    index += 1

    def key(self, pair: Pair) -> str:
        """``<runId>/<variant>/<itemId>/<trial>``; an item id the header cannot carry (not printable ASCII,
        a quote or backslash, too long) as ``sha256-<hex of its UTF-8>``."""
        item_id = str(pair.item.get("id"))
        key = "%s/%s/%s/%d" % (self.run_id, pair.variant, item_id, pair.trial)
        if _KEY.match(key):
            return key
        digest = hashlib.sha256(item_id.encode("utf-8", "surrogatepass")).hexdigest()
        return "%s/%s/sha256-%s/%d" % (self.run_id, pair.variant, digest, pair.trial)

    def body(self, pair: Pair, value: Any) -> bytes:
        """The log of fn's return: ``{"metrics", "output"?, "input"?}``, or a plain mapping (without those
        keys) taken as the metrics. ``input`` defaults to the item's."""
        if inspect.isawaitable(value):
            if inspect.iscoroutine(value):
                value.close()
            raise _BadReturn("fn returned an awaitable: Client.run_dataset calls plain functions (AsyncClient.run_dataset awaits coroutines)")
        if not isinstance(value, Mapping):
            raise _BadReturn("fn returned %s: expected a dict of metrics, or {'metrics': ..., 'output': ...}" % type(value).__name__)
        given = pair.item.get("input")
        output = None
        if "metrics" in value or "output" in value:
            metrics, output = value.get("metrics"), value.get("output")
            given = value["input"] if "input" in value else given
        else:
            metrics = value
        if metrics is not None and not isinstance(metrics, Mapping):
            raise _BadReturn("fn returned metrics of type %s: expected a dict of name -> number or bool" % type(metrics).__name__)
        body: Dict[str, Any] = {"variantKey": pair.variant, "runId": self.run_id, "itemId": pair.item.get("id"), "trial": pair.trial}
        if given is not None:
            body["input"] = _object(given)
        if output is not None:
            body["output"] = _object(output)
        if metrics is not None:
            body["metrics"] = dict(metrics)
        try:
            return json.dumps(body, separators=(",", ":"), allow_nan=False, default=str).encode("utf-8")
        except (TypeError, ValueError) as err:  # NaN or infinity, a circular reference
            raise _BadReturn("fn's result cannot be made JSON (%s)" % err) from None

    def steps(self, pair: Pair) -> Generator[Tuple[Any, ...], Any, Outcome]:
        """One pair: (CALL,) is answered (True, fn's return) or (False, its exception); (SLEEP, s) None;
        (POST, path, body, key) a Reply."""
        attempts = 0
        while True:
            attempts += 1
            ok, value = yield (CALL,)
            if ok:
                try:
                    body = self.body(pair, value)
                except _BadReturn as err:
                    return self._failed(pair, str(err), attempts), None
                break
            if attempts > self.retries:
                return self._failed(pair, describe(value), attempts), None
            if self.backoff > 0:
                yield (SLEEP, self.backoff * attempts)
        key = self.key(pair)
        sent = 0
        while True:
            sent += 1
            status, retry_after, error, warning = yield (POST, self.path, body, key)
            if status is not None and 200 <= status < 300:
                return None, warning
            retry = status is None or status in (408, 409, 429) or status >= 500
            if not retry or sent > self.log_retries:
                return self._failed(pair, error, attempts), None
            pause = max(self.backoff * sent, min(retry_after, RETRY_AFTER_MAX))
            if pause > 0:
                yield (SLEEP, pause)

    @staticmethod
    def _failed(pair: Pair, error: str, attempts: int) -> RunFailure:
        return RunFailure(pair.variant, str(pair.item.get("id")), pair.trial, error, attempts)


def log_reply(path: str, status: int, headers: Mapping[str, str], data: Any) -> Reply:
    if 200 <= status < 300:
        warning = data.get("warning") if isinstance(data, dict) else None
        return status, 0.0, "", warning if isinstance(warning, str) else None
    try:
        _manage.answer("POST", path, status, data, 200)
        error = "POST %s answered %d" % (path, status)
    except AgentSplitError as err:
        error = str(err)
    return status, retry_after_seconds(headers.get("retry-after")), error, None


def log_error(path: str, err: BaseException) -> Reply:
    return None, 0.0, str(AgentSplitError(0, describe(err), "POST", path)), None


class _Printer:
    """The default progress: a line per ~10% and at the end on a file; one line rewritten (\\r) on a TTY."""

    def __init__(self, run_id: str, stream: Any) -> None:
        self.run_id = run_id
        self.stream = stream
        try:
            self.tty = bool(stream.isatty())
        except Exception:
            self.tty = False
        self.step = 0
        self.last = 0.0
        self.ended = False

    def __call__(self, p: RunProgress, force: bool = False) -> None:
        end = p.done >= p.total
        if self.tty:
            now = time.monotonic()
            if not (end or force) and now - self.last < 0.1:
                return
            self.last = now
            text = "\r" + self.line(p) + ("\n" if end else "")
        else:
            step = 10 if end else p.done * 10 // p.total
            if step <= self.step and not force:
                return
            self.step = step
            text = self.line(p) + "\n"
        self.ended = end
        self.stream.write(text)
        self.stream.flush()

    def line(self, p: RunProgress) -> str:
        return "run %s: %d/%d done, %d failed" % (self.run_id, p.done, p.total, p.failed)


class Tally:
    """Counts the outcomes and reports progress (in one thread: the caller's, or the event loop's)."""

    def __init__(self, plan: Plan, progress: Progress) -> None:
        self.plan = plan
        self.done = 0
        self.logged = 0
        self.failures: List[Tuple[int, RunFailure]] = []
        self.warnings: List[str] = []
        self.report: Optional[Callable[..., Any]] = None
        if progress is True:
            self.report = _Printer(plan.run_id, sys.stderr)
        elif callable(progress):
            self.report = progress
        self.report_failed = False

    def add(self, pair: Pair, outcome: Outcome) -> None:
        failure, warning = outcome
        self.done += 1
        if failure is None:
            self.logged += 1
        else:
            self.failures.append((pair.index, failure))
        if warning is not None and warning not in self.warnings and len(self.warnings) < 5:
            self.warnings.append(warning)
            logger.warning("agentsplit: run %s: the server stored a result with a warning: %s", self.plan.run_id, warning)
        self._report()

    def _report(self, force: bool = False) -> None:
        if self.report is None:
            return
        p = RunProgress(self.done, self.plan.total, len(self.failures))
        try:
            if isinstance(self.report, _Printer):
                self.report(p, force)
            else:
                self.report(p)
        except Exception:
            if not self.report_failed:
                self.report_failed = True
                logger.warning("agentsplit: run %s: the progress callable failed (ignored)", self.plan.run_id, exc_info=True)

    def result(self, comparison: Any) -> DatasetRun:
        if self.plan.total == 0:
            self._report(force=True)  # an empty run: its one report
        failures = [f for _, f in sorted(self.failures, key=lambda pair: pair[0])]
        return DatasetRun(self.plan.run, comparison, failures, self.logged)
