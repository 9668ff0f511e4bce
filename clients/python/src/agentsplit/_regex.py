"""Regexes of targeting conditions: JavaScript RegExp syntax translated for the ``regex`` package, and
every match bounded by ``REGEX_TIMEOUT_S`` (``regex`` backtracks). See conditions.py for the subset."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import regex

REGEX_TIMEOUT_S = 0.05
"""The most time one regex match may take; a match that runs out of it answers false."""


def search(rx: Any, s: str) -> bool:
    """An unanchored search (JavaScript's ``RegExp.test``), bounded by ``REGEX_TIMEOUT_S``."""
    try:
        return rx.search(s, timeout=REGEX_TIMEOUT_S) is not None
    except TimeoutError:
        return False


def regex_problem(pattern: Any) -> Optional[str]:
    """Why a pattern is refused (None when it is valid): see the module's notes on the subset."""
    if not isinstance(pattern, str):
        return "must be a string"
    translated, problem = _translate(pattern)
    if problem:
        return problem
    try:
        regex.compile(translated, regex.V0)
    except regex.error as e:
        return f"is not a valid regular expression: {e}"
    return None


def compile_regex(pattern: Any, insensitive: bool = False) -> Any:
    """The compiled pattern, or None when it is invalid (it then evaluates to false)."""
    if not isinstance(pattern, str):
        return None
    translated, problem = _translate(pattern)
    if problem:
        return None
    try:
        return regex.compile(translated, regex.V0 | (regex.IGNORECASE if insensitive else 0))
    except regex.error:
        return None


def _translate(p: str) -> Tuple[str, Optional[str]]:
    """JavaScript RegExp source to the ``regex`` package's: ``$`` is the end only (Python's also matches
    before a final newline), ``[]`` matches nothing and ``[^]`` anything; constructs a linear-time engine
    cannot run are refused."""
    out: List[str] = []
    i, n, in_class = 0, len(p), False
    while i < n:
        c = p[i]
        if c == "\\":
            if i + 1 >= n:
                return "", "ends with a lone backslash"
            d = p[i + 1]
            if not in_class and (d in "123456789" or d == "k"):
                return "", "uses a backreference, which is not supported"
            out.append(p[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            elif c == "[":
                c = "\\["
            out.append(c)
            i += 1
            continue
        if c == "[":
            if p.startswith("[]", i):
                out.append("(?!)")
                i += 2
                continue
            if p.startswith("[^]", i):
                out.append("[\\s\\S]")
                i += 3
                continue
            in_class = True
            out.append(c)
            i += 1
            if i < n and p[i] == "^":
                out.append("^")
                i += 1
            if i < n and p[i] == "]":
                out.append("\\]")
                i += 1
            continue
        if c == "(" and p.startswith("(?", i):
            rest = p[i + 2 : i + 4]
            if rest[:1] == ":" or (rest[:1] == "<" and rest[1:2] not in ("=", "!", "")):
                out.append(c)
                i += 1
                continue
            if rest[:1] in ("=", "!") or rest in ("<=", "<!"):
                return "", "uses a lookaround, which is not supported"
            return "", "uses an unsupported group (?" + rest[:1] + " (only (...), (?:...) and (?<name>...))"
        if c in "*+?}" and i + 1 < n and p[i + 1] == "+":
            return "", "uses a possessive quantifier, which is not supported"
        if c == "$":
            out.append("\\Z")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out), None
