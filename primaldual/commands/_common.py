"""Helpers shared by the subcommands: the ``--json`` flag and its one-object output."""

from __future__ import annotations

import json
import sys

from primaldual.core.jsonable import json_default


def print_json(data: dict) -> None:
    """One JSON object on stdout (docs/architecture.md, Command-line output)."""
    sys.stdout.write(json.dumps(data, default=json_default, allow_nan=False, sort_keys=False) + "\n")


def add_json_flag(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of text")


def check_output_path(path, flag: str, *, directory: bool = False):
    """The output rule of every command (:func:`primaldual.core.output.check_output`): missing parents are
    created, an unwritable destination is exit 2 naming ``flag`` and the path, before any work."""
    from primaldual.core.output import check_output

    return check_output(path, flag, directory=directory)
