"""Helpers shared by the subcommands: the ``--json`` flag and its one-object output."""

from __future__ import annotations

import json
import os
import sys

from primaldual.core.jsonable import json_default


def print_json(data: dict) -> None:
    """One JSON object on stdout (docs/architecture.md, Command-line output)."""
    sys.stdout.write(json.dumps(data, default=json_default, allow_nan=False, sort_keys=False) + "\n")


def add_json_flag(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout instead of text")


def check_output_path(path, flag: str, *, directory: bool = False):
    """Refuse an output destination before any work is done (exit 2 via :class:`InputError`).

    The one rule for every command that writes: missing parent folders are created; a destination that is a
    directory where a file is expected (or a file where a folder is expected), or that cannot be written, is
    refused with the flag's name. Returns the path as a :class:`pathlib.Path`.
    """
    from pathlib import Path

    from primaldual.core.errors import InputError

    target = Path(path)
    if directory:
        if target.exists() and not target.is_dir():
            raise InputError(f"{flag}: {target} is a file, expected a folder")
        folder = target
    else:
        if target.is_dir():
            raise InputError(f"{flag}: {target} is a folder, expected a file name")
        folder = target.parent if str(target.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError(f"{flag}: cannot create folder {folder}: a file of that name is in the way") from None
    except OSError as error:
        raise InputError(f"{flag}: cannot create folder {folder}: {error.strerror}") from None
    if not os.access(folder, os.W_OK):
        raise InputError(f"{flag}: folder {folder} is not writable")
    if not directory and target.exists() and not os.access(target, os.W_OK):
        raise InputError(f"{flag}: {target} is not writable")
    return target
