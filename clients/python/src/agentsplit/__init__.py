"""agentsplit: the Python client of the agentsplit A/B testing service for AI agents.

    from agentsplit import Client
    client = Client("http://127.0.0.1:3000", "ask_...")
    a = client.assign("checkout-prompt", user_id="u-42", default={"prompt": "You are helpful."})
    with client.track(a, input={"q": "..."}) as run:
        run.output = {"answer": "..."}
    client.feedback("checkout-prompt", assignment_id=a.assignment_id, metrics={"thumbs_up": True})
    client.close()
"""

from ._core import Assignment, Run
from ._hash import bucket_ranges, choose_variation, fnv1a32, hash_v2, pick_weighted
from ._ids import assignment_id, read_assignment_id, uuid7
from .aio import AsyncClient
from .client import Client

__all__ = [
    "AsyncClient",
    "Assignment",
    "Client",
    "Run",
    "assignment_id",
    "bucket_ranges",
    "choose_variation",
    "fnv1a32",
    "hash_v2",
    "pick_weighted",
    "read_assignment_id",
    "uuid7",
]

__version__ = "0.1.0"
