"""Management and reading (experiments, analysis, saved groups, layers, preview), without I/O:
the request each call makes and what its answer becomes. Unlike the hot path these raise: an
``AgentSplitError`` carrying the status and the server's message, because a script that creates an
experiment or reads a verdict must know when it did not happen. The answers' types are the server's own
shapes (its OpenAPI document at /openapi.json)."""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union
from urllib.parse import quote

if sys.version_info >= (3, 11):  # pragma: no cover - which branch depends on the Python
    from typing import NotRequired, TypedDict
else:  # pragma: no cover
    from typing import TypedDict

    NotRequired = Optional  # type: ignore[assignment]


class AgentSplitError(Exception):
    """A management or reading call that did not succeed: ``status`` (0 when no answer came: a network
    error, a timeout, a closed client) and ``error``, the server's message (or what went wrong)."""

    def __init__(self, status: int, error: str, method: str, path: str) -> None:
        self.status = status
        self.error = error
        self.method = method
        self.path = path
        super().__init__("%s %s %s: %s" % (method, path, "failed" if status == 0 else "answered %d" % status, error))


class Variant(TypedDict):
    key: str
    payload: Dict[str, Any]
    trafficPercent: float


class MetricDefinition(TypedDict):
    name: str
    direction: str  # 'increase' or 'decrease': which way is better
    role: NotRequired[str]  # primary, secondary or guardrail
    kind: NotRequired[str]
    minimumDetectableEffect: NotRequired[float]
    threshold: NotRequired[float]
    statistic: NotRequired[str]
    # At most one of a ratio, a cap and a covariate (ADR 0035):
    # a ratio metric: name is not logged; it is sum(numerator) / sum(denominator) over each unit's values
    numerator: NotRequired[str]
    denominator: NotRequired[str]
    # heavy tails: {"value": 0.05} or {"percentile": 99}; a unit's mean per call above it counts as it
    cap: NotRequired[Dict[str, float]]
    # regression adjustment (CUPED) on a metric the treatment cannot change, e.g. "input_tokens"
    covariate: NotRequired[str]


class Experiment(TypedDict):
    slug: str
    name: str
    description: str
    status: str  # draft, running, paused, completed, released, archived
    active: bool  # True exactly when status is 'running' or 'released' (assign serves)
    assignment: str  # random or sticky
    seed: str
    variants: List[Variant]
    metrics: List[MetricDefinition]
    guardrailAction: str  # notify or pause: what the guardrail monitor does when a guardrail fails
    minimumUnits: int  # units each variant needs on every guardrail before the monitor judges
    segments: NotRequired[List[str]]  # context keys whose values split the analysis (up to 5)
    # who enters (ADR 0038); absent from a server before it
    targeting: NotRequired[Optional[Dict[str, Any]]]  # a GrowthBook condition, or None (everyone)
    coverage: NotRequired[float]  # 0-100: the share of targeted units that enter
    layer: NotRequired[Optional[Dict[str, Any]]]  # {"key": ..., "range": [start, end]}
    overrides: NotRequired[List[Dict[str, Any]]]  # [{"variant", "userIds"} | {"variant", "condition"}]
    defaultVariant: NotRequired[Optional[str]]  # served to units that do not enter; None: the first
    # what was decided when it completed: {"variant": key or "none", "note", "decidedAt"}, or None
    decision: NotRequired[Optional[Dict[str, Any]]]
    releasedVariant: NotRequired[Optional[str]]  # while 'released' (a rollout completed): what everyone gets
    version: int  # bumped whenever the variants, targeting, coverage or layer change
    createdAt: str
    updatedAt: str


class Preview(TypedDict):
    """What assign would answer a unit, recorded nowhere (``POST /experiment/:slug/preview``)."""

    variant: str
    payload: Dict[str, Any]
    inExperiment: bool
    reason: Optional[str]  # override, layer, targeting or coverage; None when the unit enters
    explanation: str  # the deciding clause
    status: NotRequired[str]  # the experiment's status (assign serves running experiments only)


class SavedGroupSummary(TypedDict):
    """A saved group without its values (``list_groups``)."""

    key: str
    description: str
    size: int  # values, duplicates dropped
    usedBy: List[str]  # non-archived experiments whose targeting or overrides name the group
    createdAt: str
    updatedAt: str


class SavedGroup(SavedGroupSummary):
    """A saved group with its values, in the order first sent (``put_group``, ``get_group``)."""

    values: List[Any]  # strings or numbers: $inGroup compares them as they are ("7" is not 7)


class LayerExperiment(TypedDict):
    experiment: str
    status: str
    range: List[float]  # [start, end)


class Layer(TypedDict):
    """A layer (``GET /layers/:key``): the non-archived experiments naming it, and what no running one takes."""

    key: str
    experiments: List[LayerExperiment]
    free: List[List[float]]


class Verdict(TypedDict):
    status: str  # winner, no-winner-yet, guardrail-failed, sample-ratio-mismatch or not-enough-data
    variant: NotRequired[str]
    metric: NotRequired[str]
    summary: str  # one plain sentence: what to do and how sure to be


class Effect(TypedDict):
    estimate: Optional[float]
    ci: List[Optional[float]]  # [lower, upper] at 1 - alpha
    stdError: Optional[float]
    pValue: Optional[float]


class Unadjusted(TypedDict):
    """A variant's reading before the regression adjustment (effects for treatments only)."""

    mean: Optional[float]
    absolute: NotRequired[Effect]
    relative: NotRequired[Effect]
    pValue: NotRequired[Optional[float]]
    test: NotRequired[Dict[str, Any]]


class CapAnalysis(TypedDict):
    """What a cap did: the value used, the percentile declared (None: a fixed value), the units above it
    in all variants (a straddling bin's users count in part) and their share."""

    value: Optional[float]
    percentile: Optional[float]
    units: Optional[float]
    share: Optional[float]


class AdjustmentAnalysis(TypedDict):
    """A regression adjustment (CUPED): the variants' means, effects and p-values are the adjusted ones."""

    covariate: str
    adjusted: bool  # False: too few units, or no covariance (the readings are the unadjusted ones)
    theta: Optional[float]
    covariateMean: Optional[float]
    varianceReduction: Optional[float]  # 1 - adjusted / unadjusted variance of a difference


class VariantAnalysis(TypedDict):
    key: str
    n: int
    mean: Optional[float]
    stdDev: Optional[float]
    # treatments only (absent for the control):
    absolute: NotRequired[Effect]
    relative: NotRequired[Effect]
    # pValue decides (after the correction when one covers the metric); rawPValue is before it
    pValue: NotRequired[Optional[float]]
    rawPValue: NotRequired[Optional[float]]
    # the test behind pValue and both intervals: {"method": "welch" | "score" | ..., "level": 0.95}
    test: NotRequired[Dict[str, Any]]
    exact: NotRequired[Optional[Dict[str, float]]]
    significant: NotRequired[bool]
    better: NotRequired[Optional[bool]]
    worse: NotRequired[Optional[bool]]
    chanceToWin: NotRequired[Optional[float]]
    risk: NotRequired[List[Optional[float]]]
    guardrail: NotRequired[Dict[str, Any]]
    quantiles: NotRequired[Dict[str, Optional[float]]]
    moreUnits: NotRequired[Optional[float]]
    # with a cap: {"units": this variant's units above it, "share": of its units}
    capped: NotRequired[Dict[str, Optional[float]]]
    # with a covariate: the reading before the adjustment (the fields above are the adjusted ones)
    unadjusted: NotRequired[Unadjusted]


class MetricAnalysis(TypedDict):
    name: str
    kind: str
    direction: Optional[str]
    role: Optional[str]
    unit: str
    sided: str
    minimumDetectableEffect: Optional[float]
    statistic: str
    threshold: Optional[float]
    label: str
    noVariation: bool
    corrected: bool
    ratio: NotRequired[Dict[str, str]]  # a ratio metric's parts: {"numerator": ..., "denominator": ...}
    cap: NotRequired[CapAnalysis]
    adjustment: NotRequired[AdjustmentAnalysis]
    variants: List[VariantAnalysis]


class Analysis(TypedDict):
    """The analysis, its verdict first."""

    verdict: Verdict
    slug: str
    control: str
    method: str
    alpha: float
    sided: str
    correction: str
    version: Optional[int]
    versions: List[int]
    unit: str
    results: Dict[str, int]
    # Assign calls per variant, a user's repeats included.
    exposures: Dict[str, int]
    # The exposures in the unit randomized: {"unit": "user" | "call", "counts": {variant: n}}, distinct
    # users in sticky experiments, calls in random ones.
    exposed: Dict[str, Any]
    srm: Dict[str, Any]
    metrics: List[MetricAnalysis]
    warnings: List[str]


# --- the requests ----------------------------------------------------------------------------------------

# (method, path, body or None, the statuses of success)
Request = Tuple[str, str, Optional[bytes], Union[int, Tuple[int, ...]]]

_SNAKE = re.compile(r"_([a-z])")


def _camel(name: str) -> str:
    """The API's name of a field given in Python's style: ``default_variant`` is ``defaultVariant`` (the
    API's own names have no underscore, so they pass unchanged)."""
    return _SNAKE.sub(lambda m: m.group(1).upper(), name)


def _body(fields: Mapping[str, Any]) -> bytes:
    return json.dumps(dict(fields), separators=(",", ":"), allow_nan=False).encode("utf-8")


def _fields(fields: Mapping[str, Any]) -> Dict[str, Any]:
    """Top-level field names as the API spells them; a name given in both styles is refused."""
    out: Dict[str, Any] = {}
    for name, value in fields.items():
        api = _camel(name)
        if api in out:
            raise ValueError("%r is given twice (as %r and in the API's spelling)" % (api, name))
        out[api] = value
    return out


def _experiment(slug: str) -> str:
    return "/experiment/%s" % quote(str(slug), safe="")


def create_request(fields: Mapping[str, Any]) -> Request:
    return "POST", "/experiments", _body(_fields(fields)), 201


def get_request(slug: str) -> Request:
    return "GET", _experiment(slug), None, 200


def update_request(slug: str, fields: Mapping[str, Any]) -> Request:
    return "PATCH", _experiment(slug), _body(_fields(fields)), 200


def _group(key: str) -> str:
    return "/groups/%s" % quote(str(key), safe="")


def put_group_request(key: str, values: Any, description: Optional[str] = None) -> Request:
    body: Dict[str, Any] = {"values": list(values)}
    if description is not None:
        body["description"] = description
    return "PUT", _group(key), _body(body), 200


def list_groups_request() -> Request:
    return "GET", "/groups", None, 200


def get_group_request(key: str) -> Request:
    return "GET", _group(key), None, 200


def delete_group_request(key: str) -> Request:
    return "DELETE", _group(key), None, (200, 204)


def layer_request(key: str) -> Request:
    return "GET", "/layers/%s" % quote(str(key), safe=""), None, 200


def preview_request(slug: str, user_id: str, context: Optional[Mapping[str, Any]] = None) -> Request:
    body: Dict[str, Any] = {"userId": user_id}
    if context is not None:
        body["context"] = dict(context)
    return "POST", _experiment(slug) + "/preview", _body(body), 200


def analysis_request(slug: str, params: Mapping[str, Any]) -> Request:
    """``n_star=`` or ``nStar=`` alike; ``metrics`` a list or comma-separated text; None leaves it out."""
    query: List[Tuple[str, str]] = []
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        elif isinstance(value, bool):
            value = "true" if value else "false"
        query.append((_camel(name), str(value)))
    q = "&".join("%s=%s" % (quote(k, safe=""), quote(v, safe=",")) for k, v in query)
    return "GET", _experiment(slug) + "/analysis" + ("?" + q if q else ""), None, 200


def answer(method: str, path: str, status: int, data: Any, expected: Union[int, Tuple[int, ...]]) -> Any:
    """The answer's JSON when its status is an expected one (a 204's: an empty dict), else an AgentSplitError."""
    ok = status in expected if isinstance(expected, tuple) else status == expected
    if ok and isinstance(data, dict):
        return data
    if ok and status == 204:
        return {}
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, str):
        error = "the answer is not JSON" if ok else "HTTP %d" % status
    raise AgentSplitError(status, error, method, path)


def verdict_first(analysis: Dict[str, Any]) -> Analysis:
    """The analysis with its verdict as the first key (what a reader looks at; printed first)."""
    out: Dict[str, Any] = {"verdict": analysis.get("verdict")}
    out.update((k, v) for k, v in analysis.items() if k != "verdict")
    return out  # type: ignore[return-value]
