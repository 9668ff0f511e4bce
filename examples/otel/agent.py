#!/usr/bin/env python3
"""An agent whose runs reach agentsplit as OpenTelemetry traces (README, "Traces (OpenTelemetry)").

It asks agentsplit for a variant, runs a stand-in model call and a tool call under one ``invoke_agent``
span that carries the assignment id, and exports the spans (OTLP/HTTP, protobuf) to agentsplit's
``/v1/traces``. The run becomes one result of the experiment, its tokens, tool calls, latency and cost
as feedback metrics.

    pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
    AGENTSPLIT_URL=http://127.0.0.1:3000 AGENTSPLIT_API_KEY=<a key with assign and log> \\
      python3 examples/otel/agent.py <experiment slug>

Environment: AGENTSPLIT_URL (default http://127.0.0.1:3000), AGENTSPLIT_API_KEY, AGENTSPLIT_EXPERIMENT
(the slug, when not given as the argument), AGENTSPLIT_USER (default user-42). A variant's payload may
name the model ({"model": "gpt-4o-mini"}). The assign call uses only the standard library (urllib).
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

url = os.environ.get("AGENTSPLIT_URL", "http://127.0.0.1:3000").rstrip("/")
key = os.environ.get("AGENTSPLIT_API_KEY", "")
slug = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("AGENTSPLIT_EXPERIMENT", "")
user_id = os.environ.get("AGENTSPLIT_USER", "user-42")
if not slug or not key:
    sys.exit("usage: AGENTSPLIT_API_KEY=<key> python3 examples/otel/agent.py <experiment slug>")


def assign(slug: str, user_id: str) -> dict:
    """POST /experiment/<slug>/assign: {variant, payload, assignmentId, inExperiment}."""
    request = urllib.request.Request(
        f"{url}/experiment/{urllib.parse.quote(slug, safe='')}/assign",
        data=json.dumps({"userId": user_id}).encode(),
        headers={"content-type": "application/json", "x-api-key": key},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as err:
        sys.exit(f"assign answered {err.code}: {err.read().decode(errors='replace')}")


def fake_model(question: str) -> dict:
    """A stand-in for an LLM call: a fixed answer and token counts, after a short wait."""
    time.sleep(0.12)
    return {"text": "Your order ships today.", "input_tokens": 24 + len(question), "output_tokens": 9}


def track_order(order_id: str) -> dict:
    """A stand-in for a tool."""
    time.sleep(0.03)
    return {"order_id": order_id, "status": "shipped"}


# 1. Which variant does this user get? The answer's assignmentId joins the trace to the experiment.
assignment = assign(slug, user_id)
assignment_id = assignment["assignmentId"]
model = (assignment.get("payload") or {}).get("model", "gpt-4o-mini")

# 2. Spans go to agentsplit's OTLP endpoint (protobuf), in batches, with the key as a header.
provider = TracerProvider(resource=Resource.create({"service.name": "support-agent"}))
provider.add_span_processor(
    BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces", headers={"x-api-key": key}))
)
tracer = provider.get_tracer("support-agent", "1.0.0")

# 3. One run: an invoke_agent span with the assignment id, and under it a model call and a tool call.
question = "Where is my order 1234?"
with tracer.start_as_current_span(
    "invoke_agent support-agent",
    attributes={"gen_ai.operation.name": "invoke_agent", "agentsplit.assignment_id": assignment_id},
) as root:
    with tracer.start_as_current_span(
        f"chat {model}",
        kind=SpanKind.CLIENT,
        attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": model},
    ) as chat:
        reply = fake_model(question)
        chat.set_attribute("gen_ai.usage.input_tokens", reply["input_tokens"])
        chat.set_attribute("gen_ai.usage.output_tokens", reply["output_tokens"])
    with tracer.start_as_current_span(
        "execute_tool track_order",
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "track_order"},
        record_exception=False,
        set_status_on_exception=False,
    ) as tool:
        try:
            track_order("1234")
        except Exception as err:  # a failed tool call counts in tool_errors; the run goes on
            tool.set_status(Status(StatusCode.ERROR, str(err)))
            tool.set_attribute("error.type", type(err).__name__)
trace_id = format(root.get_span_context().trace_id, "032x")

# 4. Send what is still batched before the process ends.
provider.shutdown()

print(f"assignment {assignment_id} (variant {assignment['variant']})")
print(f"trace {trace_id}")
print(f"sent {model}: input_tokens {reply['input_tokens']}, output_tokens {reply['output_tokens']}, tool_calls 1")
