"""The one rule for every file or folder a command writes (``-o``, ``--out``, ``--output``, ``--write-mps``,
figures, reports; docs/input-ranges.md, "Output paths").

1. **Missing parent folders are created** (``mkdir -p``), by every writer alike.
2. A destination that cannot be written is refused before any work, naming the flag and the path: what
   :mod:`primaldual.core.paths` refuses (``''``, ``-``, ``dir/`` for a file, a device or FIFO, a folder where a
   file is expected or the reverse), a parent that is a file, a read-only folder (:func:`check_output`).
3. A file is never left half written: :func:`replacing` writes to a temporary file beside the target and
   renames it over the target only once it is complete (a rename within one folder is atomic on POSIX); on
   any error the temporary file is removed and the target is untouched. A write that fails midway (disk
   full, a folder made read-only meanwhile) is an :class:`InputError` naming the path, never a traceback.
   A device or FIFO is never replaced (refused again at the write, for paths no flag named); a link to a
   regular file is written through, so the link stays a link.

Cost: one ``stat`` and ``mkdir`` per destination, one rename per file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

from primaldual.core.errors import InputError
from primaldual.core.numerals import echo
from primaldual.core.paths import FILE, FOLDER, check_path

#: The process's umask, read once: a temporary file is made 0600, the target gets what a plain open() gives.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def check_output(path, flag: str, *, directory: bool = False) -> Path:
    """Refuse an output destination before any work is done (exit 2 via :class:`InputError`); create the
    missing parent folders (or the folder itself, ``directory=True``). Returns the path."""
    check_path(path, flag, write=True, expect=FOLDER if directory else FILE)
    target = Path(path)
    folder = target if directory else target.parent if str(target.parent) else Path(".")
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


def refuse_writing_an_input(outputs, inputs) -> None:
    """Refuse (exit 2, before anything is read) an output that is one of the command's own input files:
    ``outputs`` and ``inputs`` are ``(flag, path)`` pairs. Only an existing input can be lost, so a path that is
    not a file yet (or a packaged name) is never the same file; a link or another spelling of the path is."""
    for out_flag, out_path in outputs:
        for in_flag, in_path in inputs:
            if _same_file(out_path, in_path):
                raise InputError(f"{out_flag}: {echo(str(out_path))} is also the input {in_flag}: writing it would "
                                 f"replace that input; give another output path")


def _same_file(output, source) -> bool:
    """``output`` names the existing file ``source``: the same file (links too), or the same path once
    ``..`` is resolved textually (``sub/../a.json`` is ``a.json`` after the output's folders are created)."""
    try:
        if not os.path.isfile(source):
            return False  # a path that is no file yet (or a packaged name) is no file to lose
        if os.path.exists(output) and os.path.samefile(output, source):
            return True
        return os.path.normpath(os.path.abspath(output)) == os.path.normpath(os.path.realpath(source)) or \
            os.path.normpath(os.path.abspath(output)) == os.path.normpath(os.path.abspath(source))
    except (OSError, ValueError):  # a path that cannot be looked up cannot be compared: the write will say why
        return False


@contextlib.contextmanager
def replacing(path, flag: str | None = None) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix, so a writer that reads the format from the name still
    can) to write to; renamed onto ``path`` when the block ends without error, removed otherwise. An
    :class:`OSError` of the write or the rename is an :class:`InputError` naming ``flag`` and ``path``."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    check_path(target, flag, write=True)
    prefix = f"{flag}: " if flag else ""
    folder = target.parent if str(target.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{target.suffix}", dir=folder)
        os.close(handle)
        os.chmod(temporary, 0o666 & ~_UMASK)
    except OSError as error:
        raise InputError(f"{prefix}cannot write {target}: {error.strerror or error}") from None
    temporary = Path(temporary)
    try:
        yield temporary
        os.replace(temporary, target)
    except OSError as error:
        raise InputError(f"{prefix}cannot write {target}: {error.strerror or error}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def write_text(path, text: str, flag: str | None = None) -> None:
    """``path.write_text(text)`` through :func:`replacing` (UTF-8)."""
    with replacing(path, flag) as temporary:
        temporary.write_text(text, encoding="utf-8")


__all__ = ["check_output", "refuse_writing_an_input", "replacing", "write_text"]
