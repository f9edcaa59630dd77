"""Trace readers: Gavel's job traces (7- and 10-field lines) and a simple CSV, into :class:`TraceJob` records.

A record is what a trace says about one job, in the trace's own units (seconds, GPUs, steps), before any
modelling choice: :mod:`primaldual.traces.convert` turns records into an instance.

**Gavel** (tab-separated, one job a line, blank lines skipped; a line of tabs only has empty fields and is
refused like any line with an empty field):

* 7 fields, as in the shipped Philly traces: job type, command, steps flag, needs data dir, total steps,
  arrival time (s), scale factor (GPUs);
* 10 fields, Gavel's newer format: job type, command, working directory, steps flag, needs data dir, total
  steps, scale factor, priority weight, SLO, arrival time (s).

The priority weight (1 on 7-field lines) multiplies the job's utility weight; the SLO is read, checked and kept
on the record but not used by the conversion (Gavel's SLO has no counterpart in a utility of completion time
that a documented rule could give without guessing; the utility rules of :mod:`primaldual.traces.utility_rules`
decide the deadline). The command, steps flag, data-dir flag and working directory are not needed.

**CSV** (comma-separated, a header line naming the columns, in any order):
``job, arrival_seconds, gpus`` and either ``duration_seconds`` (the running time at ``gpus`` GPUs) or
``steps, model`` (a job type of the throughput table), optionally ``value`` (the utility weight) and
``deadline_seconds`` (from arrival). ``model`` may accompany ``duration_seconds``: it then picks the job's
demand profile only.

Every malformed line raises :class:`InputError` with one line ``FILE:LINE: FIELD: problem``; numbers are
checked against finite ranges (:data:`FIELD_RANGES`), so no NaN, infinity or 1e300 reaches the model.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

from primaldual.core.domains import JOB_FIELDS, MAX_NAME_LENGTH, Domain
from primaldual.core.errors import InputError
from primaldual.core.numerals import echo, read_number

#: The range of every number a trace may hold. Arrivals up to ~31 years, jobs up to 10^9 steps or seconds,
#: scale 1-10,000 GPUs (the cluster's server limit times 8 is larger; a job wider than its cluster is capped or
#: dropped by the conversion, see docs/traces.md).
FIELD_RANGES: dict[str, Domain] = {
    "arrival_seconds": Domain(0, 1e9),
    "gpus": Domain(1, 10_000, integer=True),
    "steps": Domain(1, 1e9, integer=True),
    "duration_seconds": Domain(JOB_FIELDS["compute_seconds"].low, 1e9),  # the instance's shortest slot work
    "value": Domain(0, 1e12),
    "deadline_seconds": Domain(0, 1e9, low_open=True),
    "priority_weight": Domain(0, 1e6),
    "slo": Domain(-1e9, 1e9),
}
GAVEL_7 = ("job_type", "command", "steps_flag", "needs_data_dir", "steps", "arrival_seconds", "gpus")
GAVEL_10 = ("job_type", "command", "working_directory", "steps_flag", "needs_data_dir", "steps", "gpus",
            "priority_weight", "slo", "arrival_seconds")
CSV_REQUIRED = ("job", "arrival_seconds", "gpus")
CSV_OPTIONAL = ("duration_seconds", "steps", "model", "value", "deadline_seconds")


@dataclass(frozen=True)
class TraceJob:
    """One job as a trace states it. ``steps`` with ``model`` or ``duration_seconds`` (or both) is set.

    ``line`` is the 1-based line of the source it came from (for messages); ``model`` the job type (Gavel's
    ``job type``, e.g. ``ResNet-50 (batch size 128)``) or ``""``.
    """

    name: str
    arrival_seconds: float
    gpus: int
    model: str = ""
    steps: int | None = None
    duration_seconds: float | None = None
    value: float | None = None
    deadline_seconds: float | None = None
    priority_weight: float = 1.0
    slo: float | None = None
    line: int = 0


def _number(text: str, field: str, where: str, integer_ok: bool = True) -> float | int:
    """``text`` parsed and checked against :data:`FIELD_RANGES`; one-line :class:`InputError` otherwise."""
    domain = FIELD_RANGES[field]
    value: float | int | None = read_number(text)
    if value is None:
        raise InputError(f"{where}: {field}: must be an ASCII decimal number, got {echo(text.strip())}")
    if domain.integer and math.isfinite(value) and value == int(value):
        value = int(value)
    problems = domain.problem(field, value)
    if problems:
        raise InputError(f"{where}: {problems[0]}")
    return value


def _check_name(name: str, model: str, where: str, columns: str) -> None:
    """The instance names the job ``NAME:MODEL``, at most :data:`MAX_NAME_LENGTH` characters: refuse a longer
    pair here, naming the trace's columns, rather than as an instance field later."""
    if len(name) + len(model) + 1 > MAX_NAME_LENGTH:
        raise InputError(f"{where}: {columns}: at most {MAX_NAME_LENGTH - 1:,} characters together, got "
                         f"{len(name):,} + {len(model):,} ({echo(name if len(name) > len(model) else model)})")


def _gavel_record(fields: list[str], where: str, line: int) -> TraceJob:
    layout = {7: GAVEL_7, 10: GAVEL_10}.get(len(fields))
    if layout is None:
        raise InputError(f"{where}: fields: a Gavel trace line has 7 or 10 tab-separated fields, got {len(fields)}")
    row = dict(zip(layout, fields))
    if not row["job_type"].strip():
        raise InputError(f"{where}: job_type: must not be empty")
    _check_name(f"line{line}", row["job_type"].strip(), where, "job_type")
    slo = None
    if "slo" in row and row["slo"].strip().lower() not in ("none", ""):
        slo = float(_number(row["slo"], "slo", where))
    return TraceJob(
        name=f"line{line}",
        arrival_seconds=float(_number(row["arrival_seconds"], "arrival_seconds", where)),
        gpus=int(_number(row["gpus"], "gpus", where)),
        model=row["job_type"].strip(),
        steps=int(_number(row["steps"], "steps", where)),
        priority_weight=float(_number(row["priority_weight"], "priority_weight", where)) if "priority_weight" in row
        else 1.0,
        slo=slo,
        line=line,
    )


def read_gavel(text: str, source: str) -> tuple[TraceJob, ...]:
    """Every job of a Gavel trace, in file order (7- and 10-field lines may even be mixed)."""
    jobs = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() and "\t" not in raw:
            continue  # a blank line; a line of tabs has (empty) fields, and is read and refused as such
        jobs.append(_gavel_record(raw.rstrip("\r\n").split("\t"), f"{source}:{number}", number))
    return tuple(jobs)


def _csv_header(header: list[str], source: str) -> list[str]:
    names = [name.strip().lower() for name in header]
    missing = [name for name in CSV_REQUIRED if name not in names]
    unknown = [name for name in names if name not in CSV_REQUIRED + CSV_OPTIONAL]
    if missing or unknown:
        parts = ([f"missing column(s) {', '.join(missing)}"] if missing else []) + (
            [f"unknown column(s) {', '.join(echo(name, 30) for name in unknown[:3])}"] if unknown else [])
        raise InputError(f"{source}:1: header: {'; '.join(parts)} (expected {', '.join(CSV_REQUIRED)} and "
                         f"duration_seconds or steps, model; optional value, deadline_seconds)")
    if "duration_seconds" not in names and not ("steps" in names and "model" in names):
        raise InputError(f"{source}:1: header: needs duration_seconds, or steps and model")
    if len(set(names)) != len(names):
        raise InputError(f"{source}:1: header: a column is named twice")
    return names


def _csv_record(row: dict[str, str], where: str, line: int) -> TraceJob:
    def optional(field: str):
        text = row.get(field, "")
        return None if text is None or not text.strip() else _number(text, field, where)

    duration, steps = optional("duration_seconds"), optional("steps")
    model = (row.get("model") or "").strip()
    if duration is None and (steps is None or not model):
        raise InputError(f"{where}: duration_seconds: empty, and steps with model not given either")
    if duration is not None and steps is not None:
        raise InputError(f"{where}: duration_seconds, steps: both given; give one (the running time, or the steps "
                         f"that the model's throughput turns into one)")
    name = (row.get("job") or "").strip() or f"line{line}"
    _check_name(name, model, where, "job, model")
    value, deadline = optional("value"), optional("deadline_seconds")
    return TraceJob(name=name, arrival_seconds=float(_number(row["arrival_seconds"], "arrival_seconds", where)),
                    gpus=int(_number(row["gpus"], "gpus", where)), model=model,
                    steps=None if steps is None else int(steps),
                    duration_seconds=None if duration is None else float(duration),
                    value=None if value is None else float(value),
                    deadline_seconds=None if deadline is None else float(deadline), line=line)


def read_csv(text: str, source: str) -> tuple[TraceJob, ...]:
    """Every job of a CSV trace (module docstring), in file order; lines count from the header (line 1)."""
    # csv's default field limit (131,072 characters) raises inside the reader; the file's size is bounded
    # instead (packaged.MAX_SOURCE_BYTES), and a long field is refused by its column's own check.
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise InputError(f"{source}:1: header: empty file (expected a header line)")
    names = _csv_header(rows[0], source)
    jobs = []
    for number, cells in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(names):
            raise InputError(f"{source}:{number}: fields: expected {len(names)} comma-separated fields, got {len(cells)}")
        jobs.append(_csv_record(dict(zip(names, cells)), f"{source}:{number}", number))
    return tuple(jobs)


def write_csv(jobs, with_steps: bool = True) -> str:
    """The CSV text of ``jobs`` (for users converting a trace, and for the readers' agreement tests)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = ["job", "arrival_seconds", "gpus"] + (["steps", "model"] if with_steps else ["duration_seconds", "model"])
    writer.writerow(columns)
    for job in jobs:
        tail = [job.steps, job.model] if with_steps else [repr(float(job.duration_seconds)), job.model]
        writer.writerow([job.name, repr(float(job.arrival_seconds)), job.gpus, *tail])
    return out.getvalue()
