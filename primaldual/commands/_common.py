"""Helpers shared by the subcommands: the ``--json`` flag and its one-object output."""

from __future__ import annotations

import json
import sys

from primaldual.records import json_default


def print_json(data: dict) -> None:
    """One JSON object on stdout (the ``--json`` contract of design.md section 4)."""
    sys.stdout.write(json.dumps(data, default=json_default, allow_nan=False, sort_keys=False) + "\n")


def add_json_flag(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of text")
