"""The OpenFeature provider: a flag is an experiment, evaluated locally from the definitions; track() is a
logged result. The choices (types, errors, which experiment a track() belongs to) are ADR 0031's, shared
with the JS client's provider.

    from openfeature import api
    from openfeature.evaluation_context import EvaluationContext
    from agentsplit.openfeature import AgentSplitProvider

    api.set_provider_and_wait(AgentSplitProvider("http://127.0.0.1:3000", "ask_..."))
    of = api.get_client()
    prompt = of.get_object_value("checkout-prompt", {"prompt": "You are helpful."}, EvaluationContext("u-42", {"plan": "pro"}))
    of.track("thumbs_up", EvaluationContext("u-42"), TrackingEventDetails(value=1))

With ``openfeature-sdk`` (>= 0.9.0, the first with ``track``) installed the provider is its
``AbstractProvider`` and answers its types; without it, local stand-ins with the same names and fields
(``EvaluationContext``, ``TrackingEventDetails``, ``FlagResolutionDetails``, ``Metadata``, ``ErrorCode``,
``Reason``) let the provider be called directly, and the client keeps httpx as its only dependency.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from enum import Enum
from typing import Any, Dict, Generic, List, Mapping, Optional, Tuple, TypeVar

from ._core import Definition, MAX_USER_ID
from .client import Client

logger = logging.getLogger("agentsplit")

try:  # the SDK's own types when it is installed
    from openfeature.evaluation_context import EvaluationContext
    from openfeature.exception import ErrorCode
    from openfeature.flag_evaluation import FlagResolutionDetails, Reason
    from openfeature.provider import AbstractProvider, Metadata

    HAS_OPENFEATURE = True
except ImportError:  # stand-ins with the SDK's names and fields
    HAS_OPENFEATURE = False
    _T = TypeVar("_T")

    class ErrorCode(str, Enum):  # type: ignore[no-redef]
        PROVIDER_NOT_READY = "PROVIDER_NOT_READY"
        PROVIDER_FATAL = "PROVIDER_FATAL"
        FLAG_NOT_FOUND = "FLAG_NOT_FOUND"
        PARSE_ERROR = "PARSE_ERROR"
        TYPE_MISMATCH = "TYPE_MISMATCH"
        TARGETING_KEY_MISSING = "TARGETING_KEY_MISSING"
        INVALID_CONTEXT = "INVALID_CONTEXT"
        GENERAL = "GENERAL"

    class Reason(str, Enum):  # type: ignore[no-redef]
        CACHED = "CACHED"
        DEFAULT = "DEFAULT"
        DISABLED = "DISABLED"
        ERROR = "ERROR"
        SPLIT = "SPLIT"
        STATIC = "STATIC"
        STALE = "STALE"
        TARGETING_MATCH = "TARGETING_MATCH"
        UNKNOWN = "UNKNOWN"

    @dataclass
    class Metadata:  # type: ignore[no-redef]
        name: str

    @dataclass
    class EvaluationContext:  # type: ignore[no-redef]
        targeting_key: Optional[str] = None
        attributes: Mapping[str, Any] = field(default_factory=dict)

    @dataclass
    class FlagResolutionDetails(Generic[_T]):  # type: ignore[no-redef]
        value: _T
        error_code: Optional[ErrorCode] = None
        error_message: Optional[str] = None
        reason: Optional[Any] = None
        variant: Optional[str] = None
        flag_metadata: Mapping[str, Any] = field(default_factory=dict)

    class AbstractProvider:  # type: ignore[no-redef]
        """What the SDK's base class gives a provider: lifecycle no-ops, async as the sync call, events."""

        def attach(self, on_emit: Any) -> None:
            self._on_emit = on_emit

        def detach(self) -> None:
            self.__dict__.pop("_on_emit", None)

        def initialize(self, evaluation_context: Any) -> None:
            pass

        def shutdown(self) -> None:
            pass

        def get_provider_hooks(self) -> List[Any]:
            return []

        async def resolve_boolean_details_async(self, flag_key: str, default_value: bool, evaluation_context: Any = None) -> Any:
            return self.resolve_boolean_details(flag_key, default_value, evaluation_context)  # type: ignore[attr-defined]

        async def resolve_string_details_async(self, flag_key: str, default_value: str, evaluation_context: Any = None) -> Any:
            return self.resolve_string_details(flag_key, default_value, evaluation_context)  # type: ignore[attr-defined]

        async def resolve_integer_details_async(self, flag_key: str, default_value: int, evaluation_context: Any = None) -> Any:
            return self.resolve_integer_details(flag_key, default_value, evaluation_context)  # type: ignore[attr-defined]

        async def resolve_float_details_async(self, flag_key: str, default_value: float, evaluation_context: Any = None) -> Any:
            return self.resolve_float_details(flag_key, default_value, evaluation_context)  # type: ignore[attr-defined]

        async def resolve_object_details_async(self, flag_key: str, default_value: Any, evaluation_context: Any = None) -> Any:
            return self.resolve_object_details(flag_key, default_value, evaluation_context)  # type: ignore[attr-defined]


try:  # openfeature-sdk >= 0.9.0; older SDKs have no track()
    from openfeature.track import TrackingEventDetails
except ImportError:

    class TrackingEventDetails:  # type: ignore[no-redef]
        def __init__(self, value: Optional[float] = None, attributes: Optional[Dict[str, Any]] = None) -> None:
            self.value = value
            self.attributes = attributes or {}

        def add(self, key: str, value: Any) -> "TrackingEventDetails":
            self.attributes[key] = value
            return self


__all__ = [
    "AgentSplitProvider",
    "ErrorCode",
    "EvaluationContext",
    "FlagResolutionDetails",
    "HAS_OPENFEATURE",
    "Metadata",
    "Reason",
    "TrackingEventDetails",
]

MEMORY = 10_000  # targeting keys whose last evaluations track() can find (the least recently evaluated go first)
TRACK_WARN_EVERY = 1.0  # seconds between two "nothing to log" warnings

_MISSING = object()


def to_json(value: Any) -> Any:
    """An evaluation context or tracking value as JSON, as the JS provider makes it: dates and datetimes
    as ISO 8601 (a datetime in UTC with milliseconds and ``Z``, as JavaScript's ``toISOString``; a naive one
    is taken as UTC), a NaN or infinity left out of an object (``None`` in a list). Other objects are sent
    as their ``str()`` by the client."""
    if isinstance(value, datetime):
        t = value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return _MISSING
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            j = to_json(v)
            if j is not _MISSING:
                out[str(k)] = j
        return out
    if isinstance(value, (list, tuple)):
        return [None if j is _MISSING else j for j in map(to_json, value)]
    return value


def _metric(v: Any) -> bool:
    """A number or boolean the analysis reads (a NaN or infinity is not JSON)."""
    return isinstance(v, bool) or (isinstance(v, (int, float)) and math.isfinite(v))


def typed_value(payload: Any, kind: str) -> Any:
    """The flag value of a payload for the requested type, or ``_MISSING``: an object flag is the whole
    payload; a boolean, string or number flag is the payload's ``value`` field when it has that type."""
    if kind == "object":
        return payload if isinstance(payload, (dict, list)) else _MISSING
    v = payload.get("value", _MISSING) if isinstance(payload, dict) else _MISSING
    if kind == "boolean":
        return v if isinstance(v, bool) else _MISSING
    if kind == "string":
        return v if isinstance(v, str) else _MISSING
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return _MISSING
    if kind == "float":
        return float(v)
    # integer: JSON has one number type (as JavaScript), so 3.0 is the integer 3
    if isinstance(v, float):
        return int(v) if math.isfinite(v) and v.is_integer() else _MISSING
    return v


class AgentSplitProvider(AbstractProvider):  # type: ignore[misc,valid-type]
    """``AgentSplitProvider(base_url=None, api_key=None, *, client=None, max_tracked_users=10_000, **options)``: evaluates flags in
    this process from ``GET /experiments/definitions`` (``Client(..., local=True)``).

    Give it a local ``Client`` of your own (``client=``; ``shutdown`` then only flushes it), or let it make
    one from ``base_url``, ``api_key`` and the ``Client`` options (``shutdown`` closes it). The key needs the
    ``assign`` scope, and ``log`` for ``track``. Never raises on evaluation or track.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        client: Optional[Client] = None,
        max_tracked_users: int = MEMORY,
        **options: Any,
    ) -> None:
        super().__init__()
        if client is None:
            options["local"] = True
            client = Client(base_url, api_key, **options)  # fetches the definitions once, bounded by timeout
            self._owns_client = True
        else:
            if not isinstance(client, Client) or not client.local:
                raise ValueError("AgentSplitProvider evaluates locally: pass a Client(..., local=True), or base_url and api_key")
            self._owns_client = False
        self.client = client
        self._max_tracked_users = max(1, int(max_tracked_users))
        self._memory: "OrderedDict[str, Dict[str, Tuple[str, str]]]" = OrderedDict()
        self._lock = threading.Lock()
        self._track_warned = 0.0

    # lifecycle -------------------------------------------------------------------------------------
    def get_metadata(self) -> Metadata:
        return Metadata(name="agentsplit")

    def get_provider_hooks(self) -> List[Any]:
        return []

    def initialize(self, evaluation_context: Any = None) -> None:
        """Makes sure one definitions fetch was tried (at most the client's ``timeout``); returns even when
        it failed (fail-open: evaluations answer their defaults until the client's refresh succeeds)."""
        c = self.client
        try:
            if c.enabled and not c._closed and not c._defs_loaded:
                c._refresh_definitions()
        except Exception:
            logger.warning("agentsplit: OpenFeature provider: the first definitions fetch failed", exc_info=True)

    def shutdown(self) -> None:
        """Closes a client the provider made; flushes (without closing) a client it was given."""
        if self._owns_client:
            self.client.close()
        else:
            self.client.flush()

    # evaluation --------------------------------------------------------------------------------------
    def resolve_boolean_details(self, flag_key: str, default_value: bool, evaluation_context: Optional[EvaluationContext] = None) -> FlagResolutionDetails:
        return self._resolve(flag_key, default_value, evaluation_context, "boolean")

    def resolve_string_details(self, flag_key: str, default_value: str, evaluation_context: Optional[EvaluationContext] = None) -> FlagResolutionDetails:
        return self._resolve(flag_key, default_value, evaluation_context, "string")

    def resolve_integer_details(self, flag_key: str, default_value: int, evaluation_context: Optional[EvaluationContext] = None) -> FlagResolutionDetails:
        return self._resolve(flag_key, default_value, evaluation_context, "integer")

    def resolve_float_details(self, flag_key: str, default_value: float, evaluation_context: Optional[EvaluationContext] = None) -> FlagResolutionDetails:
        return self._resolve(flag_key, default_value, evaluation_context, "float")

    def resolve_object_details(self, flag_key: str, default_value: Any, evaluation_context: Optional[EvaluationContext] = None) -> FlagResolutionDetails:
        return self._resolve(flag_key, default_value, evaluation_context, "object")

    def _resolve(self, flag_key: str, default_value: Any, evaluation_context: Any, kind: str) -> FlagResolutionDetails:
        try:
            c = self.client
            user_id = getattr(evaluation_context, "targeting_key", None)
            if not isinstance(user_id, str) or user_id == "":
                return _error(default_value, ErrorCode.TARGETING_KEY_MISSING, "no targeting key (the user id) in the evaluation context")
            if (not 0 < len(user_id) <= MAX_USER_ID or "\x00" in user_id or not user_id.isascii()) and c._bad_user_id(flag_key, user_id):
                return _error(default_value, ErrorCode.INVALID_CONTEXT, "the targeting key is not a user id the server accepts (a string of 1-512 characters without U+0000 or lone surrogates)")
            if c._closed:
                return _error(default_value, ErrorCode.GENERAL, "the agentsplit client is closed")
            d: Optional[Definition] = c._defs.get(flag_key)
            if d is None:
                if not c._defs_loaded:
                    return _error(default_value, ErrorCode.PROVIDER_NOT_READY, "no definitions yet (the agentsplit server could not be reached)")
                return _error(default_value, ErrorCode.FLAG_NOT_FOUND, "%r is not a running experiment (unknown, or draft, paused or completed)" % flag_key)
            context = _context(evaluation_context)
            # who enters (ADR 0038): the attributes are the evaluation context's, plus the targeting key
            i, entry = (d.choose(user_id), None) if d.simple else d.enter(user_id, context)
            value = typed_value(d.payloads[i], kind)
            if value is _MISSING:
                return _error(
                    default_value,
                    ErrorCode.TYPE_MISMATCH,
                    "variant %r of %r has no %s for a %s flag" % (d.keys[i], flag_key, "object payload" if kind == "object" else "payload field 'value' of that type", kind),
                )
            aid = c._expose_local(flag_key, d, i, user_id, context) if entry is None else c._unentered_id(d, i, user_id)
            variant = d.keys[i]
            with self._lock:
                flags = self._memory.get(user_id)
                if flags is None:
                    flags = self._memory[user_id] = {}
                    if len(self._memory) > self._max_tracked_users:
                        self._memory.popitem(last=False)
                else:
                    self._memory.move_to_end(user_id)
                flags[flag_key] = (variant, aid)
            metadata: Dict[str, Any] = {"assignmentId": aid, "experimentVersion": d.version, "inExperiment": entry is None}
            if entry is not None:
                metadata["entryReason"] = entry
            # as the server's OFREP: an override is a targeting match, a unit kept out gets the default
            reason = Reason.SPLIT if entry is None else Reason.TARGETING_MATCH if entry == "override" else Reason.DEFAULT
            return FlagResolutionDetails(value=value, reason=reason, variant=variant, flag_metadata=metadata)
        except Exception as err:
            self.client._unexpected("OpenFeature evaluation of", flag_key)
            return _error(default_value, ErrorCode.GENERAL, "%s: %s" % (type(err).__name__, err))

    # track -------------------------------------------------------------------------------------------
    def track(self, tracking_event_name: str, evaluation_context: Optional[EvaluationContext] = None, tracking_event_details: Any = None) -> None:
        """A logged result (queued as ``log`` is) for each experiment this provider last evaluated for the
        targeting key, or only the one named by the details' ``flagKey`` attribute. The metric
        ``tracking_event_name`` is the details' ``value`` (``True`` without a number, which then goes into
        ``output`` as ``value``); the other numeric and boolean attributes (finite) are metrics of their own
        names, the rest goes into ``output``; the
        evaluation context's attributes are the result's ``context``. Never raises."""
        try:
            user_id = getattr(evaluation_context, "targeting_key", None)
            if not user_id or not isinstance(user_id, str):
                self._track_warn("agentsplit: track(%r) without a targeting key: nothing logged", tracking_event_name)
                return
            details = dict(getattr(tracking_event_details, "attributes", None) or {})
            flag = details.pop("flagKey", None)
            value = getattr(tracking_event_details, "value", None)
            metrics: Dict[str, Any] = {}
            output: Dict[str, Any] = {}
            for k, v in details.items():
                if _metric(v):
                    metrics[k] = v
                else:
                    j = to_json(v)
                    if j is not _MISSING:
                        output[k] = j
            if _metric(value) and not isinstance(value, bool):
                metrics[tracking_event_name] = value
            else:  # no value, or one that is not a number: the event happened; what it was goes to output
                metrics[tracking_event_name] = True
                j = to_json(value)
                if j is not _MISSING and j is not None:
                    output["value"] = j
            context = _context(evaluation_context)
            with self._lock:
                remembered = dict(self._memory.get(user_id) or {})
            if isinstance(flag, str):
                remembered = {flag: remembered[flag]} if flag in remembered else {}
            if not remembered:
                self._track_warn(
                    "agentsplit: track(%r) for %r: no evaluation%s remembered for that targeting key: nothing logged",
                    tracking_event_name,
                    user_id,
                    " of %r" % flag if isinstance(flag, str) else "",
                )
                return
            for slug, (variant, aid) in remembered.items():
                self.client.log(slug, variant_key=variant, assignment_id=aid, output=output or None, metrics=dict(metrics), context=context, user_id=user_id)
        except Exception:
            self.client._unexpected("OpenFeature track of", str(tracking_event_name))

    def _track_warn(self, msg: str, *args: Any) -> None:
        now = time.monotonic()
        if now - self._track_warned >= TRACK_WARN_EVERY:
            self._track_warned = now
            logger.warning(msg, *args)
        else:
            logger.debug(msg, *args)


def _context(evaluation_context: Any) -> Optional[Dict[str, Any]]:
    """The assign (or result) context: the evaluation context's attributes as JSON, None when there are none."""
    attributes = getattr(evaluation_context, "attributes", None)
    return (to_json(attributes) or None) if isinstance(attributes, Mapping) else None


def _error(default_value: Any, code: Any, message: str) -> FlagResolutionDetails:
    return FlagResolutionDetails(value=default_value, error_code=code, error_message=message, reason=Reason.ERROR)
