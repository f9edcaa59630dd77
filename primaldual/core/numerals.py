"""The one reader of numbers typed by a user, in trace files and flags alike (docs/input-ranges.md, "Numbers").

Python's ``int()`` and ``float()`` accept more than a user means: ``1_000``, full-width ``１２`` and Arabic-Indic
``١٢`` digits, surrounding Unicode spaces. Only **ASCII decimal** forms are read here: an optional sign, digits
``0-9`` with at most one decimal point, an optional exponent (``1e9``, ``2.5E-3``); an integer is digits only.
The words ``nan``, ``inf`` and ``infinity`` are read too (any case), so that the range check that follows names
the range they fall outside, as for any other out-of-range number. Cost O(length of the text).
"""

from __future__ import annotations

import re

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_WORDS = ("nan", "inf", "infinity")
#: How much of a refused text is echoed in a message (the rest is counted, not printed).
ECHO_CHARACTERS = 80


def echo(text: str, limit: int = ECHO_CHARACTERS) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters with its length when longer."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def read_number(text: str) -> float | None:
    """The number ``text`` writes in ASCII decimal (surrounding ASCII spaces ignored), or None."""
    stripped = text.strip(" \t")
    if _NUMBER.fullmatch(stripped) or stripped.lstrip("+-").lower() in _WORDS:
        return float(stripped)
    return None


def read_integer(text: str) -> int | None:
    """The integer ``text`` writes in ASCII decimal digits (surrounding ASCII spaces ignored), or None."""
    stripped = text.strip(" \t")
    # Python refuses to convert more than 4,300 digits; such a text is not an integer a flag can hold anyway.
    return int(stripped) if _INTEGER.fullmatch(stripped) and len(stripped.lstrip("+-")) <= 4300 else None


__all__ = ["ECHO_CHARACTERS", "echo", "read_integer", "read_number"]
