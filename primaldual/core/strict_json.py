"""Strict reading of the JSON files (instances, schedules): every way a file can be unreadable, a key given
twice, and a key the format does not have are each an :class:`InputError` naming the file and the key's path.

- :data:`FILE_KEYS` is the one list of the keys each object of each format may hold (adding a key to a format
  is one line here); ``meta`` objects hold anything.
- :func:`unknown_keys` names a key not in the list, with the closest known key where one is close
  (``difflib``: ``horizn`` -> did you mean ``horizon``?).
- :func:`read_json` refuses a duplicate key (JSON parsers otherwise keep the last one silently) with its path
  (``jobs[3].utility.value``), a folder or an unreadable path in one line, text that is not UTF-8, malformed
  JSON with its line and column, nesting deeper than the parser holds, and numbers no float holds (kept as
  :class:`~primaldual.core.domains.JsonOverflow` so the field check names them).

Cost: one pass of the parser, plus one walk of the parsed tree only when a duplicate was seen.
"""

from __future__ import annotations

import difflib
import json
import math
from pathlib import Path
from typing import Any, Iterable

from primaldual.core.domains import JOB_FIELDS, JsonOverflow
from primaldual.core.errors import InputError

FILE_KEYS: dict[str, tuple[str, ...]] = {
    "instance": ("format", "version", "horizon", "slot_seconds", "meta", "cluster", "jobs"),
    "instance.cluster": ("resources", "worker_servers", "ps_servers", "gpu_types", "worker_types"),
    "instance.jobs[]": (*JOB_FIELDS, "name", "worker_demand", "ps_demand", "utility", "compute_seconds_by_type"),
    "schedule": ("format", "version", "meta", "jobs", "instance", "provenance"),
    "schedule.jobs[]": ("job", "workers", "parameter_servers"),
}


def close_match(key: str, known: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for the closest known key, or empty when none is close."""
    match = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def unknown_keys(data: dict, kind: str, where: str = "") -> list[str]:
    """A message per key of ``data`` that :data:`FILE_KEYS` ``[kind]`` does not list."""
    known = FILE_KEYS[kind]
    prefix = f"{where}." if where else ""
    return [f"{prefix}{key}: unknown field{close_match(key, known)} (known: {', '.join(known)})"
            for key in data if key not in known]


class _Object(dict):
    """A parsed JSON object; ``duplicates`` lists the keys it was given more than once."""

    duplicates: tuple[str, ...] = ()


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _parse_int(text: str):
    # Python refuses to convert integers of more than 4300 digits (ValueError inside the parser, with no
    # field name); keep such a number as text so the field check names it and its range.
    return JsonOverflow(text) if len(text) > 400 else int(text)


def _parse_float(text: str):
    value = float(text)
    return value if math.isfinite(value) else JsonOverflow(text)


def _first_duplicate(data: Any, where: str = "") -> str | None:
    """The path of the first key given twice (depth first, in file order)."""
    stack = [(data, where)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, _Object):
            if node.duplicates:
                return f"{at}.{node.duplicates[0]}" if at else node.duplicates[0]
            stack += [(value, f"{at}.{key}" if at else key) for key, value in reversed(node.items())]
        elif isinstance(node, list):
            stack += [(value, f"{at}[{n}]") for n, value in reversed(list(enumerate(node)))]
    return None


def read_json(path: str | Path, what: str) -> Any:
    """Parse a JSON file strictly (see the module docstring); every problem is one :class:`InputError`."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} file not found", source=str(path)) from None
    except IsADirectoryError:
        raise InputError(f"{what} file expected, got a folder", source=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read {what} file: {error.strerror}", source=str(path)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text: byte 0x{raw[error.start]:02x} at offset {error.start}",
                         source=str(path)) from None
    seen_duplicate = []

    def pairs(items):
        obj = _Object(items)
        if len(obj) < len(items):
            counts: dict[str, int] = {}
            for key, _ in items:
                counts[key] = counts.get(key, 0) + 1
            obj.duplicates = tuple(key for key, count in counts.items() if count > 1)
            seen_duplicate.append(True)
        return obj

    try:
        data = json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_reject_constant,
                          object_pairs_hook=pairs)
    except json.JSONDecodeError as error:
        raise InputError(
            f"malformed JSON at line {error.lineno} column {error.colno}: {error.msg}", source=str(path)
        ) from None
    except RecursionError:
        raise InputError("malformed JSON: nested too deeply (arrays or objects inside each other)",
                         source=str(path)) from None
    except ValueError as error:
        raise InputError(f"malformed JSON: {error}", source=str(path)) from None
    if seen_duplicate:
        where = _first_duplicate(data)
        raise InputError(f"{where}: duplicate key (given twice in one object; a JSON reader would keep only the "
                         f"last)", source=str(path))
    return data


__all__ = ["FILE_KEYS", "close_match", "read_json", "unknown_keys"]
