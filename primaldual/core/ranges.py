"""Types and finite ranges of command-line flags and scheduler parameters (docs/input-ranges.md).

A value the user types is checked against one of these kinds before anything is read, generated or allocated
from it:

- :class:`FlagRange`: a number in a :class:`~primaldual.core.domains.Domain` (both ends finite; ``high_open``
  for ``[0, 1)``; ``off``: 0 also allowed; ``optional``: ``None`` also allowed, a parameter's "not set");
- :class:`Boolean`: ``true`` / ``false`` only, never a truthy string or list;
- :class:`Choice`: one of a fixed list of names;
- :class:`Text`: a string of at most ``length`` characters whose meaning a later parser checks (a list of
  names, ``START:HOURS``, a path), so no flag can carry megabytes;
- :class:`PythonOnly`: a value only a Python caller can build (an object); refused from text.

:func:`problem` is the one check; it returns the message ``NAME: must be RANGE, got VALUE`` or None.
Cost O(1) per value (a string's length is read, never scanned).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from primaldual.core.domains import Domain, show
from primaldual.core.numerals import echo

#: numpy's seeds: every seed flag and parameter.
SEED_HIGH = 2 ** 32 - 1
#: Longest text of any flag whose value a later parser reads (lists of names, ``START:HOURS``, addresses).
MAX_TEXT = 10_000
#: Longest path (Linux's PATH_MAX).
MAX_PATH = 4096
#: Longest file or folder name in a path, in bytes (Linux's NAME_MAX): a longer one is "File name too long".
MAX_NAME_BYTES = 255


@dataclass(frozen=True)
class FlagRange:
    """A number in ``domain``; ``off``: 0 (off) also; ``high_open``: the upper end excluded; ``optional``:
    ``None`` also (a scheduler parameter's default "not set")."""

    domain: Domain
    off: bool = False
    high_open: bool = False
    optional: bool = False

    def describe(self) -> str:
        domain = self.domain
        if domain.integer:
            text = f"an integer in {_whole(domain.low)}..{_whole(domain.high)}"
        elif self.high_open:
            text = domain.describe()[:-1] + ")"
        else:
            text = domain.describe()
        return ("0 (off) or " if self.off else "") + ("null or " if self.optional else "") + text

    def contains(self, value) -> bool:
        if value is None:
            return self.optional
        if self.off and not isinstance(value, (bool, np.bool_)) and value == 0:
            return True
        if self.high_open and self.domain.contains(value) and value >= self.domain.high:
            return False
        return self.domain.contains(value)


@dataclass(frozen=True)
class Boolean:
    optional: bool = False

    def describe(self) -> str:
        return "true or false" + (" (or null)" if self.optional else "")

    def contains(self, value) -> bool:
        return isinstance(value, (bool, np.bool_)) or (self.optional and value is None)


@dataclass(frozen=True)
class Choice:
    names: tuple[str, ...]
    optional: bool = False

    def describe(self) -> str:
        return "one of " + ", ".join(self.names) + (" (or null)" if self.optional else "")

    def contains(self, value) -> bool:
        return (self.optional and value is None) or (isinstance(value, str) and value in self.names)


@dataclass(frozen=True)
class Text:
    """A string a later parser reads (``what`` says what it holds), at most ``length`` characters."""

    what: str
    length: int = MAX_TEXT

    def describe(self) -> str:
        return f"{self.what} of at most {self.length:,} characters"

    def contains(self, value) -> bool:
        return value is None or (isinstance(value, str) and len(value) <= self.length)


def longest_name(path: str) -> str:
    """The longest file or folder name of ``path`` in bytes (what :data:`MAX_NAME_BYTES` bounds)."""
    return max(path.split("/"), key=lambda name: len(name.encode("utf-8", "surrogateescape")), default="")


@dataclass(frozen=True)
class PathText(Text):
    """A path (:class:`Text`) whose every file or folder name is at most :data:`MAX_NAME_BYTES` bytes: the one
    path check of every command, before anything is read or written."""

    def contains(self, value) -> bool:
        if not super().contains(value) or value is None:
            return super().contains(value)
        return len(longest_name(value).encode("utf-8", "surrogateescape")) <= MAX_NAME_BYTES


@dataclass(frozen=True)
class PythonOnly:
    """A parameter only a Python caller sets (an object of ``what``); from text it is refused."""

    what: str
    instead: str = ""

    def describe(self) -> str:
        return f"set from Python only ({self.what}){'; ' + self.instead if self.instead else ''}"

    def contains(self, value) -> bool:
        return value is None or not isinstance(value, (str, int, float, bool, list, dict, np.generic))


def _whole(x: float) -> str:
    x = int(x)
    power = len(str(x)) - 1
    return f"10^{power}" if x >= 10 ** 6 and x == 10 ** power else str(x)


def integer(low: int, high: int, off: bool = False, optional: bool = False) -> FlagRange:
    return FlagRange(Domain(low, high, integer=True), off=off, optional=optional)


def number(low: float, high: float, low_open: bool = False, high_open: bool = False,
           optional: bool = False) -> FlagRange:
    return FlagRange(Domain(low, high, low_open=low_open), high_open=high_open, optional=optional)


SEED = integer(0, SEED_HIGH)
BOOLEAN = Boolean()

RANGE_KINDS = (FlagRange, Boolean, Choice, Text, PythonOnly)


def problem(name: str, kind, value) -> str | None:
    """``NAME: must be RANGE, got VALUE`` when ``value`` is outside ``kind``, else None."""
    if kind.contains(value):
        return None
    if isinstance(value, str) and isinstance(kind, PathText) and len(value) <= kind.length:
        longest = longest_name(value)
        return (f"{name}: a file or folder name holds at most {MAX_NAME_BYTES} bytes, got one of "
                f"{len(longest.encode('utf-8', 'surrogateescape')):,} bytes ({echo(longest)})")
    if isinstance(value, str) and isinstance(kind, Text):
        return f"{name}: must be {kind.describe()}, got a text of {len(value):,} characters"
    return f"{name}: must be {kind.describe()}, got {show(value)}"


__all__ = ["BOOLEAN", "Boolean", "Choice", "FlagRange", "MAX_NAME_BYTES", "MAX_PATH", "MAX_TEXT", "PathText",
           "PythonOnly", "RANGE_KINDS", "SEED", "SEED_HIGH", "Text", "integer", "longest_name", "number", "problem"]
