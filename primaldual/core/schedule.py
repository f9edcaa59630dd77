"""A schedule: per admitted job, workers per worker server per slot and PSs per PS server per slot.

``Schedule.assignments[i].workers[t, h]`` is ``y_ih(t)`` and ``.parameter_servers[t, k]`` is ``z_ik(t)``;
a job is admitted (``x_i = 1``) iff it has an entry. Counts are stored as given (a hand-written file may hold a
fractional or negative count); :func:`primaldual.core.verify.verify` is what judges them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np


def _counts(array) -> np.ndarray:
    out = np.asarray(array)
    if out.dtype.kind in "iub":
        out = out.astype(np.int64)
    else:
        out = out.astype(float)
        if np.all(np.isfinite(out)) and np.all(out == np.round(out)):
            out = out.astype(np.int64)
    out = out.copy()
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class JobSchedule:
    """``workers`` has shape (T, H); ``parameter_servers`` has shape (T, K)."""

    workers: np.ndarray
    parameter_servers: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "workers", _counts(self.workers))
        object.__setattr__(self, "parameter_servers", _counts(self.parameter_servers))

    @property
    def workers_per_slot(self) -> np.ndarray:
        return self.workers.sum(axis=1)

    @property
    def parameter_servers_per_slot(self) -> np.ndarray:
        return self.parameter_servers.sum(axis=1)

    @property
    def active_slots(self) -> np.ndarray:
        return np.flatnonzero(self.workers_per_slot > 0)

    def completion_slot(self) -> int | None:
        """Eq. (8): the last slot with at least one worker, or None if there is none."""
        active = self.active_slots
        return int(active[-1]) if active.size else None

    @classmethod
    def empty(cls, horizon: int, n_worker_servers: int, n_ps_servers: int) -> "JobSchedule":
        return cls(
            np.zeros((horizon, n_worker_servers), dtype=np.int64),
            np.zeros((horizon, n_ps_servers), dtype=np.int64),
        )


@dataclass(frozen=True, eq=False)
class Schedule:
    """Admitted jobs' assignments keyed by job index, plus free-form provenance in ``meta``."""

    assignments: Mapping[int, JobSchedule]
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "assignments", dict(sorted((int(i), s) for i, s in self.assignments.items())))

    @property
    def admitted(self) -> list[int]:
        return list(self.assignments)

    def __contains__(self, job: int) -> bool:
        return job in self.assignments

    def __getitem__(self, job: int) -> JobSchedule:
        return self.assignments[job]

    def same_allocation(self, other: "Schedule") -> bool:
        """Bit-for-bit equality of the assignments (``meta`` is ignored)."""
        if list(self.assignments) != list(other.assignments):
            return False
        return all(
            np.array_equal(a.workers, b.workers) and np.array_equal(a.parameter_servers, b.parameter_servers)
            and a.workers.dtype == b.workers.dtype
            for a, b in zip(self.assignments.values(), other.assignments.values())
        )
