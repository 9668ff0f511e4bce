"""The server SIGKILLed mid-run and restarted on the same port and database; a rate-limited key."""

from __future__ import annotations

import collections
import threading
import time

from conftest import ROOT_KEY, Recorder

from agentsplit import Client


def test_server_killed_mid_run_then_restarted(new_server):
    srv = new_server()
    slug = srv.create_experiment()
    local_slug = srv.create_experiment()  # its exposures all come from the local client
    remote = Client(srv.url, ROOT_KEY, timeout=1.0, flush_interval=0.1, backoff_base=0.1, backoff_max=0.5, batch_size=20)
    local = Client(srv.url, ROOT_KEY, timeout=1.0, local=True, flush_interval=0.1, backoff_base=0.1, backoff_max=0.5)
    try:
        total = 600
        logged = []
        defaults = []
        slowest = [0.0]
        errors = []

        def agent():
            # an agent loop that keeps going through the outage: assign, run, log
            try:
                for i in range(total):
                    t = time.monotonic()
                    a = remote.assign(slug, "user-%d" % i, default={"prompt": "fallback"})
                    slowest[0] = max(slowest[0], time.monotonic() - t)
                    if a.source == "default":
                        defaults.append(i)
                        assert a.payload == {"prompt": "fallback"}
                    # logged with a variant of its own, so every item is sent whatever assign answered
                    remote.log(slug, variant_key="A" if i % 2 else "B", metrics={"n": i})
                    logged.append(i)
                    la = local.assign(local_slug, "user-%d" % i)
                    assert la.source == "local"  # the definitions stay in use while the server is away
                    time.sleep(0.004)
            except BaseException as e:  # pragma: no cover
                errors.append(e)

        th = threading.Thread(target=agent)
        th.start()
        time.sleep(0.8)
        srv.kill()  # SIGKILL, while batches are in flight
        killed_at = len(logged)
        time.sleep(1.5)
        down_defaults = len(defaults)
        assert remote.flush(0.3) is False  # the server is away: flush gives up in time, raises nothing
        srv.start()  # the same port and database file
        th.join(60)
        assert not errors, errors
        assert killed_at < total and down_defaults > 0, (killed_at, down_defaults)
        assert slowest[0] < 1.0 + 0.5, slowest[0]
        assert remote.flush(30) and local.flush(30)
        counts = collections.Counter(r["metrics"]["n"] for r in srv.results(slug))
        assert sorted(counts) == list(range(total)), "every log arrives"
        assert max(counts.values()) == 1, [n for n, k in counts.items() if k > 1][:10]
        assert remote.dropped == 0 and remote.refused == 0
        # every local exposure arrives once (the server's own, written behind its answers, may lose the
        # last few at a SIGKILL: that is the server's durability contract, not the client's)
        assert sum(srv.analysis(local_slug)["exposures"].values()) == total
        assert local.dropped == 0 and local.refused == 0
    finally:
        remote.close(timeout=1)
        local.close(timeout=1)


def test_429_is_honoured_with_its_retry_after(server):
    slug = server.create_experiment()
    r = server.call("POST", "/keys", {"name": "limited", "scopes": ["assign", "log"], "rateLimitPerSecond": 2})
    assert r.status_code == 201, r.text
    key = r.json()["key"]
    rec = Recorder()
    c = Client(server.url, key, transport=rec, batch_size=10, flush_interval=0.05, backoff_base=0.05)
    try:
        for i in range(60):
            c.log(slug, variant_key="A", metrics={"n": i})
        assert c.flush(30)
        counts = collections.Counter(x["metrics"]["n"] for x in server.results(slug))
        assert sorted(counts) == list(range(60)) and max(counts.values()) == 1
        seen = [s for s in rec.seen if s[1] == "POST"]
        limited = [(i, s) for i, s in enumerate(seen) if s[3] == 429]
        assert limited, "the key's limit was met"
        for i, s in limited:
            wait = float(s[5]["retry-after"])
            if i + 1 < len(seen):
                nxt = seen[i + 1]
                assert nxt[0] - s[0] >= wait - 0.05, (wait, nxt[0] - s[0])
                if nxt[4]["idempotency-key"] != s[4]["idempotency-key"]:
                    raise AssertionError("the retried batch keeps its Idempotency-Key")
        # assign over the limit fails open
        answers = [c.assign(slug, "u-%d" % i).source for i in range(6)]
        assert "default" in answers
    finally:
        c.close(timeout=1)
