#!/usr/bin/env python3
"""An agent loop with the agentsplit Python client: which system prompt resolves more support questions?

    AGENTSPLIT_URL=http://127.0.0.1:3000 AGENTSPLIT_API_KEY=<root key> python3 examples/python_agent.py

Creates the experiment with the root key through the client (``create_experiment``, or reuses it), then
for ~200 users: assigns a prompt, runs a stand-in model (no network; no real LLM) inside ``track``
(latency, errors, output), logs a follow-up step, sends late feedback (a thumbs-up), flushes, and prints
the verdict of ``client.analysis``. Runs from a checkout without installing (it falls back to
clients/python/src).
"""

from __future__ import annotations

import logging
import os
import random
import sys
import time
from pathlib import Path

try:
    from agentsplit import AgentSplitError, Client
except ImportError:  # not installed: use the checkout's copy
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python" / "src"))
    from agentsplit import AgentSplitError, Client

SLUG = os.environ.get("AGENTSPLIT_EXAMPLE_SLUG", "python-agent-support-prompt")
USERS = int(os.environ.get("AGENTSPLIT_EXAMPLE_USERS", "200"))
DEFAULT = {"prompt": "You are a helpful support assistant."}
QUESTIONS = ["Where is my order?", "How do I reset my password?", "Can I change my plan?", "Why was I charged twice?"]


def fake_model(prompt: str, question: str, rng: random.Random) -> dict:
    """A stand-in for an LLM call: the concise prompt answers with fewer tokens and resolves more often."""
    concise = "concise" in prompt
    tokens = rng.randint(60, 120) if concise else rng.randint(120, 260)
    time.sleep(0.0005)
    if rng.random() < 0.02:
        raise TimeoutError("the model timed out")  # track logs error=True, and the exception reaches us
    resolved = rng.random() < (0.80 if concise else 0.55)
    return {"answer": "(%d tokens about %r)" % (tokens, question), "tokens": tokens, "resolved": resolved}


def ensure_experiment(client: Client) -> None:
    """Management calls raise AgentSplitError (status, the server's error), unlike the agent's calls."""
    try:
        client.create_experiment(
            slug=SLUG,
            name="Support prompt (Python example)",
            status="running",
            assignment="sticky",
            variants=[
                {"key": "helpful", "trafficPercent": 50, "payload": {"prompt": "You are a helpful support assistant."}},
                {"key": "concise", "trafficPercent": 50, "payload": {"prompt": "You are a concise support assistant."}},
            ],
            metrics=[
                {"name": "resolved", "direction": "increase", "role": "primary", "kind": "proportion"},
                {"name": "tokens", "direction": "decrease", "role": "secondary"},
                {"name": "error", "direction": "decrease", "role": "guardrail", "kind": "proportion"},
            ],
        )
        print("created experiment %r" % SLUG)
    except AgentSplitError as err:
        if err.status != 409:
            raise SystemExit("could not create the experiment: %s" % err)
        if client.get_experiment(SLUG)["status"] != "running":
            client.update_experiment(SLUG, status="running")
        print("reusing experiment %r" % SLUG)


def main() -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    url = os.environ.get("AGENTSPLIT_URL", "http://127.0.0.1:3000").rstrip("/")
    key = os.environ.get("AGENTSPLIT_API_KEY", "")
    if not key:
        raise SystemExit("set AGENTSPLIT_API_KEY (the root key: the example creates its experiment)")
    rng = random.Random(7)
    client = Client(url, key, timeout=2.0)
    ensure_experiment(client)
    started = time.monotonic()
    counts = {"server": 0, "default": 0, "errors": 0}
    for i in range(USERS):
        user = "user-%03d" % i
        a = client.assign(SLUG, user_id=user, context={"plan": rng.choice(["free", "pro"])}, default=DEFAULT)
        counts["server" if a.source != "default" else "default"] += 1
        question = rng.choice(QUESTIONS)
        try:
            with client.track(a, input={"question": question}) as run:
                out = fake_model(a.payload["prompt"], question, rng)
                run.output = {"answer": out["answer"]}
                run.metrics.update(tokens=out["tokens"], resolved=out["resolved"])
        except TimeoutError:
            counts["errors"] += 1  # logged with error=True by track; the agent answers with its fallback
            continue
        # a follow-up step of the same run, logged on its own
        client.log(SLUG, variant_key=a.variant, assignment_id=a.assignment_id, user_id=user,
                   metrics={"followup_tokens": out["tokens"] // 3})
        # the user's thumbs-up arrives later: feedback on the assignment
        client.feedback(SLUG, assignment_id=a.assignment_id, metrics={"thumbs_up": out["resolved"] or rng.random() < 0.1})
    ok = client.flush(15)
    took = time.monotonic() - started
    print("%d users in %.1f s (%d assigned by the server, %d defaults, %d model errors); delivered %d, flush %s"
          % (USERS, took, counts["server"], counts["default"], counts["errors"], client.delivered, "ok" if ok else "timed out"))

    analysis = client.analysis(SLUG)  # the verdict first
    client.close()
    print("results per variant:", analysis["results"])
    for m in analysis["metrics"]:
        if m["name"] in ("resolved", "thumbs_up", "tokens"):
            print("  %-10s %s" % (m["name"], ", ".join("%s n=%s mean=%.3f" % (v["key"], v["n"], v["mean"] or 0) for v in m["variants"])))
    verdict = analysis["verdict"]
    print("verdict: %s: %s" % (verdict["status"], verdict["summary"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
