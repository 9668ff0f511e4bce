"""What ``assign`` answers (``Assignment``) and what ``track`` yields (``Run``), shared by the sync and async
clients."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Dict, Optional

if TYPE_CHECKING:
    from ._core import _ClientBase

logger = logging.getLogger("agentsplit")

JsonObject = Dict[str, Any]


class Assignment:
    """The answer of ``assign``: ``variant``, ``payload``, ``assignment_id``, ``source``, ``in_experiment``,
    ``reason``.

    ``source`` is ``"server"`` (a remote answer), ``"local"`` (drawn in-process) or ``"default"`` (the
    caller's default payload; ``variant`` and ``assignment_id`` are None). A local payload is the
    definition's own object: read it, do not change it.

    ``in_experiment`` is False when the unit did not enter the experiment (ADR 0038): it was served an
    override's variant or the default variant, and ``reason`` says why (``"override"``, ``"layer"``,
    ``"targeting"`` or ``"coverage"``). Its results are stored but never counted; no exposure is sent.
    A ``"default"`` assignment is not in the experiment either (``reason`` None).
    """

    __slots__ = ("experiment", "user_id", "variant", "payload", "assignment_id", "source", "in_experiment", "reason")

    def __init__(
        self,
        experiment: str,
        user_id: str,
        variant: Optional[str],
        payload: Any,
        assignment_id: Optional[str],
        source: str,
        in_experiment: bool = True,
        reason: Optional[str] = None,
    ) -> None:
        self.experiment = experiment
        self.user_id = user_id
        self.variant = variant
        self.payload = payload
        self.assignment_id = assignment_id
        self.source = source
        self.in_experiment = in_experiment
        self.reason = reason

    def __repr__(self) -> str:
        return "Assignment(experiment=%r, user_id=%r, variant=%r, source=%r, in_experiment=%r, reason=%r, assignment_id=%r)" % (
            self.experiment,
            self.user_id,
            self.variant,
            self.source,
            self.in_experiment,
            self.reason,
            self.assignment_id,
        )


class Run:
    """What ``track`` yields: set ``output`` and add to ``metrics``; on exit the run is logged with
    ``latency_ms`` (unless set) and ``error`` (True when the block raised; the exception still propagates)."""

    __slots__ = ("_client", "assignment", "input", "output", "metrics", "context", "_t0", "latency_ms")

    def __init__(self, client: "_ClientBase", assignment: Assignment, input: Optional[JsonObject], context: Optional[JsonObject]) -> None:
        self._client = client
        self.assignment = assignment
        self.input = input
        self.output: Optional[JsonObject] = None
        self.metrics: JsonObject = {}
        self.context = context
        self._t0 = 0.0
        self.latency_ms: Optional[float] = None

    def __enter__(self) -> "Run":
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        self._finish(exc_type, exc)
        return False  # never swallow the caller's exception

    async def __aenter__(self) -> "Run":
        return self.__enter__()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        self._finish(exc_type, exc)
        return False

    def _finish(self, exc_type: Any, exc: Any = None) -> None:
        try:
            self.latency_ms = round((time.perf_counter() - self._t0) * 1000.0, 3)
            metrics = self.metrics if isinstance(self.metrics, dict) else {}
            metrics.setdefault("latency_ms", self.latency_ms)
            if exc_type is not None:
                metrics["error"] = True
                if self.output is None:  # "<ExceptionType>: <message>", as the JS client's `${err.name}: ${err.message}`
                    self.output = {"error": "%s: %s" % (getattr(exc_type, "__name__", str(exc_type)), "" if exc is None else exc)}
            else:
                metrics.setdefault("error", False)
            a = self.assignment
            self._client.log(
                a.experiment,
                variant_key=a.variant,
                assignment_id=a.assignment_id,
                input=self.input,
                output=self.output,
                metrics=metrics,
                context=self.context,
                user_id=a.user_id,
            )
        except Exception:  # pragma: no cover - log never raises; this is belt and braces
            logger.debug("agentsplit: could not log a tracked run", exc_info=True)
