"""Client bench: the caller's cost of the calls that sit on an agent's hot path.

    python3 clients/python/bench.py                    # starts a server of its own (node + tsx, temp SQLite)
    python3 clients/python/bench.py --url URL --key K  # or uses a running one (creates an experiment)

Measures (time.perf_counter_ns):
- local assign: batches of 1,000 calls for distinct sticky users; the median of the per-batch averages
  (target < 5 µs), once with the delivery worker running (exposures sent as they would be) and once
  with it idle (the call alone);
- remote assign: sequential round trips to the server: median and p99;
- 10,000 log calls with background delivery: the caller's total and per call, then the flush that
  delivers them.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE / "src"))

import httpx  # noqa: E402

from agentsplit import Client  # noqa: E402

KEY = "bench-root-key-0123456789abcdef"


def start_server():
    d = tempfile.mkdtemp(prefix="agentsplit-bench-")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PORT=str(port), HOST="127.0.0.1", API_KEY=KEY, DATABASE_URL="sqlite:" + d + "/x.db",
               DATA_DIR=d, LOG_LEVEL="warn", RATE_LIMIT_PER_SECOND="0")
    p = subprocess.Popen(["node", "--import", "tsx", str(ROOT / "src" / "main.ts")], cwd=str(ROOT), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    ready = threading.Event()

    def read():
        for line in p.stdout:
            if re.search(rb"listening on http://", line):
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(60):
        os.killpg(p.pid, signal.SIGKILL)
        raise SystemExit("the server did not start")
    return "http://127.0.0.1:%d" % port, p, d


def per_batch_median(fn, users, batches):
    """(median, mean) of per-batch wall averages, and the median of per-batch CPU-time averages of this
    thread (time.thread_time_ns: what the call costs even while other processes share the cores)."""
    avgs = []
    cpu = []
    for _ in range(batches):
        c = time.thread_time_ns()
        t = time.perf_counter_ns()
        for u in users:
            fn(u)
        avgs.append((time.perf_counter_ns() - t) / len(users))
        cpu.append((time.thread_time_ns() - c) / len(users))
    return statistics.median(avgs), statistics.mean(avgs), statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url")
    ap.add_argument("--key")
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--remote-calls", type=int, default=2000)
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the queue-full warnings of the first run would cut the table
    proc = tmp = None
    url, key = args.url, args.key or KEY
    if not url:
        url, proc, tmp = start_server()
    try:
        slug = "bench-" + uuid.uuid4().hex[:8]
        r = httpx.post(url + "/experiments", headers={"x-api-key": key}, json={
            "slug": slug, "status": "running", "assignment": "sticky",
            "variants": [{"key": "A", "trafficPercent": 50, "payload": {"prompt": "a"}},
                         {"key": "B", "trafficPercent": 50, "payload": {"prompt": "b"}}]})
        r.raise_for_status()
        rows = []

        # local assign, delivery running as configured by default
        c = Client(url, key, local=True)
        users = ["user-%d" % i for i in range(1000)]
        for u in users:  # warm up
            c.assign(slug, u)
        med, mean, cpu = per_batch_median(lambda u: c.assign(slug, u), users, args.batches)
        calls = (args.batches + 1) * len(users)
        rows.append(("local assign (delivery running)", "median %.2f µs/call (batch mean %.2f, CPU %.2f)" % (med / 1000, mean / 1000, cpu / 1000), "< 5 µs"))
        c.flush(30)
        rows.append(("  its %d exposures" % calls, "%d delivered, %d dropped (queue full: more than delivery ships)" % (c.delivered, c.dropped), ""))
        c.close(timeout=10)

        # local assign, the call alone (the worker does not run during the measurement)
        c = Client(url, key, local=True, flush_interval=3600, batch_size=1000, max_queue=10_000_000)
        c._wake = lambda: None  # keep the worker asleep: measure the call only
        med, mean, cpu = per_batch_median(lambda u: c.assign(slug, u), users, args.batches)
        rows.append(("local assign (call alone)", "median %.2f µs/call (batch mean %.2f, CPU %.2f)" % (med / 1000, mean / 1000, cpu / 1000), "< 5 µs"))
        c._delivery.queue.clear()
        c.close(timeout=1)

        # remote assign round trips
        c = Client(url, key)
        for i in range(100):
            c.assign(slug, "warm-%d" % i)
        times = []
        for i in range(args.remote_calls):
            t = time.perf_counter_ns()
            a = c.assign(slug, "remote-%d" % i)
            times.append(time.perf_counter_ns() - t)
            assert a.source == "server", a
        times.sort()
        p99 = times[int(len(times) * 0.99) - 1]
        rows.append(("remote assign (%d round trips)" % len(times), "median %.0f µs, p99 %.0f µs" % (statistics.median(times) / 1000, p99 / 1000), ""))

        # 10,000 log calls with background delivery
        t = time.perf_counter_ns()
        for i in range(10_000):
            c.log(slug, variant_key="A", assignment_id=None, input={"q": i}, output={"a": "x"}, metrics={"tokens": i, "ok": True})
        total = time.perf_counter_ns() - t
        rows.append(("10,000 log calls (caller)", "%.1f ms total, %.2f µs/call" % (total / 1e6, total / 10_000 / 1000), ""))
        t = time.perf_counter_ns()
        ok = c.flush(60)
        rows.append(("  then flush until delivered", "%.0f ms (%s, %d delivered)" % ((time.perf_counter_ns() - t) / 1e6, "ok" if ok else "TIMED OUT", c.delivered), ""))
        c.close(timeout=5)

        w = max(len(r[0]) for r in rows)
        print("agentsplit Python client bench (Python %s, %s, load average %.1f on %d cores)" % (
            sys.version.split()[0], url, os.getloadavg()[0], os.cpu_count() or 0))
        print("%-*s  %s" % (w, "measure", "result"))
        print("%s  %s" % ("-" * w, "-" * 50))
        for name, result, target in rows:
            print("%-*s  %s%s" % (w, name, result, ("   target " + target) if target else ""))
    finally:
        if proc is not None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
