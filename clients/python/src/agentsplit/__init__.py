"""agentsplit: the Python client of the agentsplit A/B testing service for AI agents.

    from agentsplit import Client
    client = Client("http://127.0.0.1:3000", "ask_...")
    a = client.assign("checkout-prompt", user_id="u-42", default={"prompt": "You are helpful."})
    with client.track(a, input={"q": "..."}) as run:
        run.output = {"answer": "..."}
    client.feedback("checkout-prompt", assignment_id=a.assignment_id, metrics={"thumbs_up": True})
    client.close()

Offline runs: ``client.run_dataset(experiment, dataset, fn, trials=3)`` runs ``fn(payload, item)`` for
every variant x item x trial of a dataset and answers ``DatasetRun(run, comparison, failures, logged)``.

The draw and the id helpers (for checking a port against the server) are in ``agentsplit.conformance``.
The OpenFeature provider is ``agentsplit.openfeature.AgentSplitProvider`` (imported on its own: ``import
agentsplit`` does not load it).
"""

from ._core import Assignment, Run
from ._datasets import Dataset, DatasetChange, DatasetItem, OfflineRun, RunComparison
from ._manage import (
    AdjustmentAnalysis,
    AgentSplitError,
    Analysis,
    CapAnalysis,
    Experiment,
    Layer,
    LayerExperiment,
    MetricAnalysis,
    MetricDefinition,
    Preview,
    SavedGroup,
    SavedGroupSummary,
    Unadjusted,
    Variant,
    VariantAnalysis,
    Verdict,
)
from ._runs import DatasetRun, RunFailure, RunProgress
from .aio import AsyncClient
from .client import Client

__all__ = [
    "AdjustmentAnalysis",
    "AgentSplitError",
    "Analysis",
    "Assignment",
    "AsyncClient",
    "CapAnalysis",
    "Client",
    "Dataset",
    "DatasetChange",
    "DatasetItem",
    "DatasetRun",
    "Experiment",
    "Layer",
    "LayerExperiment",
    "MetricAnalysis",
    "MetricDefinition",
    "OfflineRun",
    "Preview",
    "Run",
    "RunComparison",
    "RunFailure",
    "RunProgress",
    "SavedGroup",
    "SavedGroupSummary",
    "Unadjusted",
    "Variant",
    "VariantAnalysis",
    "Verdict",
]

__version__ = "0.1.0"
