"""A schedule: per admitted job, workers per worker server per slot and PSs per PS server per slot.

``Schedule.assignments[i].workers[t, h]`` is ``y_ih(t)`` and ``.parameter_servers[t, k]`` is ``z_ik(t)``;
a job is admitted (``x_i = 1``) iff it has an entry. Counts are stored as given (a hand-written file may hold a
fractional or negative count); :func:`primaldual.core.verify.verify` is what judges them.

**Representation and its cost.** A job runs in a few slots of a long horizon: a whole trace VC has ~1,000-4,000
slots, a job a few to a few hundred. A :class:`JobSchedule` therefore stores only its *window*, the slots from
the first to the last one with any non-zero count: ``start`` and the arrays ``window_workers`` (L, H) and
``window_parameter_servers`` (L, K), ``L = stop - start``, plus the ``horizon`` T its dense view has. Memory is
``8 L (H + K)`` bytes per job instead of ``8 T (H + K)``. ``workers`` and ``parameter_servers`` are the dense
(T, H) and (T, K) views, built **on demand** (not cached: a dense copy per job is what the window avoids); code
that walks many jobs reads the window (``window_workers``, :meth:`JobSchedule.slot`), code that wants one job's
matrix (a Gantt chart, a test) reads the dense view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from primaldual.core.plural import counted


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


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False, init=False)
class JobSchedule:
    """One job's counts over its window ``[start, start + L)`` of a ``horizon``-slot run (module docstring).

    ``JobSchedule(workers, parameter_servers)`` takes the dense (T, H) and (T, K) arrays and keeps their window;
    :meth:`windowed` builds one from the window directly (the simulator and OASiS do, never holding a dense
    array). Arrays that are not two (T, ., .) matrices of the same T (a malformed hand-made schedule) are kept
    as given (``start = 0``), so that the verifier can report their shape.
    """

    start: int
    horizon: int
    window_workers: np.ndarray
    window_parameter_servers: np.ndarray
    #: True when the arrays were kept as given (no common slot axis to window): the dense views are these.
    as_given: bool = False

    def __init__(self, workers, parameter_servers):
        y, z = _counts(workers), _counts(parameter_servers)
        if y.ndim != 2 or z.ndim != 2 or y.shape[0] != z.shape[0]:
            self._set(0, y.shape[0] if y.ndim else 0, y, z, True)
            return
        # Any non-zero entry (a negative, fractional or NaN one included) belongs to the window.
        used = np.flatnonzero((y != 0).any(axis=1) | (z != 0).any(axis=1))
        first, stop = (int(used[0]), int(used[-1]) + 1) if used.size else (0, 0)
        self._set(first, y.shape[0], _frozen(y[first:stop].copy()), _frozen(z[first:stop].copy()), False)

    def _set(self, start: int, horizon: int, y: np.ndarray, z: np.ndarray, as_given: bool) -> None:
        object.__setattr__(self, "start", int(start))
        object.__setattr__(self, "horizon", int(horizon))
        object.__setattr__(self, "window_workers", y)
        object.__setattr__(self, "window_parameter_servers", z)
        object.__setattr__(self, "as_given", as_given)

    @classmethod
    def windowed(cls, start: int, workers, parameter_servers, horizon: int) -> "JobSchedule":
        """The schedule whose counts in slots ``start .. start + L - 1`` are ``workers`` (L, H) and
        ``parameter_servers`` (L, K), and zero in every other slot of ``horizon``. Leading and trailing
        all-zero rows are dropped, so the result equals ``JobSchedule`` of the dense arrays."""
        y, z = _counts(workers), _counts(parameter_servers)
        if y.ndim != 2 or z.ndim != 2 or y.shape[0] != z.shape[0] or not 0 <= start <= horizon - y.shape[0]:
            raise ValueError(f"window of {np.shape(y)} and {np.shape(z)} at slot {start} does not fit "
                             f"{counted(horizon, 'slot')}")
        used = np.flatnonzero((y != 0).any(axis=1) | (z != 0).any(axis=1))
        out = object.__new__(cls)
        if not used.size:
            out._set(0, horizon, _frozen(y[:0].copy()), _frozen(z[:0].copy()), False)
        elif used[0] == 0 and used[-1] == y.shape[0] - 1:
            out._set(start, horizon, y, z, False)
        else:
            first, stop = int(used[0]), int(used[-1]) + 1
            out._set(start + first, horizon, _frozen(y[first:stop].copy()), _frozen(z[first:stop].copy()), False)
        return out

    @classmethod
    def from_cells(cls, workers: dict, parameter_servers: dict, n_worker_servers: int, n_ps_servers: int,
                   horizon: int) -> "JobSchedule":
        """The schedule of ``{(slot, server): count}`` cells (float counts, as a file's numbers are), its
        arrays sized by the slots the cells list."""
        slots = [slot for cells in (workers, parameter_servers) for slot, _ in cells]
        first, stop = min(slots, default=0), max(slots, default=-1) + 1
        arrays = [np.zeros((max(stop - first, 0), size)) for size in (n_worker_servers, n_ps_servers)]
        for cells, array in zip((workers, parameter_servers), arrays):
            for (slot, server), count in cells.items():
                array[slot - first, server] = count
        return cls.windowed(first, *arrays, horizon)

    @property
    def stop(self) -> int:
        """One past the window's last slot."""
        return self.start + self.window_workers.shape[0] if not self.as_given else self.horizon

    def _dense(self, window: np.ndarray) -> np.ndarray:
        if self.as_given or (self.start == 0 and window.shape[0] == self.horizon):
            return window
        out = np.zeros((self.horizon,) + window.shape[1:], dtype=window.dtype)
        out[self.start:self.start + window.shape[0]] = window
        return _frozen(out)

    @property
    def workers(self) -> np.ndarray:
        """The dense (T, H) view, built on each access."""
        return self._dense(self.window_workers)

    @property
    def parameter_servers(self) -> np.ndarray:
        """The dense (T, K) view, built on each access."""
        return self._dense(self.window_parameter_servers)

    def slot(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Slot ``t``'s counts, ``(workers[H], parameter_servers[K])`` (zeros outside the window)."""
        if self.as_given:
            return self.window_workers[t], self.window_parameter_servers[t]
        if self.start <= t < self.stop:
            return self.window_workers[t - self.start], self.window_parameter_servers[t - self.start]
        return (np.zeros(self.window_workers.shape[1], dtype=self.window_workers.dtype),
                np.zeros(self.window_parameter_servers.shape[1], dtype=self.window_parameter_servers.dtype))

    @property
    def workers_per_slot(self) -> np.ndarray:
        return self._dense(self.window_workers.sum(axis=1))

    @property
    def parameter_servers_per_slot(self) -> np.ndarray:
        return self._dense(self.window_parameter_servers.sum(axis=1))

    @property
    def active_slots(self) -> np.ndarray:
        return self.start + np.flatnonzero(self.window_workers.sum(axis=1) > 0)

    def completion_slot(self) -> int | None:
        """Eq. (8): the last slot with at least one worker, or None if there is none."""
        active = self.active_slots
        return int(active[-1]) if active.size else None

    @classmethod
    def empty(cls, horizon: int, n_worker_servers: int, n_ps_servers: int) -> "JobSchedule":
        return cls.windowed(0, np.zeros((0, n_worker_servers), dtype=np.int64),
                            np.zeros((0, n_ps_servers), dtype=np.int64), horizon)

    @classmethod
    def full(cls, workers, parameter_servers) -> "JobSchedule":
        """The dense representation: the whole horizon as the window (``start = 0``, zero rows kept). It holds
        the same counts as ``JobSchedule(workers, parameter_servers)`` (and compares equal to it); the tests
        check that every reader gives the same answers on both."""
        y, z = _counts(workers), _counts(parameter_servers)
        if y.ndim != 2 or z.ndim != 2 or y.shape[0] != z.shape[0]:
            return cls(y, z)
        out = object.__new__(cls)
        out._set(0, y.shape[0], _frozen(y.copy()), _frozen(z.copy()), False)
        return out

    def _trimmed(self) -> tuple[int, np.ndarray, np.ndarray]:
        """``(first slot, workers, parameter servers)`` without leading or trailing all-zero rows."""
        y, z = self.window_workers, self.window_parameter_servers
        used = np.flatnonzero((y != 0).any(axis=1) | (z != 0).any(axis=1))
        if not used.size:
            return 0, y[:0], z[:0]
        return self.start + int(used[0]), y[used[0]:used[-1] + 1], z[used[0]:used[-1] + 1]

    def same_counts(self, other: "JobSchedule") -> bool:
        """Equal dense views, dtype of the workers included (compared on the trimmed windows)."""
        if self.as_given or other.as_given:
            return np.array_equal(self.workers, other.workers) and \
                np.array_equal(self.parameter_servers, other.parameter_servers) and \
                self.workers.dtype == other.workers.dtype
        (a, ya, za), (b, yb, zb) = self._trimmed(), other._trimmed()
        return (self.horizon, a) == (other.horizon, b) and np.array_equal(ya, yb) and np.array_equal(za, zb) \
            and self.window_workers.dtype == other.window_workers.dtype and \
            self.window_workers.shape[1:] == other.window_workers.shape[1:] and \
            self.window_parameter_servers.shape[1:] == other.window_parameter_servers.shape[1:]


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
        return all(a.same_counts(b) for a, b in zip(self.assignments.values(), other.assignments.values()))
