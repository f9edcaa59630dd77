"""The one reader of numbers typed by a user, in trace files and flags alike (docs/input-ranges.md, "Numbers").

Python's ``int()`` and ``float()`` accept more than a user means: ``1_000``, full-width ``１２`` and Arabic-Indic
``١٢`` digits, surrounding Unicode spaces. Only **ASCII decimal** forms are read here: an optional sign, digits
``0-9`` with at most one decimal point, an optional exponent (``1e9``, ``2.5E-3``); an integer is digits only.
The words ``nan``, ``inf`` and ``infinity`` are read too (any case), so that the range check that follows names
the range they fall outside, as for any other out-of-range number. Cost O(length of the text).
"""

from __future__ import annotations

import argparse
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


def flag_number(text: str) -> float:
    """argparse ``type`` of every number flag: :func:`read_number` or a one-line refusal."""
    value = read_number(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"must be an ASCII decimal number (like 12, 0.5 or 1e-3), got {echo(text)}")
    return value


def flag_integer(text: str) -> int:
    """argparse ``type`` of every integer flag: :func:`read_integer` or a one-line refusal."""
    value = read_integer(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"must be an integer in ASCII decimal digits, got {echo(text)}")
    return value


# What each reader returns, for code that reads a flag's Python type from its argparse action (primaldual/commands/_config.py).
flag_number.reads = float  # type: ignore[attr-defined]
flag_integer.reads = int  # type: ignore[attr-defined]


def use_ascii_numbers(parser: argparse.ArgumentParser) -> None:
    """Give every ``type=int``/``type=float`` argument of ``parser`` and its subcommands the readers above (one
    rule for every flag, whichever module declared it)."""
    for action in parser._actions:
        if action.type is float:
            action.type = flag_number
        elif action.type is int:
            action.type = flag_integer
        if isinstance(action, argparse._SubParsersAction):
            for command in set(action.choices.values()):
                use_ascii_numbers(command)


__all__ = ["ECHO_CHARACTERS", "echo", "flag_integer", "flag_number", "read_integer", "read_number",
           "use_ascii_numbers"]
