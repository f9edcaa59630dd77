"""What a path given to a command may be, for reading and for writing (docs/input-ranges.md, "Paths").

One rule, applied to every path flag of every command by the flag check (``primaldual.commands._flags``) before
any handler runs, and again by the writers (:mod:`primaldual.core.output`) for the paths a command makes itself
(``OUT.config.toml``, a default results file):

- ``''`` is refused (it names no file; it used to write nothing without a word);
- ``-`` is refused: no command reads standard input or writes standard output through a path, and a file named
  ``-`` is what a user least expects (``./-`` names one on purpose);
- a trailing ``/`` names a folder: refused where a file is expected (``-o out/`` wrote a file ``out``;
  ``i.json/`` was read as ``i.json``);
- a node that is not a regular file or folder (a character or block device such as ``/dev/zero`` or
  ``/dev/null``, a FIFO, a socket), directly or through a link, is refused **before it is opened**: read, a
  device never ends and a FIFO blocks forever; written, the node would be replaced by a regular file
  (``/dev/null`` itself, as root). The kind is read with ``os.stat`` only;
- written, a folder where a file is expected (or a file where a folder is) is refused, and so is the file
  system's root as an output folder (a report scattered into ``/``).

A missing path passes (a new output; an input the reader then names as missing, or a packaged trace name).
Cost: one ``stat`` per path.
"""

from __future__ import annotations

import errno
import os
import stat

from primaldual.core.errors import InputError
from primaldual.core.numerals import echo

#: What a path is expected to name: a file, a folder, or either (``plot --out``: a folder of figures, or the
#: one figure of ``plot schedule``; the command's writer then checks which).
FILE, FOLDER, EITHER = "a file", "a folder", "a file or folder"

_NODES = ((stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"), (stat.S_ISFIFO, "FIFO (named pipe)"),
          (stat.S_ISSOCK, "socket"))


def node_kind(path) -> str | None:
    """``"file"``, ``"folder"`` or the kind of special node ``path`` names (links followed), None when there
    is nothing there (or a parent is a file, or the whole path is longer than the system looks up: the reader
    or writer names that). Never opens the path; another :class:`OSError` of the lookup (a loop of links, no
    permission) is raised."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
            return None
        raise
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    return next((name for test, name in _NODES if test(mode)), "special file")


def path_problem(path, *, write: bool, expect: str = FILE, mismatch: bool = True) -> str | None:
    """Why ``path`` may not be read (``write=False``) or written as ``expect``, or None (module docstring).
    ``mismatch=False`` leaves a folder where a file is expected (and the reverse) to the writer's own check,
    which names the flag as its command spells it (``-o``)."""
    text = os.fspath(path)
    if text == "":
        return "an empty path names no file; give a file name"
    if text == "-":
        return "'-' (standard input or output) is not supported; give a file name ('./-' for a file named -)"
    if expect == FILE and text.endswith("/") and (write or os.path.isfile(text.rstrip("/"))):
        # Read, 'i.json/' would be read as i.json (pathlib drops the '/'); a missing path is left to the reader
        # (a packaged trace name, or "no such file").
        return f"{echo(text)} ends in '/', which names a folder; expected a file name"
    try:
        kind = node_kind(text)
    except OSError as error:
        return f"{echo(text)}: cannot be looked up: {error.strerror}"
    if kind not in (None, "file", "folder"):
        verb = "written over" if write else "read (it may never end)"
        return f"{echo(text)} is a {kind}, not a regular file; it is never {verb}"
    if write and mismatch and expect == FILE and kind == "folder":
        return f"{echo(text)} is a folder, expected a file name"
    if write and mismatch and expect == FOLDER and kind == "file":
        return f"{echo(text)} is a file, expected a folder"
    if write and expect == FOLDER and os.path.realpath(text) == os.path.realpath(os.sep):
        return f"{echo(text)} is the file system's root; give a folder of its own for the output"
    return None


def check_path(path, flag: str | None, *, write: bool, expect: str = FILE, mismatch: bool = True) -> None:
    """Raise :class:`InputError` (exit 2) ``FLAG: why`` when :func:`path_problem` refuses ``path``."""
    found = path_problem(path, write=write, expect=expect, mismatch=mismatch)
    if found:
        raise InputError(f"{flag}: {found}" if flag else found)


__all__ = ["EITHER", "FILE", "FOLDER", "check_path", "node_kind", "path_problem"]
