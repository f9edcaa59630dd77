"""Which instance a schedule file belongs to: the instance's fingerprint, written into the schedule, checked on load.

**The fingerprint** of an instance is ``sha256:`` and the first 16 hex digits of the SHA-256 of its canonical
JSON: the instance file's object (:func:`primaldual.core.files.instance_to_dict`) without ``meta`` (free-form
provenance, which does not change the scheduling problem), with sorted keys and no spaces. Floats are written
with ``repr`` precision, so two instances have the same fingerprint exactly when every number, name and
utility of their problems is the same; a change of one job's arrival or one server's capacity changes it. 64
bits make an accidental collision between two instances of one user negligible (below 2^-32 among 2^16
instances); the fingerprint guards against mistakes, not against an adversary.

**A schedule file** written with its instance carries ``"instance": {"fingerprint": F, "jobs": I,
"horizon": T}`` (:func:`stamp`). Loading it against an instance (:func:`check_pair`, before the file is parsed)
refuses a different fingerprint with one line naming both. A file without a fingerprint (written before
fingerprints, or by hand) still loads, with a one-line :class:`UnstampedScheduleWarning`, after a check that it
can belong to the instance at all: every job index is one of the instance's jobs, every slot is inside its
horizon, every server exists (before parsing), and, once its fields parse (:func:`check_unstamped`), no job has a
worker or parameter server before its arrival slot. A schedule that fails these is
named as a schedule of another instance (:class:`~primaldual.core.errors.InputError`, exit 2) instead of
becoming a list of constraint violations. The check reads the file's triples once: linear in the file's size.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from typing import Any

from primaldual.core.errors import InputError
from primaldual.core.plural import counted

#: The schedule file's key for the instance it was written for.
INSTANCE_KEY = "instance"
PREFIX = "sha256:"
#: Hex digits kept of the SHA-256 (64 bits).
DIGITS = 16


class UnstampedScheduleWarning(UserWarning):
    """A schedule file without an instance fingerprint was loaded (only its indices and arrivals were checked)."""


def fingerprint_of(instance_data: dict) -> str:
    """The fingerprint of an instance given as its file's object (``instance_to_dict``), ``meta`` left out."""
    canonical = {key: value for key, value in instance_data.items() if key != "meta"}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGITS]


def stamp(schedule_data: dict, instance_data: dict) -> dict:
    """``schedule_data`` with the ``instance`` entry naming ``instance_data``'s fingerprint, job count and horizon."""
    return {**schedule_data, INSTANCE_KEY: {"fingerprint": fingerprint_of(instance_data),
                                            "jobs": len(instance_data["jobs"]),
                                            "horizon": instance_data["horizon"]}}


def check_pair(schedule_data: Any, instance_data: dict, source: str | None = None) -> None:
    """Before parsing: refuse a schedule file of another instance (:class:`InputError`, one line).

    A stamped file must carry ``instance_data``'s fingerprint; an unstamped one must name only the instance's
    jobs, slots and servers. ``schedule_data`` is the parsed file (anything: what is malformed is left to the
    schedule parser, which names its fields), ``instance_data`` the instance's file object.
    """
    if not isinstance(schedule_data, dict):
        return
    expected = fingerprint_of(instance_data)
    entry = schedule_data.get(INSTANCE_KEY)
    if entry is not None:
        found = entry.get("fingerprint") if isinstance(entry, dict) else None
        if not (isinstance(found, str) and found.startswith(PREFIX)):
            raise InputError(f"{INSTANCE_KEY}.fingerprint: must be a string {PREFIX}HEX, got {found!r}", source=source)
        if found != expected:
            raise InputError(f"a schedule of another instance: written for instance {found}, but INSTANCE is "
                             f"{expected}", source=source)
        return
    problem = _misfit(schedule_data, instance_data, arrivals=False)
    if problem is not None:
        raise InputError(f"a schedule of another instance: {problem} (the file carries no instance fingerprint; "
                         f"INSTANCE is {expected})", source=source)


def check_unstamped(schedule_data: dict, instance_data: dict, source: str | None = None) -> None:
    """After a successful parse of a file without a fingerprint: a job that runs before its arrival names the
    file as a schedule of another instance; otherwise one :class:`UnstampedScheduleWarning`."""
    if INSTANCE_KEY in schedule_data:
        return
    problem = _misfit(schedule_data, instance_data, arrivals=True)
    if problem is not None:
        raise InputError(f"a schedule of another instance: {problem} (the file carries no instance fingerprint; "
                         f"INSTANCE is {fingerprint_of(instance_data)})", source=source)
    where = f"{source}: " if source else ""
    warnings.warn(f"{where}no instance fingerprint (an older or hand-written schedule file): checked only that its "
                  "jobs, slots, servers and arrivals fit INSTANCE", UnstampedScheduleWarning, stacklevel=3)


def _misfit(schedule_data: dict, instance_data: dict, arrivals: bool) -> str | None:
    """Why the schedule cannot be one of this instance (job count, horizon, servers; with ``arrivals``, a job
    with workers or PSs before its arrival slot), or None. Only well-formed entries are read."""
    jobs, horizon = instance_data["jobs"], instance_data["horizon"]
    cluster = instance_data["cluster"]
    sizes = {"workers": len(cluster["worker_servers"]), "parameter_servers": len(cluster["ps_servers"])}
    entries = schedule_data.get("jobs")
    for entry in entries if isinstance(entries, list) else ():
        job = entry.get("job") if isinstance(entry, dict) else None
        if not isinstance(job, int) or isinstance(job, bool) or job < 0:
            continue
        if job >= len(jobs):
            return f"it schedules job {job}, but INSTANCE has {counted(len(jobs), 'job')}"
        for key, size in sizes.items():
            triples = entry.get(key)
            for triple in triples if isinstance(triples, list) else ():
                if not (isinstance(triple, list) and len(triple) == 3 and all(
                        isinstance(v, (int, float)) and not isinstance(v, bool) for v in triple)):
                    continue
                slot, server, count = triple
                if slot >= horizon:
                    return f"job {job} runs in slot {slot}, but INSTANCE has {counted(horizon, 'slot')}"
                if server >= size:
                    return f"job {job} uses {key} server {server}, but INSTANCE has {size}"
                if arrivals and count and slot < jobs[job]["arrival"]:
                    return (f"job {job} has {key} in slot {slot}, before its arrival slot {jobs[job]['arrival']} "
                            "in INSTANCE")
    return None


__all__ = ["INSTANCE_KEY", "UnstampedScheduleWarning", "check_pair", "check_unstamped", "fingerprint_of", "stamp"]
