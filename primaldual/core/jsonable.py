"""Results as JSON: the one cleaner every result goes through before it is written or printed.

Objects with ``to_dict`` and dataclasses become dicts, numpy scalars and arrays become Python values, tuples
become lists and non-finite floats become ``null`` (JSON has no inf or NaN), so the simulator, the offline
solve, sweep records and ``--json`` output all write the same JSON for the same value.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np


def json_default(value: Any):
    """``json.dumps(default=...)`` for numpy scalars and arrays (shared by records and ``--json`` output)."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def fields_of(record) -> dict:
    """A dataclass's fields by name, in order (not converted: :func:`jsonable` does that)."""
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def jsonable(value: Any, depth: int = 0):
    """A JSON-safe copy, the one cleaner of results: objects with ``to_dict`` and dataclasses to dicts, numpy
    scalars and arrays to Python, tuples to lists, non-finite floats to None (JSON has no inf or NaN)."""
    if depth > 50:
        raise ValueError("jsonable: nested more than 50 levels deep")
    if hasattr(value, "to_dict") and not isinstance(value, type):
        value = value.to_dict()
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = fields_of(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist(), depth + 1)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


__all__ = ["fields_of", "json_default", "jsonable"]
