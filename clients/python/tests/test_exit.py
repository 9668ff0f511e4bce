"""A script that ends without close(): what it queued is flushed at exit (sync and asyncio clients)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from conftest import ROOT, ROOT_KEY

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from agentsplit import AsyncClient, Client
    url, key, slug, kind = sys.argv[1:5]
    if kind == "sync":
        c = Client(url, key, flush_interval=3600)
        a = c.assign(slug, "exit-user")
        for i in range(5):
            c.log(slug, assignment=a, metrics={"i": i})
    else:
        async def main():
            c = AsyncClient(url, key, flush_interval=3600)
            a = await c.assign(slug, "exit-user")
            for i in range(5):
                c.log(slug, assignment=a, metrics={"i": i})
        asyncio.run(main())
    print("bye")
    """
)


def run(server, slug, kind):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "clients" / "python" / "src"))
    r = subprocess.run([sys.executable, "-c", SCRIPT, server.url, ROOT_KEY, slug, kind], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "bye" in r.stdout


def test_the_sync_client_flushes_at_exit(server):
    slug = server.create_experiment()
    run(server, slug, "sync")
    assert sorted(r["metrics"]["i"] for r in server.results(slug)) == [0, 1, 2, 3, 4]


def test_the_async_client_flushes_at_exit_without_close(server):
    slug = server.create_experiment()
    run(server, slug, "async")
    assert sorted(r["metrics"]["i"] for r in server.results(slug)) == [0, 1, 2, 3, 4]


def test_a_forked_child_delivers_its_own_items_only(server):
    from agentsplit import Client

    slug = server.create_experiment()
    c = Client(server.url, ROOT_KEY, flush_interval=3600)
    try:
        for i in range(3):
            c.log(slug, variant_key="A", metrics={"who": "parent", "i": i})
        pid = os.fork()
        if pid == 0:  # the child: its own worker, an empty queue
            code = 1
            try:
                for i in range(2):
                    c.log(slug, variant_key="B", metrics={"who": "child", "i": i})
                code = 0 if c.flush(10) and c.delivered == 2 else 2
                c.close(timeout=1)
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        assert c.flush(10)
        got = sorted((r["metrics"]["who"], r["metrics"]["i"]) for r in server.results(slug))
        assert got == [("child", 0), ("child", 1), ("parent", 0), ("parent", 1), ("parent", 2)]
    finally:
        c.close(timeout=1)
