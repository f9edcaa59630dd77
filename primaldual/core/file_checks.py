"""The checks every file reader of :mod:`primaldual.core.files` starts with: numbers, the header (format and
version) and ``meta``. Each returns or appends one line per problem, naming the field."""

from __future__ import annotations

import json
import math
from typing import Any

from primaldual.core.domains import show

#: The version of every file but a heterogeneous instance's.
VERSION = 1
#: The instance file of a heterogeneous cluster (GPU types, docs/formats.md); version 1 is the homogeneous one.
TYPED_VERSION = 2


def _is_number(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)  # an int is exact: never through float()


def _is_integer(value) -> bool:
    return _is_number(value) and (isinstance(value, int) or float(value).is_integer())


def _check_header(data: Any, expected_format: str, versions: tuple[int, ...] = (VERSION,)) -> list[str]:
    if not isinstance(data, dict):
        return [f"top level: must be a JSON object, got {type(data).__name__}"]
    problems = []
    if data.get("format") != expected_format:
        problems.append(f"format: must be {expected_format!r}, got {show(data.get('format'))}")
    version = data.get("version")
    if isinstance(version, bool) or version not in versions:
        known = " or ".join(map(str, versions))
        problems.append(f"version: this primaldual reads schema version {known}, got {show(version)}")
    return problems


def _check_meta(data: dict, problems: list[str]) -> dict:
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        problems.append(f"meta: must be an object, got {type(meta).__name__}")
        return {}
    try:
        json.dumps(meta, allow_nan=False, default=_reject_in_meta)
    except (TypeError, ValueError) as error:
        problems.append(f"meta: {error}")
    return meta


def _reject_in_meta(value):
    raise TypeError(f"must hold plain JSON values, got {show(value)}")
