"""The draw and the assignment ids exactly as the server makes them, for checking a port against the
repository's vectors (``test/fixtures/vectors``) or the server's answers.

Not the client's API: ``Client`` and ``AsyncClient`` assign with these themselves; an application has
no need to call them.
"""

from ._hash import bucket_ranges, choose_variant, equal_weights, fnv1a32, gb_hash, hash_v1, hash_v2, in_namespace, pick_weighted
from ._ids import assignment_id, id_entered, read_assignment_id, uuid7

__all__ = [
    "assignment_id",
    "bucket_ranges",
    "choose_variant",
    "equal_weights",
    "fnv1a32",
    "gb_hash",
    "hash_v1",
    "hash_v2",
    "id_entered",
    "in_namespace",
    "pick_weighted",
    "read_assignment_id",
    "uuid7",
]
