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
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

from primaldual.core.errors import InputError
from primaldual.core.jsonable import json_default
from primaldual.evaluation.bounds import OptInterval, Ratio


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


@dataclass(frozen=True)
class SchedulerEntry:
    """One scheduler's part of a record (``record["schedulers"][name]``), read once: the verifier's ``utility``,
    ``feasible``, and the JSON forms of its metrics, parameters, report and per-job ``outcomes`` (None when the
    record does not carry them)."""

    utility: float | None = None
    feasible: bool = False
    metrics: Mapping[str, Any] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    report: Mapping[str, Any] = field(default_factory=dict)
    outcomes: Mapping[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> "SchedulerEntry":
        # Hand-made records (notebooks, tests) may leave any part out; what is missing reads as absent.
        if not isinstance(data, Mapping):
            return cls()
        return cls(utility=data.get("utility"), feasible=bool(data.get("feasible", False)),
                   metrics=data.get("metrics") or {}, parameters=data.get("parameters") or {},
                   report=data.get("report") or {}, outcomes=data.get("outcomes"))

    @property
    def certificate(self) -> Mapping[str, Any]:
        """The certificate the scheduler reported (its JSON form; ``{}`` if it offers none)."""
        return self.report.get("certificate") or {}

    @property
    def utilisation(self) -> Mapping[str, Mapping[str, float | None]]:
        """``{pool: {resource: mean utilisation}}`` from the run's metrics (``{}`` if not recorded)."""
        return self.metrics.get("utilisation") or {}


@dataclass(frozen=True)
class Record:
    """A sweep record read into typed parts (the format is in ``docs/formats.md``): the spec and instance summary
    as written, each scheduler's :class:`SchedulerEntry`, the offline solve's entry, the OPT interval as an
    :class:`~primaldual.evaluation.bounds.OptInterval` (None if the record has none) and each scheduler's
    :class:`~primaldual.evaluation.bounds.Ratio`. ``data`` is the record itself, for what is not typed here."""

    key: str
    spec: Mapping[str, Any]
    instance: Mapping[str, Any]
    schedulers: Mapping[str, SchedulerEntry]
    opt: Mapping[str, Any]
    opt_interval: OptInterval | None
    ratios: Mapping[str, Ratio]
    data: Mapping[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def of(cls, data: "Record | Mapping[str, Any]") -> "Record":
        """``data`` as a :class:`Record` (a record already read is returned as it is)."""
        if isinstance(data, Record):
            return data
        interval = data.get("opt_interval")
        return cls(
            key=str(data.get("key", "")), spec=data.get("spec") or {}, instance=data.get("instance") or {},
            schedulers={name: SchedulerEntry.from_dict(entry) for name, entry in (data.get("schedulers") or {}).items()},
            opt=data.get("opt") or {}, opt_interval=None if interval is None else OptInterval.from_dict(interval),
            ratios={name: _ratio(ratio) for name, ratio in (data.get("ratios") or {}).items() if ratio is not None},
            data=data,
        )

    @property
    def label(self) -> str:
        return self.spec.get("label", "")

    @property
    def time_limited(self) -> bool:
        """Whether the OPT solve was stopped by the clock (its numbers then depend on the machine's speed)."""
        return bool(self.opt.get("time_limited"))

    def certificate(self, name: str) -> Mapping[str, Any]:
        """Scheduler ``name``'s reported certificate (``{}`` if it did not run or offers none)."""
        entry = self.schedulers.get(name)
        return {} if entry is None else entry.certificate


def _ratio(data: Mapping[str, Any]) -> Ratio:
    """A record's ratio; a hand-made one may leave out ``exact`` and ``proven`` (read as False)."""
    return Ratio(data["lower"], data["upper"], bool(data.get("exact", False)), bool(data.get("proven", False)),
                 data.get("certificate"))


def typed(records: Iterable[Record | Mapping[str, Any]]) -> list[Record]:
    """``records`` (dicts as written, or records already read) as :class:`Record` values."""
    return [Record.of(record) for record in records]


__all__ = ["Record", "ResultsFile", "ResultsFileError", "SchedulerEntry", "dumps_record", "read_records", "typed"]
