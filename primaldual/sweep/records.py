"""The results file of a sweep: JSON Lines, one record per spec, keyed by the spec's hash.

A sweep appends one line per finished spec and flushes it to disk before taking the next, so that a sweep
killed at any moment loses at most the record being written. Reading the file back is strict:

- every complete line must be a JSON object with a string ``"key"``; anything else raises
  :class:`ResultsFileError` naming the file and the line number (a results file is never silently dropped
  from);
- a key that appears twice is an error too (a sweep never writes a key twice);
- the *last* line may be cut short (no final newline: the process was killed mid-write). It is then ignored
  if it is not valid JSON, and :meth:`ResultsFile.repair` cuts it off before new lines are appended.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

from primaldual.core.errors import InputError
from primaldual.core.jsonable import json_default


class ResultsFileError(InputError):
    """A results file that cannot be trusted: bad JSON, a record without key, or a duplicated key."""


def dumps_record(record: dict) -> str:
    """One record as one line of JSON (keys sorted, no NaN: a missing number is ``null``)."""
    return json.dumps(record, default=json_default, allow_nan=False, sort_keys=True, separators=(",", ":"))


def _parse_line(text: str, path: Path, number: int) -> dict:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultsFileError(f"line {number}: not valid JSON ({error.msg} at column {error.colno})", source=str(path)) from None
    if not isinstance(record, dict):
        raise ResultsFileError(f"line {number}: a record must be a JSON object, got {type(record).__name__}", source=str(path))
    if not isinstance(record.get("key"), str) or not record["key"]:
        raise ResultsFileError(f"line {number}: the record has no string \"key\"", source=str(path))
    return record


def iter_lines(path: str | Path) -> Iterator[tuple[int, str, bool]]:
    """``(line number, text, complete)`` for each non-blank line; ``complete`` is False for a last line
    without its newline."""
    path = Path(path)
    with open(path, "rb") as handle:
        data = handle.read()
    lines = data.split(b"\n")
    # split() leaves '' after a final newline; anything else after the last newline is a cut-short line.
    for index, raw in enumerate(lines):
        is_last = index == len(lines) - 1
        if is_last and raw == b"":
            break
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            if is_last:
                yield index + 1, "", False
                break
            raise ResultsFileError(f"line {index + 1}: not UTF-8 text", source=str(path)) from None
        if not text.strip():
            continue
        yield index + 1, text, not is_last


def read_records(path: str | Path) -> dict[str, dict]:
    """The records of ``path`` by key, in file order; ``{}`` if the file does not exist.

    Raises :class:`ResultsFileError` (with the line number) for a malformed complete line or a repeated key.
    A cut-short last line is skipped if it is not valid JSON.
    """
    path = Path(path)
    if not path.exists():
        return {}
    records: dict[str, dict] = {}
    where: dict[str, int] = {}
    for number, text, complete in iter_lines(path):
        if not complete:
            try:
                record = _parse_line(text, path, number)
            except ResultsFileError:
                break  # killed mid-write: this record was never finished
        else:
            record = _parse_line(text, path, number)
        key = record["key"]
        if key in records:
            raise ResultsFileError(
                f"line {number}: key {key} already appeared on line {where[key]} (a sweep writes each key once)",
                source=str(path),
            )
        records[key] = record
        where[key] = number
    return records


class ResultsFile:
    """Appends records to a JSONL file, one flushed and fsync'ed line each."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def read(self) -> dict[str, dict]:
        return read_records(self.path)

    def repair(self) -> None:
        """Make the file end with a newline: drop a cut-short last line, or finish a complete one."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as handle:
            data = handle.read()
        if not data or data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1  # 0 when the only line is the cut one
        tail = data[cut:]
        try:
            _parse_line(tail.decode("utf-8"), self.path, data.count(b"\n") + 1)
            keep = True
        except (ResultsFileError, UnicodeDecodeError):
            keep = False
        with open(self.path, "r+b") as handle:
            if keep:
                handle.seek(0, os.SEEK_END)
                handle.write(b"\n")
            else:
                handle.truncate(cut)
            handle.flush()
            os.fsync(handle.fileno())

    def drop(self, keys) -> None:
        """Rewrite the file without the records of ``keys`` (atomically: a new file renamed over the old one)."""
        keys = set(keys)
        kept = [record for key, record in read_records(self.path).items() if key not in keys]
        temporary = self.path.with_name(self.path.name + ".tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.writelines(dumps_record(record) + "\n" for record in kept)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)

    def __enter__(self) -> "ResultsFile":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.repair()
        self._handle = open(self.path, "a", encoding="utf-8")
        return self

    def append(self, record: dict) -> None:
        """Write one record as one line and push it to disk before returning."""
        line = dumps_record(record) + "\n"
        self._handle.write(line)
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def __exit__(self, *exc) -> None:
        self._handle.close()


__all__ = ["ResultsFile", "ResultsFileError", "dumps_record", "read_records"]
