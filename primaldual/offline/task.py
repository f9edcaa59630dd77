"""What the work of an offline solve needs, as picklable data that crosses to the solver process: one task per
kind of work (the ILP and its relaxations; column generation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from primaldual.core.schedule import Schedule
from primaldual.offline.child import remaining
from primaldual.offline.options import OnlineSeed

#: Relative MIP gap handed to HiGHS when the caller gives none (its own default, 1e-4, is coarser than the
#: optimality tolerance of :mod:`primaldual.offline.result`). CBC and GLPK default to an exact search already.
DEFAULT_HIGHS_GAP = 1e-7


@dataclass(frozen=True, eq=False)
class IlpTask:
    """What the ILP/LP work needs, as picklable data (it crosses to the child process).

    ``start``/``start_utility`` are the verified MIP start; ``deadline`` the absolute ``time.time()`` the
    whole solve must end by (the solver gets the time left after building); ``seeds`` the verified online
    schedules the ``online_start`` picks from; ``pooled_first`` solves the pooled ILP first
    (:func:`primaldual.offline.pooled.solve_pooled_and_place`); ``symmetry`` and ``work_cuts`` add the rows of
    :mod:`primaldual.offline.symmetry` and :mod:`primaldual.offline.cuts` on the matrix path."""

    solver: str
    time_limit: float | None
    mip_gap: float | None
    threads: int | None
    relax: bool
    pooled: bool
    formulation: str
    builder: str
    start: Schedule | None
    start_utility: float | None
    deadline: float | None
    seeds: tuple[OnlineSeed, ...]
    pooled_first: bool
    online_start: bool
    symmetry: bool = False
    work_cuts: bool = False

    def time_left(self) -> float | None:
        return self.time_limit if self.deadline is None else remaining(self.deadline)

    def origin(self) -> float | None:
        """The ``time.time()`` at which the whole solve started (None without a time limit)."""
        return None if self.deadline is None or self.time_limit is None else self.deadline - self.time_limit


@dataclass(frozen=True, eq=False)
class ColumnGenerationTask:
    """What column generation needs: the schedulable ``jobs``, the absolute ``deadline`` (``time.time()``, None
    without a limit), the solver's ``threads`` and the verified online ``seeds`` its master starts from."""

    jobs: Sequence[int]
    deadline: float | None
    threads: int | None
    seeds: tuple[OnlineSeed, ...]


__all__ = ["ColumnGenerationTask", "DEFAULT_HIGHS_GAP", "IlpTask"]
