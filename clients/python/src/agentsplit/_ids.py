"""UUIDv7 and assignment ids in the server's own form (src/core/assignment-id.ts, docs/client-contract.md).

``<UUIDv7>.<version base 36>.<variant index base 36>.<base64 of the UTF-8 userId>.<check>``, where
``check`` is 8 lower-case hex digits of ``zlib.crc32(body, key)`` (what this client makes: zlib's CRC
runs in C) or the FNV-1a 32 keyed by the experiment (what the server and the JS client make). The
server accepts either.
"""

from __future__ import annotations

import base64
import os
import random
import re
import threading
import time
import zlib
from typing import NamedTuple, Optional

from ._hash import FNV_OFFSET, FNV_PRIME, MASK32

_rand = random.Random()
_getrandbits = _rand.getrandbits
_lock = threading.Lock()
# [last ms, last sequence, the id's first 15 characters for that ms]
_state = [-1, 0, ""]


def uuid7(_time_ns=time.time_ns, _gb=_getrandbits, _lock=_lock, _st=_state) -> str:
    """A UUIDv7: 48-bit ms timestamp, version 7, a 12-bit sequence (monotonic within a millisecond: it
    starts at a random 11-bit value and counts up), the variant bits, 62 random bits."""
    ms = _time_ns() // 1_000_000
    _lock.acquire()
    if ms > _st[0]:
        _st[0] = ms
        seq = _gb(11)
        _st[2] = "%08x-%04x-7" % (ms >> 16, ms & 0xFFFF)
    else:  # the same millisecond (or the clock went back): count up, stay monotonic
        seq = _st[1] + 1
        if seq > 0xFFF:  # 2048+ ids in one ms: borrow the next millisecond
            _st[0] += 1
            ms = _st[0]
            seq = _gb(11)
            _st[2] = "%08x-%04x-7" % (ms >> 16, ms & 0xFFFF)
    _st[1] = seq
    prefix = _st[2]
    _lock.release()
    r = _gb(62) | 0x8000000000000000
    return "%s%03x-%04x-%012x" % (prefix, seq, r >> 48, r & 0xFFFFFFFFFFFF)


def _after_fork_in_child() -> None:
    # another thread may have held the lock at the fork: it is gone in the child
    if _lock.locked():
        _lock.release()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def base36(n: int) -> str:
    if n == 0:
        return "0"
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, d = divmod(n, 36)
        out = digits[d] + out
    return out


def encode_user(user_id: str) -> str:
    return base64.b64encode(user_id.encode("utf-8")).decode("ascii")


def crc_check(key: int, body: str) -> str:
    return "%08x" % zlib.crc32(body.encode("ascii"), key & MASK32)


# The byte the server hashes after the key in the check of ids its own assign issues.
SERVER_MARK = 0x5A


def fnv_check(key: int, body: str, mark: int = 0) -> str:
    h = ((FNV_OFFSET ^ (key & 0xFFFF)) * FNV_PRIME) & MASK32
    h = ((h ^ ((key & MASK32) >> 16)) * FNV_PRIME) & MASK32
    if mark:
        h = ((h ^ mark) * FNV_PRIME) & MASK32
    for c in body.encode("ascii"):
        h = ((h ^ c) * FNV_PRIME) & MASK32
    return "%08x" % h


def assignment_id(
    uuid: str, key: int, version: int, variant_index: int, user_id: str, check: str = "crc", entered: bool = True
) -> str:
    """The id of an assignment made under ``version`` for ``variant_index`` and ``user_id``; a unit that
    did not enter (ADR 0038) has its variant part written ``x<index>``."""
    body = "%s.%s.%s%s.%s" % (uuid, base36(version), "" if entered else "x", base36(variant_index), encode_user(user_id))
    return body + "." + (crc_check(key, body) if check == "crc" else fnv_check(key, body))


class IssuedAssignment(NamedTuple):
    version: int
    variant_index: int
    user_id: str


_SHAPE = re.compile(r"^([0-9a-f-]{36})\.([0-9a-z]{1,8})\.(x?)([0-9a-z]{1,3})\.([A-Za-z0-9+/=]*)\.([0-9a-f]{8})$")


def read_assignment_id(aid: str, key: int) -> Optional[IssuedAssignment]:
    """What an id says it was issued for under ``key`` (either check, or the server's own), or None."""
    m = _SHAPE.match(aid)
    if m is None:
        return None
    body = aid[: len(aid) - 9]
    if m.group(6) not in (crc_check(key, body), fnv_check(key, body), fnv_check(key, body, SERVER_MARK)):
        return None
    user = base64.b64decode(m.group(5)).decode("utf-8")
    return IssuedAssignment(int(m.group(2), 36), int(m.group(4), 36), user)


def id_entered(aid: str) -> bool:
    """False when an id's variant part is ``x<index>``: a unit served without entering (ADR 0038), whose
    results are stored but never counted. The check is not verified here (see ``read_assignment_id``)."""
    parts = aid.split(".")
    return not (len(parts) == 5 and parts[2].startswith("x") and len(parts[2]) > 1)
