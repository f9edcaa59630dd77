"""Helpers shared by the subcommands: JSON output and loading inputs with clear errors."""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np


def _default(value: Any):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def print_json(data: dict) -> None:
    """One JSON object on stdout (the ``--json`` contract of design.md section 4)."""
    sys.stdout.write(json.dumps(data, default=_default, allow_nan=False, sort_keys=False) + "\n")


def add_json_flag(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of text")
