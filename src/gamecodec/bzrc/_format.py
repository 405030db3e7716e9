"""Number formatting for the two server dialects: bzrflag (Python 2) and BZFlag C++.

``py2_str`` is Python 2's ``str(float)``: 12 significant digits, exponent
form when the decimal exponent is < -4 or >= 11, trailing zeros stripped but
at least one decimal kept in fixed form. ``c_f`` is C's ``%f``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Literal

__all__ = ["Dialect", "as_number", "c_f", "format_number", "py2_str"]

Dialect = Literal["bzrflag", "cpp"]


def py2_str(value: float) -> str:
    """Python 2's ``str()`` of a float, as bzrflag writes floats."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    text = f"{abs(value):.11e}"  # d.ddddddddddde±XX, correctly rounded
    digits = (text[0] + text[2:13]).rstrip("0") or "0"
    exp = int(text[14:])
    if value == 0:
        return sign + "0.0"
    if exp < -4 or exp >= 11:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    whole = digits[: exp + 1].ljust(exp + 1, "0")
    frac = digits[exp + 1 :] or "0"
    return f"{sign}{whole}.{frac}"


def c_f(value: float) -> str:
    """C's ``%f`` (6 decimals)."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:f}"


def as_number(value: object) -> int | float | None:
    """``value`` as a Python ``int`` (any integral number: ``int``, numpy's
    ``int64`` ...) or ``float`` (any other real number: numpy's ``float32``
    ...); None for anything else, bools (Python's and numpy's) included."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return None
    if type(value) is int or type(value) is float:
        return value
    if isinstance(value, Integral):  # int subclasses, numpy's integers
        return int(value)
    if isinstance(value, Real):  # float subclasses (np.float64), np.float32 ...
        return float(value)
    return None


def format_number(value: object, dialect: Dialect = "bzrflag") -> str:
    """An integral number as ``%d``; any other real number as the dialect
    writes floats (numpy scalars included)."""
    number = as_number(value)
    if number is None:
        raise TypeError(f"{value!r} is not a wire number")
    if isinstance(number, int):
        return str(number)
    return py2_str(number) if dialect == "bzrflag" else c_f(number)
