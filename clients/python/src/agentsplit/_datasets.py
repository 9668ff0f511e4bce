"""Datasets and offline runs (issue 40), without I/O: the answers' shapes and the request each management
call makes (``answer`` in _manage.py reads them; failures raise ``AgentSplitError``). ``run_dataset``
itself is in _runs.py."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union
from urllib.parse import quote

from ._manage import Request, TypedDict, _body, _experiment


class Dataset(TypedDict):
    """A dataset without its items (``GET /datasets/:name``): ``version`` is the current one, ``items`` its count."""

    id: str  # a dataset deleted and made again under its name is another one
    name: str
    description: str
    version: int
    items: int
    createdAt: str
    updatedAt: str


class DatasetChange(Dataset):
    """The dataset after ``add_items``: a new version when anything changed, else the same one."""

    added: int
    changed: int
    removed: int
    unchanged: int


class DatasetItem(TypedDict):
    """An item as a version holds it (what ``run_dataset``'s ``fn`` receives)."""

    id: str
    input: Any
    expected: Any  # None when none
    metadata: Optional[Dict[str, Any]]
    since: int  # the version that added it or last changed it


class OfflineRun(TypedDict):
    """An offline run: ``variants`` over one dataset ``version``, ``trials`` times each item."""

    id: str
    experiment: str
    dataset: str
    version: int
    variants: List[str]  # the first is the comparison's default control
    trials: int
    items: int  # items in that dataset version
    createdAt: str


class RunComparison(TypedDict):
    """``GET /runs/:id/comparison``: every variant against the control, item by item, per metric."""

    run: OfflineRun
    control: str
    alpha: float
    items: int
    variants: List[Dict[str, Any]]  # {"key", "results", "items"}
    # {"name", "kind", "direction", "comparisons": [{"variant", "items", "difference", "better", ...}]}
    metrics: List[Dict[str, Any]]
    verdict: Dict[str, Any]  # {"summary": one sentence, "sentences": [...]}
    changed: List[Dict[str, Any]]  # the items whose score changed most, with both outputs


def _dataset(name: str) -> str:
    return "/datasets/%s" % quote(str(name), safe="")


def _query(params: Mapping[str, Any]) -> str:
    pairs = []
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        pairs.append("%s=%s" % (name, quote(str(value), safe=",")))
    return "?" + "&".join(pairs) if pairs else ""


def _items(items: Iterable[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    return [dict(item) for item in items]


def create_dataset_request(name: str, items: Iterable[Mapping[str, Any]], description: Optional[str] = None) -> Request:
    body: Dict[str, Any] = {"name": name, "items": _items(items)}
    if description is not None:
        body["description"] = description
    return "POST", "/datasets", _body(body), 201


def add_items_request(name: str, items: Iterable[Mapping[str, Any]]) -> Request:
    return "POST", _dataset(name) + "/items", _body({"items": _items(items)}), 200


def list_datasets_request(limit: Optional[int] = None, cursor: Optional[str] = None) -> Request:
    return "GET", "/datasets" + _query({"limit": limit, "cursor": cursor}), None, 200


def get_dataset_request(name: str) -> Request:
    return "GET", _dataset(name), None, 200


def items_request(name: str, version: Optional[int] = None, cursor: Optional[str] = None, limit: int = 1000) -> Request:
    return "GET", _dataset(name) + "/items" + _query({"version": version, "limit": limit, "cursor": cursor}), None, 200


def open_run_request(
    experiment: str,
    dataset: str,
    version: Optional[int] = None,
    variants: Optional[Sequence[str]] = None,
    trials: Optional[int] = None,
) -> Request:
    body: Dict[str, Any] = {"dataset": dataset}
    if version is not None:
        body["version"] = version
    if variants is not None:
        body["variants"] = list(variants)
    if trials is not None:
        body["trials"] = trials
    return "POST", _experiment(experiment) + "/runs", _body(body), 201


def _run(run_id: str) -> str:
    return "/runs/%s" % quote(str(run_id), safe="")


def get_run_request(run_id: str) -> Request:
    return "GET", _run(run_id), None, 200


def list_runs_request(experiment: str, limit: Optional[int] = None, cursor: Optional[str] = None) -> Request:
    return "GET", _experiment(experiment) + "/runs" + _query({"limit": limit, "cursor": cursor}), None, 200


def comparison_request(
    run_id: str,
    control: Optional[str] = None,
    alpha: Optional[float] = None,
    metrics: Union[None, str, Sequence[str]] = None,
) -> Request:
    query = _query({"control": control, "alpha": alpha, "metrics": metrics})
    return "GET", _run(run_id) + "/comparison" + query, None, 200
