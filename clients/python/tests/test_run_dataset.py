"""run_dataset (issue 40) from the sync and async clients against a real server process: a 200-item dataset,
two variants whose payloads differ, 3 trials (200 x 2 x 3 = 1,200 pairs), an fn that fails on some items
(a few once, then they succeed: retried and logged; a few always: failures with 3 attempts, not logged),
one log whose answer is lost on the way back (retried with its Idempotency-Key: stored once). Then the
management calls for datasets and runs, what fn's return becomes, and the errors that raise."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
import uuid
from typing import Any, Dict, List, Optional, Tuple

import httpx
import pytest
from conftest import ROOT_KEY

from agentsplit import AgentSplitError, AsyncClient, Client, DatasetRun, RunFailure, RunProgress

N_ITEMS, TRIALS = 200, 3
FLAKY = {"q010", "q050", "q120"}  # the first call for each variant raises, the next ones answer
BROKEN = {"q005", "q105", "q155"}  # every call raises
ITEMS = [
    {"id": "q%03d" % i, "input": {"question": "question %d" % i}, "expected": {"answer": str(i)}, "metadata": {"topic": "t%d" % (i % 4)}}
    for i in range(N_ITEMS)
]
VARIANTS = [
    {"key": "A", "trafficPercent": 50, "payload": {"prompt": "terse", "accuracy": 0.5}},
    {"key": "B", "trafficPercent": 50, "payload": {"prompt": "careful", "accuracy": 0.8}},
]
METRICS = [{"name": "correct", "direction": "increase", "role": "primary"}, {"name": "score", "direction": "increase"}]
PAIRS = N_ITEMS * 2 * TRIALS
FAILED = len(BROKEN) * 2 * TRIALS  # 18
LOGGED = PAIRS - FAILED  # 1,182
CALLS = PAIRS + len(FLAKY) * 2 + FAILED * 2  # the retried first calls, 2 more attempts of each broken pair


def experiment(server: Any) -> str:
    slug = "runs-" + uuid.uuid4().hex[:10]
    r = server.call("POST", "/experiments", {"slug": slug, "status": "running", "variants": VARIANTS, "metrics": METRICS})
    assert r.status_code == 201, r.text
    return slug


def draw(*parts: Any) -> float:
    """A number in [0, 1) fixed by its parts: the same for both variants (paired), whatever the thread order."""
    return int(hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:8], 16) / 2**32


class Agent:
    """The agent under test: B (accuracy 0.8) is correct whenever A (0.5) is, and scores 3 points more on average."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: Dict[Tuple[str, str], int] = {}
        self.total = 0
        self.running = 0
        self.most = 0

    def enter(self, payload: Dict[str, Any], item: Dict[str, Any]) -> int:
        with self.lock:
            key = (payload["prompt"], item["id"])
            n = self.calls.get(key, 0)
            self.calls[key] = n + 1
            self.total += 1
            self.running += 1
            self.most = max(self.most, self.running)
            return n

    def leave(self) -> None:
        with self.lock:
            self.running -= 1

    def answer(self, payload: Dict[str, Any], item: Dict[str, Any], n: int) -> Dict[str, Any]:
        if item["id"] in BROKEN:
            raise RuntimeError("model unavailable for %s" % item["id"])
        if item["id"] in FLAKY:
            if n == 0:
                raise TimeoutError("flaky %s" % item["id"])
            n -= 1
        u = draw(item["id"], n)
        return {
            "metrics": {"correct": u < payload["accuracy"], "score": round(10 * payload["accuracy"] + 4 * draw(payload["prompt"], item["id"], n), 6)},
            "output": {"answer": "%s answers %s" % (payload["prompt"], item["id"])},
        }

    def __call__(self, payload: Dict[str, Any], item: Dict[str, Any]) -> Dict[str, Any]:
        n = self.enter(payload, item)
        try:
            time.sleep(0.001)
            return self.answer(payload, item, n)
        finally:
            self.leave()


class _Losing:
    """Forwards every request; the answer to the ``lose``-th log is read and dropped and a ReadError raised
    instead, as if the connection broke after the server committed. Notes (key, status or "lost", replayed)."""

    def __init__(self, lose: int) -> None:
        self.lose = lose
        self.count = 0
        self.logs: List[Tuple[str, Any, Optional[str]]] = []
        self.lock = threading.Lock()

    def _is_log(self, request: httpx.Request) -> bool:
        return request.method == "POST" and request.url.path.endswith("/log")

    def _note(self, request: httpx.Request, status: Any, replayed: Optional[str]) -> None:
        with self.lock:
            self.logs.append((request.headers.get("idempotency-key", ""), status, replayed))

    def _losing(self) -> bool:
        with self.lock:
            self.count += 1
            return self.count == self.lose


class LoseOneAnswer(_Losing, httpx.BaseTransport):
    def __init__(self, lose: int = 100) -> None:
        super().__init__(lose)
        self.inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        r = self.inner.handle_request(request)
        if not self._is_log(request):
            return r
        if self._losing():
            r.read()
            r.close()
            self._note(request, "lost", None)
            raise httpx.ReadError("the answer was lost", request=request)
        self._note(request, r.status_code, r.headers.get("idempotent-replayed"))
        return r

    def close(self) -> None:
        self.inner.close()


class AsyncLoseOneAnswer(_Losing, httpx.AsyncBaseTransport):
    def __init__(self, lose: int = 100) -> None:
        super().__init__(lose)
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        r = await self.inner.handle_async_request(request)
        if not self._is_log(request):
            return r
        if self._losing():
            await r.aread()
            await r.aclose()
            self._note(request, "lost", None)
            raise httpx.ReadError("the answer was lost", request=request)
        self._note(request, r.status_code, r.headers.get("idempotent-replayed"))
        return r

    async def aclose(self) -> None:
        await self.inner.aclose()


def run_results(server: Any, slug: str, run_id: str) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    cursor = None
    while True:
        q = "/experiment/%s/results?run=%s&limit=1000" % (slug, run_id) + ("&cursor=%s" % cursor if cursor else "")
        r = server.call("GET", q)
        assert r.status_code == 200, r.text
        out.extend(r.json()["results"])
        cursor = r.json().get("nextCursor")
        if not cursor:
            return out


def check_run(server: Any, slug: str, out: DatasetRun, agent: Agent, transport: _Losing) -> None:
    run = out.run
    assert (run["experiment"], run["variants"], run["trials"], run["items"], run["version"]) == (slug, ["A", "B"], TRIALS, N_ITEMS, 1)
    assert agent.total == CALLS, "every pair called, the flaky first calls and the broken pairs' attempts again"
    assert 2 <= agent.most <= 8, agent.most

    # failures: the broken items, every variant and trial, 3 attempts each, in the order of the pairs
    assert all(isinstance(f, RunFailure) for f in out.failures)
    assert sorted((f.variant, f.item_id, f.trial) for f in out.failures) == sorted(
        (v, i, t) for v in "AB" for i in BROKEN for t in range(1, TRIALS + 1)
    )
    assert [f.item_id for f in out.failures] == sorted(f.item_id for f in out.failures)
    assert all(f.attempts == 3 and f.error == "RuntimeError: model unavailable for %s" % f.item_id for f in out.failures)
    assert out.logged == LOGGED

    # the server holds exactly the logged results, each pair once (the flaky ones too)
    results = run_results(server, slug, run["id"])
    pairs = [(r["variantKey"], r["run"]["itemId"], r["run"]["trial"]) for r in results]
    assert len(results) == LOGGED and len(set(pairs)) == LOGGED
    assert {(v, i, t) for v in "AB" for i in FLAKY for t in range(1, TRIALS + 1)} <= set(pairs)
    assert not any(i in BROKEN for _, i, _ in pairs)
    first = next(r for r in results if r["run"]["itemId"] == "q001" and r["variantKey"] == "B")
    assert first["input"] == {"question": "question 1"} and first["output"] == {"answer": "careful answers q001"}

    # the answer lost on the way back: sent again with its key, replayed, stored once
    lost = [key for key, status, _ in transport.logs if status == "lost"]
    assert len(lost) == 1, transport.logs[:5]
    assert [(s, rep) for key, s, rep in transport.logs if key == lost[0] and s != "lost"] == [(200, "true")]
    run_id, variant, item_id, trial = lost[0].split("/")
    assert run_id == run["id"] and pairs.count((variant, item_id, int(trial))) == 1
    assert len(transport.logs) == LOGGED + 1 and sum(1 for _, s, _ in transport.logs if s == 200) == LOGGED

    # the comparison is the server's, over the 197 items both variants answered; B is better
    c = out.comparison
    assert c == server.call("GET", "/runs/%s/comparison?control=A" % run["id"]).json()
    assert (c["run"]["id"], c["control"], c["items"]) == (run["id"], "A", N_ITEMS - len(BROKEN))
    assert [(v["key"], v["results"], v["items"]) for v in c["variants"]] == [("A", LOGGED // 2, 197), ("B", LOGGED // 2, 197)]
    by_name = {m["name"]: m for m in c["metrics"]}
    for name in ("correct", "score"):
        (b,) = by_name[name]["comparisons"]
        assert (b["variant"], b["better"], b["significant"]) == ("B", True, True), b
    assert by_name["correct"]["comparisons"][0]["losses"] == 0
    assert c["verdict"]["summary"].startswith("B beats A on `correct`"), c["verdict"]


def test_the_sync_client_runs_every_pair_in_threads_retries_and_logs_each_once(server):
    slug, name = experiment(server), "questions-" + uuid.uuid4().hex[:8]
    agent, seen, transport = Agent(), [], LoseOneAnswer(lose=100)
    with Client(server.url, ROOT_KEY, flush_at_exit=False, transport=transport) as c:
        made = c.create_dataset(name, ITEMS, description="200 questions")
        assert (made["name"], made["version"], made["items"]) == (name, 1, N_ITEMS)
        started = time.monotonic()
        out = c.run_dataset(slug, name, agent, trials=TRIALS, backoff=0, progress=seen.append)
        took = time.monotonic() - started
    print("sync run_dataset: %d pairs, %d fn calls in %.2f s" % (PAIRS, agent.total, took))
    assert isinstance(out, DatasetRun)
    assert all(isinstance(p, RunProgress) and p.total == PAIRS for p in seen)
    assert [p.done for p in seen] == list(range(1, PAIRS + 1)), "after every pair, in order"
    assert [p.failed for p in seen] == sorted(p.failed for p in seen) and seen[-1].failed == FAILED
    check_run(server, slug, out, agent, transport)


def test_the_async_client_awaits_a_coroutine_fn_under_a_semaphore_and_prints_progress(server, capsys):
    slug, name = experiment(server), "questions-" + uuid.uuid4().hex[:8]
    agent, transport = Agent(), AsyncLoseOneAnswer(lose=100)

    async def fn(payload: Dict[str, Any], item: Dict[str, Any]) -> Dict[str, Any]:
        n = agent.enter(payload, item)
        try:
            await asyncio.sleep(0.001)
            return agent.answer(payload, item, n)
        finally:
            agent.leave()

    async def main() -> Tuple[DatasetRun, float]:
        async with AsyncClient(server.url, ROOT_KEY, flush_at_exit=False, transport=transport) as c:
            await c.create_dataset(name, ITEMS)
            started = time.monotonic()
            out = await c.run_dataset(slug, name, fn, trials=TRIALS, backoff=0)
            return out, time.monotonic() - started

    out, took = asyncio.run(main())
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("run ")]
    print("async run_dataset: %d pairs, %d fn calls in %.2f s; progress: %s" % (PAIRS, agent.total, took, lines))
    assert lines[-1] == "run %s: %d/%d done, %d failed" % (out.run["id"], PAIRS, PAIRS, FAILED)
    assert len(lines) == 10, "a line per 10%, the last at the end"
    done = [int(line.split(": ")[1].split("/")[0]) for line in lines]
    assert done == [PAIRS * k // 10 for k in range(1, 11)]
    check_run(server, slug, out, agent, transport)


def test_datasets_and_runs_calls_and_what_fn_returns(server, capsys):
    slug, name = experiment(server), "small-" + uuid.uuid4().hex[:8]
    odd = 'fråga "1"'  # not printable ASCII and a quote: its Idempotency-Key names it by its SHA-256
    items = [{"id": "plain", "input": "a question as text"}, {"id": "full", "input": {"q": 2}}, {"id": odd, "input": {"q": 3}}]

    def fn(payload: Dict[str, Any], item: Dict[str, Any]) -> Any:
        if item["id"] == "plain":
            return {"correct": payload["accuracy"] > 0.6, "score": 1}  # a plain mapping: the metrics
        if item["id"] == "full":
            return {"metrics": {"correct": True}, "output": "text", "input": {"asked": 2}}
        return None if payload["prompt"] == "terse" else {"correct": False}

    with Client(server.url, ROOT_KEY, flush_at_exit=False) as c:
        assert c.create_dataset(name, items[:2])["version"] == 1
        change = c.add_items(name, items[1:])
        assert (change["version"], change["items"], change["added"], change["unchanged"]) == (2, 3, 1, 1)
        assert c.get_dataset(name)["version"] == 2
        assert name in [d["name"] for d in c.list_datasets(limit=100)["datasets"]]
        out = c.run_dataset(slug, name, fn, progress=False)
        assert capsys.readouterr().err == "", "progress=False prints nothing"
        # a return that cannot be logged is a failure at once (calling again would not help)
        assert out.logged == 5 and [(f.variant, f.item_id, f.attempts) for f in out.failures] == [("A", odd, 1)]
        assert out.failures[0].error.startswith("fn returned NoneType: expected a dict of metrics")
        run = out.run
        assert c.get_run(run["id"]) == run and run in c.list_runs(slug)["runs"]
        assert c.run_comparison(run["id"], control="A") == out.comparison
        assert c.run_comparison(run["id"], control="B", alpha=0.1, metrics=["correct"])["control"] == "B"
        opened = c.open_run(slug, name, version=1, variants=["B", "A"], trials=2)
        assert (opened["version"], opened["variants"], opened["trials"], opened["items"]) == (1, ["B", "A"], 2, 2)
        with pytest.raises(AgentSplitError) as missing:
            c.run_dataset(slug, "no-such-dataset", fn, progress=False)
        assert missing.value.status == 404
        with pytest.raises(AgentSplitError) as bad:
            c.run_dataset(slug, name, fn, trials=99, progress=False)
        assert bad.value.status == 400 and "trials" in bad.value.error
        with pytest.raises(TypeError):
            c.run_dataset(slug, name, "not a function")  # type: ignore[arg-type]
    stored = {(r["variantKey"], r["run"]["itemId"]): r for r in run_results(server, slug, run["id"])}
    assert len(stored) == 5
    assert stored[("A", "plain")]["input"] == {"value": "a question as text"}
    assert stored[("A", "plain")]["metrics"] == {"correct": False, "score": 1}
    assert (stored[("B", "full")]["input"], stored[("B", "full")]["output"]) == ({"asked": 2}, {"value": "text"})
    assert stored[("B", odd)]["metrics"] == {"correct": False}

    # the async client: a plain function runs in threads, one returning a coroutine is awaited
    async def main() -> List[DatasetRun]:
        async def later(payload: Dict[str, Any], item: Dict[str, Any]) -> Any:
            await asyncio.sleep(0)
            return {"correct": payload["accuracy"] > 0.6}

        async with AsyncClient(server.url, ROOT_KEY, flush_at_exit=False) as a:
            plain = await a.run_dataset(slug, name, lambda p, i: {"correct": True}, trials=2, progress=False)
            wrapped = await a.run_dataset(slug, name, lambda p, i: later(p, i), progress=False)
            with pytest.raises(AgentSplitError):
                await a.run_dataset("no-such-experiment", name, later)
            return [plain, wrapped]

    plain, wrapped = asyncio.run(main())
    assert (plain.logged, plain.failures, wrapped.logged, wrapped.failures) == (12, [], 6, [])


def test_a_log_is_retried_on_what_may_pass_later_and_refused_at_once_otherwise():
    """The retry policy of one pair (Plan.steps), driven by hand: no server needed."""
    from agentsplit._runs import CALL, POST, SLEEP, Pair, Plan, RunOptions

    run = {"id": "r1", "variants": ["A", "B"], "trials": 1, "dataset": "d", "version": 1}
    definition = {"variants": [{"key": "A", "payload": {}}, {"key": "B", "payload": {}}]}
    plan = Plan("x", run, definition, [{"id": "q1", "input": {"q": 1}}], RunOptions(backoff=0.5, log_retries=3))
    pair = next(plan.pairs())

    def drive(replies: List[Any]) -> Tuple[List[Any], Any]:
        steps, seen, reply = plan.steps(pair), [], None
        try:
            while True:
                step = steps.send(reply)
                seen.append(step[0] if step[0] != SLEEP else (SLEEP, step[1]))
                reply = replies.pop(0) if step[0] in (CALL, POST) else None
        except StopIteration as stop:
            return seen, stop.value

    ok = (True, {"correct": True})
    seen, (failure, _) = drive([(False, ValueError("x")), ok, (503, 0.0, "down", None), (None, 0.0, "reset", None), (200, 0.0, "", None)])
    assert failure is None and seen == [CALL, (SLEEP, 0.5), CALL, POST, (SLEEP, 0.5), POST, (SLEEP, 1.0), POST]
    seen, (failure, _) = drive([ok, (409, 1.0, "in flight", None), (429, 7.0, "slow down", None), (200, 0.0, "", None)])
    assert failure is None and seen == [CALL, POST, (SLEEP, 1.0), POST, (SLEEP, 7.0), POST], "Retry-After when longer"
    seen, (failure, _) = drive([ok, (400, 0.0, "POST /experiment/x/log answered 400: bad", None)])
    assert seen == [CALL, POST] and (failure.error, failure.attempts) == ("POST /experiment/x/log answered 400: bad", 1)
    seen, (failure, _) = drive([ok] + [(500, 0.0, "boom", None)] * 4)
    assert seen.count(POST) == 4 and failure.error == "boom", "log_retries=3: four sends, then a failure"
    seen, (failure, _) = drive([(False, KeyError("k"))] * 3)
    assert seen.count(CALL) == 3 and (failure.error, failure.attempts) == ("KeyError: 'k'", 3)
    assert plan.key(pair) == "r1/A/q1/1"
    long = Pair(0, "A", {}, {"id": "x" * 300}, 2)
    assert plan.key(long) == "r1/A/sha256-%s/2" % hashlib.sha256(b"x" * 300).hexdigest()


def test_progress_on_a_terminal_rewrites_one_line():
    from agentsplit._runs import RunProgress, _Printer

    class Tty:
        def __init__(self) -> None:
            self.text = ""

        def isatty(self) -> bool:
            return True

        def write(self, s: str) -> None:
            self.text += s

        def flush(self) -> None:
            pass

    tty = Tty()
    printer = _Printer("r1", tty)
    for done in range(1, 1001):
        printer(RunProgress(done, 1000, done // 100))
    assert tty.text.startswith("\rrun r1: 1/1000 done, 0 failed") and tty.text.endswith("\rrun r1: 1000/1000 done, 10 failed\n")
    assert tty.text.count("\n") == 1 and tty.text.count("\r") < 20, "at most one rewrite per 0.1 s, and the end"


def test_a_log_the_server_refuses_is_a_failure_sent_once(server):
    from conftest import Recorder

    slug, name = experiment(server), "refused-" + uuid.uuid4().hex[:8]
    recorder = Recorder()
    with Client(server.url, ROOT_KEY, flush_at_exit=False, transport=recorder) as c:
        c.create_dataset(name, [{"id": "good", "input": {"q": 1}}, {"id": "bad", "input": {"q": 2}}])
        out = c.run_dataset(slug, name, lambda p, i: {"correct\x01": 1} if i["id"] == "bad" else {"correct": True}, progress=False)
    assert out.logged == 2 and [(f.variant, f.item_id, f.attempts) for f in out.failures] == [("A", "bad", 1), ("B", "bad", 1)]
    assert all(f.error.startswith("POST /experiment/%s/log answered 400: " % slug) for f in out.failures), out.failures
    logs = [seen for seen in recorder.seen if seen[1] == "POST" and seen[2].endswith("/log")]
    assert sorted(seen[3] for seen in logs) == [200, 200, 400, 400], "each refused log sent once"
