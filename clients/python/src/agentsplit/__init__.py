"""agentsplit: the Python client of the agentsplit A/B testing service for AI agents.

    from agentsplit import Client
    client = Client("http://127.0.0.1:3000", "ask_...")
    a = client.assign("checkout-prompt", user_id="u-42", default={"prompt": "You are helpful."})
    with client.track(a, input={"q": "..."}) as run:
        run.output = {"answer": "..."}
    client.feedback("checkout-prompt", assignment_id=a.assignment_id, metrics={"thumbs_up": True})
    client.close()

The draw and the id helpers (for checking a port against the server) are in ``agentsplit.conformance``.
The OpenFeature provider is ``agentsplit.openfeature.AgentSplitProvider`` (imported on its own: ``import
agentsplit`` does not load it).
"""

from ._core import Assignment, Run
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
from .aio import AsyncClient
from .client import Client

__all__ = [
    "AdjustmentAnalysis",
    "AgentSplitError",
    "Analysis",
    "AsyncClient",
    "Assignment",
    "CapAnalysis",
    "Client",
    "Experiment",
    "Layer",
    "LayerExperiment",
    "MetricAnalysis",
    "MetricDefinition",
    "Preview",
    "Run",
    "SavedGroup",
    "SavedGroupSummary",
    "Unadjusted",
    "Variant",
    "VariantAnalysis",
    "Verdict",
]

__version__ = "0.1.0"
