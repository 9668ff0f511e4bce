"""JavaScript's value semantics over JSON values, as GrowthBook's conditions use them (for conditions.py).

Python traps handled here: ``bool`` is an ``int`` (``True == 1``), ``[]`` and ``{}`` are falsy in Python but
truthy in JavaScript, Python's ``str(1.0)`` is ``"1.0"`` where JavaScript's is ``"1"``, ``float("inf")``
parses where JavaScript's ``Number("inf")`` is NaN, and strings compare by code point in Python but by
UTF-16 code unit in JavaScript. A missing attribute is ``None`` (GrowthBook's getPath answers null).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Optional

NAN = float("nan")


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def number_to_string(x: float) -> str:
    """ECMAScript Number::toString(x) for a double (or an int, as the double it stands for)."""
    if isinstance(x, int):
        if abs(x) < 10**21:
            return str(x)
        x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    if x < 0:
        return "-" + number_to_string(-x)
    mantissa, _, exp = repr(x).partition("e")  # repr: the shortest digits that round-trip, as JavaScript's
    int_part, _, frac = mantissa.partition(".")
    digits = (int_part + frac).lstrip("0")
    point = len(int_part) + (int(exp) if exp else 0)  # value = 0.digits * 10**point (before stripping)
    point -= len(int_part + frac) - len((int_part + frac).lstrip("0"))
    digits = digits.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{head}e{sign}{abs(e)}"


def to_string(v: Any) -> str:
    """JavaScript's ``String(v)`` for a JSON value."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return v
    if is_number(v):
        return number_to_string(v)
    if isinstance(v, list):
        return ",".join("" if e is None else to_string(e) for e in v)
    return "[object Object]"


_JS_SPACE = " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DECIMAL = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Infinity)\Z")
_RADIX = re.compile(r"0(?:[xX]([0-9a-fA-F]+)|[oO]([0-7]+)|[bB]([01]+))\Z")


def string_to_number(s: str) -> float:
    t = s.strip(_JS_SPACE)
    if t == "":
        return 0.0
    m = _RADIX.match(t)
    if m:
        base = 16 if m.group(1) else 8 if m.group(2) else 2
        return float(int(m.group(1) or m.group(2) or m.group(3), base))
    if not _DECIMAL.match(t):
        return NAN
    return float(t.replace("Infinity", "inf"))


def to_number(v: Any) -> float:
    """JavaScript's ``v * 1`` (ToNumber after ToPrimitive) for a JSON value."""
    if v is None or v is False:
        return 0.0
    if v is True:
        return 1.0
    if is_number(v):
        return v
    if isinstance(v, str):
        return string_to_number(v)
    if isinstance(v, list):
        return string_to_number(to_string(v))
    return NAN


def truthy(v: Any) -> bool:
    """JavaScript's ``!!v``: an empty list or dict is truthy, 0, NaN and "" are not."""
    if v is None or v is False:
        return False
    if is_number(v):
        return v != 0 and not math.isnan(v)
    if isinstance(v, str):
        return v != ""
    return True


def strict_equals(a: Any, b: Any) -> bool:
    """JavaScript's ``a === b`` (and SameValueZero) for two separately parsed JSON values: an array or an
    object is never equal to another one; a boolean never equals a number."""
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is None and b is None


def _utf16(s: str) -> Any:
    return s if s.isascii() else s.encode("utf-16-be")


def _to_primitive(v: Any) -> Any:
    if isinstance(v, (list, dict)):
        return to_string(v)
    return v


def less_than(a: Any, b: Any) -> Optional[bool]:
    """The abstract relational comparison ``a < b``: None where JavaScript answers undefined (a NaN)."""
    pa, pb = _to_primitive(a), _to_primitive(b)
    if isinstance(pa, str) and isinstance(pb, str):
        return _utf16(pa) < _utf16(pb)
    na, nb = to_number(pa), to_number(pb)
    if math.isnan(na) or math.isnan(nb):
        return None
    return na < nb


def js_lt(a: Any, b: Any) -> bool:
    return less_than(a, b) is True


def js_gt(a: Any, b: Any) -> bool:
    return less_than(b, a) is True


def js_lte(a: Any, b: Any) -> bool:
    return less_than(b, a) is False


def js_gte(a: Any, b: Any) -> bool:
    return less_than(a, b) is False


def compare_strings(a: str, b: str) -> int:
    ua, ub = _utf16(a), _utf16(b)
    return (ua > ub) - (ua < ub)


def _array_index(k: str) -> Optional[int]:
    if k.isdigit() and k.isascii() and (k == "0" or k[0] != "0") and int(k) < 4294967295:
        return int(k)
    return None


def stringify(v: Any) -> str:
    """``JSON.stringify(v)``: JavaScript's key order (array-index keys ascending first) and number format."""
    if v is None or isinstance(v, bool):
        return to_string(v)
    if is_number(v):
        return number_to_string(v) if math.isfinite(v) else "null"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(stringify(e) for e in v) + "]"
    if isinstance(v, dict):
        keys = list(v.keys())
        indexed = sorted((k for k in keys if _array_index(k) is not None), key=lambda k: int(k))
        rest = [k for k in keys if _array_index(k) is None]
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + stringify(v[k]) for k in indexed + rest) + "}"
    return "null"


def type_of(v: Any) -> str:
    """GrowthBook's getType: "null", "array", "string", "number", "boolean" or "object"."""
    if v is None:
        return "null"
    if isinstance(v, list):
        return "array"
    if isinstance(v, bool):
        return "boolean"
    if is_number(v):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "object"
    return "unknown"


def get_path(obj: Any, parts: Any) -> Any:
    """GrowthBook's getPath over pre-split parts: a missing step answers None (JavaScript's null). An
    array is an object there: "0" indexes it and "length" is its length."""
    current = obj
    for p in parts:
        if isinstance(current, dict) and truthy(current):
            if p not in current:
                return None
            current = current[p]
        elif isinstance(current, list):
            if p == "length":
                current = len(current)
                continue
            i = _array_index(p)
            if i is None or i >= len(current):
                return None
            current = current[i]
        else:
            return None
    return current
